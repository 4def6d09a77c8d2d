package httpapi

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"

	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/streams/ce"
)

// Issue 13 (review): an Idempotency-Key is the caller's: another tenant
// using the same key with the same message gets its own verdict, under
// its own boundary, never the first tenant's (nor a 409).
func TestA2AIdempotencyKeyIsPerTenant(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	ka, kb := g.issueKey("org_ida"), g.issueKey("org_idb")
	gatetest.A2ATrust(t, g.a2aHTTP(), ka, "idem-x", "idem-y")
	body := gatetest.A2AMessage("idem-x", "idem-y", "general", `{"m":1}`)
	a := g.do("POST", "/a2a/intercept", hdr{"X-API-Key": ka, "Idempotency-Key": "shared-key"}, body)
	b := g.do("POST", "/a2a/intercept", hdr{"X-API-Key": kb, "Idempotency-Key": "shared-key"}, body)
	va := (gatetest.Answer{Status: a.status, Body: a.body}).Verdict(t)
	vb := (gatetest.Answer{Status: b.status, Body: b.body}).Verdict(t)
	if va.Status != "forwarded" || vb.Status != "blocked" || va.TraceID == vb.TraceID {
		t.Fatalf("one key, two tenants: A %d %s; B %d %s", a.status, a.body, b.status, b.body)
	}
}

// Issue 13 (review): every bad boundary write is a 4xx with a catalogue
// code and exactly one refusal record; the boundary is unchanged.
func TestA2ABoundaryWritesBadInput(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_badb")
	long := strings.Repeat("a", 300)
	cases := []struct {
		name, method, path, body string
	}{
		{"a control character in the agent", "POST", "/a2a/boundary/trust/a%01b", ""},
		{"an agent too long", "POST", "/a2a/boundary/block/" + long, ""},
		{"a body on a trust", "POST", "/a2a/boundary/trust/ok-agent", `{"x":1}`},
		{"a pair without a body", "POST", "/a2a/boundary/block-pair", ""},
		{"a pair with an unknown member", "POST", "/a2a/boundary/block-pair", `{"sender":"a","receiver":"b","x":1}`},
		{"a pair without its receiver", "POST", "/a2a/boundary/block-pair", `{"sender":"a"}`},
		{"a pair with an op", "POST", "/a2a/boundary/block-pair", `{"op":"trust","sender":"a","receiver":"b"}`},
		{"a pair with a long sender", "DELETE", "/a2a/boundary/block-pair", `{"sender":"` + long + `","receiver":"b"}`},
		{"a pair not an object", "POST", "/a2a/boundary/block-pair", `[]`},
		{"a pair with a control character", "POST", "/a2a/boundary/block-pair", `{"sender":"a\u0000","receiver":"b"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := g.head()
			var body any
			if c.body != "" {
				body = c.body
			}
			r := g.do(c.method, c.path, apiKey(key), body)
			if r.status/100 != 4 || r.errorCode(t) == "" {
				t.Fatalf("%s %s %s: %d %s, want a 4xx refusal", c.method, c.path, c.body, r.status, r.body)
			}
			evs := g.events(before)
			if len(evs) != 1 || evs[0].Type != domain.EvCommandRejected || evs[0].Error == nil || string(evs[0].Error.Code) != r.errorCode(t) {
				t.Fatalf("recorded %d events (%+v), want one command.rejected %s", len(evs), evs, r.errorCode(t))
			}
		})
	}
	b := g.do("GET", "/a2a/boundary", apiKey(key), nil)
	if b.status != 200 || strings.Contains(string(b.body), "ok-agent") || !strings.Contains(string(b.body), `"count":0`) {
		t.Fatalf("the boundary after the refusals: %d %s", b.status, b.body)
	}
}

// Issue 13 (review): a CloudEvent binding holds at most ce.MaxBodyBytes
// (1 MiB) whatever max_payload_size_bytes allows, so a message that
// POST /a2a/intercept takes under a larger configured bound is refused on
// POST /events with 413 QWED-REQ-004 and one refusal record (README,
// "Limits"), never half decided.
func TestA2AEventsHoldTheCloudEventBound(t *testing.T) {
	cfg := domain.DefaultA2AConfig()
	cfg.MaxPayloadSizeBytes = 2 << 20
	g := newTestGate(t, gateOptions{a2a: &cfg})
	key := g.issueKey("org_big")
	body := gatetest.A2AMessage("big-x", "big-y", "general", `{"m":"`+strings.Repeat("x", ce.MaxBodyBytes+1024)+`"}`)
	if r := g.do("POST", "/a2a/intercept", apiKey(key), body); r.status != 200 {
		t.Fatalf("the message on /a2a/intercept: %d %.200s", r.status, r.body)
	}
	before := g.head()
	resp, b := g.postA2AEvent(key, string(domain.CmdA2AMessage), "big-1", body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(b, []byte(domain.CodeTooLong)) {
		t.Fatalf("the message on /events: %d %s", resp.StatusCode, b)
	}
	g.expectRejected(before, domain.CodeTooLong, "")
}

// Issue 13 (review): boundary writes are held to the A2A edge limit of
// their credential, on their own paths and as qwed.a2a.boundary on POST
// /events: each is recorded (in Kafka mode once per partition), so a key
// toggling an agent in a loop would otherwise grow the log unbounded.
// Over the limit: 429 QWED-AUTH-004 with Retry-After, nothing recorded.
func TestA2ABoundaryWritesEdgeRateLimit(t *testing.T) {
	g := newTestGate(t, gateOptions{a2aRate: RateLimit{PerPrincipal: 1, Burst: 2}})
	ka, kb := g.issueKey("org_bw"), g.issueKey("org_bw2")
	for i, m := range []string{"POST", "DELETE"} {
		if r := g.do(m, "/a2a/boundary/trust/bw-agent", apiKey(ka), nil); r.status/100 != 2 {
			t.Fatalf("write %d within the burst: %d %s", i, r.status, r.body)
		}
	}
	before := g.head()
	over := []func() (int, string, []byte){
		func() (int, string, []byte) {
			r := g.do("POST", "/a2a/boundary/block/bw-agent", apiKey(ka), nil)
			return r.status, r.header.Get("Retry-After"), r.body
		},
		func() (int, string, []byte) {
			r := g.do("POST", "/a2a/boundary/block-pair", apiKey(ka), `{"sender":"a","receiver":"b"}`)
			return r.status, r.header.Get("Retry-After"), r.body
		},
		func() (int, string, []byte) {
			resp, b := g.postA2AEvent(ka, string(domain.CmdA2ABoundary), "bw-ev", `{"op":"trust","agent":"bw-agent"}`)
			return resp.StatusCode, resp.Header.Get("Retry-After"), b
		},
	}
	for i, send := range over {
		status, retry, body := send()
		if status != 429 || retry != "1" || !bytes.Contains(body, []byte(domain.CodeRateLimited)) {
			t.Fatalf("boundary write %d over the edge limit: %d %q %s", i, status, retry, body)
		}
	}
	if g.head() != before {
		t.Fatal("a boundary write refused at the edge was recorded")
	}
	if r := g.do("POST", "/a2a/boundary/trust/bw-agent", apiKey(kb), nil); r.status/100 != 2 {
		t.Fatalf("another principal: %d %s", r.status, r.body)
	}
}
