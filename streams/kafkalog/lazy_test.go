package kafkalog_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/logtest"
)

// lazyPartition writes a chain of 9 records by A with skipped messages
// among them (a retried produce's duplicate, a zombie's fork) and returns
// the topic.
func lazyPartition(t *testing.T, b *broker) string {
	t.Helper()
	topic := b.topic(t)
	w := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(w, "A", 4); err != nil {
		t.Fatalf("appending: %v", err)
	}
	recs := logtest.Records(streams.Head{}, payload("A", 1), payload("A", 2), payload("A", 3), payload("A", 4))
	fork := logtest.Records(streams.Head{Seq: 2, Hash: recs[1].Hash()}, payload("X", 3))[0]
	produceRaw(t, b, topic, rawRecord(recs[3]), rawRecord(fork))
	if err := appendAs(w, "A", 5); err != nil {
		t.Fatalf("appending: %v", err)
	}
	return topic
}

// readSeqs reads l from from and returns the seqs read, checking that each
// record is A's; stopAt > 0 makes fn fail at that seq.
func readSeqs(t *testing.T, l *kafkalog.Log, from, stopAt uint64) ([]uint64, error) {
	t.Helper()
	return collectSeqs(t, stopAt, func(fn func(streams.Record) error) error { return l.Read(context.Background(), from, fn) })
}

// collectSeqs returns the seqs read passes to fn, checking that each
// record is A's; stopAt > 0 makes fn fail at that seq.
func collectSeqs(t *testing.T, stopAt uint64, read func(fn func(streams.Record) error) error) ([]uint64, error) {
	t.Helper()
	var got []uint64
	err := read(func(r streams.Record) error {
		if r.Seq == stopAt {
			return errStop
		}
		if !bytes.Equal(r.Payload, payload("A", r.Seq)) {
			t.Fatalf("seq %d holds %s, want A's record", r.Seq, r.Payload)
		}
		got = append(got, r.Seq)
		return nil
	})
	return got, err
}

var errStop = errors.New("stop")

func seqRange(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// TestLazyOpenReadsThePartitionOnceWhileReading pins Options.Lazy: Open
// reads nothing (Head is zero), the first Read applies the chain as Open
// would (skipping the same records) and delivers the records from its
// from as it goes; Head is then the partition's; later Reads and Appends
// work as on an eagerly opened Log.
func TestLazyOpenReadsThePartitionOnceWhileReading(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b)
	for _, from := range []uint64{1, 4, 9, 10} {
		l := b.open(t, topic, kafkalog.Options{Lazy: true, IndexInterval: 2})
		if h := l.Head(); h != (streams.Head{}) {
			t.Fatalf("lazy log's head before any read: %+v, want zero", h)
		}
		got, err := readSeqs(t, l, from, 0)
		if err != nil {
			t.Fatalf("lazy read from %d: %v", from, err)
		}
		if want := seqRange(from, 9); !slices.Equal(got, want) {
			t.Fatalf("lazy read from %d: seqs %v, want %v", from, got, want)
		}
		eager := b.open(t, topic, kafkalog.Options{})
		if l.Head() != eager.Head() || l.Head().Seq != 9 {
			t.Fatalf("lazy log's head after reading %+v, eager log's %+v", l.Head(), eager.Head())
		}
		// Reads after the catch-up go through the index.
		if got, err := readSeqs(t, l, 3, 0); err != nil || !slices.Equal(got, seqRange(3, 9)) {
			t.Fatalf("second read from 3: %v %v", got, err)
		}
		if err := appendAs(l, "A", 1); err != nil {
			t.Fatalf("appending after the lazy catch-up: %v", err)
		}
		// Keep the partition as lazyPartition made it for the next round.
		topic = lazyPartition(t, b)
	}
}

// TestLazyReadInterruptedResumes pins a lazy Read whose fn fails midway:
// the records applied so far stay applied, and the next Read from an
// earlier seq delivers them (through the index) and then the rest.
func TestLazyReadInterruptedResumes(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b)
	l := b.open(t, topic, kafkalog.Options{Lazy: true, IndexInterval: 2})
	got, err := readSeqs(t, l, 1, 6)
	if !errors.Is(err, errStop) || !slices.Equal(got, seqRange(1, 5)) {
		t.Fatalf("interrupted read: %v %v, want seqs 1..5 and the stop", got, err)
	}
	if h := l.Head().Seq; h != 6 {
		t.Fatalf("head after the interrupted read %d, want 6 (the record fn refused was applied)", h)
	}
	got, err = readSeqs(t, l, 2, 0)
	if err != nil || !slices.Equal(got, seqRange(2, 9)) {
		t.Fatalf("resumed read from 2: %v %v, want seqs 2..9", got, err)
	}
	if h := l.Head().Seq; h != 9 {
		t.Fatalf("head after the resumed read %d, want 9", h)
	}
}

