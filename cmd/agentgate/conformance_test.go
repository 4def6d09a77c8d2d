package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceLimits lift the per-address refusal limit (1 a second after
// a burst of 30) the vectors' deliberate errors would reach: the runner
// waits out a 429, which would only slow the test down.
var conformanceLimits = []string{"--refusal-rate", "1000", "--refusal-burst", "1000"}

// TestConformance_QWEDProtocol_11_FullAgainstServe: `agentgate
// conformance` pointed at a real `agentgate serve` subprocess passes every
// vector and reaches Full (exit 0), in text and in JSON.
func TestConformance_QWEDProtocol_11_FullAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agentgate serve")
	}
	bin := buildBinary(t)
	_, _, addr := cliServe(t, bin, append([]string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "conformance-admin-key"}, conformanceLimits...), nil)
	checkFullConformance(t, bin, "http://"+addr, "conformance-admin-key")
}

// TestConformance_QWEDProtocol_11_FullAgainstKafkaServe: the same against
// the Kafka deployment (`serve --kafka-brokers`, a dev broker subprocess).
func TestConformance_QWEDProtocol_11_FullAgainstKafkaServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and agentgate serve")
	}
	bin := buildBinary(t)
	broker := devKafkaProcess(t, bin, filepath.Join(t.TempDir(), "broker"))
	g := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate"), conformanceLimits...)
	g.waitServesAll(t)
	checkFullConformance(t, bin, "http://"+g.http, killAdminKey)
}

// checkFullConformance runs `agentgate conformance` against url, in text
// and in JSON: exit 0, level full, every vector PASS.
func checkFullConformance(t *testing.T, bin, url, key string) {
	t.Helper()
	out, code := cliRun(t, bin, "conformance", "--url", url, "--api-key", key)
	if code != 0 || !strings.Contains(out, "level reached: full") || strings.Contains(out, "FAIL ") || strings.Contains(out, "SKIP ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, code = cliRun(t, bin, "conformance", "--url", url, "--api-key", key, "--json", "--timeout", "20s")
	var rep struct {
		Reached  string `json:"reached"`
		Outcomes []struct {
			ID, Verdict string
		} `json:"outcomes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Reached != "full" || len(rep.Outcomes) == 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	for _, o := range rep.Outcomes {
		if o.Verdict != "PASS" {
			t.Errorf("%s: %s", o.ID, o.Verdict)
		}
	}
}

// TestConformance_ExitStatusFollowsLevel: against a server that only
// speaks the response format with one engine, the command reports FAIL
// lines and Basic, exits 1 for the default --level full and 0 for
// --level basic; a bad --level or --url is refused.
func TestConformance_ExitStatusFollowsLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := buildBinary(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"type":"math"`) && !strings.Contains(string(b), "batch") {
			_, _ = io.WriteString(w, `{"status":"VERIFIED","verified":true,"engine":"math","metadata":{"protocol_version":"1.0.0"}}`)
			return
		}
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"status":"UNSUPPORTED","verified":false,"error":{"code":"QWED-REQ-005","message":"only math"},"metadata":{"protocol_version":"1.0.0"}}`)
	}))
	defer srv.Close()
	out, code := cliRun(t, bin, "conformance", "--url", srv.URL)
	if code != 1 || !strings.Contains(out, "level reached: basic") || !strings.Contains(out, "FAIL  standard/engine-logic") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if out, code := cliRun(t, bin, "conformance", "--url", srv.URL, "--level", "basic"); code != 0 {
		t.Fatalf("--level basic: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{{"--url", srv.URL, "--level", "gold"}, {"--url", "ftp://x"}, {}} {
		if out, code := cliRun(t, bin, append([]string{"conformance"}, args...)...); code == 0 {
			t.Errorf("%v accepted:\n%s", args, out)
		}
	}
}
