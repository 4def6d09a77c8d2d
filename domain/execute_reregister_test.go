package domain

import (
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// A business deleted and registered again under the same id by another
// principal is another business: an execute decided for the first is
// never sent to the second. Approving one waiting for the consumer is
// refused QWED-EXEC-007 (it stays pending, to deny or let expire); a
// queued one expires at its release. The same owner registering its
// business again keeps it the same business.
func TestReregisteredBusinessIsAnotherBusiness(t *testing.T) {
	reregister := func(g *execGate, owner string) {
		t.Helper()
		g.business("org_1", OpDelete, Business{ID: "shop"}, "")
		g.business(owner, OpCreate, Business{ID: "shop", Name: "Shop", Categories: []string{"food"},
			Endpoint: "https://elsewhere.example/agp", Currency: "USD"}, "")
	}
	pending := func(g *execGate) string {
		t.Helper()
		g.setPolicy(spendCap("cap", 100, policy.OnExceedConfirm))
		ev := g.execute("shop", `{"amount_cents":150}`, "")
		if ev.Transaction == nil || ev.Transaction.Status != TxPendingApproval {
			t.Fatalf("over the limit with on_exceed confirm: %s %v", ev.Type, ev.Error)
		}
		if tx := g.s.Exec.Open[ev.Transaction.ID]; tx.BusinessOwner != "org_1" {
			t.Fatalf("the open transaction's business owner: %q", tx.BusinessOwner)
		}
		if ev.Transaction.BusinessOwner != "" {
			t.Fatalf("the event carries the state's business owner: %q", ev.Transaction.BusinessOwner)
		}
		return ev.Transaction.ID
	}
	approve := func(g *execGate, id string) *Event {
		return g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id, Approve: true}})
	}

	g := newExecGate(t, ExecuteModeOpen, 100)
	id := pending(g)
	reregister(g, "org_2")
	if ev := approve(g, id); ev.Type != EvCommandRejected || code(ev) != CodeExecUnknownBusiness {
		t.Fatalf("approving an execute whose business another principal registered again: %s %v", ev.Type, ev.Error)
	}
	if tx := g.s.Exec.Open[id]; tx == nil || tx.Status != TxPendingApproval {
		t.Fatalf("after the refused approval: %+v", tx)
	}

	same := newExecGate(t, ExecuteModeOpen, 100)
	id = pending(same)
	reregister(same, "org_1")
	if ev := approve(same, id); ev.Type != EvApprovalResolved || ev.Transaction == nil || ev.Transaction.Status != TxExecuting {
		t.Fatalf("approving after the owner registered its business again: %s %v", ev.Type, ev.Error)
	}

	q := newExecGate(t, ExecuteModeOpen, 100)
	at := q.now.Add(time.Hour)
	tx := q.openFor(TxQueued, &at)
	reregister(q, "org_2")
	q.now = at
	ev := q.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: "x"}})
	if ev == nil || len(ev.Timers.Expired) != 1 || len(ev.Timers.Released) != 0 || q.s.Exec.Open[tx.ID] != nil {
		t.Fatalf("the release of a queued execute whose business another principal registered again: %+v", ev)
	}
	if !(&Transaction{}).SameBusiness(&Business{Owner: "anyone"}) || (&Transaction{BusinessOwner: "a"}).SameBusiness(nil) {
		t.Fatal("SameBusiness: a transaction folded before the owner was kept accepts any owner; none is no business")
	}
}
