package kafkagate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// Issue 3 (Watermill's router where it fits): an agent platform consumes
// agentgate.decisions with client.ConsumeDecisions, on Watermill's router
// over the kafka-go Pub/Sub: it gets the decisions of async requests with
// their request id, agent, event type and body; a handler error and a
// handler panic send that decision to agentgate.deadletter with the
// reason (poison queue, recoverer) and the consumer goes on to the next.
func TestKafkaConsumeDecisionsOnWatermillRouter(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "consumer")

	var (
		mu   sync.Mutex
		seen = map[string]client.Decision{}
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- client.ConsumeDecisions(ctx, client.DecisionsConfig{Brokers: brokers, Group: "platform", Logger: quiet()},
			func(_ context.Context, d client.Decision) error {
				switch d.RequestID {
				case "poison-error":
					return errors.New("platform refused the decision")
				case "poison-panic":
					panic("platform bug")
				}
				mu.Lock()
				seen[d.RequestID] = d
				mu.Unlock()
				return nil
			})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ConsumeDecisions: %v", err)
		}
	}()
	for i, id := range []string{"ok-1", "poison-error", "poison-panic", "ok-2"} {
		cmd := verifyCmd(agent, token, "conv-consume", i+1)
		cmd.ID = id
		if _, err := c.Publish(context.Background(), cmd); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := 0
		for _, id := range []string{"ok-1", "ok-2"} {
			if _, ok := seen[id]; ok {
				n++
			}
		}
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer saw %d of the 2 good decisions", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	for _, id := range []string{"ok-1", "ok-2"} {
		d := seen[id]
		var body struct {
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal(d.Data, &body); err != nil || body.Decision != "APPROVED" || d.AgentID != agent ||
			d.EventType != string(domain.EvActionDecided) || d.ID == "" || d.Time.IsZero() {
			t.Fatalf("decision %s: %+v (%s)", id, d, d.Data)
		}
	}
	if _, ok := seen["poison-error"]; ok {
		t.Fatal("a decision the handler failed on was counted as handled")
	}
	mu.Unlock()
	// The poisoned decisions, with their reasons, on the dead-letter topic.
	reasons := map[string]string{}
	for time.Now().Before(deadline) && len(reasons) < 2 {
		for _, m := range readAll(t, brokers, kafkagate.DefaultTopics().DeadLetter) {
			if r := headerOf(m, "reason_poisoned"); r != "" {
				reasons[headerOf(m, "ce_correlationid")] = r
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(reasons["poison-error"], "platform refused the decision") || !strings.Contains(reasons["poison-panic"], "platform bug") {
		t.Fatalf("dead-lettered decisions: %v", reasons)
	}
}

// readAll returns every message of every partition of topic.
func readAll(t *testing.T, brokers []string, topic string) []kafka.Message {
	t.Helper()
	var out []kafka.Message
	for p := range testPartitions {
		conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topic, p)
		if err != nil {
			t.Fatal(err)
		}
		end, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if end == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxWait: 100 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for off := int64(0); off < end; off++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		cancel()
		_ = r.Close()
	}
	return out
}
