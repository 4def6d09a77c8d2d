package z3pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/handlers/fair"
)

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("the z3pool tests need z3 (apt-get install z3): %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

const simple = "(declare-const v_x Int)\n(assert (and (> v_x 5) (< v_x 7)))\n"

func TestSolveAnswersSatUnsatWithValues(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	ans, err := p.Solve(context.Background(), logic.Query{Script: simple, Values: []string{"v_x"}})
	if err != nil || ans.Status != logic.Sat || ans.Values != "((v_x 6))" {
		t.Fatalf("%+v %v", ans, err)
	}
	ans, err = p.Solve(context.Background(), logic.Query{Script: "(declare-const v_x Int)\n(assert (and (> v_x 5) (< v_x 6)))\n", Values: []string{"v_x"}})
	if err != nil || ans.Status != logic.Unsat || ans.Values != "" {
		t.Fatalf("%+v %v", ans, err)
	}
}

// TestQueriesDoNotLeakState: a declaration or assertion of one query is
// gone in the next, on the same process.
func TestQueriesDoNotLeakState(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	ctx := context.Background()
	if ans, err := p.Solve(ctx, logic.Query{Script: "(declare-const v_y Int)\n(assert (= v_y 1))\n"}); err != nil || ans.Status != logic.Sat {
		t.Fatalf("%+v %v", ans, err)
	}
	// v_y is not declared any more: z3 rejects the script.
	if _, err := p.Solve(ctx, logic.Query{Script: "(assert (= v_y 2))\n"}); err == nil || !strings.Contains(err.Error(), "unknown constant") {
		t.Fatalf("v_y leaked into the next query: %v", err)
	}
	// The same name may be declared again with another sort.
	if ans, err := p.Solve(ctx, logic.Query{Script: "(declare-const v_y Bool)\n(assert v_y)\n", Values: []string{"v_y"}}); err != nil || ans.Values != "((v_y true))" {
		t.Fatalf("%+v %v", ans, err)
	}
}

func TestSameQuerySameAnswerOnEveryProcess(t *testing.T) {
	p := newPool(t, Config{Size: 2})
	q := logic.Query{Script: `(declare-const v_s String)
(declare-const v_r Real)
(assert (str.in_re v_s (re.++ ((_ re.loop 2 2) (re.range "0" "9")) (re.+ (re.range "A" "Z")))))
(assert (> (* v_r 3.0) 1.0))
`, Values: []string{"v_r", "v_s"}}
	first, err := p.Solve(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if _, err := p.Solve(context.Background(), logic.Query{Script: fmt.Sprintf("(declare-const v_z Int)\n(assert (> v_z %d))\n", i), Values: []string{"v_z"}}); err != nil {
			t.Fatal(err)
		}
		again, err := p.Solve(context.Background(), q)
		if err != nil || again != first {
			t.Fatalf("run %d: %+v %v, first %+v", i, again, err, first)
		}
	}
}

// pigeonhole asserts that n+1 pigeons fit in n holes, one per hole: UNSAT,
// and exponential for z3's resolution.
func pigeonhole(n int) string {
	var b strings.Builder
	for i := 0; i <= n; i++ {
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, "(declare-const p%d_%d Bool)\n", i, j)
		}
	}
	for i := 0; i <= n; i++ {
		b.WriteString("(assert (or")
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, " p%d_%d", i, j)
		}
		b.WriteString("))\n")
	}
	for j := 0; j < n; j++ {
		for i := 0; i <= n; i++ {
			for k := i + 1; k <= n; k++ {
				fmt.Fprintf(&b, "(assert (not (and p%d_%d p%d_%d)))\n", i, j, k, j)
			}
		}
	}
	return b.String()
}

// hang is a query z3 works on far past the pool's deadline: it lifts the
// solver's own timeout (as a z3 that does not honour it would behave) and
// asks for the pigeonhole principle with 13 pigeons.
var hang = "(set-option :timeout 3600000)\n" + pigeonhole(12)

func TestHardDeadlineKillsAndRestarts(t *testing.T) {
	p := newPool(t, Config{Size: 1, Timeout: 100 * time.Millisecond, Grace: 200 * time.Millisecond})
	start := time.Now()
	_, err := p.Solve(context.Background(), logic.Query{Script: hang})
	if !errors.Is(err, logic.ErrSolverTimeout) {
		t.Fatalf("err %v, want ErrSolverTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the hard deadline took %v", d)
	}
	s := p.Stats()
	if s.Timeouts != 1 || s.Kills != 1 {
		t.Fatalf("stats %+v", s)
	}
	ans, err := p.Solve(context.Background(), logic.Query{Script: simple, Values: []string{"v_x"}})
	if err != nil || ans.Values != "((v_x 6))" {
		t.Fatalf("after the kill: %+v %v", ans, err)
	}
	if s := p.Stats(); s.Starts != 2 {
		t.Fatalf("stats %+v, want a restart", s)
	}
}

