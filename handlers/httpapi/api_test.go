package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

// TestSeed000_3_Registration pins POST /agents/register (QWED-Agent spec v1.1
// §3.1, §3.2): 201, the seed's fields, a qwed_agent_ token returned once and
// only its hash recorded.
func TestSeed000_3_Registration(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	before := g.head()
	r := g.do("POST", "/agents/register", apiKey(key), `{
		"agent": {"name": "CustomerSupportBot", "type": "autonomous", "description": "Handles customer inquiries",
		          "principal_id": "org_a", "framework": "langchain", "model": "claude-3.5-sonnet"},
		"permissions": {"allowed_engines": ["math", "fact", "sql"], "allowed_tools": ["database_read", "send_email"],
		                "blocked_tools": ["database_write", "file_delete"]},
		"budget": {"max_daily_cost_usd": 100.00, "max_requests_per_hour": 1000, "max_tokens_per_request": 4096},
		"trust_level": "supervised"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("status %d %s, want 201", r.status, r.body)
	}
	m := r.json(t)
	for _, f := range []string{"agent_id", "agent_token", "did", "status", "created_at", "permissions", "budget", "trust_level"} {
		if _, ok := m[f]; !ok {
			t.Errorf("registration reply lacks %s: %s", f, r.body)
		}
	}
	tok, _ := m["agent_token"].(string)
	if !strings.HasPrefix(tok, command.AgentTokenPrefix) || len(tok) != len(command.AgentTokenPrefix)+43 {
		t.Errorf("agent_token %q is not qwed_agent_ + base64url(32 bytes)", tok)
	}
	if m["did"] != "did:qwed:agent:"+m["agent_id"].(string) || m["status"] != "active" || m["trust_level"] != 1.0 {
		t.Errorf("registration reply %s", r.body)
	}
	evs := g.events(before)
	if len(evs) != 1 || evs[0].Type != domain.EvAgentRegistered {
		t.Fatalf("log holds %d events, want one agent.registered", len(evs))
	}
	if evs[0].Registered.TokenHash != command.HashSecret(tok) {
		t.Errorf("recorded token hash differs from the hash of the answered token")
	}
	for _, rec := range g.records(before) {
		if strings.Contains(string(rec), tok) {
			t.Fatalf("the log holds the plaintext agent token")
		}
	}
}

// TestRegisterTokenHashIsNotAccepted pins that a client cannot choose its
// agent's token: token_hash is not a member of the registration body.
func TestRegisterTokenHashIsNotAccepted(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	before := g.head()
	r := g.do("POST", "/agents/register", apiKey(key), `{"agent":{"name":"x","type":"autonomous","principal_id":"org_a"},
		"token_hash":"0000000000000000000000000000000000000000000000000000000000000000"}`)
	if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeInvalidRequest) {
		t.Fatalf("status %d %s, want 400 QWED-REQ-001", r.status, r.body)
	}
	if e := errorOf(t, r.body); e.Details["field"] != "token_hash" {
		t.Errorf("error details %v do not name token_hash", e.Details)
	}
	g.expectRejected(before, domain.CodeInvalidRequest, "")
}

// TestAgentReads pins GET /agents/{id}, /budget and /activity for the
// owning principal, the admin and the agent's own token.
func TestAgentReads(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, map[string]any{"max_daily_cost_usd": 10, "max_requests_per_hour": 100})
	if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "2+2", "c1", 1)); r.status != 200 {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	for name, h := range map[string]hdr{"principal": apiKey(key), "admin": apiKey(testAdminKey), "token": bearerH(a.token)} {
		r := g.do("GET", "/agents/"+a.id, h, nil)
		if r.status != 200 {
			t.Fatalf("%s: GET agent %d %s", name, r.status, r.body)
		}
		m := r.json(t)
		if m["agent_id"] != a.id || m["principal_id"] != "org_a" || m["total_actions"] != 1.0 {
			t.Errorf("%s: agent view %s", name, r.body)
		}
		if strings.Contains(string(r.body), "token_hash") {
			t.Errorf("%s: the agent view discloses the token hash", name)
		}
		r = g.do("GET", "/agents/"+a.id+"/budget", h, nil)
		if r.status != 200 {
			t.Fatalf("%s: GET budget %d %s", name, r.status, r.body)
		}
		b, _ := r.json(t)["budget"].(map[string]any)
		req, _ := b["requests"].(map[string]any)
		cost, _ := b["cost"].(map[string]any)
		if req["max_per_hour"] != 100.0 || req["current_hour"] != 1.0 || cost["max_daily_usd"] != 10.0 {
			t.Errorf("%s: budget view %s", name, r.body)
		}
		r = g.do("GET", "/agents/"+a.id+"/activity", h, nil)
		if r.status != 200 {
			t.Fatalf("%s: GET activity %d %s", name, r.status, r.body)
		}
		m = r.json(t)
		sum, _ := m["summary"].(map[string]any)
		acts, _ := m["activities"].([]any)
		if m["agent_id"] != a.id || sum["total_actions"] != 1.0 || sum["approved"] != 1.0 || len(acts) != 1 || m["next_after_seq"] != nil {
			t.Errorf("%s: activity %s", name, r.body)
		}
		p, _ := m["period"].(map[string]any)
		if p["to"] != "2026-03-02T10:00:01Z" || p["from"] != "2026-01-31T10:00:01Z" {
			t.Errorf("%s: default period %v, want the 30 days before now", name, p)
		}
	}
}

// TestSeed000_7_2_ActivityQuery pins the audit query parameters: dates,
// paging with limit and after_seq, and bad parameters.
func TestSeed000_7_2_ActivityQuery(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 3, nil)
	for step := 1; step <= 3; step++ {
		q := []string{"1+1", "2+2", "3+3"}[step-1]
		if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", q, "c1", step)); r.status != 200 {
			t.Fatalf("verify: %d %s", r.status, r.body)
		}
	}
	r := g.do("GET", "/agents/"+a.id+"/activity?from=2026-03-01&to=2026-03-03&limit=2", apiKey(key), nil)
	m := r.json(t)
	acts, _ := m["activities"].([]any)
	next, _ := m["next_after_seq"].(float64)
	if r.status != 200 || len(acts) != 2 || next == 0 {
		t.Fatalf("first page: %d %s", r.status, r.body)
	}
	if p, _ := m["period"].(map[string]any); p["from"] != "2026-03-01T00:00:00Z" || p["to"] != "2026-03-03T00:00:00Z" {
		t.Errorf("period %v, want the dates at UTC midnight", p)
	}
	if s, _ := m["summary"].(map[string]any); s["total_actions"] != 3.0 {
		t.Errorf("summary %v counts the page, want the period", s)
	}
	r = g.do("GET", "/agents/"+a.id+"/activity?from=2026-03-01T00:00:00Z&to=2026-03-03T00:00:00Z&limit=2&after_seq="+
		strconv.FormatUint(uint64(next), 10), apiKey(key), nil)
	m = r.json(t)
	acts, _ = m["activities"].([]any)
	if r.status != 200 || len(acts) != 1 || m["next_after_seq"] != nil {
		t.Fatalf("second page: %d %s", r.status, r.body)
	}
	for _, q := range []string{"from=yesterday", "to=2026-13-01", "limit=0", "limit=1001", "after_seq=-1",
		"from=2026-03-03&to=2026-03-01", "from=2020-01-01&to=2026-01-01"} {
		before := g.head()
		r := g.do("GET", "/agents/"+a.id+"/activity?"+q, apiKey(key), nil)
		if r.status != 400 || r.errorCode(t) != string(domain.CodeInvalidRequest) {
			t.Errorf("%s: %d %s, want 400 QWED-REQ-001", q, r.status, r.body)
			continue
		}
		g.expectRejected(before, domain.CodeInvalidRequest, "")
	}
}

// TestReadRejections pins the refusals of the read endpoints: no
// credentials QWED-AUTH-001, an unknown key QWED-AUTH-002, an unknown agent
// QWED-AGENT-001; each is recorded once.
func TestReadRejections(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	cases := []struct {
		path   string
		h      hdr
		status int
		code   domain.Code
	}{
		{"/agents/" + a.id, nil, 401, domain.CodeMissingAPIKey},
		{"/agents/" + a.id + "/budget", apiKey("qwed_key_wrong"), 401, domain.CodeInvalidAPIKey},
		{"/agents/agent_unknown/activity", apiKey(key), 404, domain.CodeAgentNotRegistered},
		{"/approvals", nil, 401, domain.CodeMissingAPIKey},
		{"/approvals", bearerH(a.token), 401, domain.CodeMissingAPIKey},
		{"/approvals/x", apiKey("qwed_key_wrong"), 401, domain.CodeInvalidAPIKey},
	}
	for _, c := range cases {
		before := g.head()
		r := g.do("GET", c.path, c.h, nil)
		if r.status != c.status || errorOf(t, r.body).Code != c.code {
			t.Errorf("GET %s: %d %s, want %d %s", c.path, r.status, r.body, c.status, c.code)
			continue
		}
		g.expectRejected(before, c.code, "")
	}
}

// Issue 17 item 13: every JSON answer ends with a newline (curl printed
// the shell prompt after the closing brace): a read, a write, an error
// and the JWKS.
func TestJSONAnswersEndWithANewline(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	reg := g.do("POST", "/agents/register", apiKey(key), `{"agent": {"name": "n", "type": "supervised", "principal_id": "org_a"}}`)
	id, _ := reg.json(t)["agent_id"].(string)
	for what, r := range map[string]response{
		"registration": reg,
		"a read":       g.do("GET", "/agents/"+id+"/budget", apiKey(key), ""),
		"an error":     g.do("GET", "/agents/agent_nope", apiKey(key), ""),
		"the JWKS":     g.do("GET", "/.well-known/jwks.json", nil, ""),
	} {
		if !strings.HasSuffix(string(r.body), "}\n") {
			t.Errorf("%s: %d %q does not end with a newline", what, r.status, r.body)
		}
	}
}
