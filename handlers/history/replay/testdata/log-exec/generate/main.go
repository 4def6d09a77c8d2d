// Command generate writes the frozen log of executes of
// handlers/history/replay/testdata/log-exec (its README says what it
// holds): an embedded gate (handlers/embedded, the gate agentgate serve
// runs) decides a workload of businesses, consumer policies, prepares,
// executes and the businesses' outcomes, is restarted twice (in execute
// modes open, confirm, strict), and its log records, projection store and
// signing keys are written out.
//
//	go run ./handlers/history/replay/testdata/log-exec/generate -out handlers/history/replay/testdata/log-exec
//
// It is run once; the fixture is never regenerated to make a test pass.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
)

func main() {
	out := flag.String("out", "", "the fixture directory to write")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "generate: -out is required")
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// TickWait is the worker's tick interval (handlers.TickInterval): the
// generator waits for its ticks in real time.
const TickWait = time.Second

// token is every agent's token.
const token = "exec-fixture-token"

// session is one run of the gate.
type session struct {
	*gatetest.Gate
	clk  *gatetest.Clock
	n    *int
	errs []error
}

func start(dir string, clk *gatetest.Clock, mode string, maxCents int64, n *int) (*session, error) {
	cfg := domain.DefaultConfig()
	ec := domain.DefaultExecuteConfig()
	ec.Mode, ec.MaxAmountCents = mode, maxCents
	cfg.Execute = &ec
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "exec-fixture-admin-key", Clock: clk.Now, Config: &cfg,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Checkpoint: domain.CheckpointPolicy{Events: 25, Interval: domain.Duration(time.Hour)}})
	if err != nil {
		return nil, err
	}
	return &session{Gate: gatetest.Run(g), clk: clk, n: n}, nil
}

func (s *session) stop() error {
	s.Cancel()
	return errors.Join(append(s.errs, <-s.Done, s.Close())...)
}

// submit decides cmd a second after the last one.
func (s *session) submit(cmd *domain.Command) *domain.Event {
	*s.n++
	s.clk.Advance(time.Second)
	cmd.Request = domain.RequestID{Source: "exec-fixture", ID: fmt.Sprint("r", *s.n)}
	ev, err := s.Worker.Submit(context.Background(), cmd)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("submitting %s: %w", cmd.Type, err))
		return &domain.Event{}
	}
	return ev
}

func (s *session) register(name, principal string) string {
	ev := s.submit(&domain.Command{Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal, Register: &domain.RegisterAgent{
		Agent: domain.AgentInfo{Name: name, Type: "autonomous", PrincipalID: principal}, TokenHash: command.HashSecret(token)}})
	if ev.Registered == nil {
		s.errs = append(s.errs, fmt.Errorf("registering %s: %+v", name, ev.Error))
		return ""
	}
	return ev.Registered.AgentID
}

func (s *session) business(principal, op, id, name, currency string, cats ...string) {
	s.submit(&domain.Command{Type: domain.CmdBusiness, Principal: principal, Business: &domain.BusinessChange{Op: op,
		Business: domain.Business{ID: id, Name: name, Categories: cats, Endpoint: "http://127.0.0.1:9/" + id, Currency: currency}}})
}

func (s *session) policy(principal, consumer, op string, p policy.Policy) {
	s.submit(&domain.Command{Type: domain.CmdPolicy, Principal: principal, Policy: &domain.PolicyChange{Op: op, Consumer: consumer, Policy: p}})
}

// exec is an execute (a prepare when prepare is set) of agent at business
// with body and the hash of the confirmation token tok ("": none).
func (s *session) exec(typ domain.CommandType, agent, business, body, tok string) *domain.Event {
	h, err := domain.RequestHashOf([]byte(body))
	if err != nil {
		h = "sha256:unhashable"
	}
	th := ""
	if tok != "" {
		th = command.HashSecret(tok)
	}
	return s.submit(&domain.Command{Type: typ, AgentID: agent, TokenHash: command.HashSecret(token),
		Execute: &domain.ExecuteRequest{BusinessID: business, Request: json.RawMessage(body), RequestHash: h, TokenHash: th}})
}

