package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// testClock is a manual clock for tests (the worker reads it once a batch).
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// runningGate is an embedded gate with its worker running.
type runningGate struct {
	*Gate
	cancel context.CancelFunc
	done   chan error
}

func startGate(t testing.TB, dir string, clock func() time.Time) *runningGate {
	t.Helper()
	g, err := OpenGate(Options{DataDir: dir, AdminKey: "admin", Clock: clock})
	if err != nil {
		t.Fatalf("opening gate: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rg := &runningGate{Gate: g, cancel: cancel, done: make(chan error, 1)}
	go func() { rg.done <- g.Worker.Run(ctx) }()
	return rg
}

func (g *runningGate) stop(t testing.TB) {
	t.Helper()
	g.cancel()
	if err := <-g.done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("closing gate: %v", err)
	}
}

func (g *runningGate) submit(t testing.TB, cmd *domain.Command) *domain.Event {
	t.Helper()
	ev, err := g.Worker.Submit(context.Background(), cmd)
	if err != nil {
		t.Fatalf("submitting %s: %v", cmd.Type, err)
	}
	return ev
}

const testToken = "qwed_agent_test-token"

func registerCmd(id string, trust int) *domain.Command {
	tl := domain.TrustLevel(trust)
	return &domain.Command{
		Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "test", ID: id},
		Register: &domain.RegisterAgent{
			Agent:      domain.AgentInfo{Name: "bot-" + id, Type: "autonomous", PrincipalID: "org_1"},
			Budget:     domain.Limits{MaxDailyCost: 100 * domain.MicrosPerUSD, MaxRequestsPerHour: 5000},
			TrustLevel: &tl,
			TokenHash:  HashSecret(testToken),
		},
	}
}

func verifyCmd(agentID, reqID, conv string, step int, query string) *domain.Command {
	return &domain.Command{
		Type: domain.CmdVerifyAction, AgentID: agentID, TokenHash: HashSecret(testToken),
		Request: domain.RequestID{Source: "test", ID: reqID},
		Verify: &domain.VerifyAction{
			Action:  domain.Action{Type: "calculate", Query: query, EstimatedCost: 10_000},
			Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(fmt.Sprint(step))},
		},
	}
}

func TestWorkerRetriedRequestGetsRecordedDecision(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g := startGate(t, t.TempDir(), clock.Now)
	defer g.stop(t)
	reg := g.submit(t, registerCmd("r1", 2))
	if reg.Registered == nil {
		t.Fatalf("registration refused: %+v", reg.Error)
	}
	agent := reg.Registered.AgentID
	first := g.submit(t, verifyCmd(agent, "v1", "c1", 1, "2+2"))
	if first.Decided == nil || first.Decided.Decision != domain.Approved {
		t.Fatalf("first decision: %+v", first)
	}
	head := g.Worker.Head().Seq
	again := g.submit(t, verifyCmd(agent, "v1", "c1", 1, "2+2"))
	if again.Seq != first.Seq || again.Decided.ActionID != first.Decided.ActionID {
		t.Fatalf("retry got event %d (%s), want the recorded %d", again.Seq, again.Decided.ActionID, first.Seq)
	}
	if g.Worker.Head().Seq != head {
		t.Fatalf("retry appended: head %d -> %d", head, g.Worker.Head().Seq)
	}
	// The same step under a new request id is a replay (seed 000 §9.2).
	replay := g.submit(t, verifyCmd(agent, "v2", "c1", 1, "2+2"))
	if replay.Decided == nil || replay.Decided.Error == nil || replay.Decided.Error.Code != domain.CodeReplay {
		t.Fatalf("replayed step: %+v", replay.Decided)
	}
}

func TestWorkerConcurrentDuplicatesInOneBatch(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g := startGate(t, t.TempDir(), clock.Now)
	defer g.stop(t)
	agent := g.submit(t, registerCmd("r1", 2)).Registered.AgentID
	var wg sync.WaitGroup
	seqs := make([]uint64, 16)
	for i := range seqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, err := g.Worker.Submit(context.Background(), verifyCmd(agent, "same", "c1", 1, "1+1"))
			if err != nil {
				t.Errorf("submit: %v", err)
				return
			}
			seqs[i] = ev.Seq
		}()
	}
	wg.Wait()
	for _, s := range seqs {
		if s != seqs[0] {
			t.Fatalf("duplicates got different events: %v", seqs)
		}
	}
	if got := g.Worker.Head().Seq; got != seqs[0] {
		t.Fatalf("head %d, want %d: a duplicate was appended", got, seqs[0])
	}
}

func TestWorkerRecoversProjectionsFromLog(t *testing.T) {
	dir := t.TempDir()
	clock := &testClock{now: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g := startGate(t, dir, clock.Now)
	agent := g.submit(t, registerCmd("r1", 2)).Registered.AgentID
	for i := 1; i <= 10; i++ {
		g.submit(t, verifyCmd(agent, fmt.Sprint("v", i), "c1", i, fmt.Sprint(i, "+1")))
	}
	g.stop(t)
	// Lose the projections entirely: start-up rebuilds them from the log.
	if err := removeAll(dir, stateDir); err != nil {
		t.Fatal(err)
	}
	g = startGate(t, dir, clock.Now)
	defer g.stop(t)
	c, err := g.Store.Conversation(agent, "c1")
	if err != nil {
		t.Fatalf("conversation after recovery: %v", err)
	}
	if c.LastStep != 10 {
		t.Fatalf("last step after recovery = %d, want 10", c.LastStep)
	}
	ev := g.submit(t, verifyCmd(agent, "v-again", "c1", 10, "x"))
	if ev.Decided.Error == nil || ev.Decided.Error.Code != domain.CodeReplay {
		t.Fatalf("step 10 after recovery: %+v, want LOOP-002", ev.Decided)
	}
	rep, err := Replay(context.Background(), g.Log, g.Store, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("replay after recovery: %+v", rep)
	}
}
