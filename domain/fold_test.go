package domain

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDesign1_DecideNeverPanicsOnMissingPayloads: every command type with
// no payload, a nil command and an unknown type are refusals, never panics.
func TestDesign1_DecideNeverPanicsOnMissingPayloads(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	types := []CommandType{CmdRegisterAgent, CmdVerifyAction, CmdVerifyToolCall, CmdLogExecution, CmdRequestTrust,
		CmdResolveApproval, CmdSetTrustLevel, CmdSuspendAgent, CmdFileComplaint, CmdPutToolRegistry, CmdIssuePrincipalKey,
		CmdConfigure, CmdRejectRequest, "qwed.bogus"}
	for _, typ := range types {
		ev := g.exec(&Command{Type: typ, AgentID: id, Principal: AdminPrincipal})
		if ev == nil || ev.Type != EvCommandRejected || ev.Error == nil || !ev.Error.Code.Known() {
			t.Errorf("%s without payload: %+v", typ, ev)
		}
	}
	if ev := Decide(g.s, Env{Now: g.now}, nil); ev == nil || code(ev) != CodeMissingField || ev.Command != nil {
		t.Fatalf("nil command: %+v", ev)
	}
	if ev := g.exec(&Command{Type: CmdTick}); ev != nil {
		t.Fatalf("tick without payload and nothing due: %+v", ev)
	}
}

// TestDesign1_TimeNeverRunsBackwards: an Env.Now earlier than the last
// event is raised to it.
func TestDesign1_TimeNeverRunsBackwards(t *testing.T) {
	g := newGate(t)
	g.register("a", "trusted", nil, Limits{}, Permissions{})
	ev := Decide(g.s, Env{Now: g.now.Add(-time.Hour)}, &Command{Type: CmdTick, Tick: &Tick{}})
	if ev != nil {
		t.Fatal("tick recorded")
	}
	ev = Decide(g.s, Env{Now: g.now.Add(-time.Hour).In(time.FixedZone("x", 3600))}, &Command{Type: CmdRejectRequest,
		Reject: &RejectRequest{Error: Error{Code: CodeInvalidAPIKey, Message: "bad key"}}})
	if !ev.Time.Equal(g.now) || ev.Time.Location() != time.UTC {
		t.Fatalf("time %s", ev.Time)
	}
}

// TestDesign3_RejectRequestRecordsTheTransportRefusal.
func TestDesign3_RejectRequestRecordsTheTransportRefusal(t *testing.T) {
	g := newGate(t)
	details := map[string]any{"field": "x"}
	ev := g.exec(&Command{Type: CmdRejectRequest, Reject: &RejectRequest{Error: Error{Code: CodeInvalidAPIKey, Message: "bad", Details: details},
		Endpoint: "POST /agents/register", BodyBytes: 12}})
	if ev.Type != EvCommandRejected || code(ev) != CodeInvalidAPIKey {
		t.Fatalf("%+v", ev)
	}
	details["field"] = "changed"
	if ev.Error.Details["field"] != "x" {
		t.Fatal("the event shares the command's details map")
	}
	if status, body := Reply(ev); status != 401 || body.(ErrorReply).Error.Code != CodeInvalidAPIKey {
		t.Fatalf("%d %+v", status, body)
	}
}

