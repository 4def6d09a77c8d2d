package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/streams/cehttp"
)

// a2aHTTP is the gate's API as gatetest's A2A examples send to it.
func (g *testGate) a2aHTTP() gatetest.HTTP {
	return func(t testing.TB, method, path string, h map[string]string, body string) gatetest.Answer {
		t.Helper()
		var b any
		if body != "" {
			b = body
		}
		r := g.do(method, path, hdr(h), b)
		return gatetest.Answer{Status: r.status, Header: r.header, Body: r.body}
	}
}

// Issue 13: the QWED A2A seed's own examples over HTTP on the embedded
// gate: the financial message forwarded and blocked (the seed's message),
// the logic contradiction, each code pattern, general passthrough.
func TestA2AInterceptSeedExamples(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	before := g.head()
	att := gatetest.A2ASeedExamples(t, g.a2aHTTP(), g.issueKey("org_a2a"))
	// The forwarded verdict's attestation verifies offline against the
	// gate's published keys, its sub the digest of the seed's payload.
	keys, err := attest.ParseJWKS(g.do("GET", "/.well-known/jwks.json", nil, nil).body)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := keys.VerifyA2A(att, g.clock.Now())
	if err != nil {
		t.Fatalf("the attestation does not verify: %v", err)
	}
	sub, err := a2a.PayloadDigest([]byte(gatetest.SeedFinancial("150.00")))
	if err != nil || claims.Subject != sub || claims.A2A.Verdict != a2a.StatusForwarded || claims.A2A.Engine != a2a.EngineFinance {
		t.Fatalf("claims %+v, want sub %s (%v)", claims, sub, err)
	}
	// Every verdict is an a2a.verdict event; every boundary change one
	// a2a.boundary_changed.
	verdicts, changes := 0, 0
	for _, ev := range g.events(before) {
		switch ev.Type {
		case domain.EvA2AVerdict:
			verdicts++
		case domain.EvA2ABoundaryChanged:
			changes++
		}
	}
	if verdicts < 20 || changes != 2 {
		t.Fatalf("%d verdicts and %d boundary changes recorded", verdicts, changes)
	}
}

// Issue 13: the pair's token bucket (the seed's default, 60 a minute with
// a burst of 60): the 61st message is 429 with Retry-After, and a token
// is back a second later.
func TestA2AInterceptRateLimit(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	gatetest.A2ARateLimit(t, g.a2aHTTP(), g.issueKey("org_rate"), 60, 60, g.clock.Advance)
}

// Issue 13: the trust boundary's checks in the seed's order: sender
// blocked, receiver blocked, pair blocked, not allowlisted.
func TestA2ABoundaryOrder(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	gatetest.A2ABoundaryOrder(t, g.a2aHTTP(), g.issueKey("org_order"))
}

// Issue 13 tenant isolation: principal A's boundary changes do not reach
// principal B's; the admin's are gate-wide.
func TestA2ATenantBoundaries(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	gatetest.A2ATenants(t, g.a2aHTTP(), testAdminKey, g.issueKey("org_ta"), g.issueKey("org_tb"))
}

// Issue 13: the seed's curl example, as curl sends it (Content-Type
// application/json, no trace id), to a gate started with
// QWED_A2A_TRUSTED_AGENTS="agent-A,agent-B": forwarded by passthrough,
// with a derived trace id, signed.
func TestA2AInterceptSeedCurl(t *testing.T) {
	cfg := domain.DefaultA2AConfig()
	cfg.TrustedAgents = []string{"agent-A", "agent-B"}
	g := newTestGate(t, gateOptions{a2a: &cfg})
	key := g.issueKey("org_curl")
	body := `{
    "sender_agent_id": "agent-A",
    "receiver_agent_id": "agent-B",
    "payload_type": "general",
    "payload": {"message": "Hello!"}
  }`
	r := g.do("POST", "/a2a/intercept", hdr{"X-API-Key": key, "Content-Type": "application/json"}, body)
	a := gatetest.Answer{Status: r.status, Header: r.header, Body: r.body}
	v := a.Verdict(t)
	if r.status != 200 || v.Status != "forwarded" || v.EngineUsed != "passthrough" || !strings.HasPrefix(v.TraceID, "a2a_") {
		t.Fatalf("the seed's curl: %d %s", r.status, r.body)
	}
	// The gate-wide allowlist does not trust a third agent.
	r = g.do("POST", "/a2a/intercept", apiKey(key), gatetest.A2AMessage("agent-A", "agent-C", "general", `{"message":"Hello!"}`))
	if v := (gatetest.Answer{Status: r.status, Body: r.body}).Verdict(t); v.Status != "blocked" {
		t.Fatalf("agent-C is not allowlisted: %d %s", r.status, r.body)
	}
}

