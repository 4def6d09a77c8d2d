package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// TestIssue13_A2AEngineAction pins which engine checks which A2A message:
// the code engine a code payload's code (in its language), the logic
// engine a logic payload's dsl, nothing for the rest or for a payload its
// guard refuses.
func TestIssue13_A2AEngineAction(t *testing.T) {
	msg := func(pt a2a.PayloadType, payload string) *a2a.Message {
		return &a2a.Message{SenderAgentID: "a", ReceiverAgentID: "b", PayloadType: pt, Payload: json.RawMessage(payload)}
	}
	cases := []struct {
		name string
		m    *a2a.Message
		want *Action
	}{
		{"code", msg(a2a.PayloadCode, `{"code":"import subprocess"}`), &Action{Type: "execute_code", Code: "import subprocess"}},
		{"code with language", msg(a2a.PayloadCode, `{"language":"javascript","code":"eval(x)"}`),
			&Action{Type: "execute_code", Code: "eval(x)", Parameters: json.RawMessage(`{"language":"javascript"}`)}},
		{"code null language", msg(a2a.PayloadCode, `{"code":"x = 1","language":null}`), &Action{Type: "execute_code", Code: "x = 1"}},
		{"code without code", msg(a2a.PayloadCode, `{"language":"python"}`), nil},
		{"code not a string", msg(a2a.PayloadCode, `{"code":7}`), nil},
		{"logic dsl", msg(a2a.PayloadLogic, `{"dsl":"(AND (GT x 5) (LT x 3))"}`), &Action{Type: "verify_logic", Query: "(AND (GT x 5) (LT x 3))"}},
		{"logic dsl with assertions", msg(a2a.PayloadLogic, `{"assertions":[{"claim":"c","negated":false}],"dsl":"(GT x 1)"}`),
			&Action{Type: "verify_logic", Query: "(GT x 1)"}},
		{"logic without dsl", msg(a2a.PayloadLogic, `{"assertions":[{"claim":"c","negated":false}]}`), nil},
		{"logic dsl not a string", msg(a2a.PayloadLogic, `{"dsl":["x"]}`), nil},
		{"logic empty dsl", msg(a2a.PayloadLogic, `{"dsl":""}`), nil},
		{"financial", msg(a2a.PayloadFinancial, `{"data":{"claimed_total":1,"line_items":[]}}`), nil},
		{"general with code", msg(a2a.PayloadGeneral, `{"code":"eval(x)"}`), nil},
		{"data query", msg(a2a.PayloadDataQuery, `{"dsl":"(GT x 1)"}`), nil},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		got := A2AEngineAction(c.m)
		switch {
		case got == nil && c.want == nil:
		case got == nil || c.want == nil:
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		case got.Type != c.want.Type || got.Code != c.want.Code || got.Query != c.want.Query || string(got.Parameters) != string(c.want.Parameters):
			t.Errorf("%s: got %+v (%s), want %+v (%s)", c.name, got, got.Parameters, c.want, c.want.Parameters)
		}
		if got != nil && EngineFor(got.Type) == "" {
			t.Errorf("%s: %s is verified by no engine", c.name, got.Type)
		}
	}
}

