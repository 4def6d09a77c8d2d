package kafkalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/logtest"
)

func payload(writer string, seq uint64) []byte {
	return []byte(`{"writer":"` + writer + `","seq":` + strconv.FormatUint(seq, 10) + `}`)
}

// appendAs appends n records written by writer on l's head.
func appendAs(l *kafkalog.Log, writer string, n int) error {
	head := l.Head()
	ps := make([][]byte, n)
	for i := range ps {
		ps[i] = payload(writer, head.Seq+uint64(i)+1)
	}
	return l.Append(context.Background(), logtest.Records(head, ps...))
}

// chainWriters returns the writer of each record of the chain, read by a
// fresh Log (a reader that never wrote), and checks the chain.
func chainWriters(t *testing.T, b *broker, topic string) []string {
	t.Helper()
	r := b.open(t, topic, kafkalog.Options{})
	var out []string
	err := r.Read(context.Background(), 1, func(rec streams.Record) error {
		for _, w := range []string{"A", "B", "X"} {
			if bytes.Equal(rec.Payload, payload(w, rec.Seq)) {
				out = append(out, w)
				return nil
			}
		}
		out = append(out, "?")
		return nil
	})
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if err := streams.VerifyChain(context.Background(), r, 1); err != nil {
		t.Fatalf("verifying the chain: %v", err)
	}
	if got := r.Head().Seq; got != uint64(len(out)) {
		t.Fatalf("reader head %d, read %d records", got, len(out))
	}
	return out
}

func equal(a, b []string) bool { return slices.Equal(a, b) }

// TestDesign2_3ZombieLateWriteIsRejected pins invariant 3 (docs/ARCHITECTURE.md) with two
// writers on one partition: a writer whose head is stale produces, finds
// the other writer's records before its own and gets ErrConflict; every
// reader skips its records; once caught up it extends the chain.
func TestDesign2_3ZombieLateWriteIsRejected(t *testing.T) {
	b := newBroker(t)
	topic := b.topic(t)
	a := b.open(t, topic, kafkalog.Options{})
	z := b.open(t, topic, kafkalog.Options{}) // opened at head 0, never synced

	if err := appendAs(a, "A", 3); err != nil {
		t.Fatalf("A appending: %v", err)
	}
	// B's batch passes its own head check (seq 1 on head 0), is produced,
	// and is then found behind A's three records.
	if err := appendAs(z, "B", 2); !errors.Is(err, streams.ErrConflict) {
		t.Fatalf("stale writer's Append = %v, want ErrConflict", err)
	}
	if z.Head() != a.Head() {
		t.Fatalf("after the conflict B's head = %+v, want A's %+v", z.Head(), a.Head())
	}
	if got := chainWriters(t, b, topic); !equal(got, []string{"A", "A", "A"}) {
		t.Fatalf("chain written by %v, want A A A", got)
	}

	// B is now the owner: it extends the chain. A, now the zombie, writes
	// late on its old head and is refused after producing.
	if err := appendAs(z, "B", 2); err != nil {
		t.Fatalf("B appending after catching up: %v", err)
	}
	if err := appendAs(a, "A", 1); !errors.Is(err, streams.ErrConflict) {
		t.Fatalf("zombie A's Append = %v, want ErrConflict", err)
	}
	if got := chainWriters(t, b, topic); !equal(got, []string{"A", "A", "A", "B", "B"}) {
		t.Fatalf("chain written by %v, want A A A B B", got)
	}
	if err := appendAs(a, "A", 1); err != nil {
		t.Fatalf("A appending after its conflict caught it up: %v", err)
	}
	if got := chainWriters(t, b, topic); !equal(got, []string{"A", "A", "A", "B", "B", "A"}) {
		t.Fatalf("chain written by %v, want A A A B B A", got)
	}
}

