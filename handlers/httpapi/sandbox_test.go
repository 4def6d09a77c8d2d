package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/report"
)

// QWED-Agent spec v1.1 §5.3 (sandbox_required) over HTTP: a tool the
// registry marks sandbox_required is decided with sandbox_required; its
// POST /executions must attest sandboxed: true, else the execution is
// recorded flagged: in the reply, the activity entry and the compliance
// report. An oversized sandbox description is QWED-REQ-004.
func TestAgentSpec5_3_SandboxRequired_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{reports: true})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 1, nil)
	r := g.do("PUT", "/principals/org_a/tools", apiKey(key), `{"tools":[{"name":"run_code","risk_level":"low","sandbox_required":true}]}`)
	if r.status != http.StatusOK {
		t.Fatalf("tool registry: %d %s", r.status, r.body)
	}
	call := func() string {
		t.Helper()
		r := g.do("POST", "/agents/"+a.id+"/tools/run_code", bearerH(a.token), `{"tool_call":{"parameters":{"code":"print(1)"}}}`)
		m := r.json(t)
		ver, _ := m["verification"].(map[string]any)
		id, _ := m["action_id"].(string)
		if r.status != http.StatusOK || m["decision"] != "APPROVED" || ver["sandbox_required"] != true || id == "" {
			t.Fatalf("tool call: %d %s, want APPROVED with sandbox_required", r.status, r.body)
		}
		return id
	}
	logExec := func(id, extra string) map[string]any {
		t.Helper()
		r := g.do("POST", "/agents/"+a.id+"/executions", bearerH(a.token), fmt.Sprintf(`{"action_id":%q,"success":true%s}`, id, extra))
		if r.status != http.StatusOK || r.json(t)["logged"] != true {
			t.Fatalf("executions: %d %s", r.status, r.body)
		}
		return r.json(t)
	}
	flagged, attested := call(), call()
	if m := logExec(flagged, ""); m["sandbox_violation"] != true {
		t.Fatalf("an unattested execution is not flagged: %v", m)
	}
	before := g.head()
	r = g.do("POST", "/agents/"+a.id+"/executions", bearerH(a.token),
		fmt.Sprintf(`{"action_id":%q,"success":true,"sandboxed":true,"sandbox":%q}`, attested, strings.Repeat("x", domain.MaxIDBytes+1)))
	if r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeTooLong) {
		t.Fatalf("oversized sandbox: %d %s, want 400 REQ-004", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeTooLong, "")
	if m := logExec(attested, `,"sandboxed":true,"sandbox":"gvisor sha256:ab"`); m["sandbox_violation"] != nil {
		t.Fatalf("an attested execution is flagged: %v", m)
	}

	r = g.do("GET", "/agents/"+a.id+"/activity", apiKey(key), nil)
	acts, _ := r.json(t)["activities"].([]any)
	execs := map[string]map[string]any{}
	for _, x := range acts {
		e, _ := x.(map[string]any)
		ex, _ := e["execution"].(map[string]any)
		id, _ := e["activity_id"].(string)
		execs[id] = ex
	}
	if ex := execs[flagged]; ex["sandbox_violation"] != true || ex["sandboxed"] != nil {
		t.Fatalf("activity of the flagged execution: %v (%s)", ex, r.body)
	}
	if ex := execs[attested]; ex["sandbox_violation"] != nil || ex["sandboxed"] != true || ex["sandbox"] != "gvisor sha256:ab" {
		t.Fatalf("activity of the attested execution: %v (%s)", ex, r.body)
	}

	r = g.do("GET", "/agents/"+a.id+"/compliance-report?from=2026-03-01&to=2026-03-03&format=json", apiKey(key), nil)
	b, err := report.ReadBundle(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("report: %d %v", r.status, err)
	}
	if v := b.Report.SandboxViolations; len(v) != 1 || v[0].ActionID != flagged {
		t.Fatalf("report sandbox violations %+v, want the flagged action only", v)
	}
	r = g.do("GET", "/agents/"+a.id+"/compliance-report?from=2026-03-01&to=2026-03-03&format=csv", apiKey(key), nil)
	if !strings.Contains(string(r.body), "sandbox_violations,0,action_id,string,"+flagged) {
		t.Fatalf("csv: %d %s", r.status, r.body)
	}
}
