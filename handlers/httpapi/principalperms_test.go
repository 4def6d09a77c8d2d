package httpapi

import (
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// QWED-Agent spec v1.1 §2.2 over HTTP (issue 16 items 2 and 3): PUT
// /principals/{id}/permissions sets the principal's path and egress policy
// for all its agents, with the principal's key or the admin key; another
// principal's key and an agent token are refused and change nothing; the
// policy is answered as recorded (hosts as A-labels) and decides the
// agents' requests.
func TestAgentSpec_2_2_PrincipalPermissions_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a := g.register(keyA, "org_a", 3, nil)
	b := g.register(keyB, "org_b", 3, nil)
	body := `{"allowed_paths":["/srv"],"allowed_hosts":["*.Bücher.example","api.example.com"],"allowed_schemes":["https"]}`
	for _, c := range []struct {
		h      hdr
		path   string
		body   string
		status int
		code   domain.Code
	}{
		{apiKey(keyB), "/principals/org_a/permissions", body, 403, domain.CodeForbidden},
		{bearerH(a.token), "/principals/org_a/permissions", body, 401, domain.CodeMissingAPIKey},
		{apiKey(keyA), "/principals/org_a/permissions", `{"principal_id":"org_b"}`, 400, domain.CodeInvalidRequest},
		{apiKey(keyA), "/principals/org_a/permissions", `{"allowed_hosts":["xn--abc-.example"]}`, 400, domain.CodeInvalidRequest},
		{apiKey(keyA), "/principals/org_a/permissions", `{"allowed_ports":[0]}`, 400, domain.CodeInvalidRequest},
		{apiKey(keyA), "/principals/org_a/permissions", `{"allowed_tools":["x"]}`, 400, domain.CodeInvalidRequest},
	} {
		before := g.head()
		r := g.do("PUT", c.path, c.h, c.body)
		if r.status != c.status || r.errorCode(t) != string(c.code) {
			t.Errorf("PUT %s %s: %d %s; want %d %s", c.path, c.body, r.status, r.body, c.status, c.code)
		}
		for _, ev := range g.events(before) {
			if ev.Type != domain.EvCommandRejected {
				t.Errorf("PUT %s %s appended %s", c.path, c.body, ev.Type)
			}
		}
	}
	// Nothing was set: the agent reads anywhere not denied.
	r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), map[string]any{
		"action": map[string]any{"type": "read_file", "target": "/tmp/x"}, "context": map[string]any{"conversation_id": "p", "step_number": 1}})
	if r.json(t)["decision"] != "APPROVED" {
		t.Fatalf("before the policy: %d %s", r.status, r.body)
	}
	r = g.do("PUT", "/principals/org_a/permissions", apiKey(keyA), body)
	m := r.json(t)
	hosts, _ := m["allowed_hosts"].([]any)
	if r.status != 200 || m["principal_id"] != "org_a" || len(hosts) != 2 || hosts[0] != "*.xn--bcher-kva.example" {
		t.Fatalf("setting: %d %s", r.status, r.body)
	}
	r = g.do("PUT", "/principals/org_b/permissions", apiKey(testAdminKey), `{"denied_paths":["**/*.csv"]}`)
	if r.status != 200 {
		t.Fatalf("admin override: %d %s", r.status, r.body)
	}
	for i, c := range []struct {
		ag       agent
		act      map[string]any
		decision string
		rule     string
	}{
		{a, map[string]any{"type": "read_file", "target": "/tmp/x"}, "DENIED", "outside_allowed_roots"},
		{a, map[string]any{"type": "read_file", "target": "/srv/x.csv"}, "APPROVED", ""},
		{a, map[string]any{"type": "network_request", "target": "https://shop.bücher.example/"}, "APPROVED", ""},
		{a, map[string]any{"type": "network_request", "target": "https://evil.example/"}, "DENIED", "host_not_allowed"},
		{b, map[string]any{"type": "read_file", "target": "/srv/x.csv"}, "DENIED", "denied_path"},
		{b, map[string]any{"type": "network_request", "target": "https://evil.example/"}, "APPROVED", ""},
	} {
		g.do("POST", "/agents/"+c.ag.id+"/trust-level", apiKey(c.ag.key), `{"trust_level":3}`)
		r := g.do("POST", "/agents/"+c.ag.id+"/verify", bearerH(c.ag.token), map[string]any{
			"action": c.act, "context": map[string]any{"conversation_id": "p", "step_number": i + 2}})
		m := r.json(t)
		e, _ := m["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if m["decision"] != c.decision || (c.rule != "" && d["rule"] != c.rule) {
			t.Errorf("%d %v: %d %s; want %s %s", i, c.act, r.status, r.body, c.decision, c.rule)
		}
	}
}