// Issue 13 credentials: none is 401; a wrong key 401; an agent token
// sends as its own agent only (refused otherwise, recorded), checked
// against its principal's boundary; an agent token changes no boundary
// (403).
func TestA2AInterceptCredentials(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_cred")
	ag := g.register(key, "org_cred", 2, nil)
	other := g.register(key, "org_cred", 2, nil)
	stranger := g.register(g.issueKey("org_stranger"), "org_stranger", 2, nil)
	body := gatetest.A2AMessage(ag.id, "ledger", "general", `{"m":"hi"}`)
	cases := []struct {
		name   string
		h      hdr
		body   string
		status int
		code   domain.Code
	}{
		{"no credentials", nil, body, 401, ""},
		{"a wrong API key", apiKey("qwed_key_wrong"), body, 401, domain.CodeInvalidAPIKey},
		{"a wrong agent token", bearerH("qwed_agent_wrong"), body, 401, ""},
		// An agent token is checked against the sender's token: it sends
		// as no other agent, registered or not.
		{"an agent token sending as another agent", bearerH(ag.token), gatetest.A2AMessage(other.id, "ledger", "general", `{"m":"hi"}`), 401, domain.CodeInvalidAgentToken},
		{"an agent token sending as an unknown agent", bearerH(ag.token), gatetest.A2AMessage("someone-else", "ledger", "general", `{"m":"hi"}`), 404, domain.CodeAgentNotRegistered},
		{"an agent token of another principal", bearerH(stranger.token), body, 401, domain.CodeInvalidAgentToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := g.head()
			r := g.do("POST", "/a2a/intercept", c.h, c.body)
			if r.status != c.status || c.code != "" && r.errorCode(t) != string(c.code) {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, c.status, c.code)
			}
			evs := g.events(before)
			if len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
				t.Fatalf("recorded %d events, want one command.rejected", len(evs))
			}
		})
	}
	// The agent's own messages are checked against its principal's
	// boundary: blocked until org_cred trusts both agents.
	r := g.do("POST", "/a2a/intercept", bearerH(ag.token), body)
	if v := (gatetest.Answer{Status: r.status, Body: r.body}).Verdict(t); v.Status != "blocked" {
		t.Fatalf("the agent's message before its principal trusts it: %d %s", r.status, r.body)
	}
	gatetest.A2ATrust(t, g.a2aHTTP(), key, ag.id, "ledger")
	r = g.do("POST", "/a2a/intercept", bearerH(ag.token), body)
	if v := (gatetest.Answer{Status: r.status, Body: r.body}).Verdict(t); v.Status != "forwarded" {
		t.Fatalf("the agent's message once trusted: %d %s", r.status, r.body)
	}
	// Boundary writes: an agent token is 403 (recorded), nothing 401.
	for _, p := range []string{"/a2a/boundary/trust/" + ag.id, "/a2a/boundary/block/ledger"} {
		before := g.head()
		if r := g.do("POST", p, bearerH(ag.token), nil); r.status != 403 || r.errorCode(t) != string(domain.CodeForbidden) {
			t.Fatalf("an agent token changes a boundary: %d %s", r.status, r.body)
		}
		g.expectRejected(before, domain.CodeForbidden, "")
		if r := g.do("POST", p, nil, nil); r.status != 401 || r.errorCode(t) != string(domain.CodeMissingAPIKey) {
			t.Fatalf("no key changes a boundary: %d %s", r.status, r.body)
		}
	}
}

