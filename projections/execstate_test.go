package projections

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// TestExecStateRoundTripsThroughTheStore pins that LoadState restores the
// consumer policy engine's state (businesses, confirmation tokens, open
// transactions, consumers) as the batches left it: each entity an event
// touched is written as the state holds it after the batch, and deleted
// once the state no longer holds it (a consumed token, a closed
// transaction, a deleted business), the consumer of a token or a
// transaction that leaves the state included.
func TestExecStateRoundTripsThroughTheStore(t *testing.T) {
	g := newTestGate(t, 100)
	exp := g.now.Add(5 * time.Minute)
	shop := &domain.Business{ID: "shop", Name: "Shop", Categories: []string{"food"}, Endpoint: "http://127.0.0.1:1/x", Currency: "USD", Owner: "alice"}
	tok := &domain.ExecutePrepared{TokenHash: hashHex("tok"), BusinessID: "shop", RequestHash: "sha256:" + hashHex("r"), Summary: "Shop: 5.00 USD", Consumer: "alice", AgentID: "bot1", ExpiresAt: exp}
	open := testTx("tx_1", "alice", "bot1", "shop", domain.TxExecuting, 500)
	// The state as the rules would leave it (Apply of these events is
	// the rules' part; the projection copies whatever the state holds).
	g.st.Exec = &domain.ExecState{
		Businesses: map[string]*domain.Business{"shop": shop},
		Tokens:     map[string]*domain.ExecutePrepared{tok.TokenHash: tok},
		Open:       map[string]*domain.Transaction{"tx_1": &open},
		Consumers:  map[string]*domain.ConsumerExec{"alice": {Tokens: 1, Pairs: map[string]bool{"bot1\x00shop": true}}},
	}
	g.add(&domain.Event{Seq: 1, Time: g.now, Type: domain.EvBusinessChanged, Business: shop})
	g.add(&domain.Event{Seq: 2, Time: g.now, Type: domain.EvExecutePrepared, Prepared: tok})
	g.txEvent(domain.EvExecuteDecided, open, nil)
	g.assertLoadStateEqual()
	b, err := g.store.Business("shop")
	if err != nil || b.Name != "Shop" {
		t.Fatalf("business: %+v, %v", b, err)
	}
	if open, err := g.store.OpenTransactions(); err != nil || len(open) != 1 || open[0].ID != "tx_1" {
		t.Fatalf("open transactions: %+v, %v", open, err)
	}

	// The token expires, the transaction completes, the business is
	// deleted: the events name what they remove, and the store drops it.
	g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvExecuteTimers, Timers: &domain.ExecuteTimers{TokensExpired: []string{tok.TokenHash}}})
	done := open
	done.Status = domain.TxCompleted
	g.st.Exec.Tokens, g.st.Exec.Open = map[string]*domain.ExecutePrepared{}, map[string]*domain.Transaction{}
	g.st.Exec.Consumers["alice"].Tokens = 0
	g.txEvent(domain.EvExecuteCompleted, done, nil)
	delete(g.st.Exec.Businesses, "shop")
	g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvBusinessChanged, Business: &domain.Business{ID: "shop"}})
	g.flush()
	got, err := g.store.LoadState()
	if err != nil {
		t.Fatal(err)
	}
	want := &domain.ExecState{Consumers: g.st.Exec.Consumers}
	if !bytes.Equal(stateJSON(t, &domain.State{Exec: got.Exec}), stateJSON(t, &domain.State{Exec: want})) {
		t.Fatalf("exec state %s, want %s", stateJSON(t, &domain.State{Exec: got.Exec}), stateJSON(t, &domain.State{Exec: want}))
	}
	if _, err := g.store.Business("shop"); err == nil {
		t.Error("a deleted business is still read")
	}
	for _, table := range []byte{tExecToken, tExecOpen, tBusiness} {
		if n := countKeys(t, g.store, table); n != 0 {
			t.Errorf("%d keys left in table %q", n, table)
		}
	}
}

