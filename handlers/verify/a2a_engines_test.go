package verify_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/code"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/handlers/verify"
)

// a2aSubmit submits an A2A message from agent-a to agent-b with the admin's
// credentials (the gate-wide boundary) to the embedded gate's worker, as
// the transports do, and returns its event.
func (s *server) a2aSubmit(id string, pt a2a.PayloadType, payload string) *domain.Event {
	s.t.Helper()
	ev, err := s.gate.Worker.Submit(context.Background(), &domain.Command{
		Type: domain.CmdA2AMessage, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "a2a-test", ID: id},
		A2A:     &a2a.Message{SenderAgentID: "agent-a", ReceiverAgentID: "agent-b", PayloadType: pt, Payload: json.RawMessage(payload)},
	})
	if err != nil || ev == nil || ev.Type != domain.EvA2AVerdict || ev.A2AVerdict == nil {
		s.t.Fatalf("%s: %+v %v", id, ev, err)
	}
	return ev
}

// a2aTrust allowlists the agents gate-wide (strict mode is the default).
func (s *server) a2aTrust(agents ...string) {
	s.t.Helper()
	for _, ag := range agents {
		ev, err := s.gate.Worker.Submit(context.Background(), &domain.Command{
			Type: domain.CmdA2ABoundary, Principal: domain.AdminPrincipal,
			Request:     domain.RequestID{Source: "a2a-test", ID: "trust-" + ag},
			A2ABoundary: &domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: ag},
		})
		if err != nil || ev == nil || ev.Type != domain.EvA2ABoundaryChanged {
			s.t.Fatalf("trust %s: %+v %v", ag, ev, err)
		}
	}
}

