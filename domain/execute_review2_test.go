package domain

import (
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/domain/policy"
)

// TestReview2_ApprovingAnExecuteOfADeletedBusiness: an execute waiting for
// the consumer's approval whose business then left the registry does not
// become executing on approval (there is no endpoint to call; executes at
// it are refused the same way): the approval is refused QWED-EXEC-007
// "Unknown business" and stays pending, and denying it closes the
// transaction. A queued one expires at its release (executeTick).
func TestReview2_ApprovingAnExecuteOfADeletedBusiness(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	g.setPolicy(spendCap("cap", 100, policy.OnExceedConfirm))
	ev := g.execute("shop", `{"amount_cents":150}`, "")
	if ev.Transaction.Status != TxPendingApproval {
		t.Fatalf("over the limit with on_exceed confirm: %+v", ev.Transaction)
	}
	id := ev.Transaction.ID
	g.business("org_1", OpDelete, Business{ID: "shop"}, "")
	approve := g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id, Approve: true}})
	if approve.Type != EvCommandRejected || code(approve) != CodeExecUnknownBusiness {
		t.Fatalf("approving an execute of a deleted business: %s %v %+v", approve.Type, approve.Error, approve.Transaction)
	}
	if tx := g.s.Exec.Open[id]; tx == nil || tx.Status != TxPendingApproval || g.s.Approvals[id].Status != ApprovalPending {
		t.Fatalf("after the refused approval: %+v", g.s.Exec.Open[id])
	}
	deny := g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id}})
	if deny.Type != EvApprovalResolved || deny.Transaction == nil || deny.Transaction.Status != TxDenied {
		t.Fatalf("deny: %s %v %+v", deny.Type, deny.Error, deny.Transaction)
	}
	if _, open := g.s.Exec.Open[id]; open {
		t.Fatal("a denied transaction is open")
	}
}

// TestReview2_OnePrincipalCannotFillTheRegistry: the business registry is
// shared by every tenant, so one principal's key owns at most
// MaxBusinessesPerOwner of it; past that its creates are refused while
// another principal (and the admin) can still register, and a deleted
// business frees its owner's slot.
func TestReview2_OnePrincipalCannotFillTheRegistry(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	biz := func(id string) Business {
		return Business{ID: id, Name: "B", Endpoint: "https://b.example/agp", Currency: "USD"}
	}
	for i := 1; i < MaxBusinessesPerOwner; i++ { // org_1 already owns "shop"
		g.business("org_1", OpCreate, biz(fmt.Sprintf("b%d", i)), "")
	}
	g.business("org_1", OpCreate, biz("one-too-many"), CodeInvalidRequest)
	g.business("org_2", OpCreate, biz("other-tenant"), "")
	g.business(AdminPrincipal, OpCreate, biz("admins"), "")
	g.business("org_1", OpDelete, biz("b1"), "")
	g.business("org_1", OpCreate, biz("one-too-many"), "")
}
