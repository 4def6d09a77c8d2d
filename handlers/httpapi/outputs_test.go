package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/report"
)

// outputCard is the card number the output tests send: it must never
// come back in a reply or reach the log.
const outputCard = "4111 1111 1111 1111"

// factorsOf returns the factor names of a decision reply's risk assessment.
func factorsOf(m map[string]any) []string {
	ra, _ := m["risk_assessment"].(map[string]any)
	fs, _ := ra["factors"].([]any)
	var out []string
	for _, f := range fs {
		if fm, ok := f.(map[string]any); ok {
			out = append(out, fmt.Sprint(fm["factor"]))
		}
	}
	return out
}

// checkOf returns the reply's policy check named policy.
func checkOf(m map[string]any, policy string) map[string]any {
	pcs, _ := m["policy_checks"].([]any)
	for _, pc := range pcs {
		if c, ok := pc.(map[string]any); ok && c["policy"] == policy {
			return c
		}
	}
	return nil
}

// QWED-Agent spec v1.1 §5.2 no_pii_leakage over HTTP (embedded
// deployment), before the action runs: an action's declared output
// (action.output) holding a card number is DENIED with QWED-SEC-003
// naming the kind and "output", never the value; an address is a finding
// only (the pii_in_content factor); an output over 64 KiB is
// QWED-REQ-004 with nothing decided.
func TestAgentSpec_5_2_NoPIILeakageInDeclaredOutput_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	// A security violation demotes its agent: each case has its own.
	a, b := g.register(key, "org_a", 3, nil), g.register(key, "org_a", 3, nil)
	verify := func(step int, output string) response {
		return g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), map[string]any{
			"action":  map[string]any{"type": "send_message", "output": output},
			"context": map[string]any{"conversation_id": "out", "step_number": step}})
	}
	before := g.head()
	r := verify(1, "Your card "+outputCard+" was charged.")
	m := r.json(t)
	if r.status != http.StatusForbidden || m["decision"] != "DENIED" || r.errorCode(t) != string(domain.CodePIIDetected) {
		t.Fatalf("a card in the output: %d %s; want 403 DENIED QWED-SEC-003", r.status, r.body)
	}
	if strings.Contains(string(r.body), "4111") {
		t.Fatalf("the reply holds the card: %s", r.body)
	}
	if c := checkOf(m, "no_pii_leakage"); c == nil || c["passed"] != false || !slices.Contains(factorsOf(m), "pii_in_content") {
		t.Fatalf("policy check %v, factors %v; want no_pii_leakage failed and pii_in_content", c, factorsOf(m))
	}
	if e, _ := m["error"].(map[string]any); fmt.Sprint(e["details"]) != "map[kinds:[card_number] locations:[output]]" {
		t.Fatalf("details %v; want the kind and output", e["details"])
	}
	evs := g.events(before)
	if len(evs) != 1 || evs[0].Decided == nil || evs[0].Decided.Verification.PII[0].Location != "output" {
		t.Fatalf("log after the decision: %+v", evs)
	}

	a = b
	r = verify(1, "Write to bob@example.org")
	if m = r.json(t); r.status != http.StatusOK || m["decision"] != "APPROVED" || !slices.Contains(factorsOf(m), "pii_in_content") {
		t.Fatalf("an address in the output: %d %s; want APPROVED with pii_in_content", r.status, r.body)
	}
	if c := checkOf(m, "no_pii_leakage"); c == nil || c["passed"] != true {
		t.Fatalf("policy check %v; want no_pii_leakage passed", c)
	}
	if ver, _ := m["verification"].(map[string]any); fmt.Sprint(ver["pii"]) != "[map[kind:email location:output offset:9]]" {
		t.Fatalf("verification.pii %v; want the address at output", ver["pii"])
	}

	before = g.head()
	r = verify(2, strings.Repeat("a", domain.MaxOutputBytes+1))
	if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("an oversized output: %d %s; want 400 QWED-REQ-004", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeTooLong, strings.Repeat("a", 64))
}

