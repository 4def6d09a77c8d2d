package conformance_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/handlers/conformance"
)

// deficient is a QWED server of another implementation with gaps: only
// the math engine, wrong error codes, no batches, no attestation, no
// authentication.
func deficient(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var req struct {
		Query *string `json:"query"`
		Type  string  `json:"type"`
		Batch bool    `json:"batch"`
	}
	if r.URL.Path != "/verify" {
		http.NotFound(w, r)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"status":"ERROR","verified":false,"error":{"code":"BAD_REQUEST","message":"bad"}}`)
		return
	}
	switch {
	case req.Batch:
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"status":"UNSUPPORTED","verified":false,"error":{"code":"QWED-REQ-005","message":"no batches"},"metadata":{"protocol_version":"1.0.0"}}`)
	case req.Type == "math" && req.Query != nil && *req.Query == "2+2=5":
		_, _ = io.WriteString(w, `{"status":"FAILED","verified":false,"engine":"math","result":{"is_valid":false},"metadata":{"protocol_version":"1.0.0","vendor_field":1},"extra":"tolerated"}`)
	case req.Type == "math" && req.Query != nil && len(*req.Query) < 100:
		_, _ = io.WriteString(w, `{"status":"VERIFIED","verified":true,"engine":"math","result":{"is_valid":true},"metadata":{"protocol_version":"1.0.0"},"extra":"tolerated"}`)
	default:
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"status":"UNSUPPORTED","verified":false,"error":{"code":"QWED-REQ-005","message":"only math"},"metadata":{"protocol_version":"1.0.0"}}`)
	}
}

func run(t *testing.T, h http.Handler, key string) *conformance.Report {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rep, err := conformance.Run(context.Background(), conformance.Config{URL: srv.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func outcome(t *testing.T, rep *conformance.Report, id string) conformance.Outcome {
	t.Helper()
	for _, o := range rep.Outcomes {
		if o.ID == id {
			return o
		}
	}
	t.Fatalf("no outcome %s", id)
	return conformance.Outcome{}
}

// TestQWEDProtocol_11_1_DeficientServerReachesBasicOnly: a server with one
// engine, wrong error codes and no batch reaches Basic (its additional
// fields tolerated) and fails the Standard and Full vectors, each with
// its reason.
func TestQWEDProtocol_11_1_DeficientServerReachesBasicOnly(t *testing.T) {
	rep := run(t, http.HandlerFunc(deficient), "")
	if rep.Reached != conformance.Basic || !rep.Reaches(conformance.Basic) || rep.Reaches(conformance.Standard) || rep.Reaches(conformance.Full) {
		t.Fatalf("reached %s, want basic: %+v", rep.Reached, rep.Levels)
	}
	if len(rep.Engines) != 1 || rep.Engines[0] != "math" {
		t.Errorf("engines %v, want [math]", rep.Engines)
	}
	for id, reason := range map[string]string{
		"basic/math-example":                 "",
		"basic/logic-example":                "",
		"standard/engine-math":               "",
		"standard/engine-math-false":         "",
		"standard/engine-logic":              "want HTTP 200 VERIFIED",
		"standard/REQ-001-malformed-json":    "does not follow the §6.1 response schema",
		"standard/REQ-002-missing-query":     "HTTP 400 UNSUPPORTED QWED-REQ-005, want HTTP 400 ERROR",
		"standard/REQ-004-too-long":          "want HTTP 400 ERROR",
		"full/batch":                         "HTTP 400, want 200",
		"full/attestation":                   "carries no attestation object",
		"standard/AUTH-001-missing-key":      "needs --api-key",
		"standard/engines-listing":           "does not define this route",
		"standard/SEC-002-malicious-payload": "want HTTP 403 BLOCKED",
	} {
		o := outcome(t, rep, id)
		want := conformance.Fail
		switch {
		case reason == "":
			want = conformance.Pass
		case strings.Contains(reason, "needs") || strings.Contains(reason, "define"):
			want = conformance.Skip
		}
		if o.Verdict != want || !strings.Contains(o.Reason, reason) {
			t.Errorf("%s: %s %q, want %s %q", id, o.Verdict, o.Reason, want, reason)
		}
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"FAIL  full/batch", "basic     reached", "standard  NOT reached", "level reached: basic"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
}

// TestQWEDProtocol_6_1_WrongShapesReachNothing: answers that break the
// §6.1 schema, verified disagreeing with the status, an HTTP code not the
// status's, or no protocol_version fail the format vectors: no level.
func TestQWEDProtocol_6_1_WrongShapesReachNothing(t *testing.T) {
	for name, body := range map[string]string{
		"no verified":          `{"status":"VERIFIED","engine":"math","metadata":{"protocol_version":"1.0.0"}}`,
		"unknown status":       `{"status":"OK","verified":true,"engine":"math","metadata":{"protocol_version":"1.0.0"}}`,
		"verified disagrees":   `{"status":"FAILED","verified":true,"engine":"math","metadata":{"protocol_version":"1.0.0"}}`,
		"no protocol_version":  `{"status":"VERIFIED","verified":true,"engine":"math"}`,
		"not json":             `<html>ok</html>`,
		"wrong engine":         `{"status":"VERIFIED","verified":true,"engine":"other","metadata":{"protocol_version":"1.0.0"}}`,
		"blocked answered 200": `{"status":"BLOCKED","verified":false,"engine":"math","metadata":{"protocol_version":"1.0.0"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			rep := run(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, body)
			}), "")
			if rep.Reached != conformance.None || rep.Reaches(conformance.Basic) {
				t.Fatalf("reached %s on %s", rep.Reached, body)
			}
			if o := outcome(t, rep, "basic/math-example"); o.Verdict != conformance.Fail || o.Reason == "" {
				t.Errorf("basic/math-example: %+v", o)
			}
		})
	}
}