// Issue 13: a body over max_payload_size_bytes plus the envelope is 413
// QWED-REQ-004 before the rest is read, recorded (size and digest, never
// the body); nothing is forwarded.
func TestA2AInterceptOverSize(t *testing.T) {
	cfg := domain.DefaultA2AConfig()
	cfg.MaxPayloadSizeBytes = 1024
	g := newTestGate(t, gateOptions{a2a: &cfg})
	key := g.issueKey("org_size")
	limit := int64(1024 + a2a.MaxEnvelopeBytes)
	const marker = "OVERSIZE-MARKER"
	big := gatetest.A2AMessage("s", "r", "general", `{"m":"`+marker+strings.Repeat("x", int(limit))+`"}`)
	before := g.head()
	r := g.do("POST", "/a2a/intercept", apiKey(key), big)
	if r.status != http.StatusRequestEntityTooLarge || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("over the body limit: %d %s", r.status, r.body)
	}
	if e := errorOf(t, r.body); e.Details["max_body_bytes"] != float64(limit) {
		t.Fatalf("details %v, want max_body_bytes %d", e.Details, limit)
	}
	g.expectRejected(before, domain.CodeTooLong, marker)
	// A payload over max_payload_size_bytes in a body under the limit is
	// refused by the message's own check.
	before = g.head()
	r = g.do("POST", "/a2a/intercept", apiKey(key), gatetest.A2AMessage("s", "r", "general", `{"m":"`+marker+strings.Repeat("x", 2000)+`"}`))
	if r.status/100 != 4 || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("a payload over max_payload_size_bytes: %d %s", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeTooLong, marker)
}

// Issue 13 "every field wrong": each is a clear 4xx code, one
// command.rejected record that holds no part of the body, no verdict.
func TestA2AInterceptEveryFieldWrong(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_fields")
	gatetest.A2ATrust(t, g.a2aHTTP(), key, "s", "r")
	const marker = "FIELD-MARKER"
	msg := func(fields string) string {
		return `{` + fields + `,"payload":{"note":"` + marker + `"}}`
	}
	long := strings.Repeat("a", 257)
	cases := []struct {
		name string
		body string
		code domain.Code
	}{
		{"empty body", ``, domain.CodeInvalidRequest},
		{"not JSON", `{"sender_agent_id": "s" "` + marker + `"}`, domain.CodeInvalidRequest},
		{"not an object", `["` + marker + `"]`, domain.CodeInvalidRequest},
		{"trailing data", msg(`"sender_agent_id":"s","receiver_agent_id":"r"`) + ` {}`, domain.CodeInvalidRequest},
		{"no sender", msg(`"receiver_agent_id":"r"`), domain.CodeMissingField},
		{"empty sender", msg(`"sender_agent_id":"","receiver_agent_id":"r"`), ""},
		{"sender of 257 characters", msg(`"sender_agent_id":"` + long + `","receiver_agent_id":"r"`), ""},
		{"sender with a control character", msg(`"sender_agent_id":"s\u0007","receiver_agent_id":"r"`), ""},
		{"sender a number", msg(`"sender_agent_id":7,"receiver_agent_id":"r"`), domain.CodeInvalidRequest},
		{"no receiver", msg(`"sender_agent_id":"s"`), domain.CodeMissingField},
		{"receiver null", msg(`"sender_agent_id":"s","receiver_agent_id":null`), ""},
		{"receiver with a newline", msg(`"sender_agent_id":"s","receiver_agent_id":"r\n"`), ""},
		{"unknown payload_type", msg(`"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"poetry"`), domain.CodeUnsupportedType},
		{"payload_type a number", msg(`"sender_agent_id":"s","receiver_agent_id":"r","payload_type":1`), domain.CodeInvalidRequest},
		{"no payload", `{"sender_agent_id":"s","receiver_agent_id":"r","trace_id":"` + marker + `"}`, domain.CodeMissingField},
		{"payload an array", `{"sender_agent_id":"s","receiver_agent_id":"r","payload":["` + marker + `"]}`, domain.CodeInvalidRequest},
		{"payload a string", `{"sender_agent_id":"s","receiver_agent_id":"r","payload":"` + marker + `"}`, domain.CodeInvalidRequest},
		{"payload null", `{"sender_agent_id":"s","receiver_agent_id":"r","payload":null,"trace_id":"` + marker + `"}`, ""},
		{"timestamp not RFC 3339", msg(`"sender_agent_id":"s","receiver_agent_id":"r","timestamp":"yesterday"`), domain.CodeInvalidRequest},
		{"timestamp a number", msg(`"sender_agent_id":"s","receiver_agent_id":"r","timestamp":1711411200`), domain.CodeInvalidRequest},
		{"trace_id too long", msg(`"sender_agent_id":"s","receiver_agent_id":"r","trace_id":"` + strings.Repeat("t", 300) + `"`), domain.CodeTooLong},
		{"trace_id with a space", msg(`"sender_agent_id":"s","receiver_agent_id":"r","trace_id":"a b"`), ""},
		{"unknown member", msg(`"sender_agent_id":"s","receiver_agent_id":"r","priority":"high"`), domain.CodeInvalidRequest},
		{"member repeated", msg(`"sender_agent_id":"s","sender_agent_id":"x","receiver_agent_id":"r"`), domain.CodeInvalidRequest},
		{"member in another case", msg(`"Sender_Agent_ID":"s","receiver_agent_id":"r"`), domain.CodeInvalidRequest},
		{"financial: NaN amount", `{"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"financial_transaction","payload":{"data":{"claimed_total":1,"line_items":[{"description":"` + marker + `","amount":NaN}]}}}`, domain.CodeInvalidRequest},
		{"financial: 1e400", `{"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"financial_transaction","payload":{"data":{"claimed_total":1e400,"line_items":[{"description":"` + marker + `","amount":1}]}}}`, ""},
		{"financial: negative quantity", `{"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"financial_transaction","payload":{"data":{"claimed_total":1,"line_items":[{"description":"` + marker + `","amount":1,"quantity":-2}]}}}`, ""},
		{"financial: amount a string", `{"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"financial_transaction","payload":{"data":{"claimed_total":1,"line_items":[{"description":"` + marker + `","amount":"one"}]}}}`, ""},
		{"logic: claim a number", `{"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"logic_assertion","payload":{"assertions":[{"claim":7,"negated":false}],"x":"` + marker + `"}}`, ""},
		{"code: code an object", `{"sender_agent_id":"s","receiver_agent_id":"r","payload_type":"code_execution","payload":{"code":{"x":"` + marker + `"}}}`, ""},
		{"deep nesting", `{"sender_agent_id":"s","receiver_agent_id":"r","payload":` + strings.Repeat(`{"a":`, 100) + `"` + marker + `"` + strings.Repeat(`}`, 100) + `}`, domain.CodeTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := g.head()
			r := g.do("POST", "/a2a/intercept", apiKey(key), c.body)
			e := errorOf(t, r.body)
			if r.status < 400 || r.status > 499 || !e.Code.Known() || c.code != "" && e.Code != c.code {
				t.Fatalf("%d %s, want a 4xx %s", r.status, r.body, c.code)
			}
			if r.status != e.Code.HTTPStatus() && e.Code != domain.CodeTooLong {
				t.Fatalf("status %d for %s (catalogue: %d)", r.status, e.Code, e.Code.HTTPStatus())
			}
			evs := g.events(before)
			if len(evs) != 1 || evs[0].Type != domain.EvCommandRejected || evs[0].Error == nil || evs[0].Error.Code != e.Code {
				t.Fatalf("recorded %d events (%+v), want one command.rejected %s", len(evs), evs, e.Code)
			}
			// Refused before it was a message (stage 0): the record holds
			// the body's size and digest, never the body. Refused by a
			// guard reading the payload (an authenticated, well-formed
			// message): the record is the message, as Decide records every
			// refusal of a command it decides, and nothing is forwarded.
			switch c := evs[0].Command; {
			case c.Type == domain.CmdRejectRequest:
				g.expectRejected(before, e.Code, marker)
			case c.Type != domain.CmdA2AMessage || c.A2A == nil:
				t.Fatalf("the refusal records %+v", c)
			}
		})
	}
}

