package enginehost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/code"
	"github.com/agentgate/agentgate/domain/engines/sql"
	"github.com/agentgate/agentgate/handlers/fair"
)

// The test binary is its own engine worker: with testWorkerEnv set, TestMain
// serves the real code and sql engines, the code engine behind the
// test-only triggers below (this binary only).
const testWorkerEnv = "ENGINEHOST_TEST_WORKER"

const (
	// crashQuery makes the test worker die by SIGKILL mid-call.
	crashQuery = "@@test: die"
	// hangQuery makes the test worker hang (past every deadline).
	hangQuery = "@@test: hang"
	// envQuery makes the test worker answer its AGENTGATE_ variables.
	envQuery = "@@test: env"
)

func TestMain(m *testing.M) {
	if os.Getenv(testWorkerEnv) == "1" {
		if err := Serve(os.Stdin, os.Stdout, sql.New(), triggers{code.New()}); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// triggers is the code engine with the test-only triggers.
type triggers struct{ engines.Engine }

func (t triggers) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	switch req.Query {
	case crashQuery:
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case hangQuery:
		time.Sleep(time.Hour)
	case envQuery:
		var own []string
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "AGENTGATE_") {
				own = append(own, kv)
			}
		}
		return engines.Outcome{Status: engines.Verified, Result: map[string]any{"env": own}}
	}
	return t.Engine.Verify(ctx, req)
}

