package httpapi

import (
	"net/http"
	"testing"
)

// QWED-Agent spec v1.1 §2.2 over HTTP (embedded deployment): an agent
// registers its path and egress policy; read_file /etc/shadow and a
// request to the metadata service spelled as a hexadecimal IPv4 literal
// are refused as security violations, what the policy allows passes; an
// email carrying an SSN is refused as PII (QWED-SEC-003, §5.2).
func TestAgentSpec_2_2_FileAndNetworkPolicy_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	r := g.do("POST", "/agents/register", apiKey(key), map[string]any{
		"agent": map[string]any{"name": "files", "type": "autonomous", "principal_id": "org_a"},
		"permissions": map[string]any{"allowed_paths": []string{"/srv/data"}, "denied_paths": []string{"**/*.sqlite"},
			"allowed_hosts": []string{"api.example.com"}, "allowed_schemes": []string{"https"}, "allowed_ports": []int{443}},
		"trust_level": 3,
	})
	if r.status != http.StatusCreated {
		t.Fatalf("registering: %d %s", r.status, r.body)
	}
	m := r.json(t)
	id, tok := m["agent_id"].(string), m["agent_token"].(string)
	perms, _ := m["permissions"].(map[string]any)
	if hosts, _ := perms["allowed_hosts"].([]any); len(hosts) != 1 || hosts[0] != "api.example.com" {
		t.Errorf("registration reply permissions %v", perms)
	}
	cases := []struct {
		action   map[string]any
		decision string
		code     string
	}{
		{map[string]any{"type": "read_file", "target": "/srv/data/q1.csv"}, "APPROVED", ""},
		{map[string]any{"type": "network_request", "target": "https://api.example.com/v1"}, "APPROVED", ""},
		{map[string]any{"type": "read_file", "target": "/etc/shadow"}, "DENIED", "QWED-SEC-002"},
		{map[string]any{"type": "read_file", "parameters": map[string]any{"path": "/srv/data/../../etc/hosts"}}, "DENIED", "QWED-SEC-002"},
		{map[string]any{"type": "network_request", "target": "http://0xa9fea9fe/latest/meta-data/"}, "DENIED", "QWED-SEC-002"},
		{map[string]any{"type": "send_email", "parameters": map[string]any{"to": "ann@example.com", "body": "ssn 078-05-1120"}}, "DENIED", "QWED-SEC-003"},
	}
	for i, c := range cases {
		body := map[string]any{"action": c.action, "context": map[string]any{"conversation_id": "files", "step_number": i + 1}}
		r := g.do("POST", "/agents/"+id+"/verify", bearerH(tok), body)
		m := r.json(t)
		if m["decision"] != c.decision {
			t.Errorf("%v: %d %s; want %s", c.action, r.status, r.body, c.decision)
			continue
		}
		if c.code != "" {
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != c.code {
				t.Errorf("%v: %s; want error %s", c.action, r.body, c.code)
			}
		}
	}
	bad := g.do("POST", "/agents/register", apiKey(key), map[string]any{
		"agent":       map[string]any{"name": "bad", "type": "autonomous", "principal_id": "org_a"},
		"permissions": map[string]any{"allowed_paths": []string{"srv/../etc"}},
	})
	if bad.status != http.StatusBadRequest {
		t.Errorf("a relative root: %d %s; want 400", bad.status, bad.body)
	}
}
