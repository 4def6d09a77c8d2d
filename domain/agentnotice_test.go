package domain

import (
	"encoding/json"
	"strings"
	"testing"
)

// QWED-Agent spec v1.1 §2.3 (FAILED, any risk: "Block and notify
// principal"): with Config.AgentNotices a DENIED verify_action or tool
// call names the agent's principal and why; BUDGET_EXCEEDED, PENDING,
// APPROVED decisions and refusals before any decision name nobody; a log
// written before the switch re-decides without it, and refuses a webhook
// naming agent_blocked as it did.
func TestAgentSpec_2_3_BlockedDecisionNamesItsPrincipal(t *testing.T) {
	setup := func(t *testing.T, on bool) (*gate, string) {
		g := newGate(t)
		g.s.Config.AgentNotices = on
		return g, g.register("a", "supervised", nil, Limits{MaxPerRequestCost: 1_000_000}, Permissions{AllowedTools: []string{"read_doc"}})
	}
	g, id := setup(t, true)
	ev := g.exec(verifyCmd(id, "a", "c1", "1", "delete_everything", ""))
	n, ok := AgentNoticeOf(ev)
	if decision(ev) != Denied || !ok || ev.Decided.Notify == nil {
		t.Fatalf("an unknown action type: %s %v notify=%+v", decision(ev), ev.Error, ev.Decided.Notify)
	}
	if n.Principal != "org_1" || n.AgentID != id || n.Kind != KindAction || n.ActionID != ev.Decided.ActionID ||
		n.ActionType != "delete_everything" || n.Code != code(ev) || n.Status != ev.Decided.Verification.Status ||
		n.Check != ev.Decided.Verification.ChecksFailed[0] || n.Seq != ev.Seq || n.Partition != ev.Partition || !n.Time.Equal(ev.Time) {
		t.Fatalf("notice %+v of %+v", n, ev.Decided)
	}
	if n.Reason() != code(ev).Description() {
		t.Fatalf("reason %q", n.Reason())
	}
	tool := g.exec(toolCmd(id, "a", "shell"))
	if n, ok := AgentNoticeOf(tool); decision(tool) != Denied || !ok || n.Kind != KindTool || n.Tool != "shell" {
		t.Fatalf("a tool not allowed: %s notice %+v", decision(tool), n)
	}
	quiet := []struct {
		cmd  *Command
		want Decision
	}{
		{verifyCmd(id, "a", "c1", "2", "calculate", "1+1"), Approved},
		{&Command{Type: CmdVerifyAction, AgentID: id, TokenHash: tokenHash("a"), Verify: &VerifyAction{ // medium risk at trust 1
			Action: Action{Type: "api_call", Target: "https://api.example.com/v1"}, Context: ActionContext{ConversationID: "c1", StepNumber: "3"}}}, Pending},
		{&Command{Type: CmdVerifyAction, AgentID: id, TokenHash: tokenHash("a"), Verify: &VerifyAction{
			Action: Action{Type: "calculate", Query: "2+2", EstimatedCost: 2_000_000}, Context: ActionContext{ConversationID: "c1", StepNumber: "4"}}}, BudgetExceeded},
		{&Command{Type: CmdVerifyAction, AgentID: id, TokenHash: tokenHash("wrong"), Verify: &VerifyAction{Action: Action{Type: "calculate"}}}, ""},
	}
	for _, c := range quiet {
		ev := g.exec(c.cmd)
		if _, ok := AgentNoticeOf(ev); ok || decision(ev) != c.want || (ev.Decided != nil && ev.Decided.Notify != nil) {
			t.Errorf("%s %s %v notifies its principal (want %q, no notice)", ev.Type, decision(ev), ev.Error, c.want)
		}
	}
	if hook := g.exec(hookCmd("org_1", OpCreate, "", "https://h.example.com/x", NoticeAgentBlocked)); hook.Type != EvWebhookChanged {
		t.Fatalf("a webhook naming agent_blocked: %s %v", hook.Type, hook.Error)
	}

	old, oid := setup(t, false)
	if ev := old.exec(verifyCmd(oid, "a", "c1", "1", "delete_everything", "")); decision(ev) != Denied || ev.Decided.Notify != nil {
		t.Fatalf("a log before the switch: %s notify=%+v", decision(ev), ev.Decided.Notify)
	}
	hook := old.exec(hookCmd("org_1", OpCreate, "", "https://h.example.com/x", NoticeAgentBlocked))
	if hook.Type != EvCommandRejected || strings.Contains(hook.Error.Message, NoticeAgentBlocked+",") ||
		!strings.HasSuffix(hook.Error.Message, "limit_80, limit_exceeded") {
		t.Fatalf("a webhook naming agent_blocked before the switch: %s %v", hook.Type, hook.Error)
	}
	if !DefaultConfig().AgentNotices || NewState().Config.AgentNotices {
		t.Fatal("a new gate notifies; a log starts without it")
	}
}

// A webhook without an events filter is sent the execute rules' kinds
// only: agent_blocked goes to the webhooks that name it.
func TestAgentSpec_2_3_OnlyWebhooksNamingTheKind(t *testing.T) {
	all := &Webhook{ID: "wh_1"}
	named := &Webhook{ID: "wh_2", Events: []string{NoticeAgentBlocked}}
	other := &Webhook{ID: "wh_3", Events: []string{NoticeBlocked}}
	if WebhookWants(all, NoticeAgentBlocked) || !WebhookWants(all, NoticeBlocked) || !WebhookWants(named, NoticeAgentBlocked) ||
		WebhookWants(other, NoticeAgentBlocked) {
		t.Fatal("WebhookWants")
	}
}

