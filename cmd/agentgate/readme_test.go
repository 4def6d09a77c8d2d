package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tourScript extracts the README's five-minute tour: the sh block after
// "In another terminal", with ADMIN and GATE set to the test's server.
func tourScript(t *testing.T, readme, admin, gate string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	state := 0 // 0: before the tour, 1: before its block, 2: in the block
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(line, "In another terminal"):
			state = 1
		case state == 1 && line == "```sh":
			state = 2
		case state == 2 && line == "```":
			return out.String()
		case state == 2 && strings.HasPrefix(line, "ADMIN="):
			out.WriteString("ADMIN=" + admin + "\n")
		case state == 2 && strings.HasPrefix(line, "GATE="):
			out.WriteString("GATE=" + gate + "\n")
		case state == 2:
			out.WriteString(line + "\n")
		}
	}
	t.Fatal("README.md has no tour block after \"In another terminal\"")
	return ""
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
	{"7. the attestation verifies offline", `(?m)^VALID`},
}

// checkTour checks that the tour's output shows what each step promises.
func checkTour(t *testing.T, out string) {
	t.Helper()
	for _, s := range tourSteps {
		if !regexp.MustCompile(s.pattern).MatchString(out) {
			t.Errorf("%s: /%s/ not in the tour's output:\n%s", s.what, s.pattern, out)
		}
	}
}

// TestReadmeTour runs the README's five-minute tour as written (curl and
// jq against the real binary) and checks that each step shows what its
// comment promises; then SIGTERM and `replay --verify` as the README says.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README tour needs %s (.ci/run and make deps install it): %v", tool, err)
		}
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	srv := startServer(t, bin, data, addr)
	defer srv.cmd.Process.Kill()

	// `go run ./cmd/agentgate` in the tour runs from the repository root;
	// here the tour runs in a scratch directory (it writes agent.json), so
	// the command is the binary just built.
	script := strings.ReplaceAll(tourScript(t, "../../README.md", "admin-key", "http://"+addr), "go run ./cmd/agentgate", "agentgate")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the tour failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	checkTour(t, stdout.String()+stderr.String()) // step 5 tees its reply to stderr

	// "Stop the gate (Ctrl-C or SIGTERM drains in-flight requests), then
	// check the log".
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("SIGTERM: the gate exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("SIGTERM: the gate did not stop")
	}
	rep, err := exec.Command(bin, "replay", "--data", data, "--verify").CombinedOutput()
	if err != nil || !strings.Contains(string(rep), "projections: identical") {
		t.Fatalf("replay --verify: %v\n%s", err, rep)
	}
}
