package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

// TestSeed000_4_VerifyAction pins POST /agents/{id}/verify with the token in the
// body (QWED-Agent spec v1.1 §4.1: agent_id and agent_token in the body,
// stripped), as a Bearer header, and with the principal's key.
func TestSeed000_4_VerifyAction(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, map[string]any{"max_daily_cost_usd": 10})
	bodyAuth := fmt.Sprintf(`{"agent_id": %q, "agent_token": %q,
		"action": {"type": "execute_sql", "query": "SELECT * FROM customers WHERE status = 'active'", "target": "production_db"},
		"context": {"conversation_id": "conv_123", "step_number": 5, "user_intent": "Get list of active customers"},
		"options": {"require_attestation": true, "risk_threshold": "medium"}}`, a.id, a.token)
	before := g.head()
	r := g.do("POST", "/agents/"+a.id+"/verify", nil, bodyAuth)
	if r.status != http.StatusOK {
		t.Fatalf("verify with the body token: %d %s", r.status, r.body)
	}
	m := r.json(t)
	ver, _ := m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || ver["engine"] != "sql" || ver["risk_level"] != "low" || m["attestation"] == nil ||
		m["budget_remaining"] == nil || !strings.HasPrefix(m["action_id"].(string), "act_") {
		t.Errorf("decision %s", r.body)
	}
	evs := g.events(before)
	if len(evs) != 1 || evs[0].Command.TokenHash != command.HashSecret(a.token) || evs[0].Command.AgentID != a.id {
		t.Fatalf("recorded command %+v, want the token's hash and the path agent", evs[0].Command)
	}
	if strings.Contains(string(g.records(before)[0]), a.token) {
		t.Fatalf("the log holds the plaintext agent token")
	}
	r = g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "2+2", "conv_123", 6))
	if r.status != http.StatusOK || r.json(t)["decision"] != "APPROVED" {
		t.Fatalf("verify with Bearer: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/verify", apiKey(key), verifyReq("calculate", "3+3", "conv_123", 7))
	if r.status != http.StatusOK || r.json(t)["decision"] != "APPROVED" {
		t.Fatalf("verify with the principal key: %d %s", r.status, r.body)
	}
	// The sql engine's class is the one SQL risk rule (domain.Config.EngineSQLRisk):
	// a query it cannot read (MySQL's LIMIT 1, 2) has no class and is critical.
	r = g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("execute_sql", "SELECT name FROM customers LIMIT 1, 2", "conv_sql", 1))
	m = r.json(t)
	ver, _ = m["verification"].(map[string]any)
	if m["decision"] == "APPROVED" || ver["engine"] != "sql" || ver["risk_level"] != "critical" {
		t.Fatalf("a query the sql engine cannot read: %d %s, want critical and not APPROVED", r.status, r.body)
	}
	// QWED-Agent spec v1.1 §9.2: a replayed step is LOOP-002 (409), decided and recorded by the gate.
	r = g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "4+4", "conv_123", 7))
	if r.status != http.StatusConflict || r.errorCode(t) != string(domain.CodeReplay) || r.json(t)["decision"] != "DENIED" {
		t.Fatalf("replayed step: %d %s, want 409 LOOP-002", r.status, r.body)
	}
}

// TestAgentCredentialRules pins the agent endpoints' authentication: a
// wrong token is the gate's AGENT-002, a body agent_id that differs from
// the path and two different tokens are REQ-001, a wrong body token AGENT-002.
func TestAgentCredentialRules(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	b := g.register(key, "org_a", 2, nil)
	cases := []struct {
		name   string
		h      hdr
		body   string
		status int
		code   domain.Code
	}{
		{"wrong bearer", bearerH("qwed_agent_wrong"), `{"action":{"type":"calculate","query":"1"},"context":{"conversation_id":"c","step_number":1}}`,
			401, domain.CodeInvalidAgentToken},
		{"other agent's token", bearerH(b.token), `{"action":{"type":"calculate","query":"1"},"context":{"conversation_id":"c","step_number":1}}`,
			401, domain.CodeInvalidAgentToken},
		{"body agent_id differs", bearerH(a.token), fmt.Sprintf(`{"agent_id":%q,"action":{"type":"calculate","query":"1"},"context":{"conversation_id":"c","step_number":1}}`, b.id),
			400, domain.CodeInvalidRequest},
		{"body and bearer tokens differ", bearerH(a.token), fmt.Sprintf(`{"agent_token":%q,"action":{"type":"calculate","query":"1"},"context":{"conversation_id":"c","step_number":1}}`, b.token),
			400, domain.CodeInvalidRequest},
	}
	for _, c := range cases {
		before := g.head()
		r := g.do("POST", "/agents/"+a.id+"/verify", c.h, c.body)
		if r.status != c.status || r.errorCode(t) != string(c.code) {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
			continue
		}
		evs := g.events(before)
		if len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
			t.Errorf("%s: log grew by %d events, want one command.rejected", c.name, len(evs))
		}
	}
}

