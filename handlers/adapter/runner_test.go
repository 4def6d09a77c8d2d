package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/adapter/adaptertest"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// runningGate is an embedded gate with its worker and adapter runner.
type runningGate struct {
	*gatetest.Gate
	runner     *adapter.Runner
	stopRunner func()
}

// startGate opens the gate in dir and runs its worker and runner, as
// serve does.
func startGate(t *testing.T, dir string, clock func() time.Time, policy adapter.NetworkPolicy) *runningGate {
	t.Helper()
	rg := &runningGate{}
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock,
		OnBatch: func(evs []*domain.Event, _ time.Duration) { rg.runner.Observe(evs) }})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := adapter.NewCaller(adapter.CallerConfig{Keyring: g.Keyring, NodeID: g.NodeID, Backoff: time.Millisecond,
		Attempts: 2, Network: policy})
	if err != nil {
		t.Fatal(err)
	}
	rg.runner, err = adapter.NewRunner(adapter.RunnerConfig{Caller: caller, Gate: g.Worker,
		Source: adapter.LogSource{State: g.Store, Log: g.Log}})
	if err != nil {
		t.Fatal(err)
	}
	rg.Gate = gatetest.Run(g)
	rg.stopRunner = rg.runner.Start()
	return rg
}

func (g *runningGate) stop(t *testing.T) {
	t.Helper()
	g.stopRunner()
	g.Stop(t)
}

var t0 = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// setup registers an agent of org_1 and the business "shop" at endpoint.
func setup(t *testing.T, g *runningGate, endpoint string) string {
	t.Helper()
	reg := g.Submit(t, gatetest.Register("r1", 2))
	if reg.Registered == nil {
		t.Fatalf("registration refused: %+v", reg.Error)
	}
	ev := g.Submit(t, &domain.Command{Type: domain.CmdBusiness, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "biz"},
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "shop", Name: "Shop",
			Categories: []string{"books"}, Endpoint: endpoint, Currency: "USD"}}})
	if ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %s %+v", ev.Type, ev.Error)
	}
	return reg.Registered.AgentID
}

func executeCmd(t *testing.T, agent, id, body string) *domain.Command {
	t.Helper()
	h, err := domain.RequestHashOf([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return &domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: command.HashSecret(gatetest.Token),
		Request: domain.RequestID{Source: "test", ID: id},
		Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(body), RequestHash: h}}
}

// awaitDone waits until transaction id has left executing in the store.
func awaitDone(t *testing.T, g *runningGate, id string) domain.Transaction {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tx, err := g.Store.AwaitTransaction(ctx, "org_1", id)
	if err != nil {
		t.Fatalf("awaiting %s: %v", id, err)
	}
	return tx.Transaction
}

// completions returns the execute.completed events of the log, by
// transaction.
func completions(t *testing.T, g *runningGate) map[string][]*domain.Event {
	t.Helper()
	out := map[string][]*domain.Event{}
	for _, ev := range gatetest.LogEvents(t, g.Log) {
		if ev.Type == domain.EvExecuteCompleted {
			out[ev.Transaction.ID] = append(out[ev.Transaction.ID], ev)
		}
	}
	return out
}

