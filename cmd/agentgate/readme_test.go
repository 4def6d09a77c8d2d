package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlock returns the first sh block of README.md after the line that
// starts with after (readmeFence), each line that starts with a key of set
// replaced by key+value.
func readmeBlock(t *testing.T, after string, set map[string]string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.SplitAfter(readmeFence(t, after, "sh"), "\n") {
		for k, v := range set {
			if strings.HasPrefix(line, k) {
				line = k + v + "\n"
				break
			}
		}
		out.WriteString(line)
	}
	return out.String()
}

// tourScript extracts the README's five-minute tour: the sh block after
// "In another terminal", with ADMIN and GATE set to the test's server,
// followed by the block of "A2A over HTTP", which runs in the same
// terminal.
func tourScript(t *testing.T, admin, gate string) string {
	t.Helper()
	return readmeBlock(t, "In another terminal", map[string]string{"ADMIN=": admin, "GATE=": gate}) +
		readmeBlock(t, "### A2A over HTTP", nil)
}

// tourSteps are what each step of the tour promises, as patterns of its
// output.
var tourSteps = []struct{ what, pattern string }{
	{"1. registration returns the token once", `"agent_token": "qwed_agent_`},
	{"2. a read-only SELECT by a supervised agent", `(?s)"decision": "APPROVED",\s*"verification": \{\s*"status": "VERIFIED",\s*"engine": "sql",\s*"risk_level": "low"`},
	{"3. the third identical action is LOOP-003", `"decision":"DENIED","error":\{"code":"QWED-AGENT-LOOP-003"`},
	{"3. a replayed step is LOOP-002", `"decision":"DENIED","error":\{"code":"QWED-AGENT-LOOP-002"`},
	{"4. a cost over the daily limit is 429 BUDGET-001 with reset_at", `(?s)HTTP/1.1 429 .*"decision":"BUDGET_EXCEEDED".*"code":"QWED-AGENT-BUDGET-001".*"reset_at":"`},
	{"5. the tool call is PENDING", `"decision":"PENDING"`},
	{"5. the agent reads the approval", `(?m)^"approved"$`},
	{"6. the activity summary", `"total_actions": [1-9]`},
	{"6. the budget", `"current_daily_usd": 0.1`},
	// Issue 17 item 11: the approved PENDING action is no longer pending;
	// the hourly request count is kept under the agent's hourly limit.
	{"6. no pending action once the approval is approved", `(?s)"total_actions": [1-9].*"pending": 0,`},
	{"6. the requests of the hour, counted under an hourly limit", `(?s)"requests": \{[^}]*"current_hour": [1-9]`},
	{"7. the attestation verifies offline", `(?m)^VALID`},
	// Issue 17 item 10: the report's default period is the agent's days
	// (real dates, not 1970-01-01 to 9999-12-31 or the last 30 days).
	{"8. the report covers the agent's days", `(?m)^bundle: agent agent_\S+, 20\d\d-\d\d-\d\dT00:00:00Z to 20\d\d-\d\d-\d\dT00:00:00Z, produced at seq \d+$`},
	{"8. the bundle verifies offline", `(?m)^INTACT$`},
	// Issue 13: "A2A over HTTP".
	{"A2A: the agents are trusted", `(?s)"op":"trust".*"op":"trust"`},
	{"A2A 1. the seed's financial message is forwarded by finance_guard", `(?s)"status": "forwarded",\s*"engine_used": "finance_guard",\s*"trace_id": "demo_001"`},
	{"A2A 2. claiming 999.99 is blocked with the seed's message", `\{"status":"blocked","reason":"Mathematical hallucination detected: claimed_total=999.99, computed_total=150.00"\}`},
	{"A2A 3. the verdict's attestation verifies offline", `(?m)^VALID\n\{\s*"iss":\s*"did:qwed:a2a:`},
}

// runTour runs the tour as the README says: from the repository root, in
// bash, bounded by timeout; its temporary folder (mktemp -d) is made in a
// folder of the test's. It checks what each step promises and that the
// tour wrote nothing into the repository.
func runTour(t *testing.T, script string, timeout time.Duration, logs interface{ String() string }) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out, errOut := runScript(t, "the tour", script, timeout, logs, root, "TMPDIR="+tmp)
	all := out + errOut // step 5 tees its reply to stderr
	for _, s := range tourSteps {
		if !regexp.MustCompile(s.pattern).MatchString(all) {
			t.Errorf("%s: /%s/ not in the tour's output:\n%s", s.what, s.pattern, all)
		}
	}
	// Without an hourly tool call limit no tool count is kept: none is
	// shown (it read 0 after a tool call).
	if regexp.MustCompile(`(?s)"tools": \{[^}]*"current_hour"`).MatchString(all) {
		t.Errorf("6. the budget shows tools.current_hour without a tool call limit:\n%s", all)
	}
	if _, err := os.Stat(filepath.Join(root, "agent.json")); err == nil {
		t.Error("the tour wrote agent.json into the repository")
	}
	if files, _ := filepath.Glob(filepath.Join(tmp, "*", "agent.json")); len(files) != 1 {
		t.Errorf("the tour's agent.json is not in its temporary folder: %v", files)
	}
}

