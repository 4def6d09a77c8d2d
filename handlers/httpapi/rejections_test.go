package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// TestInputRejections pins each rejection of the input layer: its code,
// status and error body, and that the log holds exactly one
// command.rejected record for it, with the size and digest of the body and
// never the body itself.
func TestInputRejections(t *testing.T) {
	g := newTestGate(t, gateOptions{maxBodyBytes: 4096})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	verify := "/agents/" + a.id + "/verify"
	const marker = "SECRET-BODY-MARKER"
	big := `{"action":{"type":"calculate","query":"` + strings.Repeat("x", 5000) + marker + `"}}`
	cases := []struct {
		name    string
		path    string
		h       hdr
		body    string
		status  int
		code    domain.Code
		details map[string]any
	}{
		{"body over the limit", verify, bearerH(a.token), big, 413, domain.CodeTooLong, map[string]any{"max_body_bytes": 4096.0}},
		{"malformed JSON", verify, bearerH(a.token), `{"action": {"type": "calculate" "query": "` + marker + `"}}`, 400, domain.CodeInvalidRequest, map[string]any{"offset": 32.0}},
		{"truncated JSON", verify, bearerH(a.token), `{"action": {"type": "` + marker, 400, domain.CodeInvalidRequest, map[string]any{"offset": 39.0}},
		{"unknown top-level member", verify, bearerH(a.token), `{"actoin": {"type": "calculate"}, "x": "` + marker + `"}`, 400, domain.CodeInvalidRequest, map[string]any{"field": "actoin"}},
		{"unknown nested member", verify, bearerH(a.token), `{"action": {"type": "calculate", "qeury": "` + marker + `"}}`, 400, domain.CodeInvalidRequest, map[string]any{"field": "action.qeury", "reason": "unknown"}},
		// Issue 11 item 9: what encoding/json would read case-insensitively
		// or last-wins is refused, naming the member.
		{"issue 11: a member repeated in another case", verify, bearerH(a.token), `{"action":{"type":"execute_sql","query":"DROP TABLE users","TYPE":"calculate"},"context":{"conversation_id":"c","step_number":1,"user_intent":"` + marker + `"}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "action.TYPE", "reason": "duplicate", "expected": "type"}},
		{"a member repeated exactly", verify, bearerH(a.token), `{"action":{"type":"execute_sql","query":"` + marker + `"},"action":{"type":"calculate"}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "action", "reason": "duplicate", "expected": "action"}},
		{"a member in the wrong case", verify, bearerH(a.token), `{"action":{"TYPE":"calculate","query":"` + marker + `"}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "action.TYPE", "reason": "wrong_case", "expected": "type"}},
		{"a nested member in the wrong case", verify, bearerH(a.token), `{"action":{"type":"calculate","query":"` + marker + `"},"context":{"Conversation_ID":"c","step_number":1}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "context.Conversation_ID", "reason": "wrong_case", "expected": "conversation_id"}},
		{"a duplicate deep in the parameters", verify, bearerH(a.token), `{"action":{"type":"execute_sql","query":"` + marker + `","parameters":{"a":{"b":[{"table":"t"},{"table":"users","Table":"x"}]}}}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "action.parameters.a.b[1].Table", "reason": "duplicate", "expected": "table"}},
		{"a tool call in the wrong case", "/agents/" + a.id + "/tools/db", bearerH(a.token), `{"tool_call":{"tool_name":"db","Parameters":{"q":"` + marker + `"}}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "tool_call.Parameters", "reason": "wrong_case", "expected": "parameters"}},
		{"a registration with a repeated budget limit", "/agents/register", apiKey(key), `{"agent":{"name":"` + marker + `","type":"supervised","principal_id":"org_a"},"budget":{"max_daily_cost_usd":1,"MAX_DAILY_COST_USD":100}}`,
			400, domain.CodeInvalidRequest, map[string]any{"field": "budget.MAX_DAILY_COST_USD", "reason": "duplicate"}},
		{"wrong type", verify, bearerH(a.token), `{"action": {"type": 7, "query": "` + marker + `"}}`, 400, domain.CodeInvalidRequest, map[string]any{"field": "action.type", "expected": "string"}},
		{"wrong type of an object", verify, bearerH(a.token), `{"context": [1, "` + marker + `"]}`, 400, domain.CodeInvalidRequest, map[string]any{"field": "context", "expected": "object"}},
		{"not an object", verify, bearerH(a.token), `["` + marker + `"]`, 400, domain.CodeInvalidRequest, map[string]any{"field": "(body)", "expected": "object"}},
		{"step_number of a wrong type", verify, bearerH(a.token), `{"action":{"type":"calculate","query":"` + marker + `"},"context":{"conversation_id":"c","step_number":true}}`, 400, domain.CodeInvalidStepNumber, map[string]any{"field": "context.step_number"}},
		{"step_number not a number", verify, bearerH(a.token), `{"action":{"type":"calculate","query":"` + marker + `"},"context":{"conversation_id":"c","step_number":"abc"}}`, 400, domain.CodeInvalidStepNumber, map[string]any{"field": "context.step_number"}},
		{"trailing data", verify, bearerH(a.token), `{"action": {"type": "calculate", "query": "` + marker + `"}} {}`, 400, domain.CodeInvalidRequest, map[string]any{"offset": 65.0}},
		{"empty body", verify, bearerH(a.token), ``, 400, domain.CodeInvalidRequest, nil},
		{"bad money", verify, bearerH(a.token), `{"action":{"type":"calculate","estimated_cost_usd":"ten ` + marker + `"}}`, 400, domain.CodeInvalidRequest, nil},
		{"missing API key", "/agents/register", nil, `{"agent":{"name":"` + marker + `"}}`, 401, domain.CodeMissingAPIKey, nil},
		{"wrong API key", "/agents/register", apiKey("qwed_key_wrong"), `{"agent":{"name":"` + marker + `"}}`, 401, domain.CodeInvalidAPIKey, nil},
		{"no agent token", verify, nil, `{"action":{"type":"calculate","query":"` + marker + `"}}`, 401, domain.CodeInvalidAgentToken, nil},
		{"wrong API key on an agent endpoint", verify, apiKey("qwed_key_wrong"), `{"action":{"type":"calculate","query":"` + marker + `"}}`, 401, domain.CodeInvalidAPIKey, nil},
		{"Idempotency-Key too long", verify, hdr{"Authorization": "Bearer " + a.token, "Idempotency-Key": strings.Repeat("k", MaxIdempotencyKeyBytes+1)},
			`{"action":{"type":"calculate","query":"` + marker + `"}}`, 400, domain.CodeInvalidRequest, map[string]any{"header": "Idempotency-Key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := g.head()
			r := g.do("POST", c.path, c.h, c.body)
			if r.status != c.status {
				t.Fatalf("status %d %s, want %d", r.status, r.body, c.status)
			}
			e := errorOf(t, r.body)
			if e.Code != c.code {
				t.Fatalf("code %s (%s), want %s", e.Code, e.Message, c.code)
			}
			for k, v := range c.details {
				if e.Details[k] != v {
					t.Errorf("details[%s] = %v, want %v (details %v)", k, e.Details[k], v, e.Details)
				}
			}
			ev := g.expectRejected(before, c.code, marker)
			rej := ev.Command.Reject
			read := len(c.body)
			if c.code == domain.CodeTooLong {
				read = 0 // refused on Content-Length, nothing read
			}
			if rej.BodyBytes != int64(read) {
				t.Errorf("recorded body_bytes %d, want %d", rej.BodyBytes, read)
			}
			if read > 0 {
				d := sha256.Sum256([]byte(c.body))
				if rej.BodyDigest != hex.EncodeToString(d[:]) {
					t.Errorf("recorded body_digest %s, want the SHA-256 of the body", rej.BodyDigest)
				}
			}
			if !strings.HasPrefix(rej.Endpoint, "POST /") {
				t.Errorf("recorded endpoint %q", rej.Endpoint)
			}
		})
	}
}

