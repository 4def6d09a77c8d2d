package httpapi

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestSeed002_10_3_TokenBuckets pins the limiter: a principal's burst,
// then its sustained rate; principals do not share a bucket; the global
// bucket bounds them all; a refusal says when to retry, and a request the
// global bucket refuses does not spend the principal's token.
func TestSeed002_10_3_TokenBuckets(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	l := newLimiter(RateLimit{PerPrincipal: 2, Burst: 3, Global: 4, GlobalBurst: 5}, t0)
	for i := 0; i < 3; i++ {
		if e, _ := l.allow("a", t0); e != nil {
			t.Fatalf("burst request %d refused: %+v", i, e.err)
		}
	}
	e, wait := l.allow("a", t0)
	if e == nil || e.err.Code != "QWED-AUTH-004" || e.status != 429 || wait != 500*time.Millisecond || e.err.Details["scope"] != "per_principal" {
		t.Fatalf("4th request of a at t0: %+v wait %s", e, wait)
	}
	if e, _ := l.allow("a", t0.Add(499*time.Millisecond)); e == nil {
		t.Fatal("a token before its time")
	}
	if e, _ := l.allow("a", t0.Add(500*time.Millisecond)); e != nil {
		t.Fatalf("the refilled token refused: %+v", e.err)
	}
	// b has its own bucket.
	if e, _ := l.allow("b", t0.Add(500*time.Millisecond)); e != nil {
		t.Fatalf("b's first request: %+v", e.err)
	}
	// The global bucket bounds everyone, and a request it refuses does not
	// spend the principal's token: b keeps exactly 1 of its 2.
	s := newLimiter(RateLimit{PerPrincipal: 0.01, Burst: 2, Global: 1, GlobalBurst: 1}, t0)
	if e, _ := s.allow("b", t0); e != nil {
		t.Fatal(e.err)
	}
	if e, _ := s.allow("c", t0); e == nil || e.err.Details["scope"] != "global" {
		t.Fatalf("global bound for c: %+v", e)
	}
	if e, _ := s.allow("b", t0); e == nil || e.err.Details["scope"] != "global" {
		t.Fatalf("global bound for b: %+v", e)
	}
	if e, _ := s.allow("b", t0.Add(time.Second)); e != nil {
		t.Fatalf("b's kept token: %+v", e.err)
	}
	if e, _ := s.allow("b", t0.Add(2*time.Second)); e == nil || e.err.Details["scope"] != "per_principal" {
		t.Fatalf("b has spent its two tokens: %+v", e)
	}
	// Without a per-principal rate, only the global bucket applies.
	g := newLimiter(RateLimit{Global: 1}, t0)
	if e, _ := g.allow("x", t0); e != nil {
		t.Fatal(e.err)
	}
	if e, _ := g.allow("y", t0); e == nil {
		t.Fatal("the global bucket let a second request through")
	}
}

// TestSeed002_10_3_VerifyIsRateLimited: over HTTP, POST /verify and the
// qwed.verify CloudEvent answer 429 QWED-AUTH-004 with Retry-After past a
// principal's burst, as a §8.4 error body, without writing to the log;
// another principal is unaffected; time passing lets the principal in.
func TestSeed002_10_3_VerifyIsRateLimited(t *testing.T) {
	g := newTestGate(t, gateOptions{verifyRate: RateLimit{PerPrincipal: 1, Burst: 2}})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	body := map[string]any{"query": "2+2=4", "type": "math"}
	for i := 0; i < 2; i++ {
		if r := g.do("POST", "/verify", apiKey(keyA), body); r.status != http.StatusOK {
			t.Fatalf("request %d within the burst: %d %s", i, r.status, r.body)
		}
	}
	head := g.head()
	r := g.do("POST", "/verify", apiKey(keyA), body)
	m := r.json(t)
	e, _ := m["error"].(map[string]any)
	if r.status != http.StatusTooManyRequests || m["status"] != "ERROR" || e["code"] != "QWED-AUTH-004" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("over the burst: %d %v %s", r.status, r.header, r.body)
	}
	if g.head() != head {
		t.Fatal("a rate-limited request wrote to the log")
	}
	ce := func(key, id string) response {
		return g.do("POST", "/events", hdr{"X-API-Key": key, "Ce-Specversion": "1.0", "Ce-Type": "qwed.verify",
			"Ce-Source": "rl-test", "Ce-Id": id, "Content-Type": "application/json"}, body)
	}
	if r := ce(keyA, "1"); r.status != http.StatusTooManyRequests {
		t.Fatalf("qwed.verify CloudEvent over the limit: %d %s", r.status, r.body)
	}
	if r := g.do("POST", "/verify", apiKey(keyB), body); r.status != http.StatusOK {
		t.Fatalf("another principal: %d %s", r.status, r.body)
	}
	g.clock.Advance(time.Second)
	if r := ce(keyA, "2"); r.status != http.StatusOK {
		t.Fatalf("after a second: %d %s", r.status, r.body)
	}
	metrics := g.do("GET", "/metrics", nil, nil)
	want := `agentgate_http_requests_total{code="` + strconv.Itoa(http.StatusTooManyRequests) + `",route="POST /verify"} 1`
	if !containsLine(string(metrics.body), want) {
		t.Fatalf("/metrics lacks %q", want)
	}
}

func containsLine(s, line string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		if s[:i] == line {
			return true
		}
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return false
}