// TestDesign2_3OldOwnerWinsTheRace pins the other order: the old owner's
// late write lands first and is the chain's extension (its Append
// succeeds); the new owner, which opened before it, gets ErrConflict and
// learns the old owner's record, so it never decides on a stale state.
func TestDesign2_3OldOwnerWinsTheRace(t *testing.T) {
	b := newBroker(t)
	topic := b.topic(t)
	old := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(old, "A", 2); err != nil {
		t.Fatalf("appending: %v", err)
	}
	next := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(old, "A", 1); err != nil {
		t.Fatalf("old owner's late Append = %v, want nil (it extends the chain)", err)
	}
	if err := appendAs(next, "B", 1); !errors.Is(err, streams.ErrConflict) {
		t.Fatalf("new owner's Append on a head the old owner passed = %v, want ErrConflict", err)
	}
	if got := next.Head(); got != old.Head() {
		t.Fatalf("new owner's head %+v, want %+v", got, old.Head())
	}
	// Sync alone also picks the old owner's records up.
	late := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(old, "A", 1); err != nil {
		t.Fatalf("appending: %v", err)
	}
	if err := late.Sync(context.Background()); err != nil {
		t.Fatalf("syncing: %v", err)
	}
	if late.Head() != old.Head() {
		t.Fatalf("head after Sync %+v, want %+v", late.Head(), old.Head())
	}
	if got := chainWriters(t, b, topic); !equal(got, []string{"A", "A", "A", "A"}) {
		t.Fatalf("chain written by %v, want A A A A", got)
	}
}

// produceRaw writes messages to the test partition behind the log's back.
func produceRaw(t *testing.T, b *broker, topic string, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{
		Addr: kafka.TCP(b.addrs...), Topic: topic, RequiredAcks: kafka.RequireAll, BatchSize: len(msgs),
		Balancer: kafka.BalancerFunc(func(kafka.Message, ...int) int { return partition }),
	}
	defer func() { _ = w.Close() }()
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatalf("producing raw messages: %v", err)
	}
}

func rawRecord(r streams.Record) kafka.Message {
	return kafka.Message{Value: r.Payload, Headers: []kafka.Header{
		{Key: kafkalog.HeaderSeq, Value: strconv.AppendUint(nil, r.Seq, 10)},
		{Key: kafkalog.HeaderPrev, Value: []byte(r.Prev)},
	}}
}

// TestDesign2_3DuplicatesAndForeignMessagesAreSkipped pins that a reader
// skips, deterministically, a duplicate of a record (a retried produce), a
// fork on an old head, and messages without well-formed headers, and that
// the next Append lands after them.
func TestDesign2_3DuplicatesAndForeignMessagesAreSkipped(t *testing.T) {
	b := newBroker(t)
	topic := b.topic(t)
	w := b.open(t, topic, kafkalog.Options{IndexInterval: 2})
	if err := appendAs(w, "A", 3); err != nil {
		t.Fatalf("appending: %v", err)
	}
	recs := logtest.Records(streams.Head{}, payload("A", 1), payload("A", 2), payload("A", 3))
	fork := logtest.Records(streams.Head{Seq: 1, Hash: recs[0].Hash()}, payload("X", 2))[0]
	produceRaw(t, b, topic,
		rawRecord(recs[2]), // the last record again, as a retried produce would
		rawRecord(fork),    // a zombie's write on seq 1
		kafka.Message{Value: payload("X", 4)},
		kafka.Message{Value: payload("X", 4), Headers: []kafka.Header{{Key: kafkalog.HeaderSeq, Value: []byte("4")}, {Key: kafkalog.HeaderSeq, Value: []byte("4")}, {Key: kafkalog.HeaderPrev, Value: []byte(recs[2].Hash())}}},
		kafka.Message{Value: payload("X", 4), Headers: []kafka.Header{{Key: kafkalog.HeaderSeq, Value: []byte("four")}, {Key: kafkalog.HeaderPrev, Value: []byte(recs[2].Hash())}}},
	)
	if err := appendAs(w, "A", 3); err != nil {
		t.Fatalf("appending after foreign messages: %v", err)
	}
	want := []string{"A", "A", "A", "A", "A", "A"}
	if got := chainWriters(t, b, topic); !equal(got, want) {
		t.Fatalf("chain written by %v, want %v", got, want)
	}
	// Read from every seq through the index (interval 2) skips them too.
	for from := uint64(1); from <= 6; from++ {
		n := uint64(0)
		if err := w.Read(context.Background(), from, func(r streams.Record) error {
			if r.Seq != from+n || !bytes.Equal(r.Payload, payload("A", r.Seq)) {
				t.Fatalf("read from %d: got seq %d %s", from, r.Seq, r.Payload)
			}
			n++
			return nil
		}); err != nil {
			t.Fatalf("reading from %d: %v", from, err)
		}
		if n != 7-from {
			t.Fatalf("read from %d returned %d records, want %d", from, n, 7-from)
		}
	}
}