func TestSolverTimeoutAnswersUnknown(t *testing.T) {
	p := newPool(t, Config{Size: 1, Timeout: 100 * time.Millisecond, Grace: 5 * time.Second})
	ans, err := p.Solve(context.Background(), logic.Query{Script: pigeonhole(10)})
	if err != nil || ans.Status != logic.Unknown || (ans.Reason != "timeout" && ans.Reason != "canceled") {
		t.Fatalf("%+v %v, want unknown (timeout)", ans, err)
	}
	if s := p.Stats(); s.Kills != 0 {
		t.Fatalf("z3 answered in time but the process was killed: %+v", s)
	}
}

func TestCrashedProcessIsRestarted(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	p.mu.Lock()
	var pr *proc
	for x := range p.live {
		pr = x
	}
	p.mu.Unlock()
	if err := pr.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-pr.done
	// The query on the dead process fails; the slot is restarted for the next.
	if _, err := p.Solve(context.Background(), logic.Query{Script: simple}); err == nil {
		t.Fatal("a query on a killed process succeeded")
	}
	ans, err := p.Solve(context.Background(), logic.Query{Script: simple, Values: []string{"v_x"}})
	if err != nil || ans.Values != "((v_x 6))" {
		t.Fatalf("after the crash: %+v %v", ans, err)
	}
	if s := p.Stats(); s.Starts != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestScriptErrorIsReported(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	_, err := p.Solve(context.Background(), logic.Query{Script: "(assert (> v_nope 1))\n"})
	if err == nil || errors.Is(err, logic.ErrSolverTimeout) || errors.Is(err, logic.ErrSolverUnavailable) {
		t.Fatalf("err %v", err)
	}
	if ans, err := p.Solve(context.Background(), logic.Query{Script: simple}); err != nil || ans.Status != logic.Sat {
		t.Fatalf("after the error: %+v %v", ans, err)
	}
}

func TestConcurrentQueries(t *testing.T) {
	p := newPool(t, Config{Size: 2, QueueLen: 64})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			q := logic.Query{Script: fmt.Sprintf("(declare-const v_x Int)\n(assert (= v_x %d))\n", i), Values: []string{"v_x"}}
			ans, err := p.Solve(context.Background(), q)
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("((v_x %d))", i); ans.Values != want {
				errs <- fmt.Errorf("query %d answered %q", i, ans.Values)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFullQueueIsBusy(t *testing.T) {
	p := newPool(t, Config{Size: 1, QueueLen: 1, Timeout: 2 * time.Second, Grace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // one running, one waiting: the queue is full
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			_, _ = p.Solve(ctx, logic.Query{Script: hang})
		}()
	}
	<-started
	<-started
	deadline := time.Now().Add(5 * time.Second)
	for p.queue.Running()+p.queue.Waiting() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_, err := p.Solve(context.Background(), logic.Query{Script: simple})
	if !errors.Is(err, logic.ErrSolverBusy) {
		t.Fatalf("err %v, want ErrSolverBusy", err)
	}
	cancel()
	wg.Wait()
}

func TestCancelledContextKillsTheQuery(t *testing.T) {
	p := newPool(t, Config{Size: 1, Timeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := p.Solve(ctx, logic.Query{Script: hang})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	if ans, err := p.Solve(context.Background(), logic.Query{Script: simple}); err != nil || ans.Status != logic.Sat {
		t.Fatalf("after the cancel: %+v %v", ans, err)
	}
}

func TestCloseAndMissingZ3AreUnavailable(t *testing.T) {
	p := newPool(t, Config{Size: 2})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Solve(context.Background(), logic.Query{Script: simple}); !errors.Is(err, logic.ErrSolverUnavailable) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := New(Config{Path: "z3-not-installed-here"}); !errors.Is(err, logic.ErrSolverUnavailable) {
		t.Fatalf("missing z3: %v", err)
	}
}

// TestUnknownAtTheLimitIsATimeout pins the reason of an unknown answer
// given once the check-sat limit has passed: "timeout", even where z3 names
// the theory solver it was in when the limit struck (z3 4.8 answers
// x³+y³+z³=42 under a limit with "incomplete (theory arithmetic)" or
// "timeout", depending on where the limit finds it).
func TestUnknownAtTheLimitIsATimeout(t *testing.T) {
	for _, c := range []struct {
		reason     string
		ran, limit time.Duration
		want       string
	}{
		{"incomplete (theory arithmetic)", time.Second, time.Second, "timeout"},
		{"incomplete (theory arithmetic)", 1500 * time.Millisecond, time.Second, "timeout"},
		{"canceled", time.Second, time.Second, "timeout"},
		{"incomplete (theory arithmetic)", 20 * time.Millisecond, time.Second, "incomplete (theory arithmetic)"},
		{"incomplete (theory arithmetic)", 950 * time.Millisecond, time.Second, "timeout"},
		{"(incomplete quantifiers)", 899 * time.Millisecond, time.Second, "(incomplete quantifiers)"},
	} {
		if got := unknownReason(c.reason, c.ran, c.limit); got != c.want {
			t.Errorf("unknownReason(%q, %v, %v) = %q, want %q", c.reason, c.ran, c.limit, got, c.want)
		}
	}
	p := newPool(t, Config{Size: 1, Timeout: 200 * time.Millisecond, Grace: 5 * time.Second})
	const cubes = "(declare-const x Int)\n(declare-const y Int)\n(declare-const z Int)\n" +
		"(assert (= (+ (* x x x) (* y y y) (* z z z)) 42))\n(assert (> x 1000000))\n"
	for i := 0; i < 5; i++ {
		ans, err := p.Solve(context.Background(), logic.Query{Script: cubes})
		if err != nil || ans.Status != logic.Unknown || ans.Reason != "timeout" {
			t.Fatalf("run %d: %+v %v, want unknown (timeout)", i, ans, err)
		}
	}
}

// Issue 11 item 7: one tenant's hard queries do not starve another's.
// Tenant A has one query running and three waiting on the pool's one
// process (its queue is full: a fifth is refused at once); tenant B's
// query is answered, not refused, after at most one more of A's, not
// after A's queue. Before fair queuing B was refused (the pool's one
// queue was full) or, with room, answered after all of A's.
func TestIssue11_OneTenantsFloodDoesNotStarveAnother(t *testing.T) {
	const timeout = 400 * time.Millisecond
	p := newPool(t, Config{Size: 1, QueueLen: 3, Timeout: timeout, Grace: 5 * time.Second})
	hard := logic.Query{Script: pigeonhole(11)} // z3 answers unknown at the timeout
	ctxA := fair.WithTenant(context.Background(), fair.Tenant{Principal: "org_a", Agent: "agt_1"})
	ctxB := fair.WithTenant(context.Background(), fair.Tenant{Principal: "org_b"})
	var doneA atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, err := p.Solve(ctxA, hard)
			if err != nil || ans.Status != logic.Unknown {
				errs <- fmt.Errorf("A's query: %+v %v", ans, err)
			}
			doneA.Add(1)
		}()
		// One running, then one more waiting each time.
		for p.queue.Running()+p.queue.Waiting() < i+1 {
			runtime.Gosched()
		}
	}
	if _, err := p.Solve(ctxA, hard); !errors.Is(err, logic.ErrSolverBusy) {
		t.Fatalf("A's fifth query: %v, want ErrSolverBusy", err)
	}
	ans, err := p.Solve(ctxB, logic.Query{Script: simple, Values: []string{"v_x"}})
	finishedA := doneA.Load()
	if err != nil || ans.Status != logic.Sat {
		t.Fatalf("B's query while A's flood waits: %+v %v", ans, err)
	}
	// B ran right after A's first; A's second may have finished meanwhile
	// on a slow machine (one more timeout), never the two after it.
	if finishedA > 2 {
		t.Fatalf("B was answered after %d of A's queries, want at most 2 of 4", finishedA)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestQWEDProtocol_8_3_EngineInitializationFailed: a z3 process that must
// be replaced and cannot be (its binary is gone) makes that query's error
// wrap logic.ErrSolverInit, which the logic engine answers ERROR with
// QWED-ENG-001 (QWED protocol v1.0 §8.3, engine initialization failed);
// the slot starts a process again once it can.
func TestQWEDProtocol_8_3_EngineInitializationFailed(t *testing.T) {
	z3, err := exec.LookPath("z3")
	if err != nil {
		t.Fatalf("the z3pool tests need z3 (apt-get install z3): %v", err)
	}
	bin, err := os.ReadFile(z3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "z3")
	if err := os.WriteFile(path, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	p := newPool(t, Config{Path: path, Size: 1})
	pr := <-p.slots
	p.kill(pr)
	<-pr.done
	p.slots <- nil
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	q := logic.Query{Script: simple, Values: []string{"v_x"}}
	if _, err := p.Solve(context.Background(), q); !errors.Is(err, logic.ErrSolverInit) {
		t.Fatalf("restart without a binary: %v, want ErrSolverInit", err)
	}
	o := logic.New(p).Verify(context.Background(), engines.Request{Query: "(AND (GT x 5) (LT x 7))", Type: "logic"})
	if o.Status != engines.Error || o.Err == nil || o.Err.Code != "QWED-ENG-001" {
		t.Fatalf("logic engine: %s %+v, want ERROR QWED-ENG-001", o.Status, o.Err)
	}
	if err := os.WriteFile(path, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if ans, err := p.Solve(context.Background(), q); err != nil || ans.Status != logic.Sat {
		t.Fatalf("after the binary is back: %+v %v", ans, err)
	}
}