// Issue 14: an execute decided executing is called once, with its key and
// a decision the JWKS verifies, and its outcome recorded: the transaction
// reads completed with the business's data.
func TestRunnerCallsAndRecords(t *testing.T) {
	b := adaptertest.New(t)
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.URL+"/agp")
	body := `{"sku":"book-42","amount_cents":1250}`
	ev := g.Submit(t, executeCmd(t, agent, "x1", body))
	if ev.Transaction == nil || ev.Transaction.Status != domain.TxExecuting {
		t.Fatalf("execute: %s %+v %+v", ev.Type, ev.Error, ev.Transaction)
	}
	id := ev.Transaction.ID
	tx := awaitDone(t, g, id)
	if tx.Status != domain.TxCompleted || tx.BusinessStatus != "completed" || string(tx.Data) != fmt.Sprintf(`{"order_id":%q}`, id) {
		t.Fatalf("transaction %+v", tx)
	}
	calls := b.Calls(id)
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	set, err := attest.ParseJWKS(g.Keyring.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := set.VerifyExecute(calls[0].Decision, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if claims.Subject != id || claims.Audience != "shop" || claims.Execute.AmountCents != 1250 || claims.Execute.Consumer != "org_1" ||
		claims.Execute.AgentID != agent || claims.Execute.RequestHash != ev.Command.Execute.RequestHash || calls[0].Body != body {
		t.Fatalf("claims %+v, body %s", claims, calls[0].Body)
	}
	if c := completions(t, g); len(c[id]) != 1 {
		t.Fatalf("%d outcomes recorded", len(c[id]))
	}
}

// A business that keeps failing: the call is retried, then recorded as
// failed with QWED-EXEC-008.
func TestRunnerRecordsFailure(t *testing.T) {
	b := adaptertest.New(t)
	b.Answer = func(adaptertest.Call, int) (int, string) { return 503, `{"error":"down"}` }
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.URL)
	id := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":5}`)).Transaction.ID
	tx := awaitDone(t, g, id)
	if tx.Status != domain.TxFailed || len(b.Calls(id)) != 2 {
		t.Fatalf("transaction %+v after %d calls", tx, len(b.Calls(id)))
	}
	c := completions(t, g)[id]
	if len(c) != 1 || c[0].Error == nil || c[0].Error.Code != domain.CodeExecBusinessFailed || c[0].Command.Outcome.HTTPStatus != 503 {
		t.Fatalf("outcome %+v", c)
	}
}

// §2.6: a business answering pending_confirmation is recorded with its
// token; the agent's second execute carries the token in its body (a new
// transaction), which the business completes.
func TestRunnerAdapterLevelConfirmation(t *testing.T) {
	b := adaptertest.New(t)
	b.Answer = func(c adaptertest.Call, _ int) (int, string) {
		var req map[string]any
		_ = json.Unmarshal([]byte(c.Body), &req)
		if req["confirmationToken"] == "biz-conf-1" {
			return 200, `{"status":"completed","data":{"confirmed":true}}`
		}
		return 200, `{"status":"pending_confirmation","confirmationToken":"biz-conf-1","data":{"reason":"confirm the address"}}`
	}
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.URL)
	first := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":700,"sku":"a"}`)).Transaction.ID
	tx := awaitDone(t, g, first)
	if tx.Status != domain.TxPendingConfirmation || tx.ConfirmationToken != "biz-conf-1" || string(tx.Data) != `{"reason":"confirm the address"}` {
		t.Fatalf("first transaction %+v", tx)
	}
	second := g.Submit(t, executeCmd(t, agent, "x2", `{"amount_cents":700,"sku":"a","confirmationToken":"biz-conf-1"}`)).Transaction.ID
	if second == first {
		t.Fatal("the confirming execute is the same transaction")
	}
	if tx := awaitDone(t, g, second); tx.Status != domain.TxCompleted || string(tx.Data) != `{"confirmed":true}` {
		t.Fatalf("second transaction %+v", tx)
	}
}