// Issue 13: an Idempotency-Key retry gets the recorded verdict byte for
// byte (a blocked one, a rate-limited one with its Retry-After), and the
// same key with another message is 409.
func TestA2AInterceptIdempotency(t *testing.T) {
	cfg := domain.DefaultA2AConfig()
	cfg.RatePerMinute, cfg.Burst = 1, 1
	g := newTestGate(t, gateOptions{a2a: &cfg})
	key := g.issueKey("org_idem")
	gatetest.A2ATrust(t, g.a2aHTTP(), key, "procurement-agent", "treasury-agent")
	body := gatetest.A2AMessage("procurement-agent", "treasury-agent", "financial_transaction", gatetest.SeedFinancial("999.99"))
	h := hdr{"X-API-Key": key, "Idempotency-Key": "a2a-1"}
	first := g.do("POST", "/a2a/intercept", h, body)
	g.clock.Advance(time.Hour)
	again := g.do("POST", "/a2a/intercept", h, body)
	if first.status != 200 || !bytes.Equal(first.body, again.body) || again.status != 200 {
		t.Fatalf("retry: %d %s then %d %s", first.status, first.body, again.status, again.body)
	}
	// Rate limited (the bucket holds one, taken by a-2-first): the retry
	// an hour later is the recorded 429, not a new verdict.
	h["Idempotency-Key"] = "a2a-2-first"
	if r := g.do("POST", "/a2a/intercept", h, body); r.status != 200 {
		t.Fatalf("the bucket's token: %d %s", r.status, r.body)
	}
	h["Idempotency-Key"] = "a2a-2"
	limited := g.do("POST", "/a2a/intercept", h, body)
	g.clock.Advance(time.Hour)
	again = g.do("POST", "/a2a/intercept", h, body)
	if limited.status != 429 || again.status != 429 || !bytes.Equal(limited.body, again.body) ||
		limited.header.Get("Retry-After") != "60" || again.header.Get("Retry-After") != "60" {
		t.Fatalf("rate limited retry: %d %v %s then %d %v %s", limited.status, limited.header, limited.body, again.status, again.header, again.body)
	}
	other := g.do("POST", "/a2a/intercept", h, gatetest.A2AMessage("procurement-agent", "treasury-agent", "general", `{}`))
	if other.status != http.StatusConflict || other.errorCode(t) != string(domain.CodeConflict) {
		t.Fatalf("the key with another message: %d %s", other.status, other.body)
	}
}