// TestSeed000_5_ToolCall pins POST /agents/{id}/tools/{tool}: the path names
// the tool; a body naming another tool is REQ-001; a supervised agent's
// medium-risk tool call is PENDING (202) with an approval.
func TestSeed000_5_ToolCall(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 1, nil)
	r := g.do("POST", "/agents/"+a.id+"/tools/send_email", bearerH(a.token), `{
		"tool_call": {"tool_name": "send_email", "parameters": {"to": "user@example.com", "subject": "Your order status"}},
		"justification": "User requested order status update"}`)
	if r.status != http.StatusAccepted || r.json(t)["decision"] != "PENDING" {
		t.Fatalf("tool call: %d %s, want 202 PENDING", r.status, r.body)
	}
	ap, _ := r.json(t)["approval"].(map[string]any)
	if ap["approval_id"] == nil || ap["status"] != "pending" {
		t.Errorf("approval %v", ap)
	}
	// tool_name may be left to the path.
	r = g.do("POST", "/agents/"+a.id+"/tools/read_database", bearerH(a.token), `{"tool_call": {"parameters": {"table": "t"}}}`)
	if r.status != http.StatusOK || r.json(t)["tool_name"] != "read_database" {
		t.Fatalf("tool named by the path only: %d %s", r.status, r.body)
	}
	before := g.head()
	r = g.do("POST", "/agents/"+a.id+"/tools/read_database", bearerH(a.token), `{"tool_call": {"tool_name": "drop_table"}}`)
	if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeInvalidRequest) {
		t.Fatalf("tool mismatch: %d %s, want 400 REQ-001", r.status, r.body)
	}
	if e := errorOf(t, r.body); e.Details["field"] != "tool_call.tool_name" {
		t.Errorf("details %v, want field tool_call.tool_name", e.Details)
	}
	g.expectRejected(before, domain.CodeInvalidRequest, "drop_table")
}

