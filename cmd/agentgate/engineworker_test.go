package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashBodies are issue 11's request, which killed the gate with SIGSEGV
// (tree-sitter-bash's scanner on U+10FFFD after "{0"): the code point as
// raw UTF-8 and as a JSON \u escape (a surrogate pair).
var crashBodies = []struct{ name, body string }{
	{"raw UTF-8", `{"query":"A({0` + "\U0010FFFD" + `0!}$","type":"code","params":{"language":"bash"}}`},
	{"\\u escape", `{"query":"A({0\udbff\udffd0!}$","type":"code","params":{"language":"bash"}}`},
}

// postRaw posts body as is and decodes the JSON answer.
func postRaw(t *testing.T, url string, hdr map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (did the gate die?)", url, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: %d, decoding: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// alive fails the test unless pid is a live process (not a zombie) that
// answers /healthz.
func alive(t *testing.T, pid int, base string) {
	t.Helper()
	if st := procState(pid); st == "" || st == "Z" {
		t.Fatalf("the gate (pid %d) is gone (state %q)", pid, st)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("the gate does not answer /healthz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
}

// procState is a process's state letter from /proc ("" when there is no
// such process).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, rest, _ := bytes.Cut(b, []byte(") ")) // after "pid (comm) "
	st, _, _ := bytes.Cut(rest, []byte(" "))
	return string(st)
}

// workerPIDs are the live engine workers of the gate pid: its children
// whose command line is `… engine-worker`.
func workerPIDs(t *testing.T, gate int) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		_, rest, _ := bytes.Cut(b, []byte(") "))
		f := strings.Fields(string(rest))
		if len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(gate) {
			continue
		}
		if cmdline, _ := os.ReadFile(d + "/cmdline"); bytes.HasSuffix(cmdline, []byte("engine-worker\x00")) {
			out = append(out, pid)
		}
	}
	return out
}