// TestSeed000_Executions pins LogExecution: only approved open actions, once.
func TestSeed000_Executions(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{MaxDailyCost: 10 * MicrosPerUSD, MaxDailyTokens: 1000}, Permissions{})
	approved := verifyCmd(id, "a", "c", "1", "calculate", "1")
	approved.Verify.Action.EstimatedCost, approved.Verify.Action.EstimatedTokens = 2*MicrosPerUSD, 100
	actID := g.exec(approved).Decided.ActionID
	pendID := g.exec(verifyCmd(id, "a", "c", "2", "send_email", "x")).Decided.ActionID
	deniedID := g.exec(verifyCmd(id, "a", "c", "3", "delete_file", "x")).Decided.ActionID
	logCmd := func(action string, cost USD, tokens int64) *Event {
		return g.exec(&Command{Type: CmdLogExecution, AgentID: id, TokenHash: tokenHash("a"),
			Execution: &LogExecution{ActionID: action, Success: true, CostUSD: cost, Tokens: tokens, ResultHash: "sha256:x"}})
	}
	if ev := logCmd(pendID, 0, 0); code(ev) != CodeConflict {
		t.Fatalf("pending: %v", ev.Error)
	}
	if ev := logCmd(deniedID, 0, 0); code(ev) != CodeNotFound {
		t.Fatalf("denied at decision time: %v", ev.Error)
	}
	if ev := logCmd(actID, -1, 0); code(ev) != CodeInvalidRequest {
		t.Fatalf("negative cost: %v", ev.Error)
	}
	if ev := logCmd(actID, 0, -1); code(ev) != CodeInvalidRequest {
		t.Fatalf("negative tokens: %v", ev.Error)
	}
	if ev := logCmd("", 0, 0); code(ev) != CodeMissingField {
		t.Fatalf("no action id: %v", ev.Error)
	}
	ev := logCmd(actID, MicrosPerUSD/2, 250)
	x := ev.Executed
	if x == nil || x.CostDelta != -3*MicrosPerUSD/2 || x.TokensDelta != 150 || !x.SameDay || *x.Budget.DailyCost != 10*MicrosPerUSD-MicrosPerUSD/2 ||
		*x.Budget.DailyTokens != 1000-250 {
		t.Fatalf("%+v", x)
	}
	if u := g.s.Agents[id].Usage; u.DailyCost != MicrosPerUSD/2 || u.DailyTokens != 250 {
		t.Fatalf("usage %+v", u)
	}
	if ev := logCmd(actID, 0, 0); code(ev) != CodeConflict {
		t.Fatalf("twice: %v", ev.Error)
	}
	if _, open := g.s.Agents[id].OpenActions[actID]; open {
		t.Fatal("logged action still open")
	}
	// Another agent cannot log this agent's action.
	other := g.register("b", "trusted", nil, Limits{}, Permissions{})
	if ev := g.exec(&Command{Type: CmdLogExecution, AgentID: other, TokenHash: tokenHash("b"),
		Execution: &LogExecution{ActionID: pendID}}); code(ev) != CodeNotFound {
		t.Fatalf("other agent: %v", ev.Error)
	}
}