// TestIssue13_MayRunA2AEngine pins when the transport runs the engine of
// an A2A message: with a principal's or the admin's key (the transport
// authenticated it), or with the token of its sender, an active agent;
// never for a message Decide refuses for its credentials.
func TestIssue13_MayRunA2AEngine(t *testing.T) {
	g := newGate(t)
	a := g.s.Agents[g.register("a", "supervised", nil, Limits{}, Permissions{})]
	suspended := *a
	suspended.Status = StatusSuspended
	msg := func(mut func(*Command)) *Command {
		c := &Command{Type: CmdA2AMessage, AgentID: a.ID, TokenHash: tokenHash("a"),
			A2A: &a2a.Message{SenderAgentID: a.ID, ReceiverAgentID: "b", PayloadType: a2a.PayloadCode, Payload: json.RawMessage(`{"code":"x"}`)}}
		if mut != nil {
			mut(c)
		}
		return c
	}
	cases := []struct {
		name  string
		agent *Agent
		cmd   *Command
		want  bool
	}{
		{"own token", a, msg(nil), true},
		{"principal key, no agent", nil, msg(func(c *Command) { c.Principal, c.TokenHash, c.AgentID = "org_1", "", "" }), true},
		{"admin key", nil, msg(func(c *Command) { c.Principal, c.TokenHash = AdminPrincipal, "" }), true},
		{"unknown agent", nil, msg(nil), false},
		{"wrong token", a, msg(func(c *Command) { c.TokenHash = tokenHash("b") }), false},
		{"no credentials", a, msg(func(c *Command) { c.TokenHash = "" }), false},
		{"another sender", a, msg(func(c *Command) { c.A2A.SenderAgentID = "agent_other" }), false},
		{"another agent id", a, msg(func(c *Command) { c.AgentID = "agent_other" }), false},
		{"suspended", &suspended, msg(nil), false},
		{"not an A2A message", a, msg(func(c *Command) { c.A2A = nil }), false},
	}
	for _, c := range cases {
		if got := MayRunA2AEngine(c.agent, c.cmd); got != c.want {
			t.Errorf("%s: MayRunA2AEngine = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestIssue13_A2AVerdictOfAnotherEngine: an engine verdict attached to an
// A2A message counts only when it comes from the engine its payload type
// expects (the code engine for code_execution, the logic engine for a
// logic "dsl"), as applyVerdict checks for a verify_action. Another
// engine's verdict is a transport fault: an engine error (fail closed),
// never a pass, and its findings are never reported as the message's.
func TestIssue13_A2AVerdictOfAnotherEngine(t *testing.T) {
	g := newGate(t)
	cfg := DefaultConfig()
	a := DefaultA2AConfig()
	a.DefaultAllow = true
	cfg.A2A = &a
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	finding := []engines.Finding{{Rule: "sql.drop", Severity: "low", Message: "not this message's"}}
	cases := []struct {
		name    string
		typ     a2a.PayloadType
		payload string
		verdict *EngineVerdict
	}{
		{"code answered by logic", a2a.PayloadCode, `{"code":"x = 1"}`, &EngineVerdict{Engine: "logic", Status: engines.Verified}},
		{"code answered by sql", a2a.PayloadCode, `{"code":"x = 1"}`, &EngineVerdict{Engine: "sql", Status: engines.Verified, Findings: finding}},
		{"dsl answered by code", a2a.PayloadLogic, `{"dsl":"(GT x 1)"}`, &EngineVerdict{Engine: "code", Status: engines.Verified}},
		{"dsl answered by math", a2a.PayloadLogic, `{"dsl":"(GT x 1)","assertions":[{"claim":"c","negated":false}]}`, &EngineVerdict{Engine: "math", Status: engines.Corrected}},
	}
	for _, c := range cases {
		cmd := a2aMsg("a", "b", c.typ, c.payload)
		cmd.Verdict = c.verdict
		ev := g.exec(cmd)
		v := verdictOf(t, ev)
		if v.Status != a2a.StatusError || ev.Error == nil || ev.Error.Code != CodeA2AEngineError || v.Attestation == "" {
			t.Errorf("%s: %+v %+v", c.name, v, ev.Error)
			continue
		}
		if v.Details == nil || !strings.Contains(v.Details.EngineError, c.verdict.Engine) || len(v.Details.Findings) != 0 {
			t.Errorf("%s: details %+v", c.name, v.Details)
		}
	}
	// A guard that blocks reports only its own engine's findings.
	cmd := a2aMsg("a", "b", a2a.PayloadFinancial, strings.Replace(finPayload, "%s", "999.99", 1))
	cmd.Verdict = &EngineVerdict{Engine: "code", Status: engines.Blocked, Findings: finding}
	v := verdictOf(t, g.exec(cmd))
	if v.Status != a2a.StatusBlocked || v.Details == nil || len(v.Details.Findings) != 0 {
		t.Errorf("finance with a stray verdict: %+v %+v", v, v.Details)
	}
	// The expected engine's verdict still counts.
	cmd = a2aMsg("a", "b", a2a.PayloadLogic, `{"dsl":"(GT x 1)"}`)
	cmd.Verdict = &EngineVerdict{Engine: "logic", Status: engines.Verified}
	if v := verdictOf(t, g.exec(cmd)); v.Status != a2a.StatusForwarded || v.Shadow {
		t.Errorf("logic verdict of the logic engine: %+v", v)
	}
}
