package embedded_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

func TestWorkerRetriedRequestGetsRecordedDecision(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	defer g.Stop(t)
	reg := g.Submit(t, gatetest.Register("r1", 2))
	if reg.Registered == nil {
		t.Fatalf("registration refused: %+v", reg.Error)
	}
	agent := reg.Registered.AgentID
	first := g.Submit(t, gatetest.Verify(agent, "v1", "c1", 1, "2+2"))
	if first.Decided == nil || first.Decided.Decision != domain.Approved {
		t.Fatalf("first decision: %+v", first)
	}
	head := g.Worker.Head().Seq
	again := g.Submit(t, gatetest.Verify(agent, "v1", "c1", 1, "2+2"))
	if again.Seq != first.Seq || again.Decided.ActionID != first.Decided.ActionID {
		t.Fatalf("retry got event %d (%s), want the recorded %d", again.Seq, again.Decided.ActionID, first.Seq)
	}
	if g.Worker.Head().Seq != head {
		t.Fatalf("retry appended: head %d -> %d", head, g.Worker.Head().Seq)
	}
	// The same step under a new request id is a replay (QWED-Agent spec v1.1 §9.2).
	replay := g.Submit(t, gatetest.Verify(agent, "v2", "c1", 1, "2+2"))
	if replay.Decided == nil || replay.Decided.Error == nil || replay.Decided.Error.Code != domain.CodeReplay {
		t.Fatalf("replayed step: %+v", replay.Decided)
	}
}

func TestWorkerConcurrentDuplicatesInOneBatch(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	defer g.Stop(t)
	agent := g.Submit(t, gatetest.Register("r1", 2)).Registered.AgentID
	var wg sync.WaitGroup
	seqs := make([]uint64, 16)
	for i := range seqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, err := g.Worker.Submit(context.Background(), gatetest.Verify(agent, "same", "c1", 1, "1+1"))
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
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, dir, clock.Now)
	agent := g.Submit(t, gatetest.Register("r1", 2)).Registered.AgentID
	for i := 1; i <= 10; i++ {
		g.Submit(t, gatetest.Verify(agent, fmt.Sprint("v", i), "c1", i, fmt.Sprint(i, "+1")))
	}
	g.Stop(t)
	// Lose the projections entirely: start-up rebuilds them from the log.
	if err := removeAll(dir, "state"); err != nil {
		t.Fatal(err)
	}
	g = gatetest.Start(t, dir, clock.Now)
	defer g.Stop(t)
	c, err := g.Store.Conversation(agent, "c1")
	if err != nil {
		t.Fatalf("conversation after recovery: %v", err)
	}
	if c.LastStep != 10 {
		t.Fatalf("last step after recovery = %d, want 10", c.LastStep)
	}
	ev := g.Submit(t, gatetest.Verify(agent, "v-again", "c1", 10, "x"))
	if ev.Decided.Error == nil || ev.Decided.Error.Code != domain.CodeReplay {
		t.Fatalf("step 10 after recovery: %+v, want LOOP-002", ev.Decided)
	}
	rep, err := replay.Replay(context.Background(), g.Log, g.Store, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("replay after recovery: %+v", rep)
	}
}

// TestGateKeepsItsNodeID pins the embedded call site of attest.NodeID: a
// restarted gate signs as the node it was, the one export reads.
func TestGateKeepsItsNodeID(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, dir, clock.Now)
	first := g.NodeID
	g.Stop(t)
	g = gatetest.Start(t, dir, clock.Now)
	defer g.Stop(t)
	read, err := attest.ReadNodeID(dir)
	if first == "" || g.NodeID != first || err != nil || read != first {
		t.Fatalf("node ids %q then %q, recorded %q (%v)", first, g.NodeID, read, err)
	}
}
