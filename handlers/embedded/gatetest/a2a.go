package gatetest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The QWED A2A seed's examples as HTTP exchanges with a gate's API, so
// that the tests of both deployments (embedded, and the HTTP API over
// Kafka) run the same ones: each function takes the deployment's way to
// send a request (HTTP).

// Answer is one HTTP answer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// HTTP sends one request to the gate's API: method, path, headers and
// body ("" for none).
type HTTP func(t testing.TB, method, path string, h map[string]string, body string) Answer

// A2AVerdict is the answer of POST /a2a/intercept, decoded strictly.
type A2AVerdict struct {
	Status       string         `json:"status"`
	Reason       string         `json:"reason"`
	EngineUsed   string         `json:"engine_used"`
	Attestation  string         `json:"attestation_jwt"`
	TraceID      string         `json:"trace_id"`
	VerifiedAt   string         `json:"verified_at"`
	Details      map[string]any `json:"details"`
	RetryAfterMs int64          `json:"retry_after_ms"`
	Shadow       bool           `json:"shadow"`
}

// Verdict decodes a's body as a verdict, failing t when it is not one
// (the seven members of QWED A2A's verdict, retry_after_ms and shadow
// the only others, an attestation always).
func (a Answer) Verdict(t testing.TB) A2AVerdict {
	t.Helper()
	var v A2AVerdict
	dec := json.NewDecoder(bytes.NewReader(a.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("verdict %d %s: %v", a.Status, a.Body, err)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(a.Body, &m)
	for _, k := range []string{"status", "reason", "engine_used", "attestation_jwt", "trace_id", "verified_at", "details"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("verdict %d %s has no %s", a.Status, a.Body, k)
		}
	}
	if _, err := time.Parse(time.RFC3339, v.VerifiedAt); err != nil {
		t.Fatalf("verdict %s: verified_at is not RFC 3339: %v", a.Body, err)
	}
	if strings.Count(v.Attestation, ".") != 2 || v.TraceID == "" || v.Details == nil {
		t.Fatalf("verdict %s: no attestation, trace id or details object", a.Body)
	}
	return v
}

// ErrorCode returns error.code of an error body, "" when a is none.
func (a Answer) ErrorCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.Body, &e)
	return e.Error.Code
}

// A2AMessage is the body of an AgentMessage from sender to receiver with
// payload (a JSON object) of payload type typ ("" leaves it out).
func A2AMessage(sender, receiver, typ, payload string) string {
	m := map[string]any{"sender_agent_id": sender, "receiver_agent_id": receiver, "payload": json.RawMessage(payload)}
	if typ != "" {
		m["payload_type"] = typ
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // payload is a test's literal
	}
	return string(b)
}

// SeedFinancial is the seed's financial payload (Widget A 50.00 × 2,
// Widget B 25.00 × 2: 150.00) claiming claimed.
func SeedFinancial(claimed string) string {
	return `{"data":{"claimed_total":` + claimed + `,"line_items":[` +
		`{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`
}

// Key is the header of an API key.
func Key(k string) map[string]string { return map[string]string{"X-API-Key": k} }

// A2ATrust trusts agents in the boundary of key's principal.
func A2ATrust(t testing.TB, h HTTP, key string, agents ...string) {
	t.Helper()
	for _, a := range agents {
		A2ABoundary(t, h, key, "POST", "/a2a/boundary/trust/"+a, "")
	}
}

// A2ABoundary makes one boundary change, failing t unless it is
// answered 200.
func A2ABoundary(t testing.TB, h HTTP, key, method, path, body string) {
	t.Helper()
	if a := h(t, method, path, Key(key), body); a.Status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, a.Status, a.Body)
	}
}

// Intercept sends body to POST /a2a/intercept with headers hd.
func Intercept(t testing.TB, h HTTP, hd map[string]string, body string) Answer {
	t.Helper()
	return h(t, "POST", "/a2a/intercept", hd, body)
}

// expectVerdict checks a verdict's HTTP status, status, engine and, when
// reason is not "", its reason.
func expectVerdict(t testing.TB, what string, a Answer, httpStatus int, status, engine, reason string) A2AVerdict {
	t.Helper()
	if a.Status != httpStatus {
		t.Fatalf("%s: HTTP %d %s, want %d", what, a.Status, a.Body, httpStatus)
	}
	v := a.Verdict(t)
	if v.Status != status || v.EngineUsed != engine || reason != "" && v.Reason != reason {
		t.Fatalf("%s: %s, want status %s engine %s reason %q", what, a.Body, status, engine, reason)
	}
	return v
}

