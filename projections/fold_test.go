package projections

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// TestRandomBatchesKeepOpenActionsExact folds random sequences of
// decisions, executions (of open, closed, refused and unknown actions),
// approvals resolved either way, expiries and restarts, cut into random
// batches, into a store with activities and one without (whose open-action
// keys come from the Fold alone): after every batch the store holds
// exactly one entry per open action and LoadState equals the folded state.
func TestRandomBatchesKeepOpenActionsExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"activity", Options{}}, {"no-activity", Options{NoActivity: true, NoSnapshots: true}}} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprint(tc.name, "/seed", seed), func(t *testing.T) { randomFolds(t, tc.o, seed) })
		}
	}
}

func randomFolds(t *testing.T, o Options, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x0f01d))
	g := newTestGateWith(t, 1<<20, o) // batches end where the test flushes
	auto := g.register("auto", 3, domain.Limits{})
	sup := g.register("sup", 1, domain.Limits{})
	var actions, approvals []string
	steps := map[string]int{}
	check := func() {
		t.Helper()
		g.assertLoadStateEqual()
		open := 0
		for _, a := range g.st.Agents {
			open += len(a.OpenActions)
		}
		if n := countKeys(t, g.store, tOpen); n != open {
			t.Fatalf("%d open-action entries stored, %d actions open", n, open)
		}
	}
	for i := range 600 {
		req := domain.RequestID{Source: "rnd", ID: fmt.Sprint(i)}
		switch p := r.IntN(100); {
		case p < 45:
			conv := fmt.Sprint("c", r.IntN(4))
			steps[conv]++
			ev := g.verify(auto, req.ID, conv, steps[conv], calc(fmt.Sprint(r.IntN(50), "+1"), 1000))
			actions = append(actions, ev.Decided.ActionID)
		case p < 60:
			conv := fmt.Sprint("s", r.IntN(2))
			steps[conv]++
			ev := g.verify(sup, req.ID, conv, steps[conv], domain.Action{Type: "send_email", Target: fmt.Sprint("u", i), EstimatedCost: 2000})
			actions = append(actions, ev.Decided.ActionID)
			if ev.Decided.Approval != nil {
				approvals = append(approvals, ev.Decided.Approval.ID)
			}
		case p < 78 && len(actions) > 0:
			id := actions[r.IntN(len(actions))]
			agent := auto
			if r.IntN(2) == 0 {
				agent = sup
			}
			if r.IntN(10) == 0 {
				id = fmt.Sprint("act_unknown_", i)
			}
			g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: agent, TokenHash: testTokenHash, Request: req,
				Execution: &domain.LogExecution{ActionID: id, Success: r.IntN(4) > 0, CostUSD: domain.USD(r.IntN(5000))}})
		case p < 90 && len(approvals) > 0:
			g.do(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1", Request: req,
				Resolve: &domain.ResolveApproval{ApprovalID: approvals[r.IntN(len(approvals))], Approve: r.IntN(2) == 0}})
		case p < 94:
			g.now = g.now.Add(time.Duration(r.IntN(30)) * time.Hour)
			g.do(&domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}})
		case p < 96:
			// A restart: the state is what the store holds.
			check()
			st, err := g.store.LoadState()
			if err != nil {
				t.Fatal(err)
			}
			g.st = st
		default:
			check()
		}
		g.now = g.now.Add(time.Duration(r.IntN(90)) * time.Second)
	}
	check()
	if countKeys(t, g.store, tOpen) == 0 {
		t.Fatal("no action open at the end: the sequence exercised nothing")
	}
}
