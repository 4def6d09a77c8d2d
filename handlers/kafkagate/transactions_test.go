package kafkagate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// TestKafkaTransactionReadsFromTheReadModel covers the read side of
// executes on Kafka: instance A's read model polls once an hour, so what
// it answers it has read because a reader waited on it. An execute of a
// consumer homed on partition 2 is decided through instance B; A's
// await (the HTTP execute's wait for the outcome) wakes A's follower of
// partition 2 and returns once B records the outcome; A then lists and
// reads the transaction (another consumer's key finds nothing), sums it,
// and reads it as of its decision from partition 2 (time travel).
func TestKafkaTransactionReadsFromTheReadModel(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	a := startHTTPOverKafkaPolling(t, brokers, lg, engines(t), 20*time.Second, time.Hour)
	b := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	principal := principalHomedAt(t, 2)
	agent, token := registerAgentOn(t, c, principal, 1)
	admin := map[string]string{"X-API-Key": adminKey}
	key := func(p string) map[string]string {
		st, k := a.do(t, "POST", "/principals/"+p+"/keys", admin, "")
		s, _ := k["api_key"].(string)
		if st != 201 || s == "" {
			t.Fatalf("issuing a key of %s: %d %v", p, st, k)
		}
		return map[string]string{"X-API-Key": s}
	}
	mine, other := key(principal), key("org_other")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ev, err := b.gate.Submit(ctx, businessCmd("shop", "http://127.0.0.1:9/")); err != nil || ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %v %+v", err, ev)
	}
	ev, err := b.gate.Submit(ctx, executeCmd(t, agent, token, "shop", "tx-reads-1", 325))
	if err != nil || ev.Transaction == nil || ev.Partition != 2 {
		t.Fatalf("execute: %v %+v", err, ev)
	}
	tx, decidedSeq := ev.Transaction.ID, ev.Seq

	awaited := make(chan projections.Transaction, 1)
	go func() {
		got, err := a.reads.Store().AwaitTransaction(ctx, principal, tx)
		if err != nil {
			t.Errorf("awaiting on instance A: %v", err)
		}
		awaited <- got
	}()
	if done, err := b.gate.SubmitTo(ctx, outcomeCmd(tx), 2); err != nil || done.Type != domain.EvExecuteCompleted {
		t.Fatalf("outcome through instance B: %v %+v", err, done)
	}
	if got := <-awaited; got.Status != domain.TxCompleted || got.BusinessStatus != "completed" {
		t.Fatalf("awaited on instance A: %+v", got)
	}

	st, page := a.do(t, "GET", "/transactions", mine, "")
	list, _ := page["transactions"].([]any)
	if st != 200 || len(list) != 1 || list[0].(map[string]any)["transaction_id"] != tx || list[0].(map[string]any)["status"] != domain.TxCompleted {
		t.Fatalf("GET /transactions on A: %d %v", st, page)
	}
	if st, m := a.do(t, "GET", "/transactions/"+tx, other, ""); st != 404 {
		t.Fatalf("another consumer reading the transaction: %d %v", st, m)
	}
	if st, m := a.do(t, "GET", "/transactions", other, ""); st != 200 || len(m["transactions"].([]any)) != 0 {
		t.Fatalf("another consumer's list: %d %v", st, m)
	}
	st, sum := a.do(t, "GET", "/transactions/summary?from=2020-01-01&to=2030-01-01", mine, "")
	if st == 200 {
		// The period is too long: the summary refuses it.
		t.Fatalf("a summary over ten years: %d %v", st, sum)
	}
	created, err := time.Parse(time.RFC3339Nano, list[0].(map[string]any)["created_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	st, sum = a.do(t, "GET", fmt.Sprintf("/transactions/summary?from=%s&to=%s", created.Add(-time.Hour).Format(time.RFC3339),
		created.Add(time.Hour).Format(time.RFC3339)), mine, "")
	if st != 200 || sum["totals"].(map[string]any)["count"] != 1.0 {
		t.Fatalf("summary on A: %d %v", st, sum)
	}
	st, past := a.do(t, "GET", fmt.Sprintf("/transactions/%s?at_seq=%d", tx, decidedSeq), mine, "")
	if st != 200 || past["status"] != domain.TxExecuting {
		t.Fatalf("the transaction as decided, from partition 2: %d %v", st, past)
	}
}