// Issue 13: the A2A edge limit (Config.A2ARateLimit) bounds a credential
// before anything is decided: 429 QWED-AUTH-004 with Retry-After,
// nothing recorded; another principal is not affected.
func TestA2AInterceptEdgeRateLimit(t *testing.T) {
	g := newTestGate(t, gateOptions{a2aRate: RateLimit{PerPrincipal: 1, Burst: 2}})
	ka, kb := g.issueKey("org_ea"), g.issueKey("org_eb")
	body := gatetest.A2AMessage("x", "y", "general", `{}`)
	for i := range 2 {
		if r := g.do("POST", "/a2a/intercept", apiKey(ka), body); r.status != 200 {
			t.Fatalf("message %d within the burst: %d %s", i, r.status, r.body)
		}
	}
	before := g.head()
	r := g.do("POST", "/a2a/intercept", apiKey(ka), body)
	if r.status != 429 || r.errorCode(t) != string(domain.CodeRateLimited) || r.header.Get("Retry-After") != "1" {
		t.Fatalf("over the edge limit: %d %v %s", r.status, r.header, r.body)
	}
	if g.head() != before {
		t.Fatal("a request refused at the edge was recorded")
	}
	if r := g.do("POST", "/a2a/intercept", apiKey(kb), body); r.status != 200 {
		t.Fatalf("another principal: %d %s", r.status, r.body)
	}
	g.clock.Advance(time.Second)
	if r := g.do("POST", "/a2a/intercept", apiKey(ka), body); r.status != 200 {
		t.Fatalf("a second later: %d %s", r.status, r.body)
	}
}

// FuzzA2AIntercept pins the decode path of POST /a2a/intercept: any body
// either becomes a qwed.a2a.message command holding a message, or is a
// catalogue 4xx refusal; nothing panics.
func FuzzA2AIntercept(f *testing.F) {
	for _, s := range []string{
		gatetest.A2AMessage("procurement-agent", "treasury-agent", "financial_transaction", gatetest.SeedFinancial("150.00")),
		gatetest.A2AMessage("a", "b", "logic_assertion", `{"assertions":[{"claim":"x","negated":true}],"dsl":"(AND x)"}`),
		gatetest.A2AMessage("a", "b", "code_execution", `{"code":"eval(1)","language":"python"}`),
		`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{},"timestamp":"2026-03-02T10:00:00Z","trace_id":"t1"}`,
		``, `{}`, `[]`, `{"sender_agent_id":1}`, `{"payload":{"a":` + strings.Repeat("[", 80) + `}}`,
	} {
		f.Add([]byte(s))
	}
	creds := commandCreds("org_fuzz")
	f.Fuzz(func(t *testing.T, body []byte) {
		cmd, e := buildA2A(body, creds)
		if e != nil {
			checkRejection(t, "POST /a2a/intercept "+strconv.Quote(string(body)), e)
			return
		}
		if cmd.Type != domain.CmdA2AMessage || cmd.A2A == nil || cmd.Principal != "org_fuzz" {
			t.Fatalf("%q built %+v", body, cmd)
		}
	})
}