// A gate stopped while the call is in flight records nothing; started
// again on the same data, it calls the business again with the same key
// and the same decision token, and records exactly one outcome.
func TestRunnerResumesAfterStop(t *testing.T) {
	b := adaptertest.New(t)
	b.Hold = adaptertest.HoldFirst // the first call never answers while the gate runs
	dir := t.TempDir()
	clock := gatetest.NewClock(t0)
	g := startGate(t, dir, clock.Now, adapter.NetworkPolicy{})
	agent := setup(t, g, b.URL)
	id := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":300}`)).Transaction.ID
	if key := <-b.Entered; key != id {
		t.Fatalf("called with key %q, want %q", key, id)
	}
	// Stopped with the call in flight: nothing is recorded, so the
	// transaction is still executing when the gate starts again (a second
	// call proves it).
	g.stop(t)
	g = startGate(t, dir, clock.Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	tx := awaitDone(t, g, id)
	calls := b.Calls(id)
	if tx.Status != domain.TxCompleted || len(calls) != 2 {
		t.Fatalf("transaction %+v after %d calls", tx, len(calls))
	}
	if calls[0].Decision != calls[1].Decision {
		t.Fatal("the call made again carries another decision token")
	}
	if c := completions(t, g); len(c[id]) != 1 {
		t.Fatalf("%d outcomes recorded", len(c[id]))
	}
}

// The bounds: with one slot per business, calls to a blocked business
// wait while another business is called at once.
func TestRunnerBoundsPerBusiness(t *testing.T) {
	slow := adaptertest.New(t)
	release := make(chan struct{})
	slow.Hold = func(int, *http.Request) { <-release }
	fast := adaptertest.New(t)
	g0, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: gatetest.NewClock(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	rg := &runningGate{Gate: gatetest.Run(g0)}
	defer rg.Stop(t)
	agent := setup(t, rg, slow.URL)
	if ev := rg.Submit(t, &domain.Command{Type: domain.CmdBusiness, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "biz2"},
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "fast", Name: "Fast",
			Categories: []string{"books"}, Endpoint: fast.URL, Currency: "USD"}}}); ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %+v", ev.Error)
	}
	caller, err := adapter.NewCaller(adapter.CallerConfig{Keyring: g0.Keyring, NodeID: g0.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := adapter.NewRunner(adapter.RunnerConfig{Caller: caller, Gate: g0.Worker,
		Source: adapter.LogSource{State: g0.Store, Log: g0.Log}, MaxPerBusiness: 1, MaxConcurrent: 2})
	if err != nil {
		t.Fatal(err)
	}
	var slowIDs []string
	for i := range 3 {
		slowIDs = append(slowIDs, rg.Submit(t, executeCmd(t, agent, fmt.Sprint("s", i), fmt.Sprintf(`{"amount_cents":%d}`, i+1))).Transaction.ID)
	}
	cmd := executeCmd(t, agent, "f1", `{"amount_cents":9}`)
	cmd.Execute.BusinessID = "fast"
	fastID := rg.Submit(t, cmd).Transaction.ID
	stop := runner.Start() // the four are executing at start
	<-slow.Entered
	tx := awaitDone(t, rg, fastID)
	if tx.Status != domain.TxCompleted {
		t.Fatalf("fast transaction %+v", tx)
	}
	if inSlow := slow.Total(); inSlow != 1 {
		t.Fatalf("%d calls in flight to the slow business, want 1 (MaxPerBusiness)", inSlow)
	}
	close(release)
	for _, id := range slowIDs {
		if tx := awaitDone(t, rg, id); tx.Status != domain.TxCompleted || len(slow.Calls(id)) != 1 {
			t.Fatalf("slow transaction %+v, %d calls", tx, len(slow.Calls(id)))
		}
	}
	stop()
}

// The events after which a transaction is executing: an execute decided
// executing, an execute approval approved, queued executes released; no
// other (a pending or queued decision, a denial, an outcome).
func TestExecutingEvents(t *testing.T) {
	tx := func(status string) *domain.Transaction { return &domain.Transaction{ID: "tx_1", Status: status} }
	for _, tc := range []struct {
		name string
		ev   *domain.Event
		want []string
	}{
		{"decided executing", &domain.Event{Type: domain.EvExecuteDecided, Transaction: tx(domain.TxExecuting)}, []string{"tx_1"}},
		{"decided pending", &domain.Event{Type: domain.EvExecuteDecided, Transaction: tx(domain.TxPendingApproval)}, nil},
		{"decided queued", &domain.Event{Type: domain.EvExecuteDecided, Transaction: tx(domain.TxQueued)}, nil},
		{"approved", &domain.Event{Type: domain.EvApprovalResolved, Transaction: tx(domain.TxExecuting)}, []string{"tx_1"}},
		{"denied", &domain.Event{Type: domain.EvApprovalResolved, Transaction: tx(domain.TxDenied)}, nil},
		{"action approval", &domain.Event{Type: domain.EvApprovalResolved}, nil},
		{"released", &domain.Event{Type: domain.EvExecuteTimers, Timers: &domain.ExecuteTimers{Released: []string{"tx_2", "tx_3"}, Expired: []string{"tx_4"}}}, []string{"tx_2", "tx_3"}},
		{"tokens expired", &domain.Event{Type: domain.EvExecuteTimers, Timers: &domain.ExecuteTimers{TokensExpired: []string{"h"}}}, nil},
		{"completed", &domain.Event{Type: domain.EvExecuteCompleted, Transaction: tx(domain.TxExecuting)}, nil},
	} {
		if got := adapter.Executing(tc.ev); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An execute held for the consumer's approval is not called; approved, it
// becomes executing and the runner calls it then, once.
func TestRunnerCallsAnApprovedExecute(t *testing.T) {
	b := adaptertest.New(t)
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.URL)
	if ev := g.Submit(t, &domain.Command{Type: domain.CmdPolicy, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "pol"},
		Policy: &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "ask", Type: policy.TypeConfirmation,
			Confirmation: &policy.Confirmation{Always: true}}}}); ev.Type != domain.EvPolicyChanged {
		t.Fatalf("policy: %s %+v", ev.Type, ev.Error)
	}
	ev := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":900}`))
	if ev.Transaction == nil || ev.Transaction.Status != domain.TxPendingApproval {
		t.Fatalf("execute: %s %+v %+v", ev.Type, ev.Error, ev.Transaction)
	}
	id := ev.Transaction.ID
	res := g.Submit(t, &domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "ok"},
		Resolve: &domain.ResolveApproval{ApprovalID: id, Approve: true}})
	if res.Transaction == nil || res.Transaction.Status != domain.TxExecuting {
		t.Fatalf("approval: %s %+v %+v", res.Type, res.Error, res.Transaction)
	}
	if tx := awaitDone(t, g, id); tx.Status != domain.TxCompleted || len(b.Calls(id)) != 1 || b.Calls(id)[0].Body != `{"amount_cents":900}` {
		t.Fatalf("transaction %+v, calls %+v", tx, b.Calls(id))
	}
}