// TestLazyAppendCatchesUpFirst pins that an Append on a lazy Log that
// never read is checked against the partition's head: a batch on the zero
// head is a conflict, nothing is produced, and one on the real head lands.
func TestLazyAppendCatchesUpFirst(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b)
	l := b.open(t, topic, kafkalog.Options{Lazy: true})
	err := l.Append(context.Background(), logtest.Records(streams.Head{}, payload("Z", 1)))
	if !errors.Is(err, streams.ErrConflict) {
		t.Fatalf("append on the zero head of a lazy log: %v, want ErrConflict", err)
	}
	if h := l.Head().Seq; h != 9 {
		t.Fatalf("head after the refused append %d, want 9", h)
	}
	if err := appendAs(l, "A", 2); err != nil {
		t.Fatalf("append on the head: %v", err)
	}
	if got := chainWriters(t, b, topic); len(got) != 11 {
		t.Fatalf("chain of %d records, want 11: %v", len(got), got)
	}
}

// TestReadStoppedEarlyLeavesNoFetcher pins that a Read whose fn stops it
// (on the first record, with fetches running ahead) leaves no fetching
// goroutine behind, lazily or not.
func TestReadStoppedEarlyLeavesNoFetcher(t *testing.T) {
	b := newBroker(t)
	topic := b.topic(t)
	w := b.open(t, topic, kafkalog.Options{})
	for range 30 { // one record batch each: more fetch responses than fetch holds ahead
		if err := appendAs(w, "A", 1); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	for _, lazy := range []bool{false, true} {
		for range 5 {
			l, err := kafkalog.Open(context.Background(), b.addrs, topic, partition, kafkalog.Options{Logger: quiet, Lazy: lazy, FetchMaxBytes: 64})
			if err != nil {
				t.Fatal(err)
			}
			// A slow first record: the fetcher fills what it holds ahead
			// and waits to hand over more.
			err = l.Read(context.Background(), 1, func(streams.Record) error {
				time.Sleep(20 * time.Millisecond)
				return errStop
			})
			if !errors.Is(err, errStop) {
				t.Fatalf("read stopped at its first record: %v", err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after 10 stopped reads, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadPayloadsMayBeKept pins streams.KeptPayloads for the Kafka log:
// payloads kept past Read's callback (ReadDecoded then does not copy them)
// still hold their records once the read is over, lazily or not.
func TestReadPayloadsMayBeKept(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b)
	for _, lazy := range []bool{false, true} {
		l := b.open(t, topic, kafkalog.Options{Lazy: lazy, FetchMaxBytes: 64})
		if !l.ReadKeepsPayloads() {
			t.Fatal("the Kafka log does not report kept payloads")
		}
		var kept []streams.Record
		if err := l.Read(context.Background(), 1, func(r streams.Record) error {
			kept = append(kept, r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(kept) != 9 {
			t.Fatalf("read %d records, want 9", len(kept))
		}
		for _, r := range kept {
			if !bytes.Equal(r.Payload, payload("A", r.Seq)) {
				t.Fatalf("kept payload of seq %d is %q after the read", r.Seq, r.Payload)
			}
		}
	}
}

// TestSyncReadDeliversWhatCameSince pins SyncRead: a reader that has read
// to its Head gets, from each SyncRead, exactly the records another writer
// appended since (skipping what does not extend the chain, as Sync does),
// in order, and Head moves with them; with nothing new it delivers
// nothing; fn's error stops it with Head at the last record fn refused,
// and the next SyncRead goes on after it.
func TestSyncReadDeliversWhatCameSince(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b)
	r := b.open(t, topic, kafkalog.Options{IndexInterval: 2})
	w := b.open(t, topic, kafkalog.Options{})
	syncRead := func(stopAt uint64) ([]uint64, error) {
		return collectSeqs(t, stopAt, func(fn func(streams.Record) error) error { return r.SyncRead(context.Background(), fn) })
	}
	if got, err := syncRead(0); err != nil || len(got) != 0 {
		t.Fatalf("SyncRead with nothing new: %v %v, want nothing", got, err)
	}
	if err := appendAs(w, "A", 3); err != nil {
		t.Fatal(err)
	}
	// A zombie's fork after them is skipped.
	fork := logtest.Records(streams.Head{Seq: 10, Hash: "not-the-head"}, payload("X", 11))[0]
	produceRaw(t, b, topic, rawRecord(fork))
	if got, err := syncRead(0); err != nil || !slices.Equal(got, seqRange(10, 12)) {
		t.Fatalf("SyncRead after 3 appends: %v %v, want seqs 10..12", got, err)
	}
	if h := r.Head(); h != w.Head() {
		t.Fatalf("reader's head %+v, writer's %+v", h, w.Head())
	}
	if err := appendAs(w, "A", 4); err != nil {
		t.Fatal(err)
	}
	if got, err := syncRead(15); !errors.Is(err, errStop) || !slices.Equal(got, seqRange(13, 14)) {
		t.Fatalf("SyncRead stopped at 15: %v %v, want seqs 13..14 and the stop", got, err)
	}
	if h := r.Head().Seq; h != 15 {
		t.Fatalf("head after the stopped SyncRead %d, want 15", h)
	}
	if got, err := syncRead(0); err != nil || !slices.Equal(got, seqRange(16, 16)) {
		t.Fatalf("SyncRead after the stop: %v %v, want seq 16", got, err)
	}
}
