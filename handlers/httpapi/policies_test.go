package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// Agent Policy Engine spec §3.3: GET/POST /policies, GET/PUT/DELETE
// /policies/{id}, scoped to the consumer of the API key (the admin names
// it with ?consumer=), versioned (each change the version after the
// last); bad policies are refused with the policy decoder's codes and
// recorded; an agent token changes nothing.
func TestPoliciesCRUD(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	ag := g.register(key, "org_a", 2, nil)
	daily := `{"id":"daily","type":"spending","scope":{},"spending":{"daily_cents":1000}}`
	r := g.do("POST", "/policies", apiKey(key), daily)
	if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"version":1`) || !strings.Contains(string(r.body), `"consumer":"org_a"`) {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r := g.do("POST", "/policies", apiKey(key), daily); r.status != http.StatusConflict {
		t.Fatalf("create again: %d %s, want 409", r.status, r.body)
	}
	r = g.do("PUT", "/policies/daily", apiKey(key), `{"id":"daily","type":"spending","scope":{},"spending":{"daily_cents":2000}}`)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"version":2`) {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if r := g.do("PUT", "/policies/other", apiKey(key), daily); r.status != http.StatusBadRequest || errorOf(t, r.body).Details["field"] != "id" {
		t.Fatalf("update with another id in the body: %d %s, want 400 naming id", r.status, r.body)
	}
	r = g.do("GET", "/policies/daily", apiKey(key), nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"daily_cents":2000`) || !strings.Contains(string(r.body), `"version":2`) {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/policies?consumer=org_a", apiKey(testAdminKey), nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"id":"daily"`) {
		t.Fatalf("the admin lists org_a's policies: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/policies", apiKey(testAdminKey), nil); r.status != http.StatusBadRequest {
		t.Fatalf("the admin without ?consumer=: %d %s, want 400", r.status, r.body)
	}
	if r := g.do("GET", "/policies", bearerH(ag.token), nil); r.status != http.StatusUnauthorized {
		t.Fatalf("an agent token reads policies: %d %s, want 401", r.status, r.body)
	}
	// Bad policies: each refused with its code, recorded, nothing changed.
	for _, c := range []struct {
		body string
		code domain.Code
	}{
		{`{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"Mars/Olympus","windows":[{"days":["mon"],"start":"09:00","end":"17:00"}]}}`, domain.CodeInvalidRequest},
		{`{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"UTC","windows":[{"days":["mon"],"start":"09:00","end":"12:00"},{"days":["mon"],"start":"11:00","end":"13:00"}]}}`, domain.CodeInvalidRequest},
		{`{"id":"s","type":"spending","scope":{},"spending":{"daily_cents":-5}}`, domain.CodeInvalidRequest},
		{`{"id":"s","type":"spending","scope":{},"spending":{"daily_cents":1e400}}`, domain.CodeInvalidRequest},
		{`{"id":"s","type":"spending","scope":{},"spending":{"daily_cents":1000},"colour":"red"}`, domain.CodeInvalidRequest},
		{`{"id":"s","type":"lottery","scope":{}}`, domain.CodeUnsupportedType},
	} {
		before := g.head()
		r := g.do("POST", "/policies", apiKey(key), c.body)
		if r.status != http.StatusBadRequest || r.errorCode(t) != string(c.code) {
			t.Fatalf("%s: %d %s, want 400 %s", c.body, r.status, r.body, c.code)
		}
		g.expectRejected(before, c.code, "")
	}
	// As it was: version 1 at the create's seq, version 2 from the
	// update's on; nothing before the create.
	created, updated := seqOf(t, g, "/policies/daily", 1), seqOf(t, g, "/policies/daily", 2)
	for _, c := range []struct {
		seq  uint64
		want string
	}{{created, `"daily_cents":1000`}, {updated - 1, `"daily_cents":1000`}, {updated, `"daily_cents":2000`}, {updated + 50, `"daily_cents":2000`}} {
		r := g.do("GET", fmt.Sprintf("/policies/daily?at_seq=%d", c.seq), apiKey(key), nil)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), c.want) {
			t.Fatalf("at_seq=%d: %d %s, want %s", c.seq, r.status, r.body, c.want)
		}
	}
	if r := g.do("GET", fmt.Sprintf("/policies/daily?at_seq=%d", created-1), apiKey(key), nil); r.status != http.StatusNotFound {
		t.Fatalf("before the create: %d %s, want 404", r.status, r.body)
	}
	if r := g.do("GET", fmt.Sprintf("/policies/daily?at_seq=%d", updated), apiKey(g.issueKey("org_b")), nil); r.status != http.StatusNotFound {
		t.Fatalf("another consumer at_seq: %d %s, want 404", r.status, r.body)
	}
	if r := g.do("GET", "/policies/daily?at_seq=x", apiKey(key), nil); r.status != http.StatusBadRequest {
		t.Fatalf("at_seq=x: %d %s, want 400", r.status, r.body)
	}
	r = g.do("DELETE", "/policies/daily", apiKey(key), nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"version":3`) {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/policies/daily", apiKey(key), nil); r.status != http.StatusNotFound {
		t.Fatalf("get after delete: %d %s, want 404", r.status, r.body)
	}
	if r := g.do("GET", fmt.Sprintf("/policies/daily?at_seq=%d", g.head()), apiKey(key), nil); r.status != http.StatusNotFound {
		t.Fatalf("at_seq after the delete: %d %s, want 404", r.status, r.body)
	}
	if r := g.do("GET", fmt.Sprintf("/policies/daily?at_seq=%d", updated), apiKey(key), nil); r.status != http.StatusOK {
		t.Fatalf("at_seq before the delete: %d %s, want 200", r.status, r.body)
	}
	if r := g.do("GET", "/policies", apiKey(key), nil); r.status != http.StatusOK || string(r.body) != `{"consumer":"org_a","policies":[]}`+"\n" {
		t.Fatalf("list after delete: %d %s", r.status, r.body)
	}
}

// seqOf returns the seq of the policy.changed event that gave the policy
// at path its version.
func seqOf(t *testing.T, g *testGate, path string, version int64) uint64 {
	t.Helper()
	id := path[strings.LastIndex(path, "/")+1:]
	for _, ev := range g.events(0) {
		if ev.Type == domain.EvPolicyChanged && ev.Policy.ID == id && ev.Policy.Version == version {
			return ev.Seq
		}
	}
	t.Fatalf("no policy.changed of %s version %d", id, version)
	return 0
}
