package embedded_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

// fillConversations decides step 1 of n new conversations of agent
// (prefix-0 … prefix-(n-1)), many at a time so the worker batches them.
func fillConversations(t *testing.T, g *gatetest.Gate, agent, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 512)
	errs := make(chan error, 1)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cmd := gatetest.Verify(agent, fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("%s-%d", prefix, i), 1, "1+1")
			ev, err := g.Worker.Submit(context.Background(), cmd)
			if err == nil && (ev.Decided == nil || ev.Decided.Decision != domain.Approved) {
				err = fmt.Errorf("conversation %s-%d: %+v", prefix, i, ev)
			}
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// Issue 11 item 10: a conversation evicted from the state (an agent at
// domain.MaxConversations opening one more) keeps its replay protection:
// its last step stays in the projections, so a step replayed in it is
// LOOP-002 — within the batch that evicted it, after it, and after a
// restart — while a later step resumes it. Replay re-decides it all.
// Before the fix, the replayed step was approved again.
func TestReplayProtectionOutlivesConversationEviction(t *testing.T) {
	if raceEnabled {
		t.Skip("10,000 conversations: the plain pass runs it; the race detector slows it tenfold")
	}
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, dir, clock.Now)
	reg := gatetest.Register("r1", 3)
	reg.Register.Budget = domain.Limits{}
	agent := g.Submit(t, reg).Registered.AgentID
	for _, conv := range []string{"old-a", "old-b"} {
		for step := 1; step <= 3; step++ {
			clock.Advance(time.Second)
			ev := g.Submit(t, gatetest.Verify(agent, fmt.Sprint(conv, step), conv, step, fmt.Sprint(step, "+", conv)))
			if ev.Decided.Decision != domain.Approved {
				t.Fatalf("%s step %d: %s", conv, step, ev.Decided.Decision)
			}
		}
	}
	// held is the agent's conversations in the state the worker loads.
	held := func() map[string]*domain.Conversation {
		t.Helper()
		st, err := g.Store.LoadState()
		if err != nil {
			t.Fatal(err)
		}
		return st.Agents[agent].Conversations
	}
	clock.Advance(time.Second)
	fillConversations(t, g, agent, "new", domain.MaxConversations-1)
	if n := len(held()); n != domain.MaxConversations {
		t.Fatalf("%d conversations held, want %d", n, domain.MaxConversations)
	}
	// Two more evict old-a and old-b, the least recently updated.
	clock.Advance(time.Second)
	fillConversations(t, g, agent, "newer", 2)
	conversations := held()
	for _, conv := range []string{"old-a", "old-b"} {
		if conversations[conv] != nil {
			t.Fatalf("%s is still held: nothing was evicted", conv)
		}
	}
	replayed := func(g *gatetest.Gate, conv string, step int, id string) {
		t.Helper()
		ev := g.Submit(t, gatetest.Verify(agent, id, conv, step, "9+9"))
		if ev.Decided.Decision != domain.Denied || ev.Decided.Error == nil || ev.Decided.Error.Code != domain.CodeReplay {
			t.Fatalf("%s step %d replayed after eviction: %s %+v, want DENIED with %s", conv, step, ev.Decided.Decision, ev.Decided.Error, domain.CodeReplay)
		}
	}
	replayed(g, "old-a", 3, "replay-a3")
	replayed(g, "old-a", 1, "replay-a1")
	// A later step resumes the conversation from its last step.
	if ev := g.Submit(t, gatetest.Verify(agent, "resume-a4", "old-a", 4, "4+4")); ev.Decided.Decision != domain.Approved {
		t.Fatalf("old-a step 4 after eviction: %s %+v", ev.Decided.Decision, ev.Decided.Error)
	}
	replayed(g, "old-a", 4, "replay-a4")

	// After a restart the state is loaded from the projections: old-b is
	// not in it, its step is read from the store.
	g.Stop(t)
	g = gatetest.Start(t, dir, clock.Now)
	defer g.Stop(t)
	replayed(g, "old-b", 2, "replay-b2")
	replayed(g, "old-a", 4, "replay-a4-again")

	rep, err := replay.Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay: %v %s %v", err, rep.ProjectionDiff, rep.Mismatches)
	}
}