// newHost starts a host of size workers on the test binary.
func newHost(t testing.TB, size int, deadline time.Duration, queue int) *Host {
	t.Helper()
	h, err := Start(Config{Command: []string{os.Args[0], "-test.run=^$"}, Env: []string{testWorkerEnv + "=1"},
		Size: size, Deadline: deadline, QueueLen: queue, Stderr: io.Discard,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("starting the host: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func codeReq(query string) engines.Request {
	return engines.Request{Query: query, Type: "code", Params: json.RawMessage(`{"language":"bash"}`)}
}

// wantCode asserts an outcome's status, code and details.reason.
func wantCode(t *testing.T, o engines.Outcome, status engines.Status, code, reason string) {
	t.Helper()
	if o.Status != status || o.Err == nil || o.Err.Code != code {
		t.Fatalf("outcome %s %+v, want %s %s", o.Status, o.Err, status, code)
	}
	if reason != "" && o.Err.Details["reason"] != reason {
		t.Fatalf("details %v, want reason %q", o.Err.Details, reason)
	}
}

// TestIsolated_SameOutcomeAsInProcess pins that an isolated engine
// answers byte for byte what the engine answers in process, for every
// status the code and sql engines give (the outcome's JSON: result,
// proof, findings, error details), the issue's crash input included.
func TestIsolated_SameOutcomeAsInProcess(t *testing.T) {
	h := newHost(t, 2, 0, 0)
	cases := []struct {
		e   engines.Engine
		req engines.Request
	}{
		{code.New(), codeReq("A({0\U0010FFFD0!}$")},
		{code.New(), codeReq("ls -la | grep \u0436 > out.txt")},
		{code.New(), engines.Request{Query: "import os; os.system('rm -rf /')", IncludeProof: true,
			Params: json.RawMessage(`{"language":"python","check_types":["security","quality"]}`)}},
		{code.New(), engines.Request{Query: "const x = require('child_process'); x.exec(y)", Params: json.RawMessage(`{"language":"js"}`)}},
		{code.New(), engines.Request{Query: "eval(\"1+1\")\nimport subprocess\n__import__('os')", IncludeProof: true}},
		{code.New(), engines.Request{Query: "print((1)"}},
		{code.New(), engines.Request{Query: "x", Params: json.RawMessage(`{"language":"cobol"}`)}},
		{code.New(), engines.Request{Query: "x", Params: json.RawMessage(`{"language":7}`)}},
		{sql.New(), engines.Request{Query: "SELECT name FROM users WHERE id = 1", IncludeProof: true}},
		{sql.New(), engines.Request{Query: "SELECT * FROM users WHERE id = 1 OR 1=1; DROP TABLE users"}},
		{sql.New(), engines.Request{Query: "SELECT nope FROM t", Params: json.RawMessage(`{"schema_ddl":"CREATE TABLE t (a INT)"}`)}},
		{sql.New(), engines.Request{Query: "SELEC 'ж"}},
		{sql.New(), engines.Request{Query: "SELECT 1", Params: json.RawMessage(`{"dialect":"mysql"}`)}},
	}
	seen := map[engines.Status]bool{}
	for _, c := range cases {
		want, err := json.Marshal(c.e.Verify(context.Background(), c.req))
		if err != nil {
			t.Fatal(err)
		}
		o := h.Isolate(c.e).Verify(context.Background(), c.req)
		got, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", c.req.Query, got, want)
		}
		seen[o.Status] = true
	}
	for _, s := range []engines.Status{engines.Verified, engines.Blocked, engines.Error, engines.Failed, engines.Unsupported} {
		if !seen[s] {
			t.Errorf("no case answered %s", s)
		}
	}
	if st := h.Stats(); st.Starts != 2 || st.Deaths != 0 || st.Calls != uint64(len(cases)) {
		t.Fatalf("stats %+v", st)
	}
}

// TestWorkerDeath_ErrorForThatCallOnly kills the worker mid-call (it
// dies by SIGKILL): that call is ERROR with QWED-ENG-002, the next one is
// answered by a fresh worker.
func TestWorkerDeath_ErrorForThatCallOnly(t *testing.T) {
	h := newHost(t, 1, 0, 0)
	e := h.Isolate(code.New())
	first := h.Stats().WorkerPID
	wantCode(t, e.Verify(context.Background(), codeReq(crashQuery)), engines.Error, "QWED-ENG-002", "worker_died")
	if o := e.Verify(context.Background(), codeReq("rm -rf /")); o.Status != engines.Blocked {
		t.Fatalf("the call after the death: %s %+v", o.Status, o.Err)
	}
	st := h.Stats()
	if st.Deaths != 1 || st.Starts != 2 || st.WorkerPID == first || st.WorkerPID == 0 {
		t.Fatalf("stats %+v (first worker %d)", st, first)
	}
}

// TestDeadline_KillsTheWorker pins the per-call deadline: a call that
// hangs is ERROR with QWED-ENG-002 (reason "deadline") at the deadline,
// its worker is killed, and the next call is answered.
func TestDeadline_KillsTheWorker(t *testing.T) {
	h := newHost(t, 1, 300*time.Millisecond, 0)
	e := h.Isolate(code.New())
	o := e.Verify(context.Background(), codeReq(hangQuery))
	wantCode(t, o, engines.Error, "QWED-ENG-002", "deadline")
	if o.Err.Details["deadline_ms"] != int64(300) {
		t.Fatalf("details %v", o.Err.Details)
	}
	if o := e.Verify(context.Background(), codeReq("echo hi")); o.Status != engines.Verified {
		t.Fatalf("the call after the kill: %s %+v", o.Status, o.Err)
	}
	if st := h.Stats(); st.Timeouts != 1 || st.Starts != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestDeath_OtherCallsGoOn runs calls on two workers while one call kills
// its worker: only that call fails.
func TestDeath_OtherCallsGoOn(t *testing.T) {
	h := newHost(t, 2, 0, 0)
	e := h.Isolate(code.New())
	var wg sync.WaitGroup
	outs := make([]engines.Outcome, 40)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := "echo " + strings.Repeat("x", i)
			if i == 17 {
				q = crashQuery
			}
			outs[i] = e.Verify(context.Background(), codeReq(q))
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if i == 17 {
			wantCode(t, o, engines.Error, "QWED-ENG-002", "worker_died")
		} else if o.Status != engines.Verified {
			t.Fatalf("call %d: %s %+v", i, o.Status, o.Err)
		}
	}
}

// TestIdleDeath_Replaced kills an idle worker from outside: the next call
// is answered by a fresh one, not failed.
func TestIdleDeath_Replaced(t *testing.T) {
	h := newHost(t, 1, 0, 0)
	e := h.Isolate(sql.New())
	pid := h.Stats().WorkerPID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The call is sent once the host has seen the death (as a call that
	// comes a while after an idle death is).
	for h.Stats().WorkerPID == pid {
		time.Sleep(time.Millisecond)
	}
	if o := e.Verify(context.Background(), engines.Request{Query: "SELECT 1"}); o.Status != engines.Verified {
		t.Fatalf("after an idle death: %s %+v", o.Status, o.Err)
	}
	if st := h.Stats(); st.Starts != 2 || st.Deaths != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestCallerGivesUp pins that a caller whose ctx ends is answered TIMEOUT
// at once, that its worker stays busy until the deadline kills it, and
// that the slot then serves the next call.
func TestCallerGivesUp(t *testing.T) {
	h := newHost(t, 1, 500*time.Millisecond, 0)
	e := h.Isolate(code.New())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	wantCode(t, e.Verify(ctx, codeReq(hangQuery)), engines.Timeout, "QWED-ENG-003", "")
	if d := time.Since(start); d >= 500*time.Millisecond {
		t.Fatalf("the caller waited %v, past the worker's deadline", d)
	}
	if o := e.Verify(context.Background(), codeReq("echo ok")); o.Status != engines.Verified {
		t.Fatalf("the next call: %s %+v", o.Status, o.Err)
	}
	if st := h.Stats(); st.Timeouts != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestQueueFull pins the bound on waiting calls: with one worker busy and
// one call waiting, a third is refused with QWED-SYS-002 at once.
func TestQueueFull(t *testing.T) {
	h := newHost(t, 1, 400*time.Millisecond, 1)
	e := h.Isolate(code.New())
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); close(started); e.Verify(context.Background(), codeReq(hangQuery)) }()
	<-started
	// Wait until the hanging call holds the worker and a second call
	// waits: the queue is then full.
	for h.queue.Running()+h.queue.Waiting() < 1 {
		time.Sleep(time.Millisecond)
	}
	go func() { defer wg.Done(); e.Verify(context.Background(), codeReq("echo 2")) }()
	for h.queue.Running()+h.queue.Waiting() < 2 {
		time.Sleep(time.Millisecond)
	}
	wantCode(t, e.Verify(context.Background(), codeReq("echo 3")), engines.Error, "QWED-SYS-002", "")
	wg.Wait()
	if st := h.Stats(); st.Refusals != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStart_RefusesAWorkerThatDoesNotSpeakTheProtocol: a command that is
// not an engine worker is an error at start, not a gate that serves.
func TestStart_RefusesAWorkerThatDoesNotSpeakTheProtocol(t *testing.T) {
	for _, cmd := range [][]string{{"true"}, {"sh", "-c", "printf '\\000\\000\\000\\002{}'; cat >/dev/null"}, {"/nonexistent/agentgate"}} {
		_, err := Start(Config{Command: cmd, Size: 1, Deadline: 5 * time.Second, Stderr: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "starting an engine worker") {
			t.Fatalf("%v: err %v", cmd, err)
		}
	}
	if _, err := Start(Config{Command: []string{"true"}, Size: MaxSize + 1}); err == nil {
		t.Fatal("a size past MaxSize was accepted")
	}
}

// TestClose_StopsTheWorkers pins that Close kills every worker and that
// later calls answer QWED-SYS-002.
func TestClose_StopsTheWorkers(t *testing.T) {
	h := newHost(t, 2, 0, 0)
	e := h.Isolate(code.New())
	var pids []int
	h.mu.Lock()
	for w := range h.live {
		pids = append(pids, w.cmd.Process.Pid)
	}
	h.mu.Unlock()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("worker %d still there after Close: %v", pid, err)
		}
	}
	wantCode(t, e.Verify(context.Background(), codeReq("echo")), engines.Error, "QWED-SYS-002", "")
}

// TestWorkerEnvironment_HasNoGateSettings pins that a worker does not
// inherit the gate's AGENTGATE_ variables (the admin key among them).
func TestWorkerEnvironment_HasNoGateSettings(t *testing.T) {
	t.Setenv("AGENTGATE_API_KEY", "secret-admin-key")
	h := newHost(t, 1, 0, 0)
	o := h.Isolate(code.New()).Verify(context.Background(), codeReq(envQuery))
	if o.Status != engines.Verified || string(o.Result.(json.RawMessage)) != `{"env":null}` {
		t.Fatalf("the worker's AGENTGATE_ variables: %s %s", o.Status, o.Result)
	}
}

// TestIsolate_PanicsOnAnEngineTheWorkersDoNotServe: a wiring error shows
// at start.
func TestIsolate_PanicsOnAnEngineTheWorkersDoNotServe(t *testing.T) {
	h := newHost(t, 1, 0, 0)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	h.Isolate(other{})
}

type other struct{}

func (other) Capabilities() engines.Capabilities { return engines.Capabilities{EngineID: "math"} }
func (other) Verify(context.Context, engines.Request) engines.Outcome {
	return engines.Outcome{}
}

// TestServe_UnknownEngineAndBadFrames drives Serve in process: an engine
// it does not serve is ERROR QWED-ENG-002, a frame past MaxFrameBytes
// ends it with an error, the end of input ends it cleanly.
func TestServe_UnknownEngineAndBadFrames(t *testing.T) {
	var in bytes.Buffer
	if err := writeFrame(&in, request{ID: 1, Engine: "math", Query: "1"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Serve(&in, &out, sql.New()); err != nil {
		t.Fatalf("serve: %v", err)
	}
	var hi hello
	var a answer
	if err := readFrame(&out, &hi); err != nil || hi.Protocol != Protocol || len(hi.Engines) != 1 || hi.Engines[0] != "sql" {
		t.Fatalf("hello %+v %v", hi, err)
	}
	if err := readFrame(&out, &a); err != nil || a.ID != 1 || a.Status != engines.Error || a.Err == nil || a.Err.Code != "QWED-ENG-002" {
		t.Fatalf("answer %+v %v", a, err)
	}
	big := []byte{0xff, 0xff, 0xff, 0xff}
	if err := Serve(bytes.NewReader(big), io.Discard, sql.New()); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("oversized frame: %v", err)
	}
	if err := Serve(bytes.NewReader([]byte{0, 0, 0, 9, '{'}), io.Discard, sql.New()); err == nil {
		t.Fatal("a truncated frame was read")
	}
}

// Issue 11 item 7: one tenant's calls do not starve another's. Tenant A
// holds the one worker with a call that hangs until the deadline and
// fills its queue (a fourth call is refused at once); tenant B's call is
// answered, not refused, as soon as A's running call ends, while A's
// queue still waits.
func TestIssue11_OneTenantsFloodDoesNotStarveAnother(t *testing.T) {
	h := newHost(t, 1, 400*time.Millisecond, 2)
	e := h.Isolate(code.New())
	ctxA := fair.WithTenant(context.Background(), fair.Tenant{Principal: "org_a", Agent: "agt_1"})
	ctxB := fair.WithTenant(context.Background(), fair.Tenant{Principal: "org_b"})
	var wg sync.WaitGroup
	for i := range 3 { // one running, two waiting
		wg.Add(1)
		go func() { defer wg.Done(); e.Verify(ctxA, codeReq(hangQuery)) }()
		for h.queue.Running()+h.queue.Waiting() < i+1 {
			runtime.Gosched()
		}
	}
	wantCode(t, e.Verify(ctxA, codeReq(hangQuery)), engines.Error, "QWED-SYS-002", "")
	o := e.Verify(ctxB, codeReq("echo ok"))
	waiting := h.queue.Waiting()
	if o.Status != engines.Verified {
		t.Fatalf("B's call during A's flood: %s %+v", o.Status, o.Err)
	}
	// A's second call runs (400 ms) once B's is done: its third still waits.
	if waiting == 0 {
		t.Fatal("B was answered after A's queue, want right after A's running call")
	}
	wg.Wait()
}

// TestQWEDProtocol_8_3_EngineInitializationFailed: when a worker dies and
// no fresh one can be started (here its binary is gone), the call answers
// ERROR with QWED-ENG-001, engine initialization failed (QWED protocol
// v1.0 §8.3), details.reason "worker_start"; once a worker can start
// again, calls are answered again.
func TestQWEDProtocol_8_3_EngineInitializationFailed(t *testing.T) {
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/worker"
	if err := os.WriteFile(path, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	h, err := Start(Config{Command: []string{path, "-test.run=^$"}, Env: []string{testWorkerEnv + "=1"},
		Size: 1, Stderr: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("starting the host: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	e := h.Isolate(code.New())
	wantCode(t, e.Verify(context.Background(), codeReq(crashQuery)), engines.Error, "QWED-ENG-002", "worker_died")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Verify(context.Background(), codeReq("rm -rf /")), engines.Error, "QWED-ENG-001", "worker_start")
	if err := os.WriteFile(path, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if o := e.Verify(context.Background(), codeReq("rm -rf /")); o.Status != engines.Blocked {
		t.Fatalf("the call after the binary is back: %s %+v", o.Status, o.Err)
	}
}

// TestStart_SlowWorkerStartIsNotACallDeadline pins that a worker's hello
// is awaited for HelloTimeout, not for the (here much shorter) call
// deadline: under load a worker took longer to exec than a 500 ms call
// deadline and the host refused to start (a CI failure of
// TestCallerGivesUp under -race).
func TestStart_SlowWorkerStartIsNotACallDeadline(t *testing.T) {
	h, err := Start(Config{Command: []string{"sh", "-c", `sleep 0.3; exec "$0" -test.run='^$'`, os.Args[0]},
		Env: []string{testWorkerEnv + "=1"}, Size: 1, Deadline: 20 * time.Millisecond, Stderr: io.Discard,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("a worker slower to start than the call deadline was refused: %v", err)
	}
	_ = h.Close()
}
