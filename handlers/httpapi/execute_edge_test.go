package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// Issue 14, security: Config.ExecuteRateLimit bounds the consumer policy
// engine's writes per credential before anything is built or decided:
// over it 429 QWED-AUTH-004 with Retry-After, nothing recorded; another
// credential keeps its own bucket, and time refills it.
func TestExecuteEdgeRateLimit(t *testing.T) {
	c := domain.DefaultExecuteConfig()
	g := newTestGate(t, gateOptions{execute: &c, executeRate: RateLimit{PerPrincipal: 1, Burst: 2}})
	key := g.issueKey("org_a")
	ag := g.register(key, "org_a", 2, nil)
	other := g.register(key, "org_a", 2, nil)
	g.addBusiness(key, "shop", "http://127.0.0.1:9/")
	g.addBusiness(key, "shop2", "http://127.0.0.1:9/")
	// The key spent both its tokens on the two businesses.
	before := g.head()
	r := g.do("POST", "/businesses", apiKey(key), `{"id":"shop3","name":"S","categories":[],"endpoint":"http://127.0.0.1:9/","currency":"USD"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != string(domain.CodeRateLimited) || r.header.Get("Retry-After") != "1" {
		t.Fatalf("a third business change at once: %d %v %s, want 429 QWED-AUTH-004 Retry-After 1", r.status, r.header, r.body)
	}
	body := execBody("shop", 10, "")
	for range 2 {
		g.prepare(ag, body)
	}
	r = g.do("POST", "/agp/execute/prepare", agentH(ag), body)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != string(domain.CodeRateLimited) {
		t.Fatalf("a third prepare at once: %d %s, want 429", r.status, r.body)
	}
	r = g.do("POST", "/agp/execute", agentH(ag), body)
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("an execute over the limit: %d %s, want 429", r.status, r.body)
	}
	if n := len(g.events(before)) - 2; n != 0 {
		t.Fatalf("the refused requests recorded %d events", n)
	}
	g.prepare(other, body) // its own bucket
	g.clock.Advance(1e9)
	g.prepare(ag, body) // refilled
}

// Issue 14, security: bounded bodies and headers. An execute body over
// the request object's bound plus the envelope is refused before it is
// read (413 QWED-REQ-004, recorded with its size and digest, never the
// body); an X-Confirmation-Token or X-Agent-ID over its bound is
// QWED-REQ-001; a request object over domain.MaxExecuteRequestBytes
// within the body bound is QWED-REQ-004 (413) naming it.
func TestExecuteBounds(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeConfirm, 100)
	huge := `{"businessId":"shop","request":{"pad":"` + strings.Repeat("m", executeBodyLimit) + `"}}`
	before := g.head()
	r := g.execute(g.agent, "x", huge)
	if r.status != http.StatusRequestEntityTooLarge || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("an execute body over the bound: %d %s, want 413 QWED-REQ-004", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeTooLong, "mmmmmmmm")
	for _, h := range []string{"X-Confirmation-Token", "X-Agent-ID"} {
		hd := agentH(g.agent)
		hd[h] = strings.Repeat("t", 300)
		r := g.do("POST", "/agp/execute", hd, execBody("shop", 1, ""))
		if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeInvalidRequest) {
			t.Fatalf("%s of 300 bytes: %d %s, want 400 QWED-REQ-001", h, r.status, r.body)
		}
	}
	big := `{"businessId":"shop","request":{"pad":"` + strings.Repeat("m", domain.MaxExecuteRequestBytes) + `"}}`
	r = g.do("POST", "/agp/execute/prepare", agentH(g.agent), big)
	if r.status != http.StatusRequestEntityTooLarge || r.errorCode(t) != string(domain.CodeTooLong) || !strings.Contains(string(r.body), `"field":"request"`) {
		t.Fatalf("a request object over %d bytes: %d %s, want 413 QWED-REQ-004 naming request", domain.MaxExecuteRequestBytes, r.status, r.body)
	}
}
