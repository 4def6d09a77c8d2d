package kafkagate_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/adapter/adaptertest"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// withCaller gives a gate instance business calls signed with a keyring
// of its own (as each instance's data dir holds its own), which it
// returns.
func withCaller(t *testing.T) (func(*kafkagate.Config), *attest.Keyring) {
	t.Helper()
	kr, err := attest.OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caller, err := adapter.NewCaller(adapter.CallerConfig{Keyring: kr, NodeID: "node_test", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return func(c *kafkagate.Config) { c.Caller = caller }, kr
}

// verifyDecision verifies a call's decision token with kr's JWKS.
func verifyDecision(t *testing.T, kr *attest.Keyring, token string) *attest.ExecuteClaims {
	t.Helper()
	set, err := attest.ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	c, err := set.VerifyExecute(token, time.Now())
	if err != nil {
		t.Fatalf("the decision does not verify with its instance's JWKS: %v", err)
	}
	return c
}

// commandGate is an HTTPGate on brokers (the HTTP API's way to submit a
// command on Kafka) with its read model.
func commandGate(t *testing.T, brokers []string, lg *logs) (*kafkagate.HTTPGate, *kafkagate.ReadModel) {
	t.Helper()
	reads, err := kafkagate.OpenReadModel(context.Background(), filepath.Join(t.TempDir(), "readmodel"), quiet(), testPartitions, lg.openFrom)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { reads.Follow(ctx, 50*time.Millisecond); close(done) }()
	c, err := kafkaout.NewRequester(context.Background(), kafkaout.RequesterConfig{Brokers: brokers,
		RequestTopic: kafkagate.DefaultTopics().Requests, ReplyTopic: kafkagate.DefaultTopics().Replies, Timeout: 20 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		cancel()
		<-done
		_ = reads.Close()
	})
	return kafkagate.NewHTTPGate(c, command.HashSecret(adminKey), kafkagate.DefaultTopics(), "node_http", reads), reads
}

// Issue 14 on Kafka: the partition that decides an execute (the
// consumer's home) calls the business; its owner leaves with the call in
// flight, recording nothing; the instance that takes the partition over
// calls again with the same Idempotency-Key and decision token, and the
// home partition records exactly one outcome, completed. Each instance
// signs the decision with its own key: the two tokens carry the same
// claims.
func TestKafkaAdapterCallsAgainAfterTakeover(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	biz := adaptertest.New(t)
	biz.Hold = adaptertest.HoldFirst
	withA, keysA := withCaller(t)
	a := startGate(t, brokers, lg, t.TempDir(), withA)
	hg, reads := commandGate(t, brokers, lg)
	c := newClient(t, brokers)
	agent, token := register(t, c, "buyer")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ev, err := hg.Submit(ctx, &domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "test", ID: "business-shop"},
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{
			ID: "shop", Name: "Shop", Categories: []string{"books"}, Endpoint: biz.URL + "/agp", Currency: "USD"}}})
	if err != nil || ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %v %+v", err, ev)
	}
	req := json.RawMessage(`{"item":"book","amount_cents":250}`)
	h, err := domain.RequestHashOf(req)
	if err != nil {
		t.Fatal(err)
	}
	th := command.HashSecret(token)
	ev, err = hg.Submit(ctx, &domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: th,
		Request: domain.RequestID{Source: "test", ID: "x1", Scope: domain.RequestScope("", th)},
		Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: req, RequestHash: h}})
	if err != nil || ev.Type != domain.EvExecuteDecided || ev.Transaction == nil || ev.Transaction.Status != domain.TxExecuting {
		t.Fatalf("execute: %v %+v", err, ev)
	}
	id, home := ev.Transaction.ID, ev.Partition
	select {
	case key := <-biz.Entered:
		if key != id {
			t.Fatalf("called with key %q, want %q", key, id)
		}
	case <-ctx.Done():
		t.Fatal("the business was never called")
	}
	// The owner leaves with the call in flight: the call is cut short and
	// nothing is recorded; the next owner finds the transaction executing.
	a.stop()
	withB, keysB := withCaller(t)
	startGate(t, brokers, lg, t.TempDir(), withB)
	tx, err := reads.Store().AwaitTransaction(ctx, "org_a", id)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Status != domain.TxCompleted || string(tx.Data) != `{"order_id":"`+id+`"}` {
		t.Fatalf("transaction %+v", tx.Transaction)
	}
	calls := biz.Calls(id)
	if len(calls) != 2 {
		t.Fatalf("%d calls of %s, want 2", len(calls), id)
	}
	if first, again := verifyDecision(t, keysA, calls[0].Decision), verifyDecision(t, keysB, calls[1].Decision); *first != *again || first.Subject != id {
		t.Fatalf("the claims of the two calls differ: %+v, %+v", first, again)
	}
	outcomes := 0
	for _, ev := range partitionEvents(t, lg, home) {
		if ev.Type == domain.EvExecuteCompleted && ev.Transaction.ID == id {
			outcomes++
		}
	}
	if outcomes != 1 {
		t.Fatalf("%d outcomes recorded on partition %d, want 1", outcomes, home)
	}
}