// TestDesign3_ReplyStatusAndBody pins Reply's statuses and seed field names.
func TestDesign3_ReplyStatusAndBody(t *testing.T) {
	g := newGate(t)
	reg := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
		Agent:       AgentInfo{Name: "CustomerSupportBot", Type: "autonomous", PrincipalID: "org_abc123"},
		Permissions: Permissions{AllowedEngines: []string{"math", "fact", "sql"}, AllowedTools: []string{"database_read"}},
		Budget:      Limits{MaxDailyCost: 100 * MicrosPerUSD, MaxRequestsPerHour: 1000}, TokenHash: tokenHash("x")}})
	if code(reg) != CodeForbidden {
		t.Fatalf("registration for another principal: %v", reg.Error)
	}
	reg = g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_abc123", Register: &RegisterAgent{
		Agent:       AgentInfo{Name: "CustomerSupportBot", Type: "autonomous", PrincipalID: "org_abc123"},
		Permissions: Permissions{AllowedEngines: []string{"math", "fact", "sql"}, AllowedTools: []string{"database_read"}},
		Budget:      Limits{MaxDailyCost: 100 * MicrosPerUSD, MaxRequestsPerHour: 1000}, TokenHash: tokenHash("x")}})
	status, body := Reply(reg)
	b, _ := json.Marshal(body)
	want := `{"agent_id":"` + reg.AgentID + `","did":"did:qwed:agent:` + reg.AgentID + `","name":"CustomerSupportBot","type":"autonomous",` +
		`"principal_id":"org_abc123","status":"active","created_at":"2026-03-02T09:00:00Z",` +
		`"permissions":{"allowed_engines":["math","fact","sql"],"allowed_tools":["database_read"]},` +
		`"budget":{"max_daily_cost_usd":100,"max_requests_per_hour":1000},"trust_level":2}`
	if status != 201 || string(b) != want {
		t.Fatalf("%d\n%s\nwant\n%s", status, b, want)
	}
	id := reg.AgentID
	verify := func(conv, step, typ, query string) *Event {
		cmd := verifyCmd(id, "x", conv, step, typ, query)
		return g.exec(cmd)
	}
	cases := []struct {
		ev     *Event
		status int
	}{
		{verify("c", "1", "execute_sql", "SELECT * FROM customers WHERE status = 'active'"), 200},
		{verify("c", "2", "write_file", "x"), 202},
		{verify("c", "2", "calculate", "1"), 409},
		{verify("c", "3", "delete_file", "x"), 403},
		{verify("c", "3", "teleport", "x"), 400},
		{verify("c", "3", "calculate", "1"), 200},
		{g.exec(&Command{Type: CmdVerifyAction, AgentID: id, Verify: &VerifyAction{}}), 401},
		{g.exec(&Command{Type: CmdVerifyAction, AgentID: "agent_missing", TokenHash: tokenHash("x"), Verify: &VerifyAction{}}), 404},
	}
	for i, c := range cases {
		if status, _ := Reply(c.ev); status != c.status {
			t.Errorf("case %d (%s %v): status %d, want %d", i, c.ev.Type, c.ev.Error, status, c.status)
		}
	}
	_, body = Reply(cases[0].ev)
	b, _ = json.Marshal(body)
	for _, field := range []string{`"action_id":"act_`, `"decision":"APPROVED"`, `"verification":{"status":"VERIFIED","engine":"sql","risk_level":"low","checks_passed":["context_valid",`,
		`"budget_remaining":{"daily_cost_usd":100,"hourly_requests":999}`, `"conversation_id":"c"`, `"step_number":1`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("decision body lacks %s: %s", field, b)
		}
	}
	_, body = Reply(cases[3].ev)
	b, _ = json.Marshal(body)
	if !strings.Contains(string(b), `"error":{"code":"QWED-AGENT-TRUST-001"`) || !strings.Contains(string(b), `"checks_failed":["trust_sufficient"]`) {
		t.Errorf("denied body: %s", b)
	}
	_, body = Reply(cases[1].ev)
	b, _ = json.Marshal(body)
	// A PENDING reply carries QWED-AGENT-TRUST-002 (QWED-Agent spec v1.1 §9).
	if !strings.Contains(string(b), `"approval":{"approval_id":"act_`) || !strings.Contains(string(b), `"error":{"code":"QWED-AGENT-TRUST-002"`) {
		t.Errorf("pending body: %s", b)
	}
	_, body = Reply(cases[6].ev)
	b, _ = json.Marshal(body)
	if string(b) != `{"error":{"code":"QWED-AGENT-002","message":"agent token missing","details":{}}}` {
		t.Errorf("rejected body: %s", b)
	}
	if status, body := Reply(nil); status != 204 || body != nil {
		t.Fatal("nil event")
	}
	if status, _ := Reply(&Event{Type: "mystery"}); status != 500 {
		t.Fatal("unknown event")
	}
	others := []*Event{
		g.exec(&Command{Type: CmdSetTrustLevel, AgentID: id, Principal: "org_abc123", SetTrust: &SetTrustLevel{Level: 1}}),
		g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: DefaultConfig()}}),
		g.exec(&Command{Type: CmdIssuePrincipalKey, Principal: AdminPrincipal, IssueKey: &IssuePrincipalKey{PrincipalID: "org_2", KeyHash: tokenHash("k"), KeyID: "k1"}}),
		g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_2", ToolRegistry: &PutToolRegistry{PrincipalID: "org_2"}}),
		g.exec(&Command{Type: CmdSuspendAgent, AgentID: id, Principal: "org_abc123", Suspend: &SuspendAgent{Suspended: true}}),
	}
	for _, ev := range others {
		if status, body := Reply(ev); status != 200 || body == nil {
			t.Errorf("%s: %d %v", ev.Type, status, ev.Error)
		}
	}
	_, body = Reply(others[2])
	if b, _ := json.Marshal(body); strings.Contains(string(b), tokenHash("k")) {
		t.Fatal("key reply leaks the key hash")
	}
}