// The relay of a notice to the principal's home partition
// (CmdAgentBlocked) is recorded as the gate sent it, and refused when it
// is not a notice the gate could have derived.
func TestAgentSpec_2_3_RelayedNotice(t *testing.T) {
	g := newGate(t)
	g.s.Config.AgentNotices = true
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	src := g.exec(verifyCmd(id, "a", "c1", "1", "delete_everything", ""))
	n, ok := AgentNoticeOf(src)
	if !ok {
		t.Fatal("no notice")
	}
	relay := func(mut func(c *Command, n *AgentNotice)) *Event {
		cp := *n
		c := &Command{Type: CmdAgentBlocked, Principal: cp.Principal, Request: AgentBlockedRequest(cp.Partition, cp.Seq), AgentBlocked: &cp}
		if mut != nil {
			mut(c, &cp)
		}
		return g.exec(c)
	}
	ev := relay(nil)
	got, ok := AgentNoticeOf(ev)
	if ev.Type != EvAgentBlockRelayed || !ok || *got != *n {
		t.Fatalf("relayed: %s %v %+v, want %+v", ev.Type, ev.Error, got, n)
	}
	if st, body := Reply(ev); st != 200 || body != ev.Command.AgentBlocked {
		t.Fatalf("reply %d %v", st, body)
	}
	if r := AgentBlockedRequest(3, 17); r.Source != AgentBlockedSource || r.ID != "3/17" {
		t.Fatalf("request %+v", r)
	}
	long := strings.Repeat("x", MaxIDBytes+1)
	for name, mut := range map[string]func(*Command, *AgentNotice){
		"another principal":  func(c *Command, _ *AgentNotice) { c.Principal = "org_2" },
		"the admin":          func(c *Command, n *AgentNotice) { c.Principal, n.Principal = AdminPrincipal, AdminPrincipal },
		"no agent":           func(_ *Command, n *AgentNotice) { n.AgentID = "" },
		"no action":          func(_ *Command, n *AgentNotice) { n.ActionID = "" },
		"approved":           func(_ *Command, n *AgentNotice) { n.Decision = Approved },
		"budget":             func(_ *Command, n *AgentNotice) { n.Decision = BudgetExceeded },
		"unknown code":       func(_ *Command, n *AgentNotice) { n.Code = "QWED-NOPE" },
		"unknown kind":       func(_ *Command, n *AgentNotice) { n.Kind = "x" },
		"no seq":             func(_ *Command, n *AgentNotice) { n.Seq = 0 },
		"negative partition": func(_ *Command, n *AgentNotice) { n.Partition = -1 },
		"a long tool":        func(_ *Command, n *AgentNotice) { n.Tool = long },
		"a long check":       func(_ *Command, n *AgentNotice) { n.Check = long },
		"a risk":             func(_ *Command, n *AgentNotice) { n.Risk = "extreme" },
		"no notice":          func(c *Command, _ *AgentNotice) { c.AgentBlocked = nil },
	} {
		if ev := relay(mut); ev.Type != EvCommandRejected {
			t.Errorf("%s: %s, want refused", name, ev.Type)
		}
	}
	g.s.Config.AgentNotices = false
	if ev := relay(nil); ev.Type != EvCommandRejected || ev.Error.Code != CodeUnsupportedType {
		t.Fatalf("without the switch: %s %v", ev.Type, ev.Error)
	}
}

// FuzzAgentBlocked: whatever the body of a relayed notice (decoded as the
// Kafka gate decodes its internal commands), Decide never panics, and
// records only a notice within the limits: a DENIED decision of a known
// code, for the command's principal, every identifier at most MaxIDBytes.
func FuzzAgentBlocked(f *testing.F) {
	f.Add(`{"principal_id":"org_1","agent_id":"agent_1","kind":"action","action_id":"act_1","action_type":"read_file","decision":"DENIED","status":"BLOCKED","code":"QWED-SEC-002","check":"path_allowed","risk_level":"high","partition":1,"seq":4,"time":"2026-03-02T09:00:00Z"}`, "org_1")
	f.Add(`{"principal_id":"*","decision":"APPROVED","seq":0}`, "*")
	f.Add(`{"principal_id":"org_1","agent_id":"a","kind":"tool_call","action_id":"x","decision":"DENIED","code":"QWED-AGENT-005","partition":-1,"seq":1,"time":"0001-01-01T00:00:00Z"}`, "org_1")
	f.Fuzz(func(t *testing.T, body, principal string) {
		var n AgentNotice
		if json.Unmarshal([]byte(body), &n) != nil {
			return
		}
		s := NewState()
		s.Config.AgentNotices = true
		cmd := &Command{Type: CmdAgentBlocked, Principal: principal, Request: AgentBlockedRequest(n.Partition, n.Seq), AgentBlocked: &n}
		ev := Decide(s, Env{Now: t0, Seq: 1}, cmd)
		if ev.Type == EvCommandRejected {
			return
		}
		got, ok := AgentNoticeOf(ev)
		if ev.Type != EvAgentBlockRelayed || !ok || got.Principal != principal || principal == AdminPrincipal ||
			got.Decision != Denied || !got.Code.Known() || got.Seq == 0 || got.Partition < 0 {
			t.Fatalf("recorded %s %+v", ev.Type, got)
		}
		for _, v := range []string{got.Principal, got.AgentID, got.ActionID, got.ActionType, got.Tool, got.Status, got.Check} {
			if len(v) > MaxIDBytes {
				t.Fatalf("an identifier of %d bytes recorded", len(v))
			}
		}
	})
}
