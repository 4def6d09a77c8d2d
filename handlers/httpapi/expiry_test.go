package httpapi

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSeed000_ApprovalExpiresThroughTheWorkersTick: a PENDING action's
// approval expires when time passes its deadline (24 h by default): the
// worker's Tick records the expiry, the agent reads "expired" from
// GET /approvals/{id}, the principal can no longer approve it, and the
// reservation is released from the budget.
func TestSeed000_ApprovalExpiresThroughTheWorkersTick(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_exp")
	a := g.register(key, "org_exp", 1, map[string]any{"max_daily_cost_usd": 10})
	// trust 1 (supervised) + a medium-risk action: PENDING, 2 USD reserved.
	r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), map[string]any{
		"action":  map[string]any{"type": "api_call", "target": "https://api.example.com", "estimated_cost_usd": 2},
		"context": map[string]any{"conversation_id": "c", "step_number": 1},
	})
	m := r.json(t)
	ap, _ := m["approval"].(map[string]any)
	id, _ := ap["approval_id"].(string)
	if m["decision"] != "PENDING" || id == "" {
		t.Fatalf("tool call: %d %s", r.status, r.body)
	}
	status := func() string {
		r := g.do("GET", "/approvals/"+id, bearerH(a.token), nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET approval: %d %s", r.status, r.body)
		}
		s, _ := r.json(t)["status"].(string)
		return s
	}
	if s := status(); s != "pending" {
		t.Fatalf("before the deadline: %s", s)
	}
	if b := g.do("GET", "/agents/"+a.id+"/budget", apiKey(key), nil); !bytes.Contains(b.body, []byte(`"current_daily_usd":2`)) {
		t.Fatalf("the pending action's cost is not reserved: %s", b.body)
	}
	head := g.head()
	g.clock.Advance(24*time.Hour + time.Second)
	deadline := time.Now().Add(10 * time.Second) // the worker ticks every second
	for status() != "expired" {
		if time.Now().After(deadline) {
			t.Fatalf("the approval did not expire through the worker's tick (log at %d)", g.head())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if g.head() <= head {
		t.Fatal("the expiry is not in the log")
	}
	r = g.do("POST", "/approvals/"+id+"/approve", apiKey(key), map[string]any{"reason": "too late"})
	if r.status < 400 || !strings.Contains(string(r.body), "QWED-") {
		t.Fatalf("approving an expired approval: %d %s", r.status, r.body)
	}
	if s := status(); s != "expired" {
		t.Fatalf("after a late approve: %s", s)
	}
	b := g.do("GET", "/agents/"+a.id+"/budget", apiKey(key), nil)
	if !bytes.Contains(b.body, []byte(`"current_daily_usd":0`)) {
		t.Fatalf("the expired reservation still counts: %s", b.body)
	}
}

// TestDesign2_7_DefaultBodyLimitIsOneMiB: the REST endpoints' default
// body limit is 1 MiB: a body of exactly 1 MiB is read (and judged on its
// content), one byte more is QWED-REQ-004 with 413.
func TestDesign2_7_DefaultBodyLimitIsOneMiB(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	if DefaultMaxBodyBytes != 1<<20 {
		t.Fatalf("DefaultMaxBodyBytes = %d, want 1 MiB", DefaultMaxBodyBytes)
	}
	body := func(n int) []byte {
		prefix := `{"agent":{"name":"`
		suffix := `","type":"supervised","principal_id":"org_1"}}`
		return []byte(prefix + strings.Repeat("a", n-len(prefix)-len(suffix)) + suffix)
	}
	post := func(b []byte) response {
		req, _ := http.NewRequest("POST", g.srv.URL+"/agents/register", bytes.NewReader(b))
		req.Header.Set("X-API-Key", testAdminKey)
		resp, err := g.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return response{status: resp.StatusCode, body: buf.Bytes()}
	}
	at := post(body(1 << 20))
	if at.status == http.StatusRequestEntityTooLarge {
		t.Fatalf("a 1 MiB body was refused as too large: %s", at.body)
	}
	over := post(body(1<<20 + 1))
	if over.status != http.StatusRequestEntityTooLarge || errorOf(t, over.body).Code != "QWED-REQ-004" {
		t.Fatalf("1 MiB + 1: %d %s", over.status, over.body)
	}
}