// makeProcess is a make run (or run-kafka) started as a terminal would:
// its own process group, output collected.
type makeProcess struct {
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

func startMake(t *testing.T, args ...string) *makeProcess {
	t.Helper()
	mk := exec.Command("make", append([]string{"-s", "-C", "../.."}, args...)...)
	mk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	m := &makeProcess{cmd: mk, logs: &syncBuffer{}, exited: make(chan struct{})}
	mk.Stdout, mk.Stderr = m.logs, m.logs
	if err := mk.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mk.Wait(); close(m.exited) }()
	t.Cleanup(func() {
		select {
		case <-m.exited:
		default:
			_ = syscall.Kill(-mk.Process.Pid, syscall.SIGKILL)
			<-m.exited
		}
	})
	return m
}

// waitHealthy waits until the gate says where it listens (make builds the
// binary first: minutes on a cold cache) and answers /healthz there, and
// returns that address.
func (m *makeProcess) waitHealthy(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if l := gateListening.FindStringSubmatch(m.logs.String()); l != nil {
			if resp, err := http.Get("http://" + l[1] + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return l[1]
				}
			}
		}
		select {
		case <-m.exited:
			t.Fatalf("make %v exited: %v\n%s", m.cmd.Args, m.cmd.ProcessState, m.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("make %v: the gate never became healthy\n%s", m.cmd.Args, m.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gateListening is the line serve prints once it has bound its HTTP
// address.
var gateListening = regexp.MustCompile(`(?m)^agentgate listening on http://(\S+)`)

// interrupt sends Ctrl-C (SIGINT to the process group, as a terminal does)
// and expects make to end quietly: no "make: ***" line (`go run` made it
// "Error 1"), the gate stopped cleanly ("stopped" logged), and make's own
// end either status 0 or the SIGINT it re-raises on itself, which a shell
// does not report.
func (m *makeProcess) interrupt(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-m.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("make still running 30 s after Ctrl-C\n%s", m.logs)
	}
	ws, _ := m.cmd.ProcessState.Sys().(syscall.WaitStatus)
	quiet := m.cmd.ProcessState.Success() || ws.Signaled() && ws.Signal() == syscall.SIGINT
	if !quiet || strings.Contains(m.logs.String(), "make: ***") || !strings.Contains(m.logs.String(), "msg=stopped") {
		t.Fatalf("Ctrl-C: make ended with %v, want a clean stop and no error:\n%s", m.cmd.ProcessState, m.logs)
	}
}

// startMakeRun runs `make run` on a fresh data folder and HTTP=127.0.0.1:0
// (the gate binds a free port itself), waits until the gate is healthy,
// and returns it with its data folder, the address it announced and the
// admin key it printed.
func startMakeRun(t *testing.T) (mk *makeProcess, data, addr, adminKey string) {
	t.Helper()
	data = filepath.Join(t.TempDir(), "data")
	mk = startMake(t, "run", "DATA="+data, "HTTP=127.0.0.1:0")
	addr = mk.waitHealthy(t)
	m := adminKeyLine.FindStringSubmatch(mk.logs.String())
	if m == nil {
		t.Fatalf("make run printed no admin key:\n%s", mk.logs)
	}
	return mk, data, addr, m[1]
}

var adminKeyLine = regexp.MustCompile(`admin API key \(shown once, only its hash is stored in [^)]*\): (\S+)`)

// TestReadmeTour runs the README's five-minute tour as written: `make run`
// (which builds bin/agentgate and runs it; the admin key is the one it
// prints), the tour's curl, jq and agentgate calls from the repository
// root in a fresh temporary folder, each step showing what its comment
// promises; then Ctrl-C, which ends make with status 0 (issue 17 item 1:
// `go run` made it `make: *** Error 1`), and `replay --verify` as the
// README says.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tool := range []string{"bash", "curl", "jq", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README tour needs %s (.ci/run and make deps install it): %v", tool, err)
		}
	}
	mk, data, addr, admin := startMakeRun(t)

	runTour(t, tourScript(t, admin, "http://"+addr), 2*time.Minute, mk.logs)

	// "Stop the gate (Ctrl-C or SIGTERM drains in-flight requests), then
	// check the log from the repository root".
	mk.interrupt(t)
	replay := strings.ReplaceAll(readmeBlock(t, "Stop the gate", nil), "./data", data)
	root, _ := filepath.Abs("../..")
	out, _ := runScript(t, "the README's replay", replay, 2*time.Minute, mk.logs, root)
	if !strings.Contains(out, "projections: identical") || !strings.Contains(out, ": 0 differ") {
		t.Fatalf("replay --verify:\n%s", out)
	}
}