// TestBodyLimitWithoutContentLength pins QWED-REQ-004 for a chunked body
// that passes the limit while it is read.
func TestBodyLimitWithoutContentLength(t *testing.T) {
	g := newTestGate(t, gateOptions{maxBodyBytes: 1024})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	before := g.head()
	body := strings.NewReader(`{"action":{"type":"calculate","query":"` + strings.Repeat("y", 4096) + `"}}`)
	req, err := http.NewRequest("POST", g.srv.URL+"/agents/"+a.id+"/verify", struct{ *strings.Reader }{body})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.ContentLength = -1
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	ev := g.expectRejected(before, domain.CodeTooLong, "yyyy")
	if n := ev.Command.Reject.BodyBytes; n < 1024 || n > 1025 {
		t.Errorf("recorded body_bytes %d, want what was read up to the limit", n)
	}
}

// TestBodyLimitBoundary pins both sides of MaxBodyBytes: a body of exactly
// the limit is decided, one byte more is QWED-REQ-004.
func TestBodyLimitBoundary(t *testing.T) {
	const limit = 512
	g := newTestGate(t, gateOptions{maxBodyBytes: limit})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	body := func(n int) string {
		b := `{"action":{"type":"calculate","query":"1+1"},"context":{"conversation_id":"c","step_number":1}}`
		return b + strings.Repeat(" ", n-len(b))
	}
	if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), body(limit)); r.status != 200 {
		t.Fatalf("body of exactly the limit: %d %s", r.status, r.body)
	}
	if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), body(limit+1)); r.status != 413 || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("body one byte over the limit: %d %s", r.status, r.body)
	}
}