// An execute queued outside its consumer's time window is not called;
// when the window opens the gate's clock releases it (execute.timers) and
// the runner calls it then, once.
func TestRunnerCallsAReleasedExecute(t *testing.T) {
	b := adaptertest.New(t)
	clock := gatetest.NewClock(t0) // Thursday 09:00 UTC
	g := startGate(t, t.TempDir(), clock.Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.URL)
	if ev := g.Submit(t, &domain.Command{Type: domain.CmdPolicy, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "pol"},
		Policy: &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "hours", Type: policy.TypeTimeWindow,
			TimeWindow: &policy.TimeWindow{TimeZone: "UTC", Outside: policy.OutsideQueue,
				Windows: []policy.Window{{Days: []string{"thu"}, Start: "10:00", End: "11:00"}}}}}}); ev.Type != domain.EvPolicyChanged {
		t.Fatalf("policy: %s %+v", ev.Type, ev.Error)
	}
	ev := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":50}`))
	if ev.Transaction == nil || ev.Transaction.Status != domain.TxQueued {
		t.Fatalf("execute: %s %+v %+v", ev.Type, ev.Error, ev.Transaction)
	}
	id := ev.Transaction.ID
	if n := len(b.Calls(id)); n != 0 {
		t.Fatalf("a queued execute was called %d times", n)
	}
	clock.Advance(time.Hour) // the window opens; the worker's next tick releases it
	select {
	case key := <-b.Entered:
		if key != id {
			t.Fatalf("called with key %q, want %q", key, id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the released execute was never called")
	}
	if tx := awaitDone(t, g, id); tx.Status != domain.TxCompleted || len(b.Calls(id)) != 1 {
		t.Fatalf("transaction %+v, %d calls", tx, len(b.Calls(id)))
	}
}
