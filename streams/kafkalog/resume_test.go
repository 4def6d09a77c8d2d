package kafkalog_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// positions reads l whole with SyncReadAt and returns each record's
// Position by seq.
func positions(t *testing.T, l *kafkalog.Log) map[uint64]kafkalog.Position {
	t.Helper()
	out := map[uint64]kafkalog.Position{}
	err := l.SyncReadAt(context.Background(), func(r streams.Record, at kafkalog.Position) error {
		if at.Seq != r.Seq || at.Hash != r.Hash() {
			t.Fatalf("seq %d delivered at %+v, want its own seq and hash", r.Seq, at)
		}
		out[r.Seq] = at
		return nil
	})
	if err != nil {
		t.Fatalf("SyncReadAt: %v", err)
	}
	return out
}

// TestOpenFromAPositionReadsOnlyWhatFollows pins Options.From: a log
// opened at a record a reader kept fetches that record and what follows
// it, never the partition from offset 0; it delivers the same records at
// the same positions as a log opened at the start, follows the chain past
// skipped messages, reads through its index, refuses a read from before
// its start, and appends.
func TestOpenFromAPositionReadsOnlyWhatFollows(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b) // seqs 1..9 with two skipped messages
	w := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(w, "A", 3); err != nil {
		t.Fatal(err)
	}
	full := b.open(t, topic, kafkalog.Options{Lazy: true})
	all := positions(t, full)
	if len(all) != 12 {
		t.Fatalf("a log read from the start delivered %d records, want 12", len(all))
	}
	end := all[12].Offset + 1
	if full.RecordsFetched() != uint64(end) {
		t.Fatalf("the log read from the start fetched %d messages, want all %d", full.RecordsFetched(), end)
	}
	at, last := all[6], uint64(12)
	for _, lazy := range []bool{true, false} {
		l := b.open(t, topic, kafkalog.Options{Lazy: lazy, From: at, IndexInterval: 2})
		if !lazy {
			if h := l.Head(); h.Seq != last || h.Hash != all[last].Hash {
				t.Fatalf("eager log opened at seq 6: head %+v, want seq %d", h, last)
			}
		} else {
			if h := l.Head(); h.Seq != 6 || h.Hash != at.Hash {
				t.Fatalf("lazy log opened at seq 6: head %+v, want seq 6", h)
			}
			got := positions(t, l)
			for seq := uint64(7); seq <= last; seq++ {
				if got[seq] != all[seq] {
					t.Fatalf("seq %d at %+v, want %+v", seq, got[seq], all[seq])
				}
			}
			if len(got) != 6 {
				t.Fatalf("the log opened at seq 6 delivered %d records, want 6 (seqs 7..12)", len(got))
			}
		}
		if want := uint64(end - at.Offset); l.RecordsFetched() != want {
			t.Fatalf("lazy=%v: the log opened at offset %d fetched %d messages, want %d (the anchor and what follows)", lazy, at.Offset, l.RecordsFetched(), want)
		}
		if got, err := readSeqs(t, l, 8, 0); err != nil || !slices.Equal(got, seqRange(8, last)) {
			t.Fatalf("lazy=%v: read from 8: %v %v", lazy, got, err)
		}
		if got, err := readSeqs(t, l, 7, 0); err != nil || !slices.Equal(got, seqRange(7, last)) {
			t.Fatalf("lazy=%v: read from 7: %v %v", lazy, got, err)
		}
		if _, err := readSeqs(t, l, 6, 0); !errors.Is(err, kafkalog.ErrNotAtPosition) {
			t.Fatalf("lazy=%v: read from 6 of a log opened at 6: %v, want ErrNotAtPosition", lazy, err)
		}
		if err := appendAs(l, "A", 1); err != nil {
			t.Fatalf("lazy=%v: appending on a log opened at seq 6: %v", lazy, err)
		}
		if err := w.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		for seq, p := range positions(t, full) { // one more record per round
			all[seq] = p
		}
		last++
		end = all[last].Offset + 1
	}
}

// TestOpenFromAWrongPositionIsRefused pins ErrNotAtPosition: Open refuses
// a position whose record is not there (another hash, a fork's
// offset, past the end), so a reader never follows a partition it did not
// read before.
func TestOpenFromAWrongPositionIsRefused(t *testing.T) {
	b := newBroker(t)
	topic := lazyPartition(t, b)
	full := b.open(t, topic, kafkalog.Options{Lazy: true})
	all := positions(t, full)
	// Offsets 4 and 5 hold a duplicate of seq 4 (the same record: opening
	// there is opening at seq 4) and a fork (lazyPartition): seq 5 is at
	// offset 6, after them.
	if all[4].Offset != 3 || all[5].Offset != 6 {
		t.Fatalf("positions %+v, want seq 4 at offset 3 and seq 5 at 6", all)
	}
	for name, at := range map[string]kafkalog.Position{
		"another hash":             {Seq: 5, Hash: all[4].Hash, Offset: all[5].Offset},
		"another seq":              {Seq: 4, Hash: all[5].Hash, Offset: all[5].Offset},
		"a fork's message":         {Seq: 4, Hash: all[4].Hash, Offset: 5},
		"past the partition's end": {Seq: 10, Hash: all[9].Hash, Offset: all[9].Offset + 1},
	} {
		if _, err := kafkalog.Open(context.Background(), b.addrs, topic, partition, kafkalog.Options{Logger: quiet, Lazy: true, From: at}); !errors.Is(err, kafkalog.ErrNotAtPosition) {
			t.Fatalf("%s: Open = %v, want ErrNotAtPosition", name, err)
		}
	}
}