// TestIdempotencyKeyBoundary pins both sides of MaxIdempotencyKeyBytes.
func TestIdempotencyKeyBoundary(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	h := hdr{"Authorization": "Bearer " + a.token, "Idempotency-Key": strings.Repeat("k", MaxIdempotencyKeyBytes)}
	if r := g.do("POST", "/agents/"+a.id+"/verify", h, verifyReq("calculate", "1", "c", 1)); r.status != 200 {
		t.Fatalf("key of exactly the limit: %d %s", r.status, r.body)
	}
}

// TestIdempotency pins invariant 4 (docs/ARCHITECTURE.md) over HTTP: the same
// Idempotency-Key twice gets the same answer and the log holds one event.
func TestIdempotency(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, map[string]any{"max_requests_per_hour": 10})
	h := hdr{"Authorization": "Bearer " + a.token, "Idempotency-Key": "retry-1"}
	before := g.head()
	r1 := g.do("POST", "/agents/"+a.id+"/verify", h, verifyReq("calculate", "2+2", "c", 1))
	r2 := g.do("POST", "/agents/"+a.id+"/verify", h, verifyReq("calculate", "2+2", "c", 1))
	if r1.status != 200 || r2.status != 200 {
		t.Fatalf("statuses %d %d: %s %s", r1.status, r2.status, r1.body, r2.body)
	}
	if id1, id2 := r1.json(t)["action_id"], r2.json(t)["action_id"]; id1 != id2 || id1 == nil {
		t.Errorf("action ids %v and %v, want the same", id1, id2)
	}
	if string(r1.body) != string(r2.body) {
		t.Errorf("the retry's answer differs:\n%s\n%s", r1.body, r2.body)
	}
	if evs := g.events(before); len(evs) != 1 {
		t.Fatalf("log holds %d events, want 1", len(evs))
	}
	// Without the header, the same body is a new request (here a replay of step 1).
	r3 := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "2+2", "c", 1))
	if r3.errorCode(t) != string(domain.CodeReplay) {
		t.Errorf("a new request for the same step: %d %s, want LOOP-002", r3.status, r3.body)
	}
}