// TestDesign3_AdminCommands pins key issue and configuration.
func TestDesign3_AdminCommands(t *testing.T) {
	g := newGate(t)
	key := func(by, p, h string) *Event {
		return g.exec(&Command{Type: CmdIssuePrincipalKey, Principal: by, IssueKey: &IssuePrincipalKey{PrincipalID: p, KeyHash: h, KeyID: "k"}})
	}
	cases := []struct {
		ev   *Event
		code Code
	}{
		{key(AdminPrincipal, "org_1", tokenHash("k1")), ""},
		{key(AdminPrincipal, "org_2", tokenHash("k1")), CodeConflict},
		{key("org_1", "org_1", tokenHash("k2")), CodeForbidden},
		{key("", "org_1", tokenHash("k2")), CodeMissingAPIKey},
		{key(AdminPrincipal, "", tokenHash("k2")), CodeMissingField},
		{key(AdminPrincipal, AdminPrincipal, tokenHash("k2")), CodeInvalidRequest},
		{key(AdminPrincipal, "org_1", "nothex"), CodeInvalidRequest},
	}
	for i, c := range cases {
		if code(c.ev) != c.code {
			t.Errorf("key case %d: %v", i, c.ev.Error)
		}
	}
	if g.s.Keys[tokenHash("k1")] != "org_1" || g.s.Principals["org_1"] == nil {
		t.Fatal("key not recorded")
	}
	conf := func(c Config) *Event {
		return g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: c}})
	}
	for _, bad := range []Config{{MaxSteps: 0, ApprovalTTL: 1}, {MaxSteps: MaxConfigSteps + 1, ApprovalTTL: 1}, {MaxSteps: 5}} {
		if ev := conf(bad); code(ev) != CodeInvalidRequest {
			t.Errorf("config %+v: %v", bad, ev.Error)
		}
	}
	if ev := conf(Config{MaxSteps: MaxConfigSteps, ApprovalTTL: Duration(time.Minute), DoomLoopGuardRequired: true}); ev.Type != EvConfigured ||
		g.s.Config.MaxSteps != MaxConfigSteps || !g.s.Config.DoomLoopGuardRequired {
		t.Fatalf("%+v", g.s.Config)
	}
}

// TestDesign2_7_Bounds pins the named limits on both sides.
func TestDesign2_7_Bounds(t *testing.T) {
	t.Run("permission entries", func(t *testing.T) {
		g := newGate(t)
		for _, n := range []int{MaxPermissionEntries, MaxPermissionEntries + 1} {
			tools := make([]string, n)
			for i := range tools {
				tools[i] = "t" + strconv.Itoa(i)
			}
			ev := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
				Agent: AgentInfo{Name: "a", Type: "trusted", PrincipalID: "org_1"}, Permissions: Permissions{AllowedTools: tools}, TokenHash: tokenHash("a")}})
			if (ev.Type == EvAgentRegistered) != (n == MaxPermissionEntries) {
				t.Errorf("%d entries: %s %v", n, ev.Type, ev.Error)
			}
		}
	})
	t.Run("registry tools", func(t *testing.T) {
		g := newGate(t)
		for _, n := range []int{MaxRegistryTools, MaxRegistryTools + 1} {
			tools := make([]ToolSpec, n)
			for i := range tools {
				tools[i] = ToolSpec{Name: "t" + strconv.Itoa(i), RiskLevel: RiskLow}
			}
			ev := g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: &PutToolRegistry{PrincipalID: "org_1", Tools: tools}})
			if (ev.Type == EvToolRegistrySet) != (n == MaxRegistryTools) {
				t.Errorf("%d tools: %s %v", n, ev.Type, ev.Error)
			}
		}
		ev := g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: &PutToolRegistry{PrincipalID: "org_1",
			Tools: []ToolSpec{{Name: "x", RiskLevel: "LOW"}}}})
		if code(ev) != CodeInvalidRequest {
			t.Errorf("non-canonical risk: %v", ev.Error)
		}
	})
	t.Run("open actions", func(t *testing.T) {
		s := NewState()
		Apply(s, &Event{Type: EvAgentRegistered, Time: t0, Registered: &AgentRegistered{AgentID: "a"}})
		for i := 0; i <= MaxOpenActions; i++ {
			Apply(s, &Event{Type: EvActionDecided, Time: t0, AgentID: "a", Decided: &ActionDecided{
				ActionID: "act_" + strconv.Itoa(i), Decision: Approved}})
			if i == MaxOpenActions-1 && len(s.Agents["a"].OpenActions) != MaxOpenActions {
				t.Fatalf("at the limit: %d", len(s.Agents["a"].OpenActions))
			}
		}
		a := s.Agents["a"]
		if len(a.OpenActions) != MaxOpenActions || len(a.OpenOrder) != MaxOpenActions || a.OpenActions["act_0"] != nil || a.OpenOrder[0] != "act_1" {
			t.Fatalf("over the limit: %d %d first %s", len(a.OpenActions), len(a.OpenOrder), a.OpenOrder[0])
		}
	})
	t.Run("conversations", func(t *testing.T) {
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{})
		a := g.s.Agents[id]
		// Test-only shortcut: fill the agent with MaxConversations
		// conversations directly rather than through 10,000 decisions.
		for i := 0; i < MaxConversations; i++ {
			a.Conversations["c"+strconv.Itoa(i)] = &Conversation{LastStep: 1, UpdatedAt: t0.Add(time.Duration(1+i%7) * time.Second)}
		}
		a.Conversations["c5"].UpdatedAt = t0 // the least recent
		g.now = t0.Add(time.Hour)
		ev := g.exec(verifyCmd(id, "a", "c6", "2", "calculate", "1"))
		if ev.Decided.ConversationEvicted != "" || len(a.Conversations) != MaxConversations {
			t.Fatalf("existing conversation at the limit: evicted %q, %d", ev.Decided.ConversationEvicted, len(a.Conversations))
		}
		ev = g.exec(verifyCmd(id, "a", "new", "1", "calculate", "1"))
		if ev.Decided.ConversationEvicted != "c5" || len(a.Conversations) != MaxConversations || a.Conversations["c5"] != nil || a.Conversations["new"] == nil {
			t.Fatalf("over the limit: evicted %q, %d", ev.Decided.ConversationEvicted, len(a.Conversations))
		}
		// Ties go to the smallest ID (c0 and c7 share the oldest time now).
		ev = g.exec(verifyCmd(id, "a", "new2", "1", "calculate", "2"))
		if ev.Decided.ConversationEvicted != "c0" {
			t.Fatalf("tie: evicted %q", ev.Decided.ConversationEvicted)
		}
		// A denied decision evicts nothing.
		ev = g.exec(verifyCmd(id, "a", "new3", "1", "teleport", "2"))
		if ev.Decided.ConversationEvicted != "" || a.Conversations["c14"] == nil {
			t.Fatal("a denial evicted a conversation")
		}
	})
	t.Run("logged actions and windows", func(t *testing.T) {
		if keepLast([]int{1, 2, 3, 4}, 2)[0] != 3 || len(keepLast([]int{1}, 2)) != 1 {
			t.Fatal("keepLast")
		}
		// As a sliding window (append one, drop one) it keeps the last n
		// in order, clears what it drops, and its memory stays bounded.
		const n = 64
		var w []*int
		for i := 0; i < 10_000; i++ {
			v := i
			w = keepLast(append(w, &v), n)
			first := i - n + 1
			if first < 0 {
				first = 0
			}
			if len(w) != i-first+1 || *w[0] != first || *w[len(w)-1] != i {
				t.Fatalf("after %d appends the window holds %d..%d (%d)", i+1, *w[0], *w[len(w)-1], len(w))
			}
			if cap(w) > 4*n {
				t.Fatalf("after %d appends the window's capacity is %d for %d elements", i+1, cap(w), n)
			}
			if spare := w[:cap(w)][len(w):]; len(spare) > 0 && spare[0] != nil {
				t.Fatal("spare capacity holds a value")
			}
		}
		full := make([]*int, n+1)
		for i := range full {
			full[i] = new(int)
		}
		kept := keepLast(full, n)
		if full[0] != nil || &kept[0] != &full[1] {
			t.Fatal("keepLast did not clear the dropped element or moved the kept ones")
		}
	})
}