// TestExecutionsTrustAndPrincipalActions pins POST /executions, /trust,
// /trust-level, /suspend, /complaints and PUT /principals/{id}/tools.
func TestExecutionsTrustAndPrincipalActions(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 1, map[string]any{"max_daily_cost_usd": 5})
	r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), `{"action":{"type":"calculate","query":"1+1","estimated_cost_usd":0.5},
		"context":{"conversation_id":"c","step_number":1}}`)
	actionID, _ := r.json(t)["action_id"].(string)
	if r.status != 200 || actionID == "" {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/executions", bearerH(a.token),
		fmt.Sprintf(`{"action_id":%q,"success":true,"cost_usd":0.25,"tokens":120,"result_hash":"sha256:ab"}`, actionID))
	if m := r.json(t); r.status != 200 || m["logged"] != true || m["cost_delta_usd"] != -0.25 {
		t.Fatalf("executions: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/trust", bearerH(a.token), `{"request":"trust_elevation","from_level":1,"to_level":2,
		"justification":"safe operation","evidence":{"days_active":0,"total_actions":1,"denied_actions":0,"attestations":0}}`)
	m := r.json(t)
	ap, _ := m["approval"].(map[string]any)
	if r.status != 200 || m["accepted"] != true || ap["kind"] != "trust_elevation" {
		t.Fatalf("trust request: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/approvals/"+ap["approval_id"].(string)+"/approve", apiKey(key), `{"reason":"earned"}`)
	if m := r.json(t); r.status != 200 || m["trust_change"] == nil {
		t.Fatalf("approving the elevation: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/trust-level", apiKey(key), `{"trust_level":3,"reason":"enterprise"}`)
	if m := r.json(t); r.status != 200 || m["trust_level"] != 3.0 || m["previous_trust_level"] != 2.0 {
		t.Fatalf("trust-level: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/suspend", apiKey(key), `{"suspended":true,"reason":"audit"}`)
	if r.status != 200 || r.json(t)["status"] != "suspended" {
		t.Fatalf("suspend: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1", "c", 2))
	if r.status != 403 || r.errorCode(t) != string(domain.CodeAgentSuspended) {
		t.Fatalf("verify while suspended: %d %s, want 403 AGENT-003", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/suspend", apiKey(key), `{"suspended":false,"reason":"cleared"}`)
	if r.status != 200 || r.json(t)["status"] != "active" {
		t.Fatalf("reinstate: %d %s", r.status, r.body)
	}
	before := g.head()
	r = g.do("POST", "/agents/"+a.id+"/suspend", apiKey(key), `{"reason":"no flag"}`)
	if r.status != 400 || r.errorCode(t) != string(domain.CodeMissingField) {
		t.Fatalf("suspend without suspended: %d %s, want 400 REQ-002", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeMissingField, "")
	r = g.do("POST", "/agents/"+a.id+"/complaints", apiKey(key), `{"reason":"spam"}`)
	if r.status != 200 || r.json(t)["status"] != "suspended" {
		t.Fatalf("complaint: %d %s", r.status, r.body)
	}
	r = g.do("PUT", "/principals/org_a/tools", apiKey(key), `{"tools":[
		{"name":"database_write","risk_level":"critical","requires_verification":true,"requires_approval":true,"verification_engine":"sql"}]}`)
	if m := r.json(t); r.status != 200 || m["principal_id"] != "org_a" {
		t.Fatalf("tool registry: %d %s", r.status, r.body)
	}
	r = g.do("PUT", "/principals/org_a/tools", apiKey(key), `{"principal_id":"org_b","tools":[]}`)
	if r.status != 400 || r.errorCode(t) != string(domain.CodeInvalidRequest) {
		t.Fatalf("tool registry for another principal in the body: %d %s", r.status, r.body)
	}
}

// TestSeed000_3_IssueKeyAdminOnly pins POST /principals/{id}/keys: the admin
// gets the key once; a principal key is refused (AUTH-003) by the gate.
func TestSeed000_3_IssueKeyAdminOnly(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	if !strings.HasPrefix(key, command.APIKeyPrefix) || len(key) != len(command.APIKeyPrefix)+43 {
		t.Errorf("api_key %q is not qwed_key_ + base64url(32 bytes)", key)
	}
	before := g.head()
	r := g.do("POST", "/principals/org_a/keys", apiKey(key), nil)
	if r.status != 403 || r.errorCode(t) != string(domain.CodeForbidden) || strings.Contains(string(r.body), "api_key") {
		t.Fatalf("principal issuing a key: %d %s, want 403 AUTH-003", r.status, r.body)
	}
	if evs := g.events(before); len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
		t.Fatalf("want one command.rejected record")
	}
	// The key works for its principal only.
	if r := g.do("GET", "/approvals", apiKey(key), nil); r.status != 200 {
		t.Fatalf("the issued key is not accepted: %d %s", r.status, r.body)
	}
}

// TestApprovals pins GET /approvals (own principal's; admin all), GET
// /approvals/{id} (principal or the agent's token) and approve / deny.
func TestApprovals(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a := g.register(keyA, "org_a", 1, nil)
	b := g.register(keyB, "org_b", 1, nil)
	pending := func(ag agent, step int) string {
		r := g.do("POST", "/agents/"+ag.id+"/tools/send_email", bearerH(ag.token),
			fmt.Sprintf(`{"tool_call":{"parameters":{"n":%d}},"context":{"conversation_id":"c","step_number":%d}}`, step, step))
		if r.status != 202 {
			t.Fatalf("tool call: %d %s", r.status, r.body)
		}
		ap, _ := r.json(t)["approval"].(map[string]any)
		return ap["approval_id"].(string)
	}
	a1, a2, b1 := pending(a, 1), pending(a, 2), pending(b, 1)

	ids := func(r response) []string {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		list, _ := r.json(t)["approvals"].([]any)
		var out []string
		for _, x := range list {
			out = append(out, x.(map[string]any)["approval_id"].(string))
		}
		return out
	}
	if got := ids(g.do("GET", "/approvals?status=pending", apiKey(keyA), nil)); len(got) != 2 || !contains(got, a1) || !contains(got, a2) {
		t.Errorf("org_a pending %v, want %s and %s", got, a1, a2)
	}
	if got := ids(g.do("GET", "/approvals?status=pending", apiKey(testAdminKey), nil)); len(got) != 3 || !contains(got, b1) {
		t.Errorf("admin pending %v, want all three", got)
	}
	r := g.do("POST", "/approvals/"+a1+"/approve", apiKey(keyA), nil)
	if m := r.json(t); r.status != 200 || m["approval"].(map[string]any)["status"] != "approved" {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/approvals/"+a2+"/deny", apiKey(keyA), `{"reason":"not now"}`)
	if m := r.json(t); r.status != 200 || m["approval"].(map[string]any)["status"] != "denied" {
		t.Fatalf("deny: %d %s", r.status, r.body)
	}
	// The agent reads the outcome with its token.
	r = g.do("GET", "/approvals/"+a1, bearerH(a.token), nil)
	if r.status != 200 || r.json(t)["status"] != "approved" {
		t.Fatalf("the agent reading its approval: %d %s", r.status, r.body)
	}
	if got := ids(g.do("GET", "/approvals?status=pending", apiKey(keyA), nil)); len(got) != 0 {
		t.Errorf("org_a pending after resolving %v, want none", got)
	}
	if got := ids(g.do("GET", "/approvals", apiKey(keyA), nil)); len(got) != 2 {
		t.Errorf("org_a all %v, want two", got)
	}
	r = g.do("POST", "/approvals/"+a1+"/deny", apiKey(keyA), nil)
	if r.status != 409 || r.errorCode(t) != string(domain.CodeConflict) {
		t.Errorf("resolving twice: %d %s, want 409 REQ-409", r.status, r.body)
	}
	before := g.head()
	r = g.do("GET", "/approvals?status=open", apiKey(keyA), nil)
	if r.status != 400 || r.errorCode(t) != string(domain.CodeInvalidRequest) {
		t.Errorf("bad status filter: %d %s", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeInvalidRequest, "")
	before = g.head()
	r = g.do("GET", "/approvals/nope", apiKey(keyA), nil)
	if r.status != 404 || r.errorCode(t) != string(domain.CodeNotFound) {
		t.Errorf("unknown approval: %d %s", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeNotFound, "")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPrincipalIsolation pins that principal A's key can neither read nor
// act on principal B's agents and approvals, and that B's agent token
// does not open A's agent.
func TestPrincipalIsolation(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a := g.register(keyA, "org_a", 1, nil)
	b := g.register(keyB, "org_b", 1, nil)
	r := g.do("POST", "/agents/"+b.id+"/tools/send_email", bearerH(b.token), `{"tool_call":{}}`)
	if r.status != 202 {
		t.Fatalf("tool call: %d %s", r.status, r.body)
	}
	bApproval := r.json(t)["approval"].(map[string]any)["approval_id"].(string)

	cases := []struct {
		method, path string
		h            hdr
		body         string
		status       int
		code         domain.Code
	}{
		{"GET", "/agents/" + b.id, apiKey(keyA), "", 403, domain.CodeForbidden},
		{"GET", "/agents/" + b.id + "/budget", apiKey(keyA), "", 403, domain.CodeForbidden},
		{"GET", "/agents/" + b.id + "/activity", apiKey(keyA), "", 403, domain.CodeForbidden},
		{"GET", "/agents/" + a.id, bearerH(b.token), "", 401, domain.CodeInvalidAgentToken},
		{"GET", "/approvals/" + bApproval, apiKey(keyA), "", 403, domain.CodeForbidden},
		{"GET", "/approvals/" + bApproval, bearerH(a.token), "", 401, domain.CodeInvalidAgentToken},
		{"POST", "/approvals/" + bApproval + "/approve", apiKey(keyA), "", 403, domain.CodeForbidden},
		{"POST", "/agents/" + b.id + "/verify", apiKey(keyA), `{"action":{"type":"calculate","query":"1"},"context":{"conversation_id":"c","step_number":1}}`, 403, domain.CodeForbidden},
		{"POST", "/agents/" + b.id + "/suspend", apiKey(keyA), `{"suspended":true}`, 403, domain.CodeForbidden},
		{"POST", "/agents/" + b.id + "/trust-level", apiKey(keyA), `{"trust_level":3}`, 403, domain.CodeForbidden},
		{"POST", "/agents/" + b.id + "/complaints", apiKey(keyA), `{"reason":"x"}`, 403, domain.CodeForbidden},
		{"PUT", "/principals/org_b/tools", apiKey(keyA), `{"tools":[]}`, 403, domain.CodeForbidden},
		{"POST", "/agents/register", apiKey(keyA), `{"agent":{"name":"x","type":"autonomous","principal_id":"org_b"}}`, 403, domain.CodeForbidden},
	}
	for _, c := range cases {
		before := g.head()
		var body any
		if c.body != "" {
			body = c.body
		}
		r := g.do(c.method, c.path, c.h, body)
		if r.status != c.status || r.errorCode(t) != string(c.code) {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, r.status, r.body, c.status, c.code)
			continue
		}
		if evs := g.events(before); len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
			t.Errorf("%s %s: want one command.rejected record, got %d events", c.method, c.path, len(evs))
		}
	}
	if list := g.do("GET", "/approvals", apiKey(keyA), nil).json(t)["approvals"].([]any); len(list) != 0 {
		t.Errorf("org_a lists %d approvals of org_b", len(list))
	}
	if r := g.do("GET", "/approvals/"+bApproval, apiKey(testAdminKey), nil); r.status != 200 {
		t.Errorf("admin reading org_b's approval: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/agents/"+b.id, apiKey(testAdminKey), nil); r.status != 200 {
		t.Errorf("admin reading org_b's agent: %d %s", r.status, r.body)
	}
}
