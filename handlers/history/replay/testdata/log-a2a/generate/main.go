// Command generate writes the frozen A2A log of
// handlers/history/replay/testdata/log-a2a (its README says what it
// holds): an embedded gate (handlers/embedded, the gate agentgate serve
// runs) decides a workload of A2A boundary changes and messages, is
// restarted twice (the second time with another A2A configuration), and
// its log records, projection store and signing keys are written out.
//
//	go run ./handlers/history/replay/testdata/log-a2a/generate -out handlers/history/replay/testdata/log-a2a
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
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
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

// session is one run of the gate.
type session struct {
	*gatetest.Gate
	clk  *gatetest.Clock
	n    *int
	errs []error
}

func start(dir string, clk *gatetest.Clock, cfg domain.Config, n *int) (*session, error) {
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "a2a-fixture-admin-key", Clock: clk.Now, Config: &cfg,
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
	cmd.Request = domain.RequestID{Source: "a2a-fixture", ID: fmt.Sprint("r", *s.n)}
	ev, err := s.Worker.Submit(context.Background(), cmd)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("submitting %s: %w", cmd.Type, err))
		return &domain.Event{}
	}
	return ev
}

func (s *session) boundary(principal, op, agent, sender, receiver string) {
	s.submit(&domain.Command{Type: domain.CmdA2ABoundary, Principal: principal,
		A2ABoundary: &domain.A2ABoundaryChange{Op: op, Agent: agent, Sender: sender, Receiver: receiver}})
}

func (s *session) msg(principal, sender, receiver string, pt a2a.PayloadType, payload string, verdict *domain.EngineVerdict) {
	s.submit(&domain.Command{Type: domain.CmdA2AMessage, Principal: principal, Verdict: verdict,
		A2A: &a2a.Message{SenderAgentID: sender, ReceiverAgentID: receiver, PayloadType: pt, Payload: json.RawMessage(payload)}})
}

const (
	finOK  = `{"data":{"claimed_total":150.00,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`
	finBad = `{"data":{"claimed_total":999.99,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`
	logOK  = `{"assertions":[{"claim":"budget_approved","negated":false},{"claim":"vendor_ok","negated":false}]}`
	logBad = `{"assertions":[{"claim":"budget_approved","negated":false},{"claim":"budget_approved","negated":true}]}`
	codeOK = `{"code":"print(sum([1, 2, 3]))","language":"python"}`
	codeEv = `{"code":"result = eval(user_input)","language":"python"}`
)