// TestDesign2_3RecordsStayOnTheirPartition pins that the log produces only
// to its own partition (never re-hashed).
func TestDesign2_3RecordsStayOnTheirPartition(t *testing.T) {
	b := newBroker(t)
	topic := b.topic(t)
	l := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(l, "A", 5); err != nil {
		t.Fatalf("appending: %v", err)
	}
	for p := range partitions {
		conn, err := kafka.DialLeader(context.Background(), "tcp", b.addrs[0], topic, p)
		if err != nil {
			t.Fatalf("dialing partition %d: %v", p, err)
		}
		last, err := conn.ReadLastOffset()
		_ = conn.Close()
		if err != nil {
			t.Fatalf("reading end of partition %d: %v", p, err)
		}
		want := int64(0)
		if p == partition {
			want = 5
		}
		if last != want {
			t.Fatalf("partition %d ends at offset %d, want %d", p, last, want)
		}
	}
}

// TestOpenRefusesTruncatedPartition pins fail-closed recovery: a partition
// whose first records were deleted cannot yield the chain from seq 1.
func TestOpenRefusesTruncatedPartition(t *testing.T) {
	b := newBroker(t)
	topic := b.topic(t)
	l := b.open(t, topic, kafkalog.Options{})
	if err := appendAs(l, "A", 3); err != nil {
		t.Fatalf("appending: %v", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addrs...))
	if err != nil {
		t.Fatalf("starting franz-go client: %v", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition = partition
	rp.Offset = 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("deleting records: %v %+v", err, resp)
	}
	if _, err := kafkalog.Open(context.Background(), b.addrs, topic, partition, kafkalog.Options{Logger: quiet}); err == nil {
		t.Fatal("Open accepted a partition that starts at offset 1")
	}
}

// TestDefaultLimitsFitTheDefaultBroker pins DefaultMaxRecordBytes on both
// sides against a broker with Kafka's default max.message.bytes, and
// DefaultMaxBatchBytes: an Append larger than one request is split.
func TestDefaultLimitsFitTheDefaultBroker(t *testing.T) {
	b := newBrokerDefault(t)
	topic := b.topic(t)
	l := b.open(t, topic, kafkalog.Options{})
	at := logtest.Records(l.Head(), logtest.Payload(1, kafkalog.DefaultMaxRecordBytes))
	if err := l.Append(context.Background(), at); err != nil {
		t.Fatalf("appending a payload of DefaultMaxRecordBytes: %v", err)
	}
	over := logtest.Records(l.Head(), logtest.Payload(2, kafkalog.DefaultMaxRecordBytes+1))
	if err := l.Append(context.Background(), over); !errors.Is(err, streams.ErrTooLarge) {
		t.Fatalf("appending DefaultMaxRecordBytes+1 = %v, want ErrTooLarge", err)
	}
	// A batch over one request (the worker's batches of 1024 events are
	// ~1.5 MB) is written as consecutive requests, every record once and
	// in order; one over DefaultMaxBatchBytes is refused whole.
	const payload = 4000
	n := 3*kafkalog.DefaultMaxRequestBytes/(payload+kafkalog.RecordOverheadBytes) + 1
	ps := make([][]byte, n)
	for i := range ps {
		ps[i] = logtest.Payload(uint64(i)+2, payload)
	}
	head := l.Head()
	if err := l.Append(context.Background(), logtest.Records(head, ps...)); err != nil {
		t.Fatalf("appending %d records (%d bytes, over DefaultMaxRequestBytes): %v", n, n*payload, err)
	}
	if got := l.Head().Seq; got != head.Seq+uint64(n) {
		t.Fatalf("head after a split append: seq %d, want %d", got, head.Seq+uint64(n))
	}
	fresh := b.open(t, topic, kafkalog.Options{})
	i := 0
	if err := fresh.Read(context.Background(), head.Seq+1, func(r streams.Record) error {
		if !bytes.Equal(r.Payload, ps[i]) {
			return fmt.Errorf("record %d (seq %d) differs", i, r.Seq)
		}
		i++
		return nil
	}); err != nil || i != n {
		t.Fatalf("reading a split append back: %d of %d records, %v", i, n, err)
	}
	big := make([][]byte, kafkalog.DefaultMaxBatchBytes/(kafkalog.DefaultMaxRecordBytes/2)+1)
	for i := range big {
		big[i] = logtest.Payload(uint64(i), kafkalog.DefaultMaxRecordBytes/2)
	}
	if err := l.Append(context.Background(), logtest.Records(l.Head(), big...)); !errors.Is(err, streams.ErrTooLarge) {
		t.Fatalf("appending %d records over DefaultMaxBatchBytes = %v, want ErrTooLarge", len(big), err)
	}
	if got := l.Head().Seq; got != head.Seq+uint64(n) {
		t.Fatalf("a refused batch moved the head to %d", got)
	}
}
