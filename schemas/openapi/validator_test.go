package openapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func exchange(method, target string, h http.Header, body string, status int, respType, resp string) *Exchange {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	if h == nil {
		h = http.Header{}
	}
	rh := http.Header{}
	if respType != "" {
		rh.Set("Content-Type", respType)
	}
	return &Exchange{Method: method, URL: u, Header: h, Body: []byte(body), Status: status, RespHead: rh, RespBody: []byte(resp)}
}

const errBody = `{"error":{"code":"QWED-REQ-001","message":"bad","details":{}}}`

// TestCheck pins what the committed document describes and what it does
// not, one exchange at a time: each bad exchange names the operation and
// what is wrong.
func TestCheck(t *testing.T) {
	v, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	key := http.Header{"X-Api-Key": {"qwed_admin"}}
	cases := []struct {
		name string
		x    *Exchange
		want string // "" for no violation; else a part of the first one
	}{
		{"health", exchange("GET", "/healthz", nil, "", 200, "application/json", `{"status":"ok","seq":3}`), ""},
		{"health missing member", exchange("GET", "/healthz", nil, "", 200, "application/json", `{"status":"ok"}`),
			`GET /healthz: 200 application/json body: at "": missing property 'seq'`},
		{"health extra member", exchange("GET", "/healthz", nil, "", 200, "application/json", `{"status":"ok","seq":3,"x":1}`),
			"GET /healthz: 200 application/json body"},
		{"health wrong type", exchange("GET", "/healthz", nil, "", 200, "application/json", `{"status":"ok","seq":"3"}`),
			`at "/seq"`},
		{"undocumented status", exchange("GET", "/healthz", nil, "", 418, "application/json", errBody),
			"GET /healthz: status 418 is not documented"},
		{"undocumented media type", exchange("GET", "/healthz", nil, "", 200, "text/plain", `ok`),
			`GET /healthz: 200: media type "text/plain" is not documented`},
		{"not JSON", exchange("GET", "/healthz", nil, "", 200, "application/json", `{"status":`), "not one JSON document"},
		{"error body", exchange("GET", "/agents/a1", key, "", 404, "application/json", errBody), ""},
		{"bad error body", exchange("GET", "/agents/a1", key, "", 404, "application/json", `{"code":"QWED-REQ-001"}`),
			"GET /agents/{id}: 404 application/json body"},
		{"unknown path 404", exchange("GET", "/nope", nil, "", 404, "application/json", errBody), ""},
		{"unknown path 200", exchange("GET", "/nope", nil, "", 200, "application/json", `{}`), "GET /nope: no documented path matches"},
		{"unknown method 405", exchange("PATCH", "/healthz", nil, "", 405, "application/json", errBody), "405 without an Allow header"},
		{"unknown method 200", exchange("PATCH", "/healthz", nil, "", 200, "application/json", `{}`), "the method is not documented"},
		{"accepted without credentials", exchange("GET", "/approvals", nil, "", 200, "application/json", `{"approvals":[],"next_after":null}`),
			"GET /approvals: the request was accepted without the credentials"},
		{"accepted with undocumented query", exchange("GET", "/approvals?colour=red", key, "", 200, "application/json", `{"approvals":[],"next_after":null}`),
			`GET /approvals: query parameter "colour" is not documented`},
		{"accepted with a bad query value", exchange("GET", "/approvals?limit=0", key, "", 200, "application/json", `{"approvals":[],"next_after":null}`),
			"GET /approvals: query parameter limit=\"0\""},
		{"refused bad query", exchange("GET", "/approvals?limit=0", key, "", 400, "application/json", errBody), ""},
		{"accepted bad body", exchange("POST", "/agents/a1/trust-level", key, `{"colour":1}`, 200, "application/json",
			`{"agent_id":"a1","trust_level":2,"previous":1}`), "POST /agents/{id}/trust-level: accepted request application/json body"},
		{"accepted without a required body", exchange("POST", "/agents/a1/complaints", key, ``, 200, "application/json",
			`{"agent_id":"a1","status":"active"}`), "the request body is required"},
		{"required header missing", exchange("GET", "/engines", nil, "", 200, "application/json",
			`{"protocol_version":"1.0","supported_versions":["1.0"],"engines":[]}`), "the required response header QWED-Protocol-Version is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := v.Check(c.x)
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("violations: %q", got)
			case c.want != "" && len(got) == 0:
				t.Fatalf("no violation, want %q", c.want)
			case c.want != "" && !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, c.want) }):
				t.Fatalf("violations %q, want %q", got, c.want)
			}
		})
	}
}

// TestHookFailsTheTest pins that a hooked handler answering what the
// document does not describe fails the test, at its end, with the fix.
func TestHookFailsTheTest(t *testing.T) {
	rec := &fakeTB{TB: t}
	h := Hook(rec, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{}`))
	}))
	req, _ := http.NewRequest("GET", "/healthz", nil)
	h.ServeHTTP(discard{h: http.Header{}}, req)
	for _, f := range rec.cleanups {
		f()
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "GET /healthz: status 418 is not documented") ||
		!strings.Contains(rec.errors[0], "-update") {
		t.Fatalf("errors %q", rec.errors)
	}
}

type fakeTB struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(s string, a ...any) {
	f.errors = append(f.errors, strings.TrimSpace(fmt.Sprintf(s, a...)))
}

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// TestCheckReadsBodiesAsJSON pins that an accepted body is checked as
// JSON whatever its Content-Type, as the gate reads it (curl -d).
func TestCheckReadsBodiesAsJSON(t *testing.T) {
	v, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	form := http.Header{"X-Api-Key": {"k"}, "Content-Type": {"application/x-www-form-urlencoded"}}
	ok := `{"agent_id":"a1","status":"suspended","reason":"r"}`
	if got, _ := v.Check(exchange("POST", "/agents/a1/complaints", form, `{"reason":"r"}`, 200, "application/json", ok)); len(got) > 0 {
		t.Fatalf("violations %q", got)
	}
	got, _ := v.Check(exchange("POST", "/agents/a1/complaints", form, `{"colour":1}`, 200, "application/json", ok))
	if len(got) == 0 || !strings.Contains(got[0], "accepted request application/json body") {
		t.Fatalf("violations %q", got)
	}
}
