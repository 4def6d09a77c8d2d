package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/jcs"
)

// TestSeed000_9_1_ContextRequirements: a missing context is CTX-001, a bad
// step CTX-002, a missing type REQ-002, malformed state fields REQ-001 with
// details.field; all are refusals that change nothing.
func TestSeed000_9_1_ContextRequirements(t *testing.T) {
	h := stateHash("x")
	cases := []struct {
		name  string
		ctx   ActionContext
		typ   string
		code  Code
		field string
	}{
		{"no conversation", ActionContext{StepNumber: "1"}, "calculate", CodeMissingContext, "context.conversation_id"},
		{"no step", ActionContext{ConversationID: "c"}, "calculate", CodeMissingContext, "context.step_number"},
		{"step 0", ActionContext{ConversationID: "c", StepNumber: "0"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"negative", ActionContext{ConversationID: "c", StepNumber: "-1"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"fraction", ActionContext{ConversationID: "c", StepNumber: "1.5"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"integral fraction", ActionContext{ConversationID: "c", StepNumber: "2.0"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"exponent", ActionContext{ConversationID: "c", StepNumber: "1e1"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"leading zero", ActionContext{ConversationID: "c", StepNumber: "01"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"text", ActionContext{ConversationID: "c", StepNumber: "abc"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"2^53+1", ActionContext{ConversationID: "c", StepNumber: "9007199254740993"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"huge", ActionContext{ConversationID: "c", StepNumber: "99999999999999999999999"}, "calculate", CodeInvalidStepNumber, "context.step_number"},
		{"no type", ActionContext{ConversationID: "c", StepNumber: "1"}, "", CodeMissingField, "action.type"},
		{"hash alone", ActionContext{ConversationID: "c", StepNumber: "1", PreActionStateHash: h}, "calculate", CodeMissingContext, "context.state_source"},
		{"source alone", ActionContext{ConversationID: "c", StepNumber: "1", StateSource: "custom"}, "calculate", CodeMissingContext, "context.pre_action_state_hash"},
		{"upper-case hash", ActionContext{ConversationID: "c", StepNumber: "1", PreActionStateHash: strings.ToUpper(h), StateSource: "custom"}, "calculate", CodeInvalidRequest, "context.pre_action_state_hash"},
		{"short hash", ActionContext{ConversationID: "c", StepNumber: "1", PreActionStateHash: h[:63], StateSource: "custom"}, "calculate", CodeInvalidRequest, "context.pre_action_state_hash"},
		{"bad source", ActionContext{ConversationID: "c", StepNumber: "1", PreActionStateHash: h, StateSource: "svn"}, "calculate", CodeInvalidRequest, "context.state_source"},
	}
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	for _, c := range cases {
		cmd := verifyCmd(id, "a", "", "", c.typ, "1")
		cmd.Verify.Context = c.ctx
		ev := g.exec(cmd)
		if ev.Type != EvCommandRejected || code(ev) != c.code || ev.Error.Details["field"] != c.field {
			t.Errorf("%s: %s %v, want rejected %s on %s", c.name, ev.Type, ev.Error, c.code, c.field)
		}
	}
	neg := verifyCmd(id, "a", "c", "1", "calculate", "1")
	neg.Verify.Action.EstimatedCost = -1
	if ev := g.exec(neg); code(ev) != CodeInvalidRequest || ev.Error.Details["field"] != "action.estimated_cost_usd" {
		t.Errorf("negative cost: %v", ev.Error)
	}
	negTool := toolCmd(id, "a", "search_web")
	negTool.Tool.ToolCall.EstimatedTokens = -1
	if ev := g.exec(negTool); code(ev) != CodeInvalidRequest || ev.Error.Details["field"] != "tool_call.estimated_tokens" {
		t.Errorf("negative tokens: %v", ev.Error)
	}
	for _, ok := range []string{"1", "50", "9007199254740992"} {
		if _, valid := parseStep(json.Number(ok)); !valid {
			t.Errorf("step %s refused", ok)
		}
	}
	if g.s.Agents[id].TotalActions != 0 {
		t.Fatal("refusals counted as decisions")
	}
}

// TestSeed000_9_2_ReplayDetection: a step at or below the last committed
// one is LOOP-002; only APPROVED and PENDING commit; a denied step can be
// retried (QWED-Agent spec v1.1 §9.2, §9.4).
func TestSeed000_9_2_ReplayDetection(t *testing.T) {
	type step struct {
		conv, step, typ, query string
		want                   Code
		dec                    Decision
	}
	cases := []struct {
		name  string
		trust TrustLevel
		steps []step
	}{
		{"same step twice", TrustSupervised, []step{
			{"c", "1", "calculate", "1", "", Approved}, {"c", "1", "calculate", "2", CodeReplay, Denied}}},
		{"lower step", TrustSupervised, []step{
			{"c", "5", "calculate", "1", "", Approved}, {"c", "4", "calculate", "2", CodeReplay, Denied}, {"c", "6", "calculate", "2", "", Approved}}},
		{"pending commits", TrustSupervised, []step{
			{"c", "1", "send_email", "x", "", Pending}, {"c", "1", "calculate", "2", CodeReplay, Denied}}},
		{"trust denial does not commit", TrustSupervised, []step{
			{"c", "1", "delete_file", "x", CodeInsufficientTrust, Denied}, {"c", "1", "calculate", "2", "", Approved}}},
		{"unknown type does not commit", TrustTrusted, []step{
			{"c", "3", "teleport", "x", CodeUnsupportedType, Denied}, {"c", "3", "calculate", "2", "", Approved}}},
		{"conversations are separate", TrustTrusted, []step{
			{"c", "3", "calculate", "1", "", Approved}, {"d", "1", "calculate", "1", "", Approved}, {"c", "3", "calculate", "9", CodeReplay, Denied}}},
	}
	for _, c := range cases {
		g := newGate(t)
		id := g.register("a", "supervised", trustPtr(c.trust), Limits{}, Permissions{})
		for i, s := range c.steps {
			ev := g.exec(verifyCmd(id, "a", s.conv, s.step, s.typ, s.query))
			if decision(ev) != s.dec || code(ev) != s.want {
				t.Errorf("%s step %d: %s %s, want %s %s", c.name, i, decision(ev), code(ev), s.dec, s.want)
			}
			if ev.Decided != nil && ev.Decided.StepConsumed != (s.dec == Approved || s.dec == Pending) {
				t.Errorf("%s step %d: step_consumed %v", c.name, i, ev.Decided.StepConsumed)
			}
		}
	}
}

// TestSeed000_9_4_SameStepInOneBatch: two requests for the same step decided
// one after the other (as a batch is) — the second is a replay.
func TestSeed000_9_4_SameStepInOneBatch(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	s := g.s
	first := verifyCmd(id, "a", "c", "1", "calculate", "1")
	first.Request = RequestID{Source: "k", ID: "1"}
	second := verifyCmd(id, "a", "c", "1", "calculate", "2")
	second.Request = RequestID{Source: "k", ID: "2"}
	e1 := Decide(s, Env{Now: g.now, Seq: 10}, first)
	Apply(s, e1)
	e2 := Decide(s, Env{Now: g.now, Seq: 11}, second)
	if decision(e1) != Approved || code(e2) != CodeReplay {
		t.Fatalf("%s then %s", decision(e1), code(e2))
	}
}

// TestSeed000_9_3_FingerprintIsRFC8785: the fingerprint is the SHA-256 of
// the canonical {"action_type","code","parameters","query","target"} with
// absent members as null; spelling differences of the same JSON do not
// change it; any field does.
func TestSeed000_9_3_FingerprintIsRFC8785(t *testing.T) {
	fp := func(a Action) string {
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{})
		cmd := verifyCmd(id, "a", "c", "1", a.Type, a.Query)
		cmd.Verify.Action = a
		ev := g.exec(cmd)
		if ev.Decided == nil {
			t.Fatalf("%+v: %v", a, ev.Error)
		}
		return ev.Decided.Fingerprint
	}
	want := sha256.Sum256([]byte(`{"action_type":"calculate","code":null,"parameters":null,"query":"2+2","target":null}`))
	if got := fp(Action{Type: "calculate", Query: "2+2"}); got != hex.EncodeToString(want[:]) {
		t.Fatalf("fingerprint %s, want %x", got, want)
	}
	base := fp(Action{Type: "calculate", Query: "q", Parameters: json.RawMessage(`{"b":[1,2],"a":{"y":1,"x":2}}`)})
	same := []json.RawMessage{
		json.RawMessage(`{ "a" : { "x" : 2 , "y" : 1.0 } , "b" : [ 1e0 , 2 ] }`),
		json.RawMessage(`{"a":{"x":2,"y":1},"b":[1,2]}`),
		json.RawMessage("{\"b\":[1,2],\"a\":{\"y\":1,\"\\u0078\":2}}"),
	}
	for _, p := range same {
		if got := fp(Action{Type: "calculate", Query: "q", Parameters: p}); got != base {
			t.Errorf("parameters %s changed the fingerprint", p)
		}
	}
	differs := []Action{
		{Type: "calculate", Query: "q", Parameters: json.RawMessage(`{"b":[2,1],"a":{"y":1,"x":2}}`)},
		{Type: "calculate", Query: "q"},
		{Type: "calculate", Query: "q ", Parameters: json.RawMessage(`{"b":[1,2],"a":{"y":1,"x":2}}`)},
		{Type: "verify_logic", Query: "q", Parameters: json.RawMessage(`{"b":[1,2],"a":{"y":1,"x":2}}`)},
		{Type: "calculate", Query: "q", Target: "t", Parameters: json.RawMessage(`{"b":[1,2],"a":{"y":1,"x":2}}`)},
		{Type: "calculate", Query: "q", Code: "c", Parameters: json.RawMessage(`{"b":[1,2],"a":{"y":1,"x":2}}`)},
	}
	for _, a := range differs {
		if got := fp(a); got == base {
			t.Errorf("%+v has the same fingerprint", a)
		}
	}
	// Cost and tokens are not part of the action's identity.
	if fp(Action{Type: "calculate", Query: "2+2", EstimatedCost: 5, EstimatedTokens: 3}) != hex.EncodeToString(want[:]) {
		t.Fatal("estimates changed the fingerprint")
	}
}

// TestSeed001_LOOP004_StateFingerprint pins the state fingerprint: SHA-256 of
// the canonical action object followed by the state hash.
func TestSeed001_LOOP004_StateFingerprint(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	cmd := verifyCmd(id, "a", "c", "1", "calculate", "2+2")
	cmd.Verify.Context.PreActionStateHash, cmd.Verify.Context.StateSource = stateHash("s"), "git_tree"
	ev := g.exec(cmd)
	want := sha256.Sum256([]byte(`{"action_type":"calculate","code":null,"parameters":null,"query":"2+2","target":null}` + stateHash("s")))
	if ev.Decided.StateFingerprint != hex.EncodeToString(want[:]) {
		t.Fatalf("state fingerprint %s", ev.Decided.StateFingerprint)
	}
}

// TestSeed000_9_3_RepetitiveLoop: the third consecutive committed identical
// action is LOOP-003; a different action resets the count; denials do not
// count.
func TestSeed000_9_3_RepetitiveLoop(t *testing.T) {
	cases := []struct {
		name    string
		queries []string // "!" prefix: expect LOOP-003
	}{
		{"seed 001 example", []string{"2+2", "2+2", "!2+2", "x>1"}},
		{"reset by a different action", []string{"a", "a", "b", "a", "a", "!a"}},
		{"alternating never loops", []string{"a", "b", "a", "b", "a", "b"}},
		{"denial does not reset", []string{"a", "a", "!a", "!a", "b"}},
	}
	for _, c := range cases {
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{})
		step := 1
		for i, q := range c.queries {
			wantLoop := strings.HasPrefix(q, "!")
			ev := g.exec(verifyCmd(id, "a", "c", strconv.Itoa(step), "calculate", strings.TrimPrefix(q, "!")))
			if (code(ev) == CodeRepetitiveLoop) != wantLoop || (!wantLoop && decision(ev) != Approved) {
				t.Errorf("%s #%d %q: %s %s", c.name, i, q, decision(ev), code(ev))
			}
			if decision(ev) == Approved {
				step++
			}
		}
	}
}

// TestSeed001_DecisionMatrix pins the trust × risk matrix, directly and
// through Decide with one action type per risk.
func TestSeed001_DecisionMatrix(t *testing.T) {
	risks := []Risk{RiskLow, RiskMedium, RiskHigh, RiskCritical}
	types := []string{"calculate", "api_call", "write_file", "delete_file"}
	want := [4][4]Decision{
		{Pending, Denied, Denied, Denied},
		{Approved, Pending, Denied, Denied},
		{Approved, Approved, Pending, Denied},
		{Approved, Approved, Approved, Approved},
	}
	for tl := 0; tl < 4; tl++ {
		g := newGate(t)
		id := g.register("a", "supervised", trustPtr(TrustLevel(tl)), Limits{}, Permissions{})
		for r := 0; r < 4; r++ {
			if got := matrix(TrustLevel(tl), risks[r]); got != want[tl][r] {
				t.Errorf("matrix(%d, %s) = %s, want %s", tl, risks[r], got, want[tl][r])
			}
			ev := g.exec(verifyCmd(id, "a", "c"+strconv.Itoa(r), "1", types[r], "x"))
			if decision(ev) != want[tl][r] || ev.Decided.Verification.RiskLevel != risks[r] {
				t.Errorf("trust %d %s: %s at %s", tl, types[r], decision(ev), ev.Decided.Verification.RiskLevel)
			}
			if want[tl][r] == Denied && (code(ev) != CodeInsufficientTrust ||
				ev.Error.Details["trust_level"] != tl || ev.Error.Details["risk_level"] != string(risks[r])) {
				t.Errorf("trust %d %s: error %+v", tl, types[r], ev.Error)
			}
			if want[tl][r] == Pending && (ev.Error != nil || ev.Decided.Approval == nil) {
				t.Errorf("trust %d %s: pending without approval or with error %v", tl, types[r], ev.Error)
			}
		}
	}
	for _, bad := range []TrustLevel{-1, 4, 99} {
		if matrix(bad, RiskLow) != Pending || matrix(bad, RiskMedium) != Denied {
			t.Errorf("out-of-range trust %d is not treated as untrusted", bad)
		}
	}
}

// TestSeed000_2_2_ActionTypes pins every known action type's engine and
// risk, and the fail-closed answers for unknown types and engines.
func TestSeed000_2_2_ActionTypes(t *testing.T) {
	cases := []struct {
		typ, query, engine string
		risk               Risk
	}{
		{"calculate", "1", "math", RiskLow}, {"verify_logic", "x", "logic", RiskLow},
		{"execute_sql", "SELECT 1", "sql", RiskLow}, {"execute_sql", "DELETE FROM t WHERE a=1", "sql", RiskHigh},
		{"execute_sql", "DROP TABLE t", "sql", RiskCritical}, {"execute_sql", "", "sql", RiskCritical},
		{"execute_code", "", "code", RiskCritical}, {"tool_call", "", "tool", RiskMedium}, {"api_call", "", "tool", RiskMedium},
		{"network_request", "", "policy", RiskMedium}, {"read_file", "", "security", RiskLow}, {"file_read", "", "security", RiskLow},
		{"write_file", "", "security", RiskHigh}, {"file_write", "", "security", RiskHigh},
		{"delete_file", "", "security", RiskCritical}, {"file_delete", "", "security", RiskCritical},
		{"database_read", "", "sql", RiskLow}, {"database_read", "SELECT 1", "sql", RiskLow},
		{"database_read", "DELETE FROM t", "sql", RiskCritical}, {"database_write", "", "sql", RiskHigh},
		{"send_email", "", "tool", RiskMedium}, {"send_message", "", "tool", RiskMedium},
	}
	for i, c := range cases {
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{})
		ev := g.exec(verifyCmd(id, "a", "c", strconv.Itoa(i+1), c.typ, c.query))
		v := ev.Decided.Verification
		if decision(ev) != Approved || v.Engine != c.engine || v.RiskLevel != c.risk || v.Status != StatusVerified {
			t.Errorf("%s %q: %s engine %s risk %s %v", c.typ, c.query, decision(ev), v.Engine, v.RiskLevel, ev.Error)
		}
	}
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{AllowedEngines: []string{"math", "logic"}})
	ev := g.exec(verifyCmd(id, "a", "c", "1", "launch_rockets", "x"))
	if decision(ev) != Denied || code(ev) != CodeUnsupportedType || !strings.Contains(ev.Error.Message, "'launch_rockets'") {
		t.Fatalf("unknown type: %s %v", decision(ev), ev.Error)
	}
	ev = g.exec(verifyCmd(id, "a", "c", "1", "execute_sql", "SELECT 1"))
	if code(ev) != CodeVerificationFailed || ev.Error.Message != "engine 'sql' not allowed for this agent" {
		t.Fatalf("engine not allowed: %v", ev.Error)
	}
	// Gate checks (tool, policy, security) are not QWED engines.
	if ev := g.exec(verifyCmd(id, "a", "c", "1", "api_call", "x")); decision(ev) != Approved {
		t.Fatalf("api_call with allowed_engines: %v", ev.Error)
	}
}

// TestSeed000_5_ToolApproval pins the categories in order: blocked,
// registry, allowed_tools, safe, dangerous, unknown.
func TestSeed000_5_ToolApproval(t *testing.T) {
	cases := []struct {
		tool      string
		trust     TrustLevel
		dec       Decision
		code      Code
		risk      Risk
		violation bool
	}{
		{"blocked_one", TrustTrusted, Denied, CodeToolNotAllowed, RiskCritical, true},
		{"reg_low", TrustSupervised, Approved, "", RiskLow, false},
		{"reg_gated", TrustTrusted, Pending, "", RiskLow, false},
		{"my_custom_tool", TrustAutonomous, Approved, "", RiskMedium, false},
		{"file_write", TrustTrusted, Approved, "", RiskHigh, false},
		{"search_web", TrustSupervised, Approved, "", RiskLow, false},
		{"send_email", TrustSupervised, Pending, "", RiskMedium, false},
		{"send_money", TrustTrusted, Pending, "", RiskCritical, false},
		{"drop_table", TrustAutonomous, Denied, CodeInsufficientTrust, RiskCritical, false},
		{"shutdown_server", TrustUntrusted, Denied, CodeInsufficientTrust, RiskCritical, false},
		{"frobnicate", TrustTrusted, Denied, CodeToolNotAllowed, RiskCritical, false},
	}
	for _, c := range cases {
		g := newGate(t)
		g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: &PutToolRegistry{PrincipalID: "org_1",
			Tools: []ToolSpec{{Name: "reg_low", RiskLevel: RiskLow}, {Name: "reg_gated", RiskLevel: RiskLow, RequiresApproval: true},
				{Name: "blocked_one", RiskLevel: RiskLow}}}})
		id := g.register("a", "supervised", trustPtr(c.trust), Limits{},
			Permissions{AllowedTools: []string{"my_custom_tool", "file_write"}, BlockedTools: []string{"blocked_one"}})
		ev := g.exec(toolCmd(id, "a", c.tool))
		d := ev.Decided
		if d == nil || d.Decision != c.dec || code(ev) != c.code || d.Verification.RiskLevel != c.risk || d.SecurityViolation != c.violation {
			t.Errorf("%s at trust %d: %+v %v", c.tool, c.trust, d, ev.Error)
		}
	}
}

// TestSeed001_UnknownToolMessage pins the unknown-tool refusal and its score.
func TestSeed001_UnknownToolMessage(t *testing.T) {
	scores := map[string]string{
		"my_custom_tool": "0.4", "get_weather_report": "0.2", "list_files": "0.2", "send_fax": "0.6",
		"post_update": "0.6", "delete_everything": "0.9", "exec": "0.9", "DropTables": "0.9", "remove_user": "0.85",
		"": "0.4", "x": "0.4",
	}
	for name, want := range scores {
		if got := formatScore(toolRiskScore(name)); got != want {
			t.Errorf("score(%q) = %s, want %s", name, got, want)
		}
	}
	for h, want := range map[int]string{0: "0", 5: "0.05", 40: "0.4", 85: "0.85", 100: "1", 120: "1"} {
		if got := formatScore(h); got != want {
			t.Errorf("formatScore(%d) = %s, want %s", h, got, want)
		}
	}
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	ev := g.exec(toolCmd(id, "a", "my_custom_tool"))
	if ev.Error == nil || ev.Error.Message != "Unknown tool 'my_custom_tool' requires explicit allowlisting (risk_score=0.4)" {
		t.Fatalf("message: %v", ev.Error)
	}
	b, _ := json.Marshal(ev.Error.Details)
	if string(b) != `{"risk_score":0.4,"tool":"my_custom_tool"}` {
		t.Fatalf("details %s", b)
	}
}

// TestSeed000_6_BudgetOrderFirstFailureWins: a request crossing several limits
// reports the first in the order of docs/ARCHITECTURE.md ("Where the
// specifications disagree").
func TestSeed000_6_BudgetOrderFirstFailureWins(t *testing.T) {
	l := Limits{MaxPerRequestCost: MicrosPerUSD, MaxDailyCost: MicrosPerUSD, MaxTokensPerRequest: 10, MaxDailyTokens: 10}
	cases := []struct {
		cost   USD
		tokens int64
		name   string
	}{
		{2 * MicrosPerUSD, 20, limitPerRequestCost},
		{MicrosPerUSD + 1, 0, limitPerRequestCost},
		{MicrosPerUSD, 11, limitRequestTokens},
		{MicrosPerUSD, 10, ""},
	}
	for _, c := range cases {
		g := newGate(t)
		id := g.register("a", "trusted", nil, l, Permissions{})
		cmd := verifyCmd(id, "a", "c", "1", "calculate", "1")
		cmd.Verify.Action.EstimatedCost, cmd.Verify.Action.EstimatedTokens = c.cost, c.tokens
		ev := g.exec(cmd)
		got := ""
		if ev.Error != nil {
			got, _ = ev.Error.Details["limit_name"].(string)
		}
		if got != c.name {
			t.Errorf("cost %s tokens %d: limit %q, want %q", c.cost, c.tokens, got, c.name)
		}
	}
}

// TestSeed000_9_5_BudgetDenialConsumesNothing: a budget denial leaves the
// step, the counters and the window as they were.
func TestSeed000_9_5_BudgetDenialConsumesNothing(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{MaxRequestsPerHour: 1}, Permissions{})
	g.exec(verifyCmd(id, "a", "c", "1", "calculate", "1"))
	before := *g.s.Agents[id].Conversations["c"]
	usage := g.s.Agents[id].Usage
	ev := g.exec(verifyCmd(id, "a", "c", "2", "calculate", "2"))
	if decision(ev) != BudgetExceeded || ev.Decided.StepConsumed || ev.Decided.ReservedCost != 0 {
		t.Fatalf("%+v", ev.Decided)
	}
	if status, _ := Reply(ev); status != 429 {
		t.Fatalf("status %d", status)
	}
	if after := *g.s.Agents[id].Conversations["c"]; after.LastStep != before.LastStep {
		t.Fatal("budget denial consumed the step")
	}
	if u := g.s.Agents[id].Usage; u.DailyRequests != usage.DailyRequests || len(u.HourlyRequests) != 1 {
		t.Fatal("budget denial counted as a request")
	}
	g.now = g.now.Add(time.Hour)
	if ev := g.exec(verifyCmd(id, "a", "c", "2", "calculate", "2")); decision(ev) != Approved {
		t.Fatalf("retry after the reset: %s", decision(ev))
	}
}

// TestSeed000_9_8_Authentication pins who may act for an agent.
func TestSeed000_9_8_Authentication(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	cases := []struct {
		name, token, principal, agent string
		want                          Code
	}{
		{"token", tokenHash("a"), "", id, ""},
		{"principal", "", "org_1", id, ""},
		{"admin", "", AdminPrincipal, id, ""},
		{"wrong token", tokenHash("b"), "", id, CodeInvalidAgentToken},
		{"short token", "abc", "", id, CodeInvalidAgentToken},
		{"no credentials", "", "", id, CodeInvalidAgentToken},
		{"other principal", "", "org_2", id, CodeForbidden},
		{"wrong token, right principal", tokenHash("b"), "org_1", id, ""},
		{"unknown agent", tokenHash("a"), "", "agent_0000000000000000", CodeAgentNotRegistered},
		{"no agent", tokenHash("a"), "", "", CodeMissingField},
	}
	for i, c := range cases {
		cmd := verifyCmd(c.agent, "a", "c", strconv.Itoa(i+1), "calculate", strconv.Itoa(i))
		cmd.TokenHash, cmd.Principal = c.token, c.principal
		ev := g.exec(cmd)
		if code(ev) != c.want {
			t.Errorf("%s: %s %v, want %q", c.name, ev.Type, ev.Error, c.want)
		}
	}
	if !tokenMatches(tokenHash("a"), tokenHash("a")) || tokenMatches(tokenHash("a"), tokenHash("b")) || tokenMatches("", "") {
		t.Fatal("tokenMatches")
	}
}

// TestSeed000_4_2_Attestation: require_attestation and APPROVED high/critical
// decisions are signed with the decision's claims; without a working signer
// they are denied with SYS-001 (fail closed).
func TestSeed000_4_2_Attestation(t *testing.T) {
	g := newGate(t)
	var got []AttestationClaims
	g.signer = recordingSigner{&got}
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	ev := g.exec(verifyCmd(id, "a", "c", "1", "calculate", "1"))
	if ev.Decided.Attestation != "" || len(got) != 0 {
		t.Fatal("low risk without require_attestation was signed")
	}
	ev = g.exec(verifyCmd(id, "a", "c", "2", "write_file", "x"))
	if ev.Decided.Attestation == "" || len(got) != 1 {
		t.Fatal("approved high risk not signed")
	}
	c := got[0]
	if c.Subject != DIDFor(id) || c.ActionID != ev.Decided.ActionID || !c.IssuedAt.Equal(g.now) || c.Decision != Approved ||
		c.RequestDigest != ev.Decided.RequestDigest || c.AgentID != id || c.ConversationID != "c" || c.Step != 2 ||
		c.Seq != ev.Seq || c.Partition != 3 || c.Risk != RiskHigh {
		t.Fatalf("claims %+v", c)
	}
	cmd := verifyCmd(id, "a", "c", "3", "calculate", "2")
	cmd.Verify.Options.RequireAttestation = true
	if ev := g.exec(cmd); ev.Decided.Attestation == "" || !strings.Contains(ev.Decided.Verification.ChecksPassed[len(ev.Decided.Verification.ChecksPassed)-1], "attestation") {
		t.Fatal("require_attestation not honoured")
	}
	if g.s.Agents[id].Attestations != 2 {
		t.Fatalf("attestations %d", g.s.Agents[id].Attestations)
	}
	for i, s := range []Signer{nil, failingSigner{}} {
		g.signer = s
		conv := "fail" + strconv.Itoa(i)
		ev := g.exec(verifyCmd(id, "a", conv, "1", "write_file", "y"))
		if decision(ev) != Denied || code(ev) != CodeInternal || ev.Error.Message != "attestation could not be issued" || ev.Decided.StepConsumed {
			t.Fatalf("signer %T: %s %v", s, decision(ev), ev.Error)
		}
		if ev := g.exec(verifyCmd(id, "a", conv, "1", "calculate", "3")); decision(ev) != Approved {
			t.Fatal("low risk needs no signer, and the denied step was not consumed")
		}
	}
}

type recordingSigner struct{ got *[]AttestationClaims }

func (r recordingSigner) Sign(c AttestationClaims) (string, error) {
	*r.got = append(*r.got, c)
	return hashSigner{}.Sign(c)
}

// TestDesign3_RequestDigestMatchesEncodingJSON: the hand-written request
// body is, after canonicalization, the body encoding/json produces.
func TestDesign3_RequestDigestMatchesEncodingJSON(t *testing.T) {
	actions := []VerifyAction{
		{},
		{Action: Action{Type: "t", Query: "q\"<>&\u2028\x01", Code: "c", Target: "g", Parameters: json.RawMessage(`{"a":[1,{"b":null}]}`),
			EstimatedCost: 1_500_001, EstimatedTokens: 7},
			Context: ActionContext{ConversationID: "c", StepNumber: "3", UserIntent: "u", PreActionStateHash: "h", StateSource: "s"},
			Options: Options{RequireAttestation: true, RiskThreshold: "low"}},
		{Options: Options{RiskThreshold: "high"}},
	}
	for _, v := range actions {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		compareCanonical(t, appendVerifyBody(nil, &v), want)
	}
	tools := []VerifyToolCall{
		{ToolCall: ToolCall{ToolName: "x"}},
		{ToolCall: ToolCall{ToolName: "x", Parameters: json.RawMessage(`[1]`), EstimatedCost: 3, EstimatedTokens: 2},
			Justification: "why", Context: &ActionContext{ConversationID: "c", StepNumber: "1"}, Options: Options{RequireAttestation: true}},
	}
	for _, v := range tools {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		compareCanonical(t, appendToolBody(nil, &v), want)
	}
}

func compareCanonical(t *testing.T, got, want []byte) {
	t.Helper()
	a, err := jcs.Transform(got)
	if err != nil {
		t.Fatalf("hand-written body %s: %v", got, err)
	}
	b, err := jcs.Transform(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("body differs:\n%s\n%s", a, b)
	}
}

// TestSeed000_3_4_DerivedIDs pins the ID derivation.
func TestSeed000_3_4_DerivedIDs(t *testing.T) {
	r := RequestID{Source: "http", ID: "42"}
	sum := sha256.Sum256([]byte("http\x0042"))
	if got := AgentIDFor(r); got != "agent_"+hex.EncodeToString(sum[:8]) {
		t.Fatalf("agent id %s", got)
	}
	sum = sha256.Sum256([]byte("\x01http\x0042"))
	if got := ActionIDFor(r); got != "act_"+hex.EncodeToString(sum[:10]) {
		t.Fatalf("action id %s", got)
	}
	sum = sha256.Sum256([]byte("\x02http\x0042"))
	if got := TrustRequestIDFor(r); got != "trust_"+hex.EncodeToString(sum[:10]) {
		t.Fatalf("trust id %s", got)
	}
	long := RequestID{Source: strings.Repeat("s", 300), ID: "1"}
	sum = sha256.Sum256([]byte("\x01" + long.Source + "\x001"))
	if got := ActionIDFor(long); got != "act_"+hex.EncodeToString(sum[:10]) {
		t.Fatalf("long action id %s", got)
	}
	if AgentIDFor(RequestID{Source: "a\x00b", ID: "c"}) == AgentIDFor(RequestID{Source: "a", ID: "b\x00c"}) {
		t.Log("NUL inside a source collides, as any separator would; sources never contain NUL")
	}
	if DIDFor("agent_x") != "did:qwed:agent:agent_x" {
		t.Fatal("did")
	}
	// Decide mints the same IDs.
	g := newGate(t)
	cmd := &Command{Type: CmdRegisterAgent, Principal: "org_1", Request: r, Register: &RegisterAgent{
		Agent: AgentInfo{Name: "n", Type: "trusted", PrincipalID: "org_1"}, TokenHash: tokenHash("n")}}
	ev := g.exec(cmd)
	if ev.AgentID != AgentIDFor(r) || ev.Registered.DID != DIDFor(AgentIDFor(r)) {
		t.Fatalf("%+v", ev.Registered)
	}
	v := verifyCmd(ev.AgentID, "n", "c", "1", "calculate", "1")
	v.Request = r
	if ev := g.exec(v); ev.Decided.ActionID != ActionIDFor(r) {
		t.Fatalf("action id %s", ev.Decided.ActionID)
	}
	// A second decision with the same request ID is a conflict, not a new action.
	v2 := verifyCmd(ev.AgentID, "n", "d", "1", "calculate", "1")
	v2.Request = r
	if ev := g.exec(v2); code(ev) != CodeConflict {
		t.Fatalf("duplicate request: %s %v", ev.Type, ev.Error)
	}
}

// TestSeed001_ToolTableCategories pins the one tool table against seed
// 001's ToolApprovalSystem lists and the action-type table, through
// classifyTool: a safe tool passes at its risk without being allowed, a
// dangerous one is critical, an action-type name is unknown unless
// allowed (then it takes its type's risk), and an allowed tool outside the
// table is medium.
func TestSeed001_ToolTableCategories(t *testing.T) {
	safe := map[string]Risk{"read_database": RiskLow, "query_data": RiskLow, "search_web": RiskLow,
		"send_email": RiskMedium, "log_message": RiskLow, "get_weather": RiskLow}
	dangerous := []string{"delete_database", "drop_table", "send_money", "delete_files", "shutdown_server", "revoke_access"}
	s := NewState()
	bare := &Agent{}
	for name, want := range safe {
		if cl := classifyTool(s, bare, name); cl.deny != nil || cl.risk != want || cl.dangerous {
			t.Errorf("safe %s: risk %s, dangerous %v, deny %v; want %s", name, cl.risk, cl.dangerous, cl.deny, want)
		}
	}
	for _, name := range dangerous {
		if cl := classifyTool(s, bare, name); cl.deny != nil || cl.risk != RiskCritical || !cl.dangerous {
			t.Errorf("dangerous %s: risk %s, dangerous %v, deny %v", name, cl.risk, cl.dangerous, cl.deny)
		}
	}
	for typ, spec := range actionSpecs {
		if _, ok := safe[typ]; ok {
			continue
		}
		if cl := classifyTool(s, bare, typ); cl.deny == nil || cl.deny.Code != CodeToolNotAllowed {
			t.Errorf("action-type name %s not allowed: deny %v, want %s", typ, cl.deny, CodeToolNotAllowed)
		}
		allowed := &Agent{Permissions: Permissions{AllowedTools: []string{typ}}}
		if cl := classifyTool(s, allowed, typ); cl.deny != nil || cl.risk != spec.Risk {
			t.Errorf("allowed %s: risk %s, deny %v; want its type's %s", typ, cl.risk, cl.deny, spec.Risk)
		}
	}
	allowed := &Agent{Permissions: Permissions{AllowedTools: []string{"my_tool", "drop_table"}}}
	if cl := classifyTool(s, allowed, "my_tool"); cl.deny != nil || cl.risk != RiskMedium {
		t.Errorf("allowed my_tool: risk %s, deny %v; want medium", cl.risk, cl.deny)
	}
	if cl := classifyTool(s, allowed, "drop_table"); cl.deny != nil || cl.risk != RiskCritical {
		t.Errorf("allowed drop_table: risk %s, deny %v; want critical", cl.risk, cl.deny)
	}
	if n := len(toolDefaults); n != len(safe)+len(dangerous)+len(actionSpecs)-1 {
		t.Errorf("toolDefaults holds %d names, want the %d of the user guide's lists and the action types", n, len(safe)+len(dangerous)+len(actionSpecs)-1)
	}
}
