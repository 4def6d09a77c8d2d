package httpapi

import (
	"net/http"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// TestAgentSpec5_3_ToolParametersVerified pins QWED-Agent spec v1.1 §5.3
// (requires_verification, verification_engine) through HTTP with the sql
// engine running: a DROP TABLE carried by a database_read call's query is
// DENIED (QWED-AGENT-005, naming the parameter), a SELECT is APPROVED
// with the sql engine's verdict, and a registry entry names its own
// parameter to verify.
func TestAgentSpec5_3_ToolParametersVerified(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	r := g.do("POST", "/agents/register", apiKey(key), map[string]any{
		"agent":       map[string]any{"name": "bot", "type": "supervised", "principal_id": "org_a"},
		"permissions": map[string]any{"allowed_tools": []string{"database_read", "run_report"}},
		"trust_level": 1,
	})
	if r.status != http.StatusCreated {
		t.Fatalf("registering: %d %s", r.status, r.body)
	}
	id, tok := r.json(t)["agent_id"].(string), r.json(t)["agent_token"].(string)
	r = g.do("POST", "/agents/"+id+"/tools/database_read", bearerH(tok), `{"tool_call": {"parameters": {"query": "DROP TABLE users"}}}`)
	if r.json(t)["decision"] != "DENIED" || r.errorCode(t) != string(domain.CodeVerificationFailed) {
		t.Fatalf("DROP TABLE through database_read: %d %s, want DENIED QWED-AGENT-005", r.status, r.body)
	}
	e, _ := r.json(t)["error"].(map[string]any)
	if d, _ := e["details"].(map[string]any); d["parameter"] != "query" || d["statement_risk"] != "critical" {
		t.Errorf("error %v, want details parameter query, statement_risk critical", e)
	}
	r = g.do("POST", "/agents/"+id+"/tools/database_read", bearerH(tok), `{"tool_call": {"parameters": {"query": "SELECT name FROM users WHERE id = 1"}}}`)
	if r.status != http.StatusOK || r.json(t)["decision"] != "APPROVED" {
		t.Fatalf("SELECT through database_read: %d %s, want 200 APPROVED", r.status, r.body)
	}
	if v, _ := r.json(t)["verification"].(map[string]any); v["engine"] != "sql" {
		t.Errorf("verification %v, want engine sql", v)
	}
	r = g.do("PUT", "/principals/org_a/tools", apiKey(key), `{"tools": [{"name": "run_report", "risk_level": "low",
		"requires_verification": true, "verification_engine": "sql", "verify_parameters": ["statement"]}]}`)
	if r.status != http.StatusOK {
		t.Fatalf("registry: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+id+"/tools/run_report", bearerH(tok), `{"tool_call": {"parameters": {"statement": "DELETE FROM reports"}}}`)
	if r.json(t)["decision"] != "DENIED" || r.errorCode(t) != string(domain.CodeVerificationFailed) {
		t.Fatalf("DELETE through a low-risk registry tool: %d %s, want DENIED QWED-AGENT-005", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+id+"/tools/run_report", bearerH(tok), `{"tool_call": {"parameters": {"statement": "SELECT 1"}}}`)
	if r.json(t)["decision"] != "APPROVED" {
		t.Fatalf("SELECT through the registry tool: %d %s, want APPROVED", r.status, r.body)
	}
}

// TestAgentGuide_ActivityActionType pins the QWED-Agent user guide's
// activity loop (entry['action_type'] -> entry['decision']): every entry
// of GET /agents/{id}/activity carries action_type at the top level.
func TestAgentGuide_ActivityActionType(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 1, nil)
	if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "2+2", "c", 1)); r.status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	if r := g.do("POST", "/agents/"+a.id+"/tools/search_web", bearerH(a.token), `{"tool_call": {"parameters": {"q": "x"}}}`); r.status != http.StatusOK {
		t.Fatalf("tool: %d %s", r.status, r.body)
	}
	r := g.do("GET", "/agents/"+a.id+"/activity?limit=10", bearerH(a.token), nil)
	acts, _ := r.json(t)["activities"].([]any)
	got := map[string]bool{}
	for _, x := range acts {
		e, _ := x.(map[string]any)
		got[e["action_type"].(string)+"->"+e["decision"].(string)] = true
	}
	if len(acts) != 2 || !got["calculate->APPROVED"] || !got["tool_call->APPROVED"] {
		t.Fatalf("activity %s, want action_type calculate and tool_call", r.body)
	}
}