// A2ASeedExamples runs the seed's examples through the boundary of key's
// principal: the financial message forwarded (150.00) and blocked (999.99,
// with the seed's message), the logic contradiction, each of code_guard's
// patterns, and general and data_query passthrough. It returns the
// attestation of the forwarded financial message, for the caller to
// verify against the gate's keys.
func A2ASeedExamples(t *testing.T, h HTTP, key string) (attestation string) {
	A2ATrust(t, h, key, "procurement-agent", "treasury-agent")
	k := Key(key)
	msg := func(typ, payload string) string {
		return A2AMessage("procurement-agent", "treasury-agent", typ, payload)
	}
	t.Run("financial forwarded", func(t *testing.T) {
		v := expectVerdict(t, "150.00", Intercept(t, h, k, msg("financial_transaction", SeedFinancial("150.00"))),
			200, "forwarded", "finance_guard", "")
		// The seed's output: "JWT: eyJhbGciOiJFUzI1NiIsInR5cCI6InF3ZWQtYTJhLWF0dGVz...",
		// an ES256 header of typ qwed-a2a-attestation+jwt (ours names its
		// key too).
		var hd struct{ Alg, Typ, Kid string }
		if raw, err := base64.RawURLEncoding.DecodeString(v.Attestation[:strings.IndexByte(v.Attestation, '.')]); err != nil ||
			json.Unmarshal(raw, &hd) != nil || hd.Alg != "ES256" || hd.Typ != "qwed-a2a-attestation+jwt" || hd.Kid == "" {
			t.Fatalf("attestation %s: header %+v (%v)", v.Attestation, hd, err)
		}
		attestation = v.Attestation
	})
	t.Run("financial blocked", func(t *testing.T) {
		expectVerdict(t, "999.99", Intercept(t, h, k, msg("financial_transaction", SeedFinancial("999.99"))),
			200, "blocked", "finance_guard", "Mathematical hallucination detected: claimed_total=999.99, computed_total=150.00")
	})
	t.Run("logic contradiction", func(t *testing.T) {
		v := expectVerdict(t, "budget_approved", Intercept(t, h, k, msg("logic_assertion",
			`{"assertions":[{"claim":"budget_approved","negated":false},{"claim":"budget_approved","negated":true}]}`)),
			200, "blocked", "logic_guard", "")
		if !strings.Contains(v.Reason, "Logical contradiction detected") || !strings.Contains(v.Reason, "budget_approved") {
			t.Fatalf("reason %q", v.Reason)
		}
		expectVerdict(t, "consistent claims", Intercept(t, h, k, msg("logic_assertion",
			`{"assertions":[{"claim":"budget_approved","negated":false},{"claim":"po_signed","negated":false}]}`)),
			200, "forwarded", "logic_guard", "")
	})
	t.Run("code patterns", func(t *testing.T) {
		for _, code := range []string{`eval("1+1")`, `EVAL ("1+1")`, `exec("x=1")`, `subprocess.run(["ls"])`, `import subprocess`,
			`from subprocess import run`, `import subprocess as sp`, `os.system("ls")`, `os.popen("ls")`, `__import__("os")`,
			`compile("x", "f", "exec")`, `import importlib`} {
			payload, _ := json.Marshal(map[string]string{"code": code, "language": "python"})
			expectVerdict(t, code, Intercept(t, h, k, msg("code_execution", string(payload))), 200, "blocked", "code_guard", "")
		}
		expectVerdict(t, "safe code", Intercept(t, h, k, msg("code_execution", `{"code":"total = sum([1, 2, 3])"}`)),
			200, "forwarded", "code_guard", "")
	})
	t.Run("passthrough", func(t *testing.T) {
		expectVerdict(t, "general", Intercept(t, h, k, msg("general", `{"message":"Hello!"}`)), 200, "forwarded", "passthrough", "")
		expectVerdict(t, "no payload_type", Intercept(t, h, k, msg("", `{"message":"Hello!"}`)), 200, "forwarded", "passthrough", "")
		expectVerdict(t, "data_query", Intercept(t, h, k, msg("data_query", `{"query":"SELECT 1"}`)), 200, "forwarded", "passthrough", "")
	})
	return attestation
}

// A2ARateLimit sends burst messages of one pair (forwarded), then one more
// (429 rate_limited with Retry-After), advances the clock by the wait and
// sends again (forwarded): the seed's token bucket at rate messages a
// minute.
func A2ARateLimit(t *testing.T, h HTTP, key string, rate, burst int, advance func(time.Duration)) {
	A2ATrust(t, h, key, "flood-sender", "flood-receiver")
	body := A2AMessage("flood-sender", "flood-receiver", "general", `{"n":1}`)
	for i := range burst {
		expectVerdict(t, "message "+strconv.Itoa(i+1)+" of the burst", Intercept(t, h, Key(key), body), 200, "forwarded", "passthrough", "")
	}
	a := Intercept(t, h, Key(key), body)
	v := expectVerdict(t, "the message after the burst", a, http.StatusTooManyRequests, "rate_limited", "trust_boundary", "")
	wait := time.Minute / time.Duration(rate)
	secs := strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	if got := a.Header.Get("Retry-After"); got != secs {
		t.Fatalf("Retry-After %q, want %s (%s)", got, secs, a.Body)
	}
	if !strings.Contains(v.Reason, "retry after") {
		t.Fatalf("reason %q says not when to retry", v.Reason)
	}
	advance(wait)
	expectVerdict(t, "a message once a token is back", Intercept(t, h, Key(key), body), 200, "forwarded", "passthrough", "")
}

