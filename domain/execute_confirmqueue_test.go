package domain

import (
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// An execute that needs the consumer's confirmation and also falls
// outside a queueing time window (the Agent Policy Engine spec §3.1:
// "queue actions until the window opens") is pending approval, and once
// approved it waits for the window: the approval's transaction is
// queued, the tick releases it when the window opens. Approved after the
// window opened, it executes at once.
func TestSeed004_3_1_ApprovedExecuteWaitsForItsWindow(t *testing.T) {
	setup := func() (*execGate, *Event) {
		g := newExecGate(t, ExecuteModeOpen, 100) // t0 is Monday 09:00 UTC
		g.setPolicy(spendCap("cap", 100, policy.OnExceedConfirm))
		g.setPolicy(policy.Policy{ID: "office-hours", Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{TimeZone: "UTC",
			Windows: []policy.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "10:00", End: "17:00"}}, Outside: policy.OutsideQueue}})
		ev := g.execute("shop", `{"amount_cents":150}`, "")
		if ev.Transaction == nil || ev.Transaction.Status != TxPendingApproval || ev.Transaction.ReleaseAt == nil ||
			!ev.Transaction.ReleaseAt.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) {
			t.Fatalf("confirm outside the window: %s %v %+v", ev.Type, ev.Error, ev.Transaction)
		}
		return g, ev
	}
	approve := func(g *execGate, id string) *Event {
		return g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id, Approve: true}})
	}
	tick := func(g *execGate) *Event {
		return g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: g.now.String()}})
	}

	g, ev := setup()
	id := ev.Transaction.ID
	g.now = g.now.Add(10 * time.Minute)
	ap := approve(g, id)
	if ap.Type != EvApprovalResolved || ap.Transaction == nil || ap.Transaction.Status != TxQueued {
		t.Fatalf("approved before the window opens: %s %v %+v", ap.Type, ap.Error, ap.Transaction)
	}
	if tx := g.s.Exec.Open[id]; tx == nil || tx.Status != TxQueued {
		t.Fatalf("the state after the approval: %+v", tx)
	}
	if ev := tick(g); ev != nil {
		t.Fatalf("a tick before the window released it: %+v", ev.Timers)
	}
	g.now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	rel := tick(g)
	if rel == nil || len(rel.Timers.Released) != 1 || rel.Timers.Released[0] != id || g.s.Exec.Open[id].Status != TxExecuting {
		t.Fatalf("the tick at the window's opening: %+v", rel)
	}
	if ev := g.outcome(ExecuteOutcome{TransactionID: id, Status: "ok"}); ev.Type != EvExecuteCompleted {
		t.Fatalf("the outcome after the release: %v", ev.Error)
	}

	late, ev := setup()
	late.now = time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)
	if ap := approve(late, ev.Transaction.ID); ap.Transaction == nil || ap.Transaction.Status != TxExecuting {
		t.Fatalf("approved once the window is open: %+v", ap.Transaction)
	}
}