// QWED-Agent spec v1.1 §7.1 (execution.result_hash) and §5.2 after the
// fact, over HTTP: POST /executions may carry the output. The log records
// its findings and hash, never its text; a card number in it flags the
// execution (pii_violation) in the reply, the activity entry and the
// compliance report; a result_hash that is not the output's is QWED-REQ-001
// and an output over 64 KiB QWED-REQ-004, with no execution recorded.
// Another principal reads none of it.
func TestAgentSpec_7_1_ExecutionOutputFlagged_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{reports: true})
	key := g.issueKey("org_a")
	other := g.issueKey("org_b")
	a := g.register(key, "org_a", 3, nil)
	approve := func(step int) string {
		t.Helper()
		r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", fmt.Sprintf("%d+1", step), "exec", step))
		id, _ := r.json(t)["action_id"].(string)
		if r.status != http.StatusOK || id == "" {
			t.Fatalf("verify: %d %s", r.status, r.body)
		}
		return id
	}
	logExec := func(id string, body map[string]any) response {
		body["action_id"], body["success"] = id, true
		return g.do("POST", "/agents/"+a.id+"/executions", bearerH(a.token), body)
	}
	out := "charged " + outputCard + " for order 7"
	sum := sha256.Sum256([]byte(out))
	flagged, clean := approve(1), approve(2)

	before := g.head()
	r := logExec(flagged, map[string]any{"output": out, "result_hash": "sha256:" + strings.Repeat("0", 64)})
	if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeInvalidRequest) || strings.Contains(string(r.body), "4111") {
		t.Fatalf("a result_hash not the output's: %d %s; want 400 QWED-REQ-001", r.status, r.body)
	}
	if evs := g.events(before); len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
		t.Fatalf("log after a refused execution: %d events", len(evs))
	}
	before = g.head()
	r = logExec(flagged, map[string]any{"output": strings.Repeat("b", domain.MaxOutputBytes+1)})
	if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("an oversized output: %d %s; want 400 QWED-REQ-004", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeTooLong, strings.Repeat("b", 64))

	before = g.head()
	r = logExec(flagged, map[string]any{"output": out})
	m := r.json(t)
	if r.status != http.StatusOK || m["logged"] != true || m["pii_violation"] != true || m["result_hash"] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("execution with a card in its output: %d %s; want logged, flagged, the output's hash", r.status, r.body)
	}
	if strings.Contains(string(r.body), "4111") {
		t.Fatalf("the reply holds the output: %s", r.body)
	}
	for _, rec := range g.records(before) {
		if bytes.Contains(rec, []byte("4111")) || bytes.Contains(rec, []byte("order 7")) {
			t.Fatalf("the log holds the output: %s", rec)
		}
	}
	if r = logExec(clean, map[string]any{"output": "sent to ann@example.com"}); r.status != http.StatusOK || r.json(t)["pii_violation"] != nil {
		t.Fatalf("execution with an address: %d %s; want logged unflagged", r.status, r.body)
	}

	r = g.do("GET", "/agents/"+a.id+"/activity", apiKey(key), nil)
	execs := map[string]map[string]any{}
	acts, _ := r.json(t)["activities"].([]any)
	for _, x := range acts {
		e, _ := x.(map[string]any)
		ex, _ := e["execution"].(map[string]any)
		execs[fmt.Sprint(e["activity_id"])] = ex
	}
	if ex := execs[flagged]; ex["pii_violation"] != true || fmt.Sprint(ex["output_findings"]) != "[map[kind:card_number location:output offset:8]]" {
		t.Fatalf("activity of the flagged execution: %v", ex)
	}
	if ex := execs[clean]; ex["pii_violation"] != nil || fmt.Sprint(ex["output_findings"]) != "[map[kind:email location:output offset:8]]" {
		t.Fatalf("activity of the clean execution: %v", ex)
	}
	if strings.Contains(string(r.body), "4111") {
		t.Fatalf("the activity holds the output: %s", r.body)
	}

	r = g.do("GET", "/agents/"+a.id+"/compliance-report?from=2026-03-01&to=2026-03-03&format=json", apiKey(key), nil)
	b, err := report.ReadBundle(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("report: %d %v", r.status, err)
	}
	if v := b.Report.PIIViolations; len(v) != 1 || v[0].ActionID != flagged || !slices.Equal(v[0].Kinds, []string{"card_number"}) {
		t.Fatalf("report pii violations %+v; want the flagged action only", v)
	}

	for _, path := range []string{"/agents/" + a.id + "/activity", "/agents/" + a.id + "/compliance-report?format=json"} {
		if r := g.do("GET", path, apiKey(other), nil); r.status == http.StatusOK || strings.Contains(string(r.body), flagged) {
			t.Errorf("another principal reads %s: %d %s", path, r.status, r.body)
		}
	}
}

// QWED-Agent spec v1.1 §5.2 no_pii_leakage, an output that is a JSON
// document (an API reply, a message payload): a card number or a key
// written with JSON escapes ("\u0034111…") is what its reader decodes.
// The parameter scan decodes them; the output scan read the escapes as
// text and missed both. Before the action runs the output is DENIED
// with QWED-SEC-003; after it ran the execution is flagged.
func TestAgentSpec_5_2_NoPIILeakageInJSONEscapedOutput_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a, b := g.register(key, "org_a", 3, nil), g.register(key, "org_a", 3, nil)
	for i, out := range []string{`{"card":"\u0034111 1111 1111 1111"}`, `{"key":"AKIA\u0049OSFODNN7EXAMPLE"}`} {
		r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), map[string]any{
			"action":  map[string]any{"type": "send_message", "output": out},
			"context": map[string]any{"conversation_id": "esc", "step_number": i + 1}})
		if r.status != http.StatusForbidden || r.errorCode(t) != string(domain.CodePIIDetected) {
			t.Fatalf("declared output %s: %d %s; want 403 QWED-SEC-003", out, r.status, r.body)
		}
		a, b = b, a
	}
	r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1+1", "esc-x", 1))
	id, _ := r.json(t)["action_id"].(string)
	if r.status != http.StatusOK || id == "" {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/executions", bearerH(a.token),
		map[string]any{"action_id": id, "success": true, "output": `{"card":"\u0034111 1111 1111 1111"}`})
	if m := r.json(t); r.status != http.StatusOK || m["pii_violation"] != true {
		t.Fatalf("execution output with an escaped card: %d %s; want logged and flagged", r.status, r.body)
	}
}
