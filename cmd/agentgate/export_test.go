package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
)

// seedDataDir records a short history of agent A (org_1) beside agent B
// and stops the gate.
func seedDataDir(t *testing.T) (dir, agent string) {
	t.Helper()
	dir = t.TempDir()
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	g, err := seedlog.Start(dir, at)
	if err != nil {
		t.Fatal(err)
	}
	must := func(cmd *domain.Command) *domain.Event {
		t.Helper()
		ev, err := g.Submit(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	agent = must(seedlog.Register("a", "org_1", domain.TrustAutonomous, domain.Limits{MaxDailyCost: seedlog.USD(100)})).Registered.AgentID
	b := must(seedlog.Register("b", "org_1", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	for i, c := range []struct {
		agent, action string
		cost          float64
	}{{agent, "calculate", 10}, {b, "api_call", 5}, {agent, "api_call", 60}, {agent, "execute_sql", 1}, {agent, "calculate", 40}, {b, "calculate", 1}} {
		at = at.Add(5 * time.Minute)
		g.At(at)
		cmd := seedlog.Verify(c.agent, "r"+string(rune('a'+i)), "conv", i+1, c.action, seedlog.USD(c.cost))
		cmd.Verify.Options.RequireAttestation = i == 0
		must(cmd)
	}
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	return dir, agent
}

func run(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String() + errb.String(), code
}

// Issue 5: `export` writes the three formats, byte-identical twice; the
// JSON bundle passes `audit verify --bundle` and fails it (exit 1) after a
// one-byte edit.
func TestExportAndAuditVerifyBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir, agent := seedDataDir(t)
	out := t.TempDir()
	files := map[string][]byte{}
	for _, format := range []string{"json", "csv", "pdf"} {
		for _, n := range []string{"1", "2"} {
			f := filepath.Join(out, n+"."+format)
			if msg, code := run(t, bin, "export", "--data", dir, "--agent", agent, "--from", "2026-11-02", "--to", "2026-11-03", "--format", format, "--out", f); code != 0 {
				t.Fatalf("export %s: exit %d: %s", format, code, msg)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if n == "2" && !bytes.Equal(b, files[format]) {
				t.Fatalf("two %s exports differ", format)
			}
			files[format] = b
		}
	}
	if !bytes.HasPrefix(files["pdf"], []byte("%PDF-")) || !bytes.HasPrefix(files["csv"], []byte("section,index,field,type,value\n")) {
		t.Fatal("pdf or csv malformed")
	}
	bundle := filepath.Join(out, "1.json")
	msg, code := run(t, bin, "audit", "verify", "--bundle", bundle)
	if code != 0 || !strings.Contains(msg, "INTACT") {
		t.Fatalf("intact bundle: exit %d\n%s", code, msg)
	}
	// Without signatures nothing binds the list of the agent's events (an
	// event dropped together with what it counted in the report would go
	// unseen): the bundle is not called intact.
	msg, code = run(t, bin, "audit", "verify", "--bundle", bundle, "--no-signatures")
	if code != 0 || strings.Contains(msg, "INTACT") || !strings.Contains(msg, "nothing proves that none of the agent's events is missing") {
		t.Fatalf("bundle checked without signatures: exit %d\n%s", code, msg)
	}
	// One byte of one of the agent's events.
	b := bytes.Clone(files["json"])
	i := bytes.Index(b, []byte(`\"decision\":\"APPROVED\"`))
	if i < 0 {
		t.Fatal("no approved decision in the bundle")
	}
	b[i+len(`\"decision\":\"`)] = 'B'
	edited := filepath.Join(out, "edited.json")
	if err := os.WriteFile(edited, b, 0o600); err != nil {
		t.Fatal(err)
	}
	msg, code = run(t, bin, "audit", "verify", "--bundle", edited)
	if code != 1 || !strings.Contains(msg, "MISMATCH: event seq") || !strings.Contains(msg, "is not in the tree") {
		t.Fatalf("edited bundle: exit %d, want 1\n%s", code, msg)
	}
	// --json reports the same.
	msg, code = run(t, bin, "audit", "verify", "--bundle", edited, "--json")
	var v struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	if code != 1 || json.Unmarshal([]byte(msg), &v) != nil || v.OK || len(v.Problems) == 0 {
		t.Fatalf("edited bundle --json: exit %d\n%s", code, msg)
	}
	// Issue 17 item 10: without --from and --to the period is the agent's
	// days (not 1970-01-01 to 9999-12-31), and export says what it wrote.
	def := filepath.Join(out, "default.json")
	msg, code = run(t, bin, "export", "--data", dir, "--agent", agent, "--out", def)
	m := regexp.MustCompile(`wrote (\S+): the json compliance report of agent (\S+), (\S+) to (\S+) \(([0-9]+) bytes\)\n`).FindStringSubmatch(msg)
	if code != 0 || m == nil || m[1] != def || m[2] != agent {
		t.Fatalf("export with the default period: exit %d: %q", code, msg)
	}
	b, err := os.ReadFile(def)
	if err != nil || strconv.Itoa(len(b)) != m[5] {
		t.Fatalf("export wrote %d bytes, said %s (%v)", len(b), m[5], err)
	}
	bd, err := report.ReadBundle(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	p := bd.Report.Period
	if m[3] != "2026-11-02" || m[4] <= m[3] || m[4] > "2026-11-30" || p.From.Format(time.DateOnly) != m[3] || p.To.Format(time.DateOnly) != m[4] {
		t.Fatalf("default period: said %s to %s, the report's %v", m[3], m[4], p)
	}
	if msg, code := run(t, bin, "audit", "verify", "--bundle", def); code != 0 || !strings.Contains(msg, "INTACT") {
		t.Fatalf("the default period's bundle: exit %d\n%s", code, msg)
	}
	// An unknown agent is a clear error.
	if msg, code := run(t, bin, "export", "--data", dir, "--agent", "agent_nope", "--format", "pdf", "--out", filepath.Join(out, "x.pdf")); code != 1 || !strings.Contains(msg, "not registered") {
		t.Fatalf("unknown agent: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(out, "x.pdf")); err == nil {
		t.Fatal("a failed export left a file")
	}
}

// Issue 5: `backtest --json` has its documented schema; an unknown key is
// refused with the list of settable keys (exit 1).
func TestBacktestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir, agent := seedDataDir(t)
	msg, code := run(t, bin, "backtest", "--data", dir, "--agent", agent, "--from", "2026-11-02", "--set", "trust_level=1", "--set", "budget.max_daily_usd=50", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(msg), &v); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	wantKeys := []string{"agent_id", "agents", "changes", "decisions", "log_head_seq", "period", "totals", "truncated"}
	if got := keys(v); !slices.Equal(got, wantKeys) {
		t.Fatalf("keys %v, want %v", got, wantKeys)
	}
	totals := v["totals"].(map[string]any)
	if got := keys(totals); !slices.Equal(got, []string{"backtest", "backtest_executes", "changed", "decisions", "executes", "recorded", "recorded_executes", "redecided", "transitions"}) {
		t.Fatalf("totals keys %v", got)
	}
	rows := v["decisions"].([]any)
	if len(rows) == 0 {
		t.Fatal("no changed decision")
	}
	if got := keys(rows[0].(map[string]any)); !slices.Equal(got, []string{"action", "action_id", "agent_id", "backtest", "command", "recorded", "seq", "time", "why"}) {
		t.Fatalf("row keys %v", got)
	}
	if got := keys(rows[0].(map[string]any)["backtest"].(map[string]any)); !slices.Contains(got, "event") {
		t.Fatalf("outcome keys %v", got)
	}
	msg, code = run(t, bin, "backtest", "--data", dir, "--agent", agent, "--set", "trust_level=1")
	if code != 0 || !strings.Contains(msg, "re-decided") || !strings.Contains(msg, "PENDING") {
		t.Fatalf("table: exit %d\n%s", code, msg)
	}
	msg, code = run(t, bin, "backtest", "--data", dir, "--agent", agent, "--set", "budget.monthly=5")
	if code != 1 || !strings.Contains(msg, `unknown setting "budget.monthly": the settable keys are`) {
		t.Fatalf("unknown key: exit %d: %s", code, msg)
	}
	msg, _ = run(t, bin, "backtest", "--help")
	for _, k := range []string{"budget.max_daily_usd", "trust_level", "permissions.blocked_tools"} {
		if !strings.Contains(msg, k) {
			t.Errorf("--help lacks %s", k)
		}
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Issue 11 item 18: a graceful stop appends a final signed checkpoint, so
// a bundle exported after a short run (far fewer events than the
// checkpoint policy's) is signed up to its last event.
func TestSIGTERMThenExportIsSignedToTheLastEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	srv, _, addr := cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	base := "http://" + addr
	ctx := context.Background()
	status, reg, err := call(ctx, http.DefaultClient, "POST", base+"/agents/register", map[string]string{"X-API-Key": "admin-key"}, map[string]any{
		"agent":       map[string]any{"name": "short-run", "type": "trusted", "principal_id": "org_short"},
		"permissions": map[string]any{},
		"budget":      map[string]any{},
	})
	if err != nil || status != 201 {
		t.Fatalf("register: %d %v %v", status, reg, err)
	}
	agent, token := reg["agent_id"].(string), reg["agent_token"].(string)
	for step := 1; step <= 3; step++ {
		status, out, err := call(ctx, http.DefaultClient, "POST", base+"/agents/"+agent+"/verify",
			map[string]string{"Authorization": "Bearer " + token, "Idempotency-Key": fmt.Sprint("s", step)}, map[string]any{
				"action":  map[string]any{"type": "calculate", "query": fmt.Sprintf("%d+1", step)},
				"context": map[string]any{"conversation_id": "c", "step_number": step},
			})
		if err != nil || status != 200 {
			t.Fatalf("verify %d: %d %v %v", step, status, out, err)
		}
	}
	cliStop(t, srv)
	bundle := filepath.Join(t.TempDir(), "bundle.json")
	if msg, code := run(t, bin, "export", "--data", data, "--agent", agent, "--format", "json", "--out", bundle); code != 0 {
		t.Fatalf("export: exit %d: %s", code, msg)
	}
	msg, code := run(t, bin, "audit", "verify", "--bundle", bundle, "--json")
	var v struct {
		OK       bool   `json:"ok"`
		Signed   uint64 `json:"signed_through_seq"`
		Unsigned int64  `json:"unsigned_events"`
	}
	if code != 0 || json.Unmarshal([]byte(msg), &v) != nil || !v.OK {
		t.Fatalf("audit verify --bundle: exit %d\n%s", code, msg)
	}
	// register + 3 decisions (+ the configuration of the first start):
	// everything before the final checkpoint is signed.
	if v.Signed < 4 || v.Unsigned != 0 {
		t.Fatalf("signed through seq %d with %d unsigned events, want every event signed\n%s", v.Signed, v.Unsigned, msg)
	}
	if msg, code := run(t, bin, "replay", "--data", data, "--verify"); code != 0 {
		t.Fatalf("replay --verify: exit %d\n%s", code, msg)
	}
}