// commandCreds are the credentials of principal's API key.
func commandCreds(principal string) command.Credentials {
	return command.Credentials{Principal: principal}
}

// buildA2A builds the command of a POST /a2a/intercept body as the
// handler does.
func buildA2A(body []byte, cr command.Credentials) (*domain.Command, *apiError) {
	b, r := command.HTTP.Build(command.A2AMessage, &command.Input{Body: body}, &cr,
		domain.RequestID{Source: command.HTTPSource, ID: "fuzz"})
	if r != nil {
		return nil, rejected(r)
	}
	return b.Command, nil
}

// Issue 13: the same commands as CloudEvents on POST /events: boundary
// changes and messages; a rate-limited verdict is 429 with Retry-After; a
// payload over the gate's max_payload_size_bytes is refused before it is
// a command (the record holds no part of it).
func TestA2AEvents(t *testing.T) {
	cfg := domain.DefaultA2AConfig()
	cfg.RatePerMinute, cfg.Burst, cfg.MaxPayloadSizeBytes = 1, 1, 1024
	g := newTestGate(t, gateOptions{a2a: &cfg})
	key := g.issueKey("org_events")
	send := func(typ, id, data string) (*http.Response, []byte) {
		t.Helper()
		return g.postA2AEvent(key, typ, id, data)
	}
	for i, a := range []string{"ev-x", "ev-y"} {
		if resp, b := send(string(domain.CmdA2ABoundary), "trust-"+strconv.Itoa(i), `{"op":"trust","agent":"`+a+`"}`); resp.StatusCode != 200 {
			t.Fatalf("trusting %s: %d %s", a, resp.StatusCode, b)
		}
	}
	msg := gatetest.A2AMessage("ev-x", "ev-y", "general", `{"m":1}`)
	if resp, b := send(string(domain.CmdA2AMessage), "m-1", msg); resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"status":"forwarded"`)) {
		t.Fatalf("a message: %d %s", resp.StatusCode, b)
	}
	resp, b := send(string(domain.CmdA2AMessage), "m-2", msg)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "60" || !bytes.Contains(b, []byte(`"status":"rate_limited"`)) {
		t.Fatalf("the message over the bucket: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	const marker = "EVENT-PAYLOAD-MARKER"
	before := g.head()
	resp, b = send(string(domain.CmdA2AMessage), "m-3", gatetest.A2AMessage("ev-x", "ev-y", "general", `{"m":"`+marker+strings.Repeat("x", 1100)+`"}`))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(b, []byte(domain.CodeTooLong)) {
		t.Fatalf("a payload over max_payload_size_bytes: %d %s", resp.StatusCode, b)
	}
	g.expectRejected(before, domain.CodeTooLong, marker)
}

// Issue 13 (review): the A2A edge limit holds on POST /events too: a
// qwed.a2a.message CloudEvent is the same command as POST /a2a/intercept,
// so a credential over Config.A2ARateLimit is refused (429 QWED-AUTH-004,
// Retry-After, nothing recorded) whichever transport carries it.
func TestA2AEventsEdgeRateLimit(t *testing.T) {
	g := newTestGate(t, gateOptions{a2aRate: RateLimit{PerPrincipal: 1, Burst: 2}})
	key := g.issueKey("org_ee")
	body := gatetest.A2AMessage("x", "y", "general", `{}`)
	send := func(id string) (*http.Response, []byte) {
		t.Helper()
		return g.postA2AEvent(key, string(domain.CmdA2AMessage), id, body)
	}
	for i := range 2 {
		if resp, b := send("ee-" + strconv.Itoa(i)); resp.StatusCode != 200 {
			t.Fatalf("message %d within the burst: %d %s", i, resp.StatusCode, b)
		}
	}
	before := g.head()
	resp, b := send("ee-over")
	if resp.StatusCode != 429 || !bytes.Contains(b, []byte(domain.CodeRateLimited)) || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("over the edge limit through /events: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if g.head() != before {
		t.Fatal("a CloudEvent refused at the edge was recorded")
	}
}

// postA2AEvent posts a binary-mode CloudEvent of type typ, id and data to
// POST /events with API key key and returns the answer and its body.
func (g *testGate) postA2AEvent(key, typ, id, data string) (*http.Response, []byte) {
	g.t.Helper()
	req, err := cehttp.NewRequest(context.Background(), g.srv.URL+"/events", cloudEvent(cehttp.ModeBinary, typ, id, "", data))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp, b
}