// TestIdempotentRegistrationReturnsTokenOnce pins that a retried
// registration gets the reply without the token (QWED-Agent spec v1.1 §3.2: returned
// once).
func TestIdempotentRegistrationReturnsTokenOnce(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	h := hdr{"X-API-Key": key, "Idempotency-Key": "register-1"}
	body := `{"agent":{"name":"bot","type":"autonomous","principal_id":"org_a"}}`
	before := g.head()
	r1 := g.do("POST", "/agents/register", h, body)
	r2 := g.do("POST", "/agents/register", h, body)
	if r1.status != 201 || r2.status != 201 {
		t.Fatalf("statuses %d %d", r1.status, r2.status)
	}
	m1, m2 := r1.json(t), r2.json(t)
	if m1["agent_token"] == nil || m2["agent_token"] != nil {
		t.Errorf("agent_token in the first answer: %v, in the retry: %v; want first only", m1["agent_token"] != nil, m2["agent_token"] != nil)
	}
	if m1["agent_id"] != m2["agent_id"] {
		t.Errorf("agent ids differ: %v %v", m1["agent_id"], m2["agent_id"])
	}
	if evs := g.events(before); len(evs) != 1 {
		t.Fatalf("log holds %d events, want 1", len(evs))
	}
	// The token of the first answer works.
	id := m1["agent_id"].(string)
	if r := g.do("POST", "/agents/"+id+"/verify", bearerH(m1["agent_token"].(string)), verifyReq("calculate", "1", "c", 1)); r.status != 200 {
		t.Fatalf("the first answer's token: %d %s", r.status, r.body)
	}
}

// TestIdempotencyKeyReuseByAnotherRequest pins that a key reused by a
// different request with the same credential (another body) is
// QWED-REQ-409 and never discloses the first request's answer, while the
// same key sent with another credential (another agent's token, a
// principal key) is another request (issue 11), decided on its own.
func TestIdempotencyKeyReuseByAnotherRequest(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a := g.register(keyA, "org_a", 2, nil)
	b := g.register(keyB, "org_b", 2, nil)
	r := g.do("POST", "/agents/"+a.id+"/verify", hdr{"Authorization": "Bearer " + a.token, "Idempotency-Key": "shared"}, verifyReq("calculate", "2+2", "c", 1))
	if r.status != 200 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	actionID := r.json(t)["action_id"].(string)
	for name, req := range map[string]struct {
		path string
		h    hdr
		body any
	}{
		"other body": {"/agents/" + a.id + "/verify", hdr{"Authorization": "Bearer " + a.token, "Idempotency-Key": "shared"}, verifyReq("calculate", "3+3", "c", 1)},
	} {
		before := g.head()
		r := g.do("POST", req.path, req.h, req.body)
		if r.status != 409 || r.errorCode(t) != string(domain.CodeConflict) || strings.Contains(string(r.body), actionID) {
			t.Errorf("%s: %d %s, want 409 REQ-409 without the first answer", name, r.status, r.body)
			continue
		}
		g.expectRejected(before, domain.CodeConflict, "")
	}
	for name, req := range map[string]struct {
		path   string
		h      hdr
		body   any
		status int
	}{
		"other agent":   {"/agents/" + b.id + "/verify", hdr{"Authorization": "Bearer " + b.token, "Idempotency-Key": "shared"}, verifyReq("calculate", "2+2", "c", 1), 200},
		"other command": {"/agents/" + a.id + "/suspend", hdr{"X-API-Key": keyA, "Idempotency-Key": "shared"}, `{"suspended":true}`, 200},
	} {
		r := g.do("POST", req.path, req.h, req.body)
		if r.status != req.status || strings.Contains(string(r.body), actionID) {
			t.Errorf("%s: %d %s, want %d, decided on its own", name, r.status, r.body, req.status)
		}
	}
}

