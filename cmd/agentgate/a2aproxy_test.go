package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// interopDir holds the A2A upstream and client written with the official
// A2A JavaScript SDK (@a2a-js/sdk, pinned by its package-lock.json).
const interopDir = "../../interop/a2a-js"

var npmOnce sync.Once

// npmCI installs the interop folder's pinned packages once per test run
// (npm ci: exactly the lockfile), unless they are installed already.
func npmCI(t *testing.T) {
	t.Helper()
	var err error
	npmOnce.Do(func() {
		if b, e := os.ReadFile(filepath.Join(interopDir, "node_modules/@a2a-js/sdk/package.json")); e == nil && strings.Contains(string(b), `"version": "1.3.0"`) {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = interopDir
		var out []byte
		if out, err = cmd.CombinedOutput(); err != nil {
			err = &npmError{err: err, out: string(out)}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

type npmError struct {
	err error
	out string
}

func (e *npmError) Error() string {
	return "npm ci in " + interopDir + ": " + e.err.Error() + "\n" + e.out
}

// a2aUpstream is the SDK's A2A server, `node upstream.mjs`.
type a2aUpstream struct {
	cmd *exec.Cmd
	url string
}

func startA2AUpstream(t *testing.T) *a2aUpstream {
	t.Helper()
	cmd := exec.Command("node", "upstream.mjs")
	cmd.Dir = interopDir
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	u := &a2aUpstream{cmd: cmd}
	t.Cleanup(u.stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("the A2A upstream did not start: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	u.url = "http://127.0.0.1:" + port
	return u
}

func (u *a2aUpstream) stop() {
	if u.cmd.ProcessState == nil {
		_ = u.cmd.Process.Signal(syscall.SIGTERM)
		_ = u.cmd.Wait()
	}
}

// received lists the messageIds the upstream was sent.
func (u *a2aUpstream) received(t *testing.T) []string {
	t.Helper()
	resp, err := http.Get(u.url + "/received")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []string
	if err := json.NewDecoder(resp.Body).Decode(&ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// sdkResult is what client.mjs prints.
type sdkResult struct {
	Reply string `json:"reply"`
	Error *struct {
		Name    string          `json:"name"`
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// sdkSend runs the SDK's client against the gate's proxy path.
func sdkSend(t *testing.T, base, key, scenario, messageID string, extra ...string) sdkResult {
	t.Helper()
	args := append([]string{"client.mjs", base, key, "procurement", scenario, messageID}, extra...)
	cmd := exec.Command("node", args...)
	cmd.Dir = interopDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client.mjs %v: %v\n%s", args, err, out)
	}
	var r sdkResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client.mjs printed %q: %v", out, err)
	}
	return r
}

// TestA2AProxy_InteropWithTheA2AJSSDK: an A2A server and client written
// with the official A2A JavaScript SDK talk through `agentgate serve
// --a2a-upstream`, in both deployments. The client discovers the gate
// from the rewritten Agent Card; a general text message is forwarded and
// answered by the upstream (also as a stream); a financial data part
// whose claimed_total is wrong comes back as a JSON-RPC error carrying the
// blocked verdict and never reaches the upstream; with the upstream
// stopped the client gets a JSON-RPC error within the gate's deadline.
func TestA2AProxy_InteropWithTheA2AJSSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, node and npm")
	}
	npmCI(t)
	bin := buildBinary(t)
	t.Run("embedded", func(t *testing.T) {
		up := startA2AUpstream(t)
		_, _, addr := cliServe(t, bin, []string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "admin-key",
			"--a2a-upstream", "treasury=" + up.url, "--a2a-upstream-timeout", "2s", "--a2a-trusted-agents", "procurement,treasury"}, nil)
		proxyInterop(t, up, "http://"+addr, "admin-key")
	})
	t.Run("kafka", func(t *testing.T) {
		up := startA2AUpstream(t)
		broker := devKafkaProcess(t, bin, filepath.Join(t.TempDir(), "broker"))
		g := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate"),
			"--a2a-upstream", "treasury="+up.url, "--a2a-upstream-timeout", "2s", "--a2a-trusted-agents", "procurement,treasury")
		proxyInterop(t, up, "http://"+g.http, killAdminKey)
	})
}

func proxyInterop(t *testing.T, up *a2aUpstream, gate, admin string) {
	t.Helper()
	base := gate + "/a2a/proxy/treasury/"

	if r := sdkSend(t, base, admin, "text", "msg-text-1"); r.Error != nil || r.Reply != "echo: Hello from the procurement agent" {
		t.Fatalf("general text: %+v", r)
	}
	if r := sdkSend(t, base, admin, "finance-ok", "msg-fin-ok"); r.Error != nil || !strings.Contains(r.Reply, `"claimed_total":150`) {
		t.Fatalf("a correct financial part: %+v", r)
	}
	if r := sdkSend(t, base, admin, "text", "msg-stream-1", "stream"); r.Error != nil || r.Reply != "echo: Hello from the procurement agent" {
		t.Fatalf("general text, streamed: %+v", r)
	}

	bad := sdkSend(t, base, admin, "finance-bad", "msg-fin-bad")
	if bad.Error == nil || bad.Error.Code != -32050 {
		t.Fatalf("a wrong total: %+v, want JSON-RPC error -32050", bad)
	}
	var v struct {
		Status      string `json:"status"`
		Reason      string `json:"reason"`
		Engine      string `json:"engine_used"`
		Attestation string `json:"attestation_jwt"`
		TraceID     string `json:"trace_id"`
	}
	if err := json.Unmarshal(bad.Error.Data, &v); err != nil {
		t.Fatalf("error data %s: %v", bad.Error.Data, err)
	}
	if v.Status != "blocked" || v.Engine != "finance_guard" || !strings.Contains(v.Reason, "claimed_total=999.99") ||
		strings.Count(v.Attestation, ".") != 2 || v.TraceID == "" {
		t.Fatalf("blocked verdict %+v", v)
	}

	if got := up.received(t); strings.Join(got, ",") != "msg-text-1,msg-fin-ok,msg-stream-1" {
		t.Fatalf("the upstream received %v: the blocked message must not be among them", got)
	}

	up.stop()
	start := time.Now()
	down := sdkSend(t, base, admin, "text", "msg-down")
	if down.Error == nil || down.Error.Code != -32052 {
		t.Fatalf("upstream stopped: %+v, want JSON-RPC error -32052", down)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the error came after %s", d)
	}
}

// TestReadmeProxyTour runs the README's proxy-mode tour as written, its
// folders replaced by fresh ones and its addresses by the free ports the
// agent and the gate bind themselves (port 0, read back from the line
// each prints): the SDK's agent (npm ci
// included), `bin/agentgate serve --a2a-upstream`, then the tour's curl,
// jq and node calls from the repository root, each step showing what its
// comment promises.
func TestReadmeProxyTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, node and npm")
	}
	bin := buildBinary(t)
	root, _ := filepath.Abs("../..")
	upAddr, gateAddr := "127.0.0.1:0", "127.0.0.1:0"
	fix := func(s string) string {
		s = strings.ReplaceAll(s, "127.0.0.1:9999", upAddr)
		s = strings.ReplaceAll(s, "upstream.mjs 9999", "upstream.mjs 0")
		s = strings.ReplaceAll(s, "127.0.0.1:8081", gateAddr)
		s = strings.ReplaceAll(s, "./data-proxy", filepath.Join(t.TempDir(), "data"))
		return strings.ReplaceAll(s, "bin/agentgate", bin)
	}
	logs := &syncBuffer{}
	agent := startReadmeProcess(t, "the agent", fix(readmeBlock(t, "Try it with an A2A agent", nil)), root, logs)
	upAddr = "127.0.0.1:" + upstreamPort(t, agent, 2*time.Minute)
	gate := startReadmeProcess(t, "the gate", fix(readmeBlock(t, "In a second one", nil)), root, logs)
	gateAddr = announcedAddr(t, gate, "the gate", time.Minute)

	script := fix(readmeBlock(t, "In a third, from the repository root", map[string]string{"GATE=": "http://127.0.0.1:8081"}))
	out, _ := runScript(t, "the README's proxy tour", script, 2*time.Minute, logs, root)
	for _, step := range []struct{ what, pattern string }{
		{"1. the card points at the gate", `"supportedInterfaces":\[\{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"http://` + gateAddr + `/a2a/proxy/treasury"\}\]`},
		{"2. the agent's answer", `(?m)^\[\{"text":"echo: Hello"\}\]$`},
		{"3. the blocked verdict", `\{"code":-32050,"status":"blocked","engine":"finance_guard","reason":"[^"]*claimed_total=999.99`},
		{"4. the SDK's client is answered", `(?m)^\{"reply":"echo: Hello from the procurement agent"\}$`},
		{"4. the SDK's client gets the verdict", `(?m)^\{"code":-32050,"status":"blocked"\}$`},
		{"5. the agent was sent the allowed messages only", `(?m)^\["tour-1","tour-3"\]$`},
	} {
		if !regexp.MustCompile(step.pattern).MatchString(out) {
			t.Errorf("step %s: no match for %s in\n%s", step.what, step.pattern, out)
		}
	}
}

// startReadmeProcess starts a README block's long-running command (npm ci
// and the like before it) from dir, its output in logs and in the buffer
// it returns, and stops it (SIGTERM) at the end of t.
func startReadmeProcess(t *testing.T, what, script, dir string, logs *syncBuffer) *syncBuffer {
	t.Helper()
	// The long-running command replaces the shell, so that SIGTERM
	// reaches it.
	script = strings.TrimSpace(script)
	if strings.Contains(script, " && node ") {
		script = strings.ReplaceAll(script, " && node ", " && exec node ")
	} else {
		script = "exec " + script
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	own := &syncBuffer{}
	cmd.Stdout = io.MultiWriter(own, logs)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	return own
}

// upstreamPort waits until out holds the line upstream.mjs prints once
// it serves ("listening PORT") and returns the port.
func upstreamPort(t *testing.T, out fmt.Stringer, d time.Duration) string {
	t.Helper()
	line := regexp.MustCompile(`(?m)^listening (\d+)$`)
	deadline := time.Now().Add(d)
	for {
		if m := line.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the A2A agent did not print its port after %s:\n%s", d, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