// A2ABoundaryOrder checks the seed's order of the trust boundary's checks
// in the boundary of key's principal: with the sender, the receiver and
// the pair all blocked the sender is named; unblocked one by one, the
// receiver, then the pair; then an agent not allowlisted (deny-all); then
// forwarded.
func A2ABoundaryOrder(t *testing.T, h HTTP, key string) {
	A2ATrust(t, h, key, "order-sender", "order-receiver")
	A2ABoundary(t, h, key, "POST", "/a2a/boundary/block/order-sender", "")
	A2ABoundary(t, h, key, "POST", "/a2a/boundary/block/order-receiver", "")
	pair := `{"sender":"order-sender","receiver":"order-receiver"}`
	A2ABoundary(t, h, key, "POST", "/a2a/boundary/block-pair", pair)
	body := A2AMessage("order-sender", "order-receiver", "general", `{"step":"order"}`)
	steps := []struct {
		want   string
		change func()
	}{
		{"sender 'order-sender' is blocked", func() { A2ABoundary(t, h, key, "DELETE", "/a2a/boundary/block/order-sender", "") }},
		{"receiver 'order-receiver' is blocked", func() { A2ABoundary(t, h, key, "DELETE", "/a2a/boundary/block/order-receiver", "") }},
		{"pair 'order-sender' -> 'order-receiver' is blocked", func() { A2ABoundary(t, h, key, "DELETE", "/a2a/boundary/block-pair", pair) }},
		{"", func() { A2ABoundary(t, h, key, "DELETE", "/a2a/boundary/trust/order-receiver", "") }},
		{"receiver 'order-receiver' is not allowlisted", func() { A2ATrust(t, h, key, "order-receiver") }},
	}
	for _, s := range steps {
		a := Intercept(t, h, Key(key), body)
		if s.want == "" {
			expectVerdict(t, "nothing blocked", a, 200, "forwarded", "passthrough", "")
		} else {
			v := expectVerdict(t, s.want, a, 200, "blocked", "trust_boundary", "")
			if !strings.HasPrefix(v.Reason, s.want) {
				t.Fatalf("reason %q, want %q first", v.Reason, s.want)
			}
		}
		s.change()
	}
	expectVerdict(t, "trusted again", Intercept(t, h, Key(key), body), 200, "forwarded", "passthrough", "")
}

// A2ATenants checks that principals' boundaries are their own: what
// principal A trusts or blocks changes nothing for principal B, and the
// admin's changes apply to every principal.
func A2ATenants(t *testing.T, h HTTP, admin, keyA, keyB string) {
	body := A2AMessage("tenant-x", "tenant-y", "general", `{"m":1}`)
	A2ATrust(t, h, keyA, "tenant-x", "tenant-y")
	expectVerdict(t, "A's trusted pair, sent by A", Intercept(t, h, Key(keyA), body), 200, "forwarded", "passthrough", "")
	v := expectVerdict(t, "A's trusted pair, sent by B", Intercept(t, h, Key(keyB), body), 200, "blocked", "trust_boundary", "")
	if !strings.Contains(v.Reason, "not allowlisted") {
		t.Fatalf("B's message blocked for %q, want not allowlisted", v.Reason)
	}
	A2ATrust(t, h, keyB, "tenant-x", "tenant-y")
	A2ABoundary(t, h, keyA, "POST", "/a2a/boundary/block/tenant-x", "")
	expectVerdict(t, "blocked by A, sent by A", Intercept(t, h, Key(keyA), body), 200, "blocked", "trust_boundary", "")
	expectVerdict(t, "blocked by A, sent by B", Intercept(t, h, Key(keyB), body), 200, "forwarded", "passthrough", "")
	A2ABoundary(t, h, keyA, "DELETE", "/a2a/boundary/block/tenant-x", "")
	// The admin's block is gate-wide.
	A2ABoundary(t, h, admin, "POST", "/a2a/boundary/block/tenant-y", "")
	for _, k := range []string{keyA, keyB} {
		expectVerdict(t, "blocked gate-wide", Intercept(t, h, Key(k), body), 200, "blocked", "trust_boundary", "")
	}
	A2ABoundary(t, h, admin, "DELETE", "/a2a/boundary/block/tenant-y", "")
	expectVerdict(t, "unblocked gate-wide", Intercept(t, h, Key(keyB), body), 200, "forwarded", "passthrough", "")
}