// oneWorker waits until the gate has exactly one engine worker other
// than not, and returns its pid.
func oneWorker(t *testing.T, gate, not int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ws := workerPIDs(t, gate)
		if len(ws) == 1 && ws[0] != not {
			return ws[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gate's engine workers: %v, want one other than %d", ws, not)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// verifyCode posts a bash snippet to /verify and returns the answer.
func verifyCode(t *testing.T, base, admin, code string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"query": code, "type": "code", "params": map[string]string{"language": "bash"}})
	_, out := postRaw(t, base+"/verify", map[string]string{"X-API-Key": admin}, string(b))
	return out
}

func errorOf(out map[string]any) (code, reason string) {
	e, _ := out["error"].(map[string]any)
	code, _ = e["code"].(string)
	d, _ := e["details"].(map[string]any)
	reason, _ = d["reason"].(string)
	return code, reason
}

// checkEngineIsolation runs issue 11's crash request against a served
// gate (pid, base URL, admin key, started with --engine-workers 1 and
// --engine-deadline 2s): over POST /verify and as an execute_code action,
// in both encodings, the gate stays up and analyses it. Then its one
// engine worker is frozen (SIGSTOP): that call is ERROR QWED-ENG-002 at
// the deadline and the next is answered by a fresh worker; and a worker
// killed while idle is replaced without failing a call.
func checkEngineIsolation(t *testing.T, gate int, base, admin string) {
	t.Helper()
	for _, c := range crashBodies {
		_, out := postRaw(t, base+"/verify", map[string]string{"X-API-Key": admin}, c.body)
		if code, _ := errorOf(out); out["status"] != "ERROR" || code != "QWED-REQ-003" {
			t.Fatalf("POST /verify with the crash input (%s): %v, want ERROR with the syntax error QWED-REQ-003", c.name, out)
		}
		alive(t, gate, base)
	}

	reg, _ := json.Marshal(map[string]any{"agent": map[string]string{"name": "crash", "type": "autonomous", "principal_id": "org_crash"},
		"permissions": map[string]any{}, "budget": map[string]any{}})
	st, ag := postRaw(t, base+"/agents/register", map[string]string{"X-API-Key": admin}, string(reg))
	id, _ := ag["agent_id"].(string)
	token, _ := ag["agent_token"].(string)
	if st != 201 || id == "" || token == "" {
		t.Fatalf("register: %d %v", st, ag)
	}
	for i, c := range []struct{ name, code string }{{"raw UTF-8", "A({0\U0010FFFD0!}$"}, {"\\u escape", `A({0\udbff\udffd0!}$`}} {
		step := i + 1
		body := `{"action":{"type":"execute_code","code":"` + c.code + `","parameters":{"language":"bash"}},` +
			`"context":{"conversation_id":"crash","step_number":` + strconv.Itoa(step) + `}}`
		_, out := postRaw(t, base+"/agents/"+id+"/verify", map[string]string{"Authorization": "Bearer " + token}, body)
		v, _ := out["verification"].(map[string]any)
		passed, _ := v["checks_passed"].([]any)
		if out["decision"] == nil || v["engine"] != "code" || slices.Contains(passed, any("engine_verified")) {
			t.Fatalf("execute_code with the crash input (%s): %v, want a decision on the code engine's unverified answer", c.name, out)
		}
		alive(t, gate, base)
	}

	// A worker that stops answering: ERROR for that call, then a fresh one.
	frozen := oneWorker(t, gate, 0)
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", frozen)); err != nil || !bytes.Contains(env, []byte("\x00GOGC=100\x00")) {
		t.Fatalf("the worker's environment does not set Go's default collector target: %q %v", env, err)
	}
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	out := verifyCode(t, base, admin, "echo hi")
	if code, reason := errorOf(out); out["status"] != "ERROR" || code != "QWED-ENG-002" || reason != "deadline" {
		t.Fatalf("a call to a frozen worker: %v, want ERROR QWED-ENG-002 (deadline)", out)
	}
	if out := verifyCode(t, base, admin, "rm -rf /"); out["status"] != "BLOCKED" {
		t.Fatalf("the call after the frozen worker was killed: %v", out)
	}
	fresh := oneWorker(t, gate, frozen)
	if procState(frozen) != "" {
		t.Fatalf("the frozen worker %d is still there (state %s)", frozen, procState(frozen))
	}
	alive(t, gate, base)

	// A worker killed while idle: replaced before the next call is sent.
	if err := syscall.Kill(fresh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Until the gate has reaped it: a worker still exiting holds its end of
	// the pipe, so a call written to it then is a call during which the
	// worker died (ERROR), not one to a worker that ended while idle.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", fresh)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed worker %d was never reaped (state %q)", fresh, procState(fresh))
		}
	}
	if out := verifyCode(t, base, admin, "ls | wc -l"); out["status"] != "VERIFIED" {
		t.Fatalf("the call after an idle worker was killed: %v", out)
	}
	oneWorker(t, gate, fresh)
	alive(t, gate, base)
}

// TestEngineWorkers_CrashInputAndDeadWorkers is issue 11 item 1 on the
// embedded gate (see checkEngineIsolation); a stop ends the workers too.
func TestEngineWorkers_CrashInputAndDeadWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	cmd, logs, addr := cliServe(t, bin, []string{"--data", filepath.Join(t.TempDir(), "data"), "--http", "127.0.0.1:0",
		"--api-key", "admin-key", "--engine-workers", "1", "--engine-deadline", "2s", "--z3-procs", "1"}, nil)
	checkEngineIsolation(t, cmd.Process.Pid, "http://"+addr, "admin-key")
	workers := workerPIDs(t, cmd.Process.Pid)
	cliStop(t, cmd)
	for _, w := range workers {
		if st := procState(w); st != "" {
			t.Fatalf("engine worker %d outlived the gate (state %s)", w, st)
		}
	}
	if l := logs.String(); !strings.Contains(l, "killed a worker past its deadline") || !strings.Contains(l, "a worker ended while idle") {
		t.Fatalf("the gate's log does not report the worker kills:\n%s", l)
	}
}

// TestEngineWorkers_Kafka is the same on `serve --kafka-brokers`, whose
// wiring is its own: the crash input over HTTP (recorded through Kafka)
// and as an execute_code action decided by a partition worker, and the
// engine workers' deadline and restart.
func TestEngineWorkers_Kafka(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	broker := devKafkaProcess(t, bin, filepath.Join(t.TempDir(), "broker"))
	g := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate"), "--engine-workers", "1", "--engine-deadline", "2s")
	g.waitServesAll(t)
	checkEngineIsolation(t, g.cmd.Process.Pid, "http://"+g.http, killAdminKey)
}