// TestRunnerRefusesRedirectsToOtherHostsAndDropsCredentials: a redirect to
// another host is not followed (the other host sees no request); a
// same-host redirect is followed without the API key.
func TestRunnerRefusesRedirectsToOtherHostsAndDropsCredentials(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	rep := run(t, http.RedirectHandler(other.URL+"/verify", http.StatusTemporaryRedirect), "secret-key")
	if elsewhere.Load() != 0 {
		t.Fatalf("the runner followed a redirect to another host %d times", elsewhere.Load())
	}
	if o := outcome(t, rep, "basic/math-example"); o.Verdict != conformance.Fail || !strings.Contains(o.Reason, "only the same scheme and host") {
		t.Errorf("%+v", o)
	}

	var leaked, followed atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("/verify", http.RedirectHandler("/moved", http.StatusTemporaryRedirect))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
		if r.Header.Get("X-API-Key") != "" || r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		deficient(w, r)
	})
	run(t, mux, "secret-key")
	if followed.Load() == 0 || leaked.Load() != 0 {
		t.Errorf("same-host redirects followed %d times, %d with credentials", followed.Load(), leaked.Load())
	}
}

// TestRunnerBoundsResponses: an answer longer than MaxResponseBytes fails
// its vector instead of being read whole.
func TestRunnerBoundsResponses(t *testing.T) {
	rep := run(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"VERIFIED","verified":true,"pad":"`+strings.Repeat("x", conformance.MaxResponseBytes)+`"}`)
	}), "")
	if o := outcome(t, rep, "basic/math-example"); o.Verdict != conformance.Fail || !strings.Contains(o.Reason, "exceeds") {
		t.Errorf("%+v", o)
	}
}

// TestRunRefusesBadURLs: only http(s) URLs without user info are run.
func TestRunRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://host/", "host:8080", "http://user:pw@host/"} {
		if _, err := conformance.Run(context.Background(), conformance.Config{URL: u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

// TestVectorsAreValid: the embedded set parses, covers every level and
// group, names a protocol section per vector, and Validate refuses a
// duplicated id, a missing section, an unknown group.
func TestVectorsAreValid(t *testing.T) {
	vs := conformance.Vectors()
	levels, groups := map[conformance.Level]int{}, map[string]int{}
	for _, v := range vs {
		levels[v.Level]++
		groups[v.Group]++
	}
	if len(levels) != 3 || len(groups) != 8 {
		t.Errorf("levels %v, groups %v", levels, groups)
	}
	engines := map[string]bool{}
	for _, v := range vs {
		if v.Group == conformance.GroupEngine {
			engines[v.Engine] = true
		}
	}
	for _, id := range conformance.EngineIDs {
		if !engines[id] {
			t.Errorf("no engine vector for %s (§11.1 Standard needs all 8)", id)
		}
	}
	bad := map[string][]conformance.Vector{
		"duplicate": {vs[0], vs[0]},
		"section":   {{ID: "basic/x", Level: conformance.Basic, Group: conformance.GroupFormat, Body: json.RawMessage(`{}`)}},
		"group":     {{ID: "basic/x", Section: "§1", Level: conformance.Basic, Group: "other", Body: json.RawMessage(`{}`)}},
		"level":     {{ID: "full/x", Section: "§1", Level: conformance.Basic, Group: conformance.GroupFormat, Body: json.RawMessage(`{}`)}},
		"no http":   {{ID: "full/x", Section: "§1", Level: conformance.Full, Group: conformance.GroupDSL, Body: json.RawMessage(`{}`)}},
		"no body":   {{ID: "basic/x", Section: "§1", Level: conformance.Basic, Group: conformance.GroupFormat}},
	}
	for name, set := range bad {
		if err := conformance.Validate(set); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := conformance.ParseVectors([]byte(`{"vectors":[],"extra":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
	if _, err := conformance.ParseLevel("gold"); err == nil {
		t.Error("level gold accepted")
	}
}

// TestRunnerWaitsOutRateLimits: a 429 (QWED-AUTH-004) is repeated after
// its Retry-After, so a rate-limited server is judged by its answers; a
// server that only answers 429 fails each vector after
// MaxRateLimitRetries repeats.
func TestRunnerWaitsOutRateLimits(t *testing.T) {
	var n atomic.Int32
	limited := func(always bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if always || n.Add(1)%2 == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, `{"status":"ERROR","verified":false,"error":{"code":"QWED-AUTH-004","message":"slow down"}}`)
				return
			}
			deficient(w, r)
		}
	}
	if rep := run(t, limited(false), ""); rep.Reached != conformance.Basic {
		t.Errorf("every other answer a 429: reached %s, want basic (as without the limit)", rep.Reached)
	}
	n.Store(0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		limited(true)(w, r)
	}))
	defer srv.Close()
	vs := conformance.Vectors()[:1]
	rep, err := conformance.Run(context.Background(), conformance.Config{URL: srv.URL, Vectors: vs})
	if err != nil {
		t.Fatal(err)
	}
	if o := rep.Outcomes[0]; o.Verdict != conformance.Fail || o.HTTP != 429 || n.Load() != 1+conformance.MaxRateLimitRetries {
		t.Errorf("%+v after %d requests", o, n.Load())
	}
}