// outcome records the business's answer to the transaction of ev.
func (s *session) outcome(ev *domain.Event, o domain.ExecuteOutcome) {
	if ev.Transaction == nil {
		return
	}
	o.TransactionID = ev.Transaction.ID
	s.submit(&domain.Command{Type: domain.CmdExecuteOutcome, Outcome: &o})
}

func spending(id string, daily int64) policy.Policy {
	return policy.Policy{ID: id, Type: policy.TypeSpending, Spending: &policy.Spending{DailyCents: daily}}
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "exec-fixture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// A Saturday: the time window policy queues, Monday releases.
	clk := gatetest.NewClock(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	n := 0
	ok := domain.ExecuteOutcome{HTTPStatus: 200, Status: "ok", Data: json.RawMessage(`{"order":"o-1"}`)}

	// Session 1, mode open: the registry, policies, executes and outcomes.
	s, err := start(dir, clk, domain.ExecuteModeOpen, 100, &n)
	if err != nil {
		return err
	}
	a1, a2, b1 := s.register("buyer-1", "org_a"), s.register("buyer-2", "org_a"), s.register("buyer-b", "org_b")
	s.business(domain.AdminPrincipal, domain.OpCreate, "shop", "Corner Shop", "USD", "food")
	s.business(domain.AdminPrincipal, domain.OpCreate, "air", "Air Lines", "EUR", "travel")
	s.business("org_b", domain.OpCreate, "bstore", "B's store", "JPY", "gifts")
	s.business("org_a", domain.OpUpdate, "bstore", "Taken over", "JPY", "gifts") // refused: not the owner
	s.business(domain.AdminPrincipal, domain.OpUpdate, "shop", "The Corner Shop", "USD", "food", "gifts")
	s.business(domain.AdminPrincipal, domain.OpCreate, "temp", "Temporary", "USD")
	s.business(domain.AdminPrincipal, domain.OpDelete, "temp", "", "")
	s.business(domain.AdminPrincipal, domain.OpCreate, "bad", "Bad", "usd") // refused: currency
	s.policy("org_a", "", domain.OpCreate, spending("cap", 1000))
	s.policy("org_a", "", domain.OpCreate, policy.Policy{ID: "nogamble", Type: policy.TypeCategory, Category: &policy.Category{Mode: policy.ModeBlock, Categories: []string{"gambling"}}})
	s.policy(domain.AdminPrincipal, "org_a", domain.OpUpdate, spending("cap", 5000))
	s.policy("org_a", "", domain.OpDelete, policy.Policy{ID: "nogamble"})
	s.policy("org_a", "", domain.OpUpdate, spending("nope", 5)) // refused: unknown
	s.policy(domain.AdminPrincipal, "org_b", domain.OpCreate, policy.Policy{ID: "bcap", Type: policy.TypeSpending, Spending: &policy.Spending{PerTransactionCents: 5000}})
	s.outcome(s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":400,"item":"bread"}`, ""), ok)
	s.outcome(s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":400,"item":"milk"}`, ""), domain.ExecuteOutcome{Error: "connection refused"})
	s.outcome(s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":400,"item":"eggs"}`, ""), ok)
	s.outcome(s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":400,"item":"cheese"}`, ""), ok)
	s.outcome(s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":4000,"item":"wine"}`, ""), ok) // blocked: the daily cap
	pc := s.exec(domain.CmdExecute, a2, "air", `{"amount":"12.50","seat":"4C"}`, "")
	s.outcome(pc, domain.ExecuteOutcome{HTTPStatus: 200, Status: domain.TxPendingConfirmation, ConfirmationToken: "air-confirm-1"})
	s.outcome(s.exec(domain.CmdExecute, b1, "bstore", `{"amount":"300"}`, ""), ok)
	s.outcome(s.exec(domain.CmdExecute, b1, "bstore", `{"amount_cents":6000}`, ""), ok)
	s.exec(domain.CmdExecute, a1, "nowhere", `{"amount_cents":1}`, "") // refused: unknown business
	s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":-5}`, "")   // refused: negative amount
	s.exec(domain.CmdExecute, a1, "shop", `{"amount":"1e400"}`, "")    // refused: an exponent
	s.outcome(pc, ok)                                                  // refused: answered already
	s.policy("org_a", "", domain.OpCreate, policy.Policy{ID: "hours", Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{
		TimeZone: "Europe/Paris", Windows: []policy.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:30"}}, Outside: policy.OutsideQueue}})
	queued := s.exec(domain.CmdExecute, a2, "shop", `{"amount_cents":50,"item":"weekend"}`, "")
	s.policy("org_a", "", domain.OpCreate, policy.Policy{ID: "ask", Type: policy.TypeConfirmation, Scope: policy.Scope{BusinessID: "air"},
		Confirmation: &policy.Confirmation{Always: true}})
	if err := s.stop(); err != nil {
		return err
	}

	// Session 2 (restart), mode confirm: the §2.4 refusals and a token
	// flow; Monday: the queued execute is released.
	if s, err = start(dir, clk, domain.ExecuteModeConfirm, 100, &n); err != nil {
		return err
	}
	body := `{"amount_cents":75,"item":"coffee"}`
	s.exec(domain.CmdExecute, a2, "shop", body, "")               // EXEC-001
	s.exec(domain.CmdExecute, a2, "shop", body, "never-prepared") // EXEC-002
	s.exec(domain.CmdPrepareExecute, a2, "shop", body, "tok-1")
	s.exec(domain.CmdPrepareExecute, a2, "shop", body, "tok-2")
	s.exec(domain.CmdExecute, a2, "shop", `{"amount_cents":76,"item":"coffee"}`, "tok-2") // EXEC-004
	s.exec(domain.CmdExecute, a2, "air", body, "tok-2")                                   // EXEC-004
	s.exec(domain.CmdExecute, b1, "shop", body, "tok-2")                                  // EXEC-004: another consumer's token
	s.outcome(s.exec(domain.CmdExecute, a2, "shop", body, "tok-1"), ok)
	s.exec(domain.CmdExecute, a2, "shop", body, "tok-1") // EXEC-002: used
	clk.Advance(2 * 24 * time.Hour)                      // Monday 09:00 Paris is past: the queued execute is released
	time.Sleep(3 * TickWait)
	s.exec(domain.CmdPrepareExecute, a1, "air", `{"amount":"9.90"}`, "tok-3")
	pend := s.exec(domain.CmdExecute, a1, "air", `{"amount":"9.90"}`, "tok-3")
	if pend.Transaction != nil && pend.Transaction.Status == domain.TxPendingApproval {
		s.submit(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_a", Resolve: &domain.ResolveApproval{ApprovalID: pend.Transaction.ID, Approve: true}})
		s.outcome(pend, ok)
	}
	s.outcome(queued, ok)
	if err := s.stop(); err != nil {
		return err
	}

	// Session 3 (restart), mode strict with a ceiling of 500 cents; a
	// token left to expire.
	if s, err = start(dir, clk, domain.ExecuteModeStrict, 500, &n); err != nil {
		return err
	}
	s.exec(domain.CmdPrepareExecute, a1, "shop", `{"amount_cents":600}`, "tok-4")
	s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":600}`, "tok-4") // EXEC-005
	s.exec(domain.CmdPrepareExecute, a1, "shop", `{"amount_cents":60}`, "tok-5")
	s.exec(domain.CmdPrepareExecute, a1, "shop", `{"amount_cents":70}`, "tok-6")
	clk.Advance(6 * time.Minute)
	s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":60}`, "tok-5") // EXEC-003: expired, not yet cleaned
	// The worker's execute tick (every handlers.TickInterval of real
	// time) expires the tokens: tok-6 is then unknown.
	time.Sleep(3 * TickWait)
	s.exec(domain.CmdExecute, a1, "shop", `{"amount_cents":70}`, "tok-6") // EXEC-002
	if err := s.stop(); err != nil {
		return err
	}
	return seedlog.WriteFixture(dir, out)
}