// TestDesign1_ApplyIgnoresEventsThatDoNotFit: events for unknown agents,
// unknown or settled approvals and duplicates change nothing.
func TestDesign1_ApplyIgnoresEventsThatDoNotFit(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	ap := g.exec(verifyCmd(id, "a", "c", "1", "send_email", "x")).Decided.Approval
	before := stateJSON(t, g.s)
	later := g.now.Add(-time.Hour) // not later than LastTime: LastTime unchanged
	resolved := *ap
	resolved.Status = ApprovalApproved
	events := []*Event{
		nil,
		{Type: EvActionDecided, Time: later, AgentID: "agent_x", Decided: &ActionDecided{Decision: Approved}},
		{Type: EvActionDecided, Time: later, AgentID: id},
		{Type: EvExecutionLogged, Time: later, AgentID: id, Executed: &ExecutionLogged{ActionID: "act_unknown"}},
		{Type: EvApprovalResolved, Time: later, Resolved: &ApprovalResolved{Approval: Approval{ID: "act_unknown"}}},
		{Type: EvApprovalsExpired, Time: later, Expired: &ApprovalsExpired{Approvals: []ApprovalResolved{{Approval: Approval{ID: "nope"}}}}},
		{Type: EvAgentRegistered, Time: later, Registered: &AgentRegistered{AgentID: id, Info: AgentInfo{Name: "impostor"}}},
		{Type: EvTrustChanged, Time: later, AgentID: "agent_x", TrustChanged: &TrustChange{To: 3}},
		{Type: EvAgentStatusChanged, Time: later, AgentID: "agent_x", Status: &AgentStatusChange{Status: StatusSuspended}},
		{Type: EvTrustElevationRequested, Time: later, Elevation: &TrustElevationRequested{Accepted: true, Approval: &Approval{ID: ap.ID}}},
		{Type: "mystery", Time: later},
	}
	for i, ev := range events {
		Apply(g.s, ev)
		if after := stateJSON(t, g.s); string(after) != string(before) {
			t.Fatalf("event %d changed the state", i)
		}
	}
	Apply(g.s, &Event{Type: EvApprovalResolved, Time: g.now, Resolved: &ApprovalResolved{Approval: resolved}})
	settled := stateJSON(t, g.s)
	Apply(g.s, &Event{Type: EvApprovalResolved, Time: g.now, Resolved: &ApprovalResolved{Approval: Approval{ID: ap.ID, Status: ApprovalDenied}}})
	if string(stateJSON(t, g.s)) != string(settled) {
		t.Fatal("a second resolution changed a settled approval")
	}
}

