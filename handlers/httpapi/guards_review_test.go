package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// QWED-Agent spec v1.1 §2.2 over HTTP (second review of the guards): an
// agent token could reach /etc/shadow and the metadata service past the
// path and egress guards by naming them beside a benign target, in a
// second parameter, or through the tool endpoint. Each is refused with
// QWED-SEC-002 and the rule; the benign forms pass.
func TestAgentSpec_2_2_GuardsEveryOperand_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	cases := []struct {
		path     string
		body     map[string]any
		decision string
		rule     string
	}{
		{"/verify", map[string]any{"action": map[string]any{"type": "read_file", "target": "/tmp/ok",
			"parameters": map[string]any{"path": "/etc/shadow"}}}, "DENIED", "sensitive_path"},
		{"/verify", map[string]any{"action": map[string]any{"type": "network_request", "target": "https://example.com/",
			"parameters": map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}}}, "DENIED", "metadata_address"},
		{"/tools/read_file", map[string]any{"tool_call": map[string]any{"tool_name": "read_file",
			"parameters": map[string]any{"path": "/etc/shadow"}}}, "DENIED", "sensitive_path"},
		{"/tools/fetch_url", map[string]any{"tool_call": map[string]any{"tool_name": "fetch_url",
			"parameters": map[string]any{"url": "http://0xa9fea9fe/"}}}, "DENIED", "metadata_address"},
		{"/tools/read_file", map[string]any{"tool_call": map[string]any{"tool_name": "read_file",
			"parameters": map[string]any{"path": "/tmp/report.txt"}}}, "APPROVED", ""},
		{"/verify", map[string]any{"action": map[string]any{"type": "read_file", "target": "/tmp/ok",
			"parameters": map[string]any{"path": "/tmp/ok"}}}, "APPROVED", ""},
	}
	for i, c := range cases {
		// a fresh agent each: a refusal demotes the agent's trust
		r := g.do("POST", "/agents/register", apiKey(key), map[string]any{
			"agent":       map[string]any{"name": "guards", "type": "autonomous", "principal_id": "org_a"},
			"permissions": map[string]any{"allowed_tools": []string{"read_file", "fetch_url"}},
			"trust_level": 3,
		})
		if r.status != http.StatusCreated {
			t.Fatalf("registering: %d %s", r.status, r.body)
		}
		m := r.json(t)
		id, tok := m["agent_id"].(string), m["agent_token"].(string)
		c.body["context"] = map[string]any{"conversation_id": "guards", "step_number": i + 1}
		r = g.do("POST", "/agents/"+id+c.path, bearerH(tok), c.body)
		m = r.json(t)
		if m["decision"] != c.decision {
			t.Errorf("%d %s: %d %s; want %s", i, c.path, r.status, r.body, c.decision)
			continue
		}
		if c.rule == "" {
			continue
		}
		e, _ := m["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if e["code"] != "QWED-SEC-002" || d["rule"] != c.rule {
			t.Errorf("%d %s: %s; want QWED-SEC-002 rule %s", i, c.path, r.body, c.rule)
		}
	}
}

// QWED-Agent spec v1.1 §5.3 over HTTP with the sql engine running (second
// review of the guards): the built-in database tools verified only the
// parameters named exactly "query" and "sql", so an agent carried
// DROP TABLE users in "Query", "statement" or an array and was APPROVED —
// through query_data, a safe tool, without any allowlisting. Under
// Config.StrictGuards names match in any case and every string that opens
// like an SQL statement is verified; plain values still pass, and prose
// that opens like one is held for approval, never approved unverified.
func TestAgentSpec5_3_ToolParameterSpellings_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	cases := []struct {
		tool, params string
		decision     string
		code         string
	}{
		{"database_read", `{"Query": "DROP TABLE users"}`, "DENIED", "QWED-AGENT-005"},
		{"query_data", `{"statement": "DROP TABLE users"}`, "DENIED", "QWED-AGENT-005"},
		{"database_read", `{"queries": ["SELECT 1", "  /* x */ drop table users"]}`, "DENIED", "QWED-AGENT-005"},
		{"read_database", `{"options": {"sql_query": "DELETE FROM orders"}}`, "DENIED", "QWED-AGENT-005"},
		{"database_read", `{"table": "orders", "limit": 10}`, "APPROVED", ""},
		{"query_data", `{"statement": "SELECT id FROM orders WHERE id = 1"}`, "APPROVED", ""},
		{"database_read", `{"table": "orders", "note": "update the dashboard"}`, "PENDING", "QWED-AGENT-TRUST-002"},
	}
	for i, c := range cases {
		r := g.do("POST", "/agents/register", apiKey(key), map[string]any{
			"agent":       map[string]any{"name": "db", "type": "autonomous", "principal_id": "org_a"},
			"permissions": map[string]any{"allowed_tools": []string{"database_read", "read_database"}},
			"trust_level": 3,
		})
		id, tok := r.json(t)["agent_id"].(string), r.json(t)["agent_token"].(string)
		r = g.do("POST", "/agents/"+id+"/tools/"+c.tool, bearerH(tok), `{"tool_call": {"parameters": `+c.params+`}}`)
		if r.json(t)["decision"] != c.decision || (c.code != "" && r.errorCode(t) != c.code) {
			t.Errorf("%d %s %s: %d %s; want %s %s", i, c.tool, c.params, r.status, r.body, c.decision, c.code)
		}
	}
}

// QWED-Agent spec v1.1 §5.2 no_pii_leakage over HTTP (second review): a
// card number written with dots or fullwidth digits left through
// send_email, a Google key after "key=" through api_call; an IMEI in a
// tool call was refused as a card. Under Config.StrictGuards the first
// two are QWED-SEC-003 and the IMEI passes.
func TestAgentSpec5_2_PIIStrict_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	cases := []struct {
		path, body, decision, code string
	}{
		{"/verify", `{"action": {"type": "send_email", "parameters": {"to": "ann@example.com", "body": "card 4111.1111.1111.1111"}}}`, "DENIED", "QWED-SEC-003"},
		{"/verify", `{"action": {"type": "send_email", "parameters": {"body": "card ４１１１ １１１１ １１１１ １１１１"}}}`, "DENIED", "QWED-SEC-003"},
		{"/verify", `{"action": {"type": "api_call", "target": "https://maps.example.com/api?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"}}`, "DENIED", "QWED-SEC-003"},
		{"/tools/log_message", `{"tool_call": {"tool_name": "log_message", "parameters": {"text": "device imei 490154203237518 enrolled"}}}`, "APPROVED", ""},
	}
	for i, c := range cases {
		a := g.register(key, "org_a", 3, nil)
		body := strings.Replace(c.body, "{", `{"context": {"conversation_id": "pii", "step_number": 1}, `, 1)
		r := g.do("POST", "/agents/"+a.id+c.path, bearerH(a.token), body)
		if r.json(t)["decision"] != c.decision || (c.code != "" && r.errorCode(t) != c.code) {
			t.Errorf("%d %s: %d %s; want %s %s", i, c.path, r.status, r.body, c.decision, c.code)
		}
	}
}