// hasRule reports whether the findings hold a finding of rule.
func hasRule(fs []engines.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// TestIssue13_A2AEnginesDecideEmbedded: on the embedded gate, the worker
// runs the real code engine on a code_execution message and the real
// logic engine (z3) on a logic_assertion message's dsl before Decide, and
// the verdict is recorded with the command. Code only the syntax tree
// sees as dangerous (code_guard's patterns pass it) is blocked with the
// engine's finding; a DSL contradiction is blocked by the logic engine;
// code the engine cannot parse is an engine error, blocked under
// block_on_error (the default); benign code and a satisfiable formula are
// forwarded.
func TestIssue13_A2AEnginesDecideEmbedded(t *testing.T) {
	s := newServer(t, verify.Builtin(verify.BuiltinOptions{Solver: solver(t)})...)
	s.a2aTrust("agent-a", "agent-b")

	obfuscated := `{"code":"f = getattr(__builtins__, \"ev\" + \"al\")\nf(\"1\")"}`
	if r := a2a.CodeGuardPayload(json.RawMessage(obfuscated)); r.Blocked || r.Problem != nil {
		t.Fatalf("code_guard's patterns block %s on their own (%+v): pick a form only the engine sees", obfuscated, r)
	}
	ev := s.a2aSubmit("code-obf", a2a.PayloadCode, obfuscated)
	v := ev.A2AVerdict
	if v.Status != a2a.StatusBlocked || v.Engine != a2a.EngineCode || ev.Error == nil || ev.Error.Code != domain.CodeA2ACode ||
		v.Details == nil || !hasRule(v.Details.Findings, "PY-OBF-001") || v.Attestation == "" {
		t.Fatalf("obfuscated eval: %+v %+v %+v", v, v.Details, ev.Error)
	}
	if cv := ev.Command.Verdict; cv == nil || cv.Engine != "code" || cv.Status != engines.Blocked {
		t.Fatalf("obfuscated eval: recorded verdict %+v, want the code engine's BLOCKED", cv)
	}

	// The language of the payload reaches the engine.
	ev = s.a2aSubmit("code-js", a2a.PayloadCode, `{"language":"javascript","code":"const m = 'child_' + 'process'; require(m)"}`)
	if v := ev.A2AVerdict; v.Status != a2a.StatusBlocked || v.Details == nil || !hasRule(v.Details.Findings, "JS-IMPORT-002") {
		t.Fatalf("javascript: %+v %+v", v, v.Details)
	}

	ev = s.a2aSubmit("logic-unsat", a2a.PayloadLogic, `{"dsl":"(AND (GT x 5) (LT x 3))"}`)
	v = ev.A2AVerdict
	if v.Status != a2a.StatusBlocked || v.Engine != a2a.EngineLogic || ev.Error == nil || ev.Error.Code != domain.CodeA2ALogic {
		t.Fatalf("dsl contradiction: %+v %+v", v, ev.Error)
	}
	if cv := ev.Command.Verdict; cv == nil || cv.Engine != "logic" || cv.Status != engines.Failed {
		t.Fatalf("dsl contradiction: recorded verdict %+v, want the logic engine's FAILED", cv)
	}

	ev = s.a2aSubmit("code-unparsable", a2a.PayloadCode, `{"code":"def ("}`)
	v = ev.A2AVerdict
	if v.Status != a2a.StatusError || v.Shadow || ev.Error == nil || ev.Error.Code != domain.CodeA2AEngineError ||
		v.Details == nil || v.Details.EngineError == "" {
		t.Fatalf("engine error: %+v %+v %+v", v, v.Details, ev.Error)
	}
	if cv := ev.Command.Verdict; cv == nil || cv.Status != engines.Error || cv.Code != "QWED-REQ-003" {
		t.Fatalf("engine error: recorded verdict %+v", cv)
	}

	for id, m := range map[string]struct {
		pt      a2a.PayloadType
		payload string
	}{
		"code-benign": {a2a.PayloadCode, `{"code":"print(\"evaluate this\")\nexecutor = 1"}`},
		"logic-sat":   {a2a.PayloadLogic, `{"dsl":"(AND (GT x 5) (LT y 10))"}`},
	} {
		ev = s.a2aSubmit(id, m.pt, m.payload)
		if v := ev.A2AVerdict; v.Status != a2a.StatusForwarded || ev.Error != nil || ev.Command.Verdict == nil ||
			ev.Command.Verdict.Status != engines.Verified {
			t.Fatalf("%s: %+v %+v verdict %+v", id, v, ev.Error, ev.Command.Verdict)
		}
	}

	// No engine for the other payload types, nor for a logic payload
	// without dsl.
	ev = s.a2aSubmit("logic-assertions", a2a.PayloadLogic, `{"assertions":[{"claim":"budget_approved","negated":false}]}`)
	if ev.A2AVerdict.Status != a2a.StatusForwarded || ev.Command.Verdict != nil {
		t.Fatalf("assertions only: %+v verdict %+v", ev.A2AVerdict, ev.Command.Verdict)
	}

	// The verdicts are in the log with their commands: replay re-decides
	// every message byte for byte without running an engine.
	rep, err := replay.Replay(context.Background(), s.gate.Log, s.gate.Store, true, s.gate.Keyring.SignerFor(s.gate.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay --verify: %+v %v", rep, err)
	}
}

// TestIssue13_A2AEngineRunsOnlyForAuthenticatedMessages: an A2A message
// sent with an agent token runs the code engine only when the token is
// its sender's, an active agent, as last committed; a message Decide
// refuses for its credentials costs no engine time.
func TestIssue13_A2AEngineRunsOnlyForAuthenticatedMessages(t *testing.T) {
	eng := &counting{Engine: code.New()}
	s := newServer(t, eng)
	id, tok := s.agent("supervised")
	other, _ := s.agent("supervised")
	s.a2aTrust(id, other, "agent-b")
	send := func(reqID, agent, token, sender string) *domain.Event {
		t.Helper()
		ev, err := s.gate.Worker.Submit(context.Background(), &domain.Command{
			Type: domain.CmdA2AMessage, AgentID: agent, TokenHash: command.HashSecret(token),
			Request: domain.RequestID{Source: "a2a-test", ID: reqID},
			A2A: &a2a.Message{SenderAgentID: sender, ReceiverAgentID: "agent-b", PayloadType: a2a.PayloadCode,
				Payload: json.RawMessage(`{"code":"import subprocess"}`)},
		})
		if err != nil || ev == nil {
			t.Fatalf("%s: %+v %v", reqID, ev, err)
		}
		return ev
	}
	refused := []struct{ name, agent, token, sender string }{
		{"unknown agent", "agent_nope", tok, "agent_nope"},
		{"wrong token", id, "qwed_agent_wrong", id},
		{"another agent's sender id", id, tok, other},
	}
	for _, c := range refused {
		ev := send(c.name, c.agent, c.token, c.sender)
		if ev.Type != domain.EvCommandRejected || ev.Error == nil {
			t.Fatalf("%s: %s %+v", c.name, ev.Type, ev.Error)
		}
		if n := eng.runs.Load(); n != 0 {
			t.Fatalf("%s: the engine ran %d times for a refused message", c.name, n)
		}
	}
	ev := send("own", id, tok, id)
	if v := ev.A2AVerdict; v == nil || v.Status != a2a.StatusBlocked || eng.runs.Load() != 1 || !hasRule(v.Details.Findings, "PY-IMPORT-003") {
		t.Fatalf("authenticated: %+v (runs %d)", ev, eng.runs.Load())
	}
	r := s.do("POST", "/agents/"+id+"/suspend", map[string]string{"X-API-Key": adminKey}, `{"suspended":true,"reason":"test"}`)
	if r.status != 200 {
		t.Fatalf("suspend: %d %s", r.status, r.body)
	}
	if ev := send("suspended", id, tok, id); ev.Type != domain.EvCommandRejected || eng.runs.Load() != 1 {
		t.Fatalf("suspended: %s %+v (runs %d)", ev.Type, ev.Error, eng.runs.Load())
	}
}