// TestBusinessesListInIDOrder pages the registry.
func TestBusinessesListInIDOrder(t *testing.T) {
	g := newTestGate(t, 1)
	g.st.Exec = &domain.ExecState{Businesses: map[string]*domain.Business{}}
	ids := []string{"b", "a.z", "a", "zz", "m-1"}
	for _, id := range ids {
		b := &domain.Business{ID: id, Name: id, Endpoint: "https://" + id + ".example", Currency: "EUR"}
		g.st.Exec.Businesses[id] = b
		g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvBusinessChanged, Business: b})
	}
	var got []string
	after := ""
	for {
		page, next, err := g.store.Businesses(after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page {
			got = append(got, b.ID)
		}
		if next == "" {
			break
		}
		after = next
	}
	if want := []string{"a", "a.z", "b", "m-1", "zz"}; !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

// TestExecutesRoundTripThroughTheStore folds the rules' own events
// (domain.Decide: a business, executes, the business's outcome, an
// execute approval opened and approved) in batches of several sizes: the
// state LoadState restores is the worker's, the execute approval is on
// the approvals queue (the principal's list), and the transaction
// history holds each transaction with its last status.
func TestExecutesRoundTripThroughTheStore(t *testing.T) {
	for _, batch := range []int{1, 5, 100} {
		g := newTestGate(t, batch)
		agent := g.register("bot", 1, domain.Limits{})
		ev := g.do(&domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Request: domain.RequestID{Source: "test", ID: "shop"},
			Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "shop", Name: "Shop", Categories: []string{"food"},
				Endpoint: "http://127.0.0.1:9/shop", Currency: "USD"}}})
		if ev.Type != domain.EvBusinessChanged {
			t.Fatalf("business: %+v", ev.Error)
		}
		var ids []string
		for i := range 3 {
			body := []byte(`{"amount_cents":` + string(rune('1'+i)) + `00}`)
			h, err := domain.RequestHashOf(body)
			if err != nil {
				t.Fatal(err)
			}
			ev := g.do(&domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: testTokenHash, Request: domain.RequestID{Source: "test", ID: "x" + string(rune('a'+i))},
				Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: body, RequestHash: h}})
			if ev.Type != domain.EvExecuteDecided {
				t.Fatalf("execute: %s %+v", ev.Type, ev.Error)
			}
			ids = append(ids, ev.Transaction.ID)
		}
		out := g.do(&domain.Command{Type: domain.CmdExecuteOutcome, Request: domain.RequestID{Source: "agentgate/adapter", ID: ids[0]},
			Outcome: &domain.ExecuteOutcome{TransactionID: ids[0], HTTPStatus: 200, Status: "ok"}})
		if out.Type != domain.EvExecuteCompleted {
			t.Fatalf("outcome: %s %+v", out.Type, out.Error)
		}
		// A transaction pending approval, as the policy step decides one.
		pa := testTx("tx_pending", "org_1", agent, "shop", domain.TxPendingApproval, 5000, "food")
		pa.ApprovalID, pa.CreatedAt = "tx_pending", g.now
		g.txEvent(domain.EvExecuteDecided, pa, nil)
		g.assertLoadStateEqual()
		ap, err := g.store.Approval("tx_pending")
		if err != nil || ap.Kind != domain.ApprovalKindExecute || ap.Status != domain.ApprovalPending {
			t.Fatalf("the execute approval: %+v, %v", ap, err)
		}
		if list, _, err := g.store.Approvals("org_1", domain.ApprovalPending, "", 10, 0); err != nil || len(list) != 1 {
			t.Fatalf("org_1's pending approvals: %+v, %v", list, err)
		}
		res := g.do(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "approve"},
			Resolve: &domain.ResolveApproval{ApprovalID: "tx_pending", Approve: true}})
		if res.Type != domain.EvApprovalResolved {
			t.Fatalf("approving: %s %+v", res.Type, res.Error)
		}
		g.assertLoadStateEqual()
		want := map[string]string{ids[0]: domain.TxCompleted, ids[1]: domain.TxExecuting, "tx_pending": domain.TxExecuting}
		for id, st := range want {
			if tx := mustTx(t, g.store, "org_1", id); tx.Status != st {
				t.Errorf("batch %d: %s is %s, want %s", batch, id, tx.Status, st)
			}
		}
		if ap, err := g.store.Approval("tx_pending"); err != nil || ap.Status != domain.ApprovalApproved {
			t.Fatalf("the approved execute approval: %+v, %v", ap, err)
		}
	}
}