// TestDesign1_CloneSharesNothing walks the clone and the original together:
// no pointer, map or slice backing array is shared.
func TestDesign1_CloneSharesNothing(t *testing.T) {
	g := newGate(t)
	g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: &PutToolRegistry{PrincipalID: "org_1",
		Tools: []ToolSpec{{Name: "r", RiskLevel: RiskLow}}}})
	g.exec(&Command{Type: CmdIssuePrincipalKey, Principal: AdminPrincipal, IssueKey: &IssuePrincipalKey{PrincipalID: "org_1", KeyHash: tokenHash("k")}})
	id := g.register("a", "supervised", nil, Limits{MaxRequestsPerHour: 10, MaxToolCallsPerHour: 10, MaxPerRequestCost: 1},
		Permissions{AllowedEngines: []string{"math"}, AllowedTools: []string{"r"}, BlockedTools: []string{"b"}})
	cmd := verifyCmd(id, "a", "c", "1", "calculate", "1")
	cmd.Verify.Context.PreActionStateHash, cmd.Verify.Context.StateSource = stateHash("s"), "custom"
	g.exec(cmd)
	g.exec(toolCmd(id, "a", "r"))
	g.exec(verifyCmd(id, "a", "c", "2", "send_email", "x"))
	over := verifyCmd(id, "a", "c", "3", "calculate", "2")
	over.Verify.Action.EstimatedCost = 5
	g.exec(over)
	tr := g.exec(&Command{Type: CmdRequestTrust, AgentID: id, TokenHash: tokenHash("a"), Trust: &RequestTrustElevation{FromLevel: 1, ToLevel: 2}})
	g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: tr.Elevation.RequestID, Approve: true}})
	act := g.exec(verifyCmd(id, "a", "c", "4", "calculate", "4")).Decided.ActionID
	g.exec(&Command{Type: CmdLogExecution, AgentID: id, TokenHash: tokenHash("a"), Execution: &LogExecution{ActionID: act}})

	c := g.s.Clone()
	if string(stateJSON(t, c)) != string(stateJSON(t, g.s)) {
		t.Fatal("clone differs")
	}
	seen := 0
	assertDisjoint(t, reflect.ValueOf(g.s), reflect.ValueOf(c), "state", &seen)
	if seen < 20 {
		t.Fatalf("walked only %d references: the state under test is too thin", seen)
	}
}

func assertDisjoint(t *testing.T, a, b reflect.Value, path string, seen *int) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: pointer shared", path)
		}
		*seen++
		assertDisjoint(t, a.Elem(), b.Elem(), path, seen)
	case reflect.Map:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: map shared", path)
		}
		*seen++
		for _, k := range a.MapKeys() {
			assertDisjoint(t, a.MapIndex(k), b.MapIndex(k), path+"["+k.String()+"]", seen)
		}
	case reflect.Slice:
		if a.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			t.Errorf("%s: slice shared", path)
		}
		*seen++
		for i := 0; i < a.Len(); i++ {
			assertDisjoint(t, a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]", seen)
		}
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := 0; i < a.NumField(); i++ {
			assertDisjoint(t, a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, seen)
		}
	case reflect.Interface:
		if !a.IsNil() {
			assertDisjoint(t, a.Elem(), b.Elem(), path, seen)
		}
	}
}