// TestRejectedRequestDoesNotBindIdempotencyKey pins that a request refused
// by the input layer can be corrected and resent with the same key.
func TestRejectedRequestDoesNotBindIdempotencyKey(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	h := hdr{"Authorization": "Bearer " + a.token, "Idempotency-Key": "fix-and-retry"}
	if r := g.do("POST", "/agents/"+a.id+"/verify", h, `{"action":`); r.status != 400 {
		t.Fatalf("malformed: %d %s", r.status, r.body)
	}
	if r := g.do("POST", "/agents/"+a.id+"/verify", h, verifyReq("calculate", "1", "c", 1)); r.status != 200 {
		t.Fatalf("corrected retry: %d %s", r.status, r.body)
	}
}

// TestGateUnavailable pins QWED-SYS-002 (503) when the log refuses the
// batch: the gate cannot decide, nothing is answered as decided.
func TestGateUnavailable(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	if err := g.gate.Log.Close(); err != nil {
		t.Fatal(err)
	}
	r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1", "c", 1))
	if r.status != 503 || r.errorCode(t) != string(domain.CodeUnavailable) {
		t.Fatalf("status %d %s, want 503 SYS-002", r.status, r.body)
	}
}

// TestGateTimeout pins QWED-ENG-003 (504) when no decision comes within
// the request timeout (here: the worker is not running).
func TestGateTimeout(t *testing.T) {
	g := newTestGate(t, gateOptions{noWorker: true, requestTimeout: 50 * time.Millisecond})
	r := g.do("POST", "/agents/agent_x/verify", apiKey(testAdminKey), verifyReq("calculate", "1", "c", 1))
	if r.status != 504 || r.errorCode(t) != string(domain.CodeTimeout) {
		t.Fatalf("status %d %s, want 504 ENG-003", r.status, r.body)
	}
}

// TestUnknownRoutes pins JSON error bodies for unknown paths (404) and
// methods (405 with Allow); neither is recorded.
func TestUnknownRoutes(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	before := g.head()
	r := g.do("GET", "/nope", nil, nil)
	if r.status != 404 || r.errorCode(t) != string(domain.CodeNotFound) {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
	r = g.do("DELETE", "/agents/x/verify", nil, nil)
	if r.status != 405 || r.header.Get("Allow") == "" {
		t.Errorf("unknown method: %d %v %s", r.status, r.header, r.body)
	}
	errorOf(t, r.body)
	if g.head() != before {
		t.Errorf("unknown routes were recorded")
	}
}

// TestOperationalEndpoints pins /healthz, /.well-known/jwks.json and
// /metrics (requests by route and status, decisions, latency).
func TestOperationalEndpoints(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1", "c", 1))
	g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1", "c", 1))
	r := g.do("GET", "/healthz", nil, nil)
	if m := r.json(t); r.status != 200 || m["status"] != "ok" || m["seq"] != float64(g.head()) {
		t.Errorf("healthz: %d %s (head %d)", r.status, r.body, g.head())
	}
	r = g.do("GET", "/.well-known/jwks.json", nil, nil)
	keys, _ := r.json(t)["keys"].([]any)
	if r.status != 200 || len(keys) != 1 {
		t.Errorf("jwks: %d %s", r.status, r.body)
	}
	r = g.do("GET", "/metrics", nil, nil)
	text := string(r.body)
	for _, want := range []string{
		`agentgate_http_requests_total{code="200",route="POST /agents/{id}/verify"} 1`,
		`agentgate_http_requests_total{code="409",route="POST /agents/{id}/verify"} 1`,
		`agentgate_decisions_total{decision="APPROVED"} 1`,
		`agentgate_decisions_total{decision="DENIED"} 1`,
		`agentgate_http_request_duration_seconds_count{route="POST /agents/{id}/verify"} 2`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		fmt.Println(text)
	}
}

// TestNewServerLimits pins that NewServer sets every timeout and the header
// limit and keeps keep-alive on.
func TestNewServerLimits(t *testing.T) {
	s := NewServer("127.0.0.1:0", http.NotFoundHandler())
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= DefaultRequestTimeout || s.IdleTimeout <= 0 || s.MaxHeaderBytes <= 0 {
		t.Errorf("server limits %+v", s)
	}
}
