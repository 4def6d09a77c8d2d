package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// countingBusiness counts calls per Idempotency-Key and remembers each
// call's decision token; hold, when set, is called before answering (it
// may block).
type countingBusiness struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  map[string]int
	tokens map[string][]string
	bodies map[string][]string
	hold   func(key string, n int, r *http.Request)
	answer func(key string, n int) (int, string)
	inCall chan string
}

func newCountingBusiness(t *testing.T) *countingBusiness {
	t.Helper()
	b := &countingBusiness{calls: map[string]int{}, tokens: map[string][]string{}, bodies: map[string][]string{},
		inCall: make(chan string, 64)}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get(adapter.HeaderIdempotencyKey)
		b.mu.Lock()
		b.calls[key]++
		n := b.calls[key]
		b.tokens[key] = append(b.tokens[key], r.Header.Get(adapter.HeaderDecision))
		b.bodies[key] = append(b.bodies[key], string(body))
		hold, answer := b.hold, b.answer
		b.mu.Unlock()
		b.inCall <- key
		if hold != nil {
			hold(key, n, r)
		}
		status, out := 200, fmt.Sprintf(`{"status":"completed","data":{"order_id":%q}}`, key)
		if answer != nil {
			status, out = answer(key, n)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *countingBusiness) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[key]
}

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
	b := newCountingBusiness(t)
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.srv.URL+"/agp")
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
	if n := b.count(id); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	set, err := attest.ParseJWKS(g.Keyring.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := set.VerifyExecute(b.tokens[id][0], t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if claims.Subject != id || claims.Audience != "shop" || claims.Execute.AmountCents != 1250 || claims.Execute.Consumer != "org_1" ||
		claims.Execute.AgentID != agent || claims.Execute.RequestHash != ev.Command.Execute.RequestHash || b.bodies[id][0] != body {
		t.Fatalf("claims %+v, body %s", claims, b.bodies[id][0])
	}
	if c := completions(t, g); len(c[id]) != 1 {
		t.Fatalf("%d outcomes recorded", len(c[id]))
	}
}

// A business that keeps failing: the call is retried, then recorded as
// failed with QWED-EXEC-008.
func TestRunnerRecordsFailure(t *testing.T) {
	b := newCountingBusiness(t)
	b.answer = func(string, int) (int, string) { return 503, `{"error":"down"}` }
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.srv.URL)
	id := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":5}`)).Transaction.ID
	tx := awaitDone(t, g, id)
	if tx.Status != domain.TxFailed || b.count(id) != 2 {
		t.Fatalf("transaction %+v after %d calls", tx, b.count(id))
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
	b := newCountingBusiness(t)
	b.answer = func(key string, _ int) (int, string) {
		b.mu.Lock()
		last := b.bodies[key][len(b.bodies[key])-1]
		b.mu.Unlock()
		var req map[string]any
		_ = json.Unmarshal([]byte(last), &req)
		if req["confirmationToken"] == "biz-conf-1" {
			return 200, `{"status":"completed","data":{"confirmed":true}}`
		}
		return 200, `{"status":"pending_confirmation","confirmationToken":"biz-conf-1","data":{"reason":"confirm the address"}}`
	}
	g := startGate(t, t.TempDir(), gatetest.NewClock(t0).Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	agent := setup(t, g, b.srv.URL)
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
	b := newCountingBusiness(t)
	release := make(chan struct{})
	b.hold = func(_ string, n int, r *http.Request) {
		if n == 1 {
			select { // the first call never answers while the gate runs
			case <-r.Context().Done():
			case <-release:
			}
		}
	}
	defer close(release)
	dir := t.TempDir()
	clock := gatetest.NewClock(t0)
	g := startGate(t, dir, clock.Now, adapter.NetworkPolicy{})
	agent := setup(t, g, b.srv.URL)
	id := g.Submit(t, executeCmd(t, agent, "x1", `{"amount_cents":300}`)).Transaction.ID
	if key := <-b.inCall; key != id {
		t.Fatalf("called with key %q, want %q", key, id)
	}
	// Stopped with the call in flight: nothing is recorded, so the
	// transaction is still executing when the gate starts again (a second
	// call proves it).
	g.stop(t)
	g = startGate(t, dir, clock.Now, adapter.NetworkPolicy{})
	defer g.stop(t)
	tx := awaitDone(t, g, id)
	if tx.Status != domain.TxCompleted || b.count(id) != 2 {
		t.Fatalf("transaction %+v after %d calls", tx, b.count(id))
	}
	if b.tokens[id][0] != b.tokens[id][1] {
		t.Fatal("the call made again carries another decision token")
	}
	if c := completions(t, g); len(c[id]) != 1 {
		t.Fatalf("%d outcomes recorded", len(c[id]))
	}
}

// The bounds: with one slot per business, calls to a blocked business
// wait while another business is called at once.
func TestRunnerBoundsPerBusiness(t *testing.T) {
	slow := newCountingBusiness(t)
	release := make(chan struct{})
	slow.hold = func(string, int, *http.Request) { <-release }
	fast := newCountingBusiness(t)
	g0, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: gatetest.NewClock(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	rg := &runningGate{Gate: gatetest.Run(g0)}
	defer rg.Stop(t)
	agent := setup(t, rg, slow.srv.URL)
	if ev := rg.Submit(t, &domain.Command{Type: domain.CmdBusiness, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "biz2"},
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "fast", Name: "Fast",
			Categories: []string{"books"}, Endpoint: fast.srv.URL, Currency: "USD"}}}); ev.Type != domain.EvBusinessChanged {
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
	<-slow.inCall
	tx := awaitDone(t, rg, fastID)
	if tx.Status != domain.TxCompleted {
		t.Fatalf("fast transaction %+v", tx)
	}
	slow.mu.Lock()
	inSlow := 0
	for _, n := range slow.calls {
		inSlow += n
	}
	slow.mu.Unlock()
	if inSlow != 1 {
		t.Fatalf("%d calls in flight to the slow business, want 1 (MaxPerBusiness)", inSlow)
	}
	close(release)
	for _, id := range slowIDs {
		if tx := awaitDone(t, rg, id); tx.Status != domain.TxCompleted || slow.count(id) != 1 {
			t.Fatalf("slow transaction %+v, %d calls", tx, slow.count(id))
		}
	}
	stop()
}
