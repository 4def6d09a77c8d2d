package kafkagate_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
)

// changesOnTopic reads the changes topic whole: each record's event.
func changesOnTopic(t *testing.T, brokers []string) ([]*domain.Event, [][]byte) {
	t.Helper()
	topic := kafkagate.DefaultTopics().Changes
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	end, err := conn.ReadLastOffset()
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	var evs []*domain.Event
	var raw [][]byte
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for off := int64(0); off < end; off++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := eventjson.DecodeEvent(m.Value)
		if err != nil {
			t.Fatalf("the change at offset %d does not decode: %v", m.Offset, err)
		}
		if string(m.Key) != strconv.FormatUint(ev.Seq, 10) {
			t.Fatalf("the change at offset %d is keyed %q, its seq is %d", m.Offset, m.Key, ev.Seq)
		}
		evs, raw = append(evs, ev), append(raw, m.Value)
	}
	return evs, raw
}

// The changes topic holds each principal-wide change partition 0 decided,
// once, in seq order, as partition 0's log holds it (its hash is the
// chain's): also when the gate dies between a change's append and its
// produce there (the mirror's hook halts it), and the next gate produces
// it from the log. The other partitions copy every change from it, and
// every log re-decides and audits against partition 0.
func TestKafkaChangesTopicHoldsEachChangeOnce(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	var die atomic.Bool
	g := startGate(t, brokers, lg, dir, kafkagate.WithMirrorHook(func(st kafkagate.ForwardStage, p int32, seqs []uint64) error {
		if st == kafkagate.BeforeProduce && die.Load() {
			return errors.New("the process died here")
		}
		return nil
	}))
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 2*time.Second)
	issue := func(id string, want int) {
		t.Helper()
		st, body := h.do(t, "POST", "/principals/org_m/keys", map[string]string{"X-API-Key": adminKey, "Idempotency-Key": id}, "")
		if want != 0 && st != want {
			t.Fatalf("issue %s: %d %v, want %d", id, st, body, want)
		}
	}
	issue("m-1", http.StatusCreated)
	die.Store(true)
	issue("m-2", 0) // decided on partition 0, never produced to the changes topic by this gate
	g.stop()

	startGate(t, brokers, lg, dir)
	for try := 0; ; try++ {
		st, body := h.do(t, "POST", "/principals/org_m/keys", map[string]string{"X-API-Key": adminKey, "Idempotency-Key": "m-2"}, "")
		if st == http.StatusCreated {
			break
		}
		if st != http.StatusGatewayTimeout || try == 10 {
			t.Fatalf("the retry of m-2 once a gate produces the change: %d %v", st, body)
		}
	}
	issue("m-3", http.StatusCreated)

	var want []uint64
	hashes := map[uint64]string{}
	for _, ev := range partitionEvents(t, lg, domain.GlobalPartition) {
		if _, ok := domain.CopyOf(ev); ok {
			want = append(want, ev.Seq)
		}
	}
	l, err := lg.open(context.Background(), domain.GlobalPartition)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Read(context.Background(), 1, func(r streams.Record) error {
		hashes[r.Seq] = r.Hash()
		return nil
	})
	l.Close()
	if err != nil {
		t.Fatalf("reading partition 0: %v", err)
	}
	evs, raw := changesOnTopic(t, brokers)
	if len(evs) != len(want) || len(want) != 3 {
		t.Fatalf("the changes topic holds %d changes, partition 0 decided %d (%v)", len(evs), len(want), want)
	}
	for i, ev := range evs {
		if ev.Seq != want[i] {
			t.Fatalf("change %d on the topic is seq %d, want %d", i, ev.Seq, want[i])
		}
		if got := streams.HashPayload(raw[i]); got != hashes[ev.Seq] {
			t.Fatalf("change seq %d hashes %s on the topic, %s in partition 0's chain", ev.Seq, got, hashes[ev.Seq])
		}
	}
	for p := int32(1); p < testPartitions; p++ {
		changes, _ := principalChanges(t, partitionEvents(t, lg, p), p)
		if len(changes) != len(want) {
			t.Fatalf("partition %d copied %d changes, want %d", p, len(changes), len(want))
		}
		for i, c := range changes {
			if c.Seq != want[i] {
				t.Fatalf("partition %d copied seq %d as change %d, want %d", p, c.Seq, i, want[i])
			}
		}
	}
	checkReplayAndAudit(t, lg, dir)
}