func config(blockOnError bool) domain.Config {
	cfg := domain.DefaultConfig()
	a := domain.DefaultA2AConfig()
	a.Burst, a.RatePerMinute, a.BlockOnError = 3, 6, blockOnError
	a.BypassAgents = []string{"bypass-bot"}
	a.TrustedAgents = []string{"cfg-trusted"}
	cfg.A2A = &a
	return cfg
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "a2a-fixture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	clk := gatetest.NewClock(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	n := 0
	engineErr := &domain.EngineVerdict{Engine: "logic", Status: engines.Error, Reason: "solver unavailable", Code: "QWED-ENG-002"}

	// Session 1: boundaries of every op, verdicts of every status.
	s, err := start(dir, clk, config(true), &n)
	if err != nil {
		return err
	}
	reg := s.submit(&domain.Command{Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal, Register: &domain.RegisterAgent{
		Agent: domain.AgentInfo{Name: "a2a-bot", Type: "autonomous", PrincipalID: "org_a"}, TokenHash: command.HashSecret("a2a-fixture-token")}})
	bot := ""
	if reg.Registered != nil {
		bot = reg.Registered.AgentID
	}
	for _, a := range []string{"alice", "bob", "carol", "dave", "bypass-bot", bot} {
		s.boundary("org_a", domain.A2AOpTrust, a, "", "")
	}
	s.boundary("org_a", domain.A2AOpBlock, "mallory", "", "")
	s.boundary("org_a", domain.A2AOpBlockPair, "", "alice", "carol")
	s.boundary("org_a", domain.A2AOpTrust, "erin", "", "")
	s.boundary("org_a", domain.A2AOpUntrust, "erin", "", "")
	s.boundary("org_a", domain.A2AOpBlock, "trent", "", "")
	s.boundary("org_a", domain.A2AOpUnblock, "trent", "", "")
	s.boundary("org_a", domain.A2AOpBlockPair, "", "bob", "alice")
	s.boundary("org_a", domain.A2AOpUnblockPair, "", "bob", "alice")
	s.boundary(domain.AdminPrincipal, domain.A2AOpTrust, "gw", "", "")
	s.boundary(domain.AdminPrincipal, domain.A2AOpBlock, "evil", "", "")
	s.boundary("org_b", domain.A2AOpTrust, "alice", "", "")
	s.boundary("org_b", domain.A2AOpTrust, "zed", "", "")
	// Refused changes: a bad op, an agent token, a pair op naming an agent.
	s.boundary("org_a", "befriend", "alice", "", "")
	s.submit(&domain.Command{Type: domain.CmdA2ABoundary, AgentID: bot, TokenHash: command.HashSecret("a2a-fixture-token"),
		A2ABoundary: &domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: "x"}})
	s.boundary("org_a", domain.A2AOpBlockPair, "alice", "", "")

	s.msg("org_a", "alice", "bob", a2a.PayloadGeneral, `{"message":"Hello!"}`, nil)
	s.msg("org_a", "alice", "dave", a2a.PayloadDataQuery, `{"query":"SELECT 1"}`, nil)
	s.msg("org_a", "bob", "alice", a2a.PayloadFinancial, finOK, nil)
	s.msg("org_a", "bob", "dave", a2a.PayloadFinancial, finBad, nil)
	s.msg("org_a", "carol", "alice", a2a.PayloadLogic, logOK, nil)
	s.msg("org_a", "carol", "bob", a2a.PayloadLogic, logBad, nil)
	s.msg("org_a", "dave", "alice", a2a.PayloadCode, codeOK, nil)
	s.msg("org_a", "dave", "bob", a2a.PayloadCode, codeEv, nil)
	s.msg("org_a", "carol", "dave", a2a.PayloadLogic, `{"assertions":[],"dsl":"(AND x (NOT x))"}`, engineErr)
	s.msg("org_a", "bob", "carol", a2a.PayloadCode, codeOK, &domain.EngineVerdict{Engine: "code", Status: engines.Failed,
		Reason: "os.system reached through an alias", Findings: []engines.Finding{{Severity: "critical", Message: "shell execution"}}})
	s.msg("org_a", "mallory", "bob", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_a", "alice", "mallory", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_a", "alice", "carol", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_a", "alice", "stranger", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_a", "evil", "alice", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_a", "bypass-bot", "alice", a2a.PayloadCode, codeEv, nil)
	s.msg("org_a", "cfg-trusted", "alice", a2a.PayloadGeneral, `{}`, nil)
	s.msg(domain.AdminPrincipal, "gw", "cfg-trusted", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_b", "alice", "zed", a2a.PayloadGeneral, `{"trace":"org_b"}`, nil)
	s.msg("org_b", "alice", "bob", a2a.PayloadGeneral, `{}`, nil)
	// An agent token: its own messages, then another sender's (refused).
	tok := command.HashSecret("a2a-fixture-token")
	s.submit(&domain.Command{Type: domain.CmdA2AMessage, AgentID: bot, TokenHash: tok,
		A2A: &a2a.Message{SenderAgentID: bot, ReceiverAgentID: "alice", PayloadType: a2a.PayloadGeneral, Payload: json.RawMessage(`{}`), TraceID: "trace-bot-1"}})
	s.submit(&domain.Command{Type: domain.CmdA2AMessage, AgentID: bot, TokenHash: tok,
		A2A: &a2a.Message{SenderAgentID: "alice", ReceiverAgentID: "bob", PayloadType: a2a.PayloadGeneral, Payload: json.RawMessage(`{}`)}})
	// Stage 0: malformed messages are refusals.
	s.msg("org_a", "", "bob", a2a.PayloadGeneral, `{}`, nil)
	s.msg("org_a", "alice", "bob", "telepathy", `{}`, nil)
	// The rate limit: a burst of 3 on dave -> carol, the 4th and 5th refused.
	for range 5 {
		s.msg("org_a", "dave", "carol", a2a.PayloadGeneral, `{}`, nil)
	}
	if err := s.stop(); err != nil {
		return err
	}

	// Session 2, same configuration: the restored buckets still refuse.
	if s, err = start(dir, clk, config(true), &n); err != nil {
		return err
	}
	s.msg("org_a", "dave", "carol", a2a.PayloadGeneral, `{}`, nil)
	clk.Advance(20 * time.Second) // two tokens back at 6 a minute
	s.msg("org_a", "dave", "carol", a2a.PayloadGeneral, `{}`, nil)
	if err := s.stop(); err != nil {
		return err
	}

	// Session 3, shadow mode: an engine error is forwarded and says so;
	// after ten idle minutes every bucket is evicted.
	if s, err = start(dir, clk, config(false), &n); err != nil {
		return err
	}
	s.msg("org_a", "carol", "dave", a2a.PayloadLogic, `{"assertions":[],"dsl":"(AND x (NOT x))"}`, engineErr)
	clk.Advance(10 * time.Minute)
	s.msg("org_a", "dave", "carol", a2a.PayloadGeneral, `{}`, nil)
	s.boundary("org_a", domain.A2AOpUntrust, "bob", "", "")
	s.msg("org_a", "alice", "bob", a2a.PayloadGeneral, `{}`, nil)
	s.submit(&domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}})
	if err := s.stop(); err != nil {
		return err
	}
	return seedlog.WriteFixture(dir, out)
}
