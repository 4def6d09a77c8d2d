package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// Issue 14, security: another consumer's businesses, policies,
// transactions and confirmation tokens are invisible and unusable. The
// business registry is shared (any consumer's agents execute at any
// business through the gate), so a business of org_a is listed to org_b
// without its endpoint or owner, and org_b can neither change nor delete
// it; org_a's policies and transactions do not exist for org_b; org_a's
// token is refused to org_b's agent (QWED-EXEC-004, in
// TestSeed004_Refusals).
func TestExecuteTenantIsolation(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeOpen, 100)
	keyB := g.issueKey("org_b")
	agentB := g.register(keyB, "org_b", 2, nil)
	g.addPolicy(g.key, map[string]any{"id": "daily", "type": "spending", "spending": map[string]any{"daily_cents": 1000}})
	tx := expectCompleted(t, g.execute(g.agent, "", execBody("shop", 300, "")))

	// The business: listed to org_b as a public card, unchangeable.
	for _, path := range []string{"/businesses/shop", "/businesses"} {
		r := g.do("GET", path, apiKey(keyB), nil)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"shop"`) ||
			strings.Contains(string(r.body), g.biz.srv.URL) || strings.Contains(string(r.body), "org_a") {
			t.Fatalf("GET %s by org_b: %d %s, want the business without endpoint and owner", path, r.status, r.body)
		}
		if r := g.do("GET", path, apiKey(g.key), nil); !strings.Contains(string(r.body), g.biz.srv.URL) {
			t.Fatalf("GET %s by its owner: %d %s, want its endpoint", path, r.status, r.body)
		}
	}
	before := g.head()
	r := g.do("PUT", "/businesses/shop", apiKey(keyB), map[string]any{"name": "Mine now", "categories": []string{},
		"endpoint": "http://127.0.0.1:1/", "currency": "USD"})
	if r.status != http.StatusForbidden {
		t.Fatalf("org_b updating org_a's business: %d %s, want 403", r.status, r.body)
	}
	if r := g.do("DELETE", "/businesses/shop", apiKey(keyB), nil); r.status != http.StatusForbidden {
		t.Fatalf("org_b deleting org_a's business: %d %s, want 403", r.status, r.body)
	}
	if r := g.do("PUT", "/businesses/shop", bearerH(g.agent.token), nil); r.status != http.StatusUnauthorized {
		t.Fatalf("an agent token changing the registry: %d %s, want 401 (a key is required)", r.status, r.body)
	}
	for _, ev := range g.events(before) {
		if ev.Type == domain.EvBusinessChanged {
			t.Fatalf("a refused change was recorded as a change: %+v", ev.Business)
		}
	}

	// The policy: absent for org_b, whatever the verb.
	if r := g.do("GET", "/policies", apiKey(keyB), nil); r.status != http.StatusOK || strings.Contains(string(r.body), "daily") {
		t.Fatalf("org_b lists org_a's policies: %d %s", r.status, r.body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := g.do(m, "/policies/daily", apiKey(keyB), nil); r.status != http.StatusNotFound {
			t.Fatalf("%s org_a's policy by org_b: %d %s, want 404", m, r.status, r.body)
		}
	}
	// org_b's own policy of the same id is its own: org_a's stays.
	g.addPolicy(keyB, map[string]any{"id": "daily", "type": "spending", "spending": map[string]any{"daily_cents": 1}})
	expectCompleted(t, g.execute(g.agent, "", execBody("shop", 300, "-2")))
	expectBlocked(t, g.execute(agentB, "", execBody("shop", 300, "-b")), domain.CodePolicySpending, "daily")

	// The transaction: absent for org_b; transactions take an API key, so
	// org_b's agent reads none.
	if r := g.do("GET", "/transactions/"+tx, apiKey(keyB), nil); r.status != http.StatusNotFound {
		t.Fatalf("org_b reads org_a's transaction: %d %s, want 404", r.status, r.body)
	}
	if r := g.do("GET", "/transactions/"+tx, bearerH(agentB.token), nil); r.status != http.StatusUnauthorized {
		t.Fatalf("org_b's agent reads org_a's transaction: %d %s, want 401", r.status, r.body)
	}
	if r := g.do("GET", "/transactions/"+tx, apiKey(g.key), nil); r.status != http.StatusOK {
		t.Fatalf("org_a reads its transaction: %d %s, want 200", r.status, r.body)
	}
	// The same Idempotency-Key under org_b's agent is another request: it
	// never gets org_a's answer.
	h := agentH(g.agent)
	h["Idempotency-Key"] = "order-1"
	expectCompleted(t, g.do("POST", "/agp/execute", h, execBody("shop", 100, "-key")))
	hb := agentH(agentB)
	hb["Idempotency-Key"] = "order-1"
	expectBlocked(t, g.do("POST", "/agp/execute", hb, execBody("shop", 100, "-key")), domain.CodePolicySpending, "daily")
}
