package projections

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// txEvent is an event carrying transaction tx (as core records them).
func (g *testGate) txEvent(typ domain.EventType, tx domain.Transaction, e *domain.Error) *domain.Event {
	g.t.Helper()
	g.now = g.now.Add(time.Second)
	ev := &domain.Event{Seq: g.seq + 1, Time: g.now, Type: typ, AgentID: tx.AgentID, Transaction: &tx, Error: e}
	g.add(ev)
	return ev
}

func testTx(id, consumer, agent, business, status string, cents int64, cats ...string) domain.Transaction {
	return domain.Transaction{ID: id, Consumer: consumer, AgentID: agent, BusinessID: business, Categories: cats,
		AmountCents: cents, Currency: "USD", RequestHash: "sha256:" + hashHex(id), Status: status}
}

func mustTx(t *testing.T, s *Store, consumer, id string) Transaction {
	t.Helper()
	tx, err := s.Transaction(consumer, id)
	if err != nil {
		t.Fatalf("reading %s of %s: %v", id, consumer, err)
	}
	return tx
}

// TestTransactionHistoryFollowsEveryEvent pins how each event of a
// transaction moves its status in the read side: the business's outcome,
// an execute approval approved, denied or expired, a queued transaction
// released or expired by the timers, a blocked one with its refusal. A
// transaction is its consumer's: another consumer reads none of it.
func TestTransactionHistoryFollowsEveryEvent(t *testing.T) {
	for _, batch := range []int{1, 4, 100} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			g := newTestGate(t, batch)
			created := g.now.Add(time.Second)
			g.txEvent(domain.EvExecuteDecided, testTx("tx_a", "alice", "bot1", "shop", domain.TxExecuting, 500, "food"), nil)
			done := testTx("tx_a", "alice", "bot1", "shop", domain.TxCompleted, 500, "food")
			done.BusinessStatus, done.Data = "ok", []byte(`{"order":1}`)
			g.txEvent(domain.EvExecuteCompleted, done, nil)

			for _, id := range []string{"tx_b", "tx_c", "tx_d"} {
				p := testTx(id, "alice", "bot1", "shop", domain.TxPendingApproval, 900)
				p.ApprovalID = "ap_" + id
				g.txEvent(domain.EvExecuteDecided, p, nil)
			}
			g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvApprovalResolved, Resolved: &domain.ApprovalResolved{
				Approval: domain.Approval{ID: "ap_tx_b", Kind: domain.ApprovalKindExecute, Status: domain.ApprovalApproved, TransactionID: "tx_b"}}})
			g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvApprovalResolved, Resolved: &domain.ApprovalResolved{
				Approval: domain.Approval{ID: "ap_tx_c", Kind: domain.ApprovalKindExecute, Status: domain.ApprovalDenied, TransactionID: "tx_c"}}})
			g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvApprovalsExpired, Expired: &domain.ApprovalsExpired{
				Approvals: []domain.ApprovalResolved{{Approval: domain.Approval{ID: "ap_tx_d", Kind: domain.ApprovalKindExecute, Status: domain.ApprovalExpired, TransactionID: "tx_d"}}}}})

			g.txEvent(domain.EvExecuteDecided, testTx("tx_e", "alice", "bot2", "bar", domain.TxQueued, 100), nil)
			g.txEvent(domain.EvExecuteDecided, testTx("tx_f", "alice", "bot2", "bar", domain.TxQueued, 100), nil)
			g.add(&domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvExecuteTimers, Timers: &domain.ExecuteTimers{Released: []string{"tx_e"}, Expired: []string{"tx_f"}}})

			blocked := domain.Error{Code: domain.CodePolicySpending, Message: "blocked by policy daily"}
			g.txEvent(domain.EvExecuteDecided, testTx("tx_g", "bob", "bot9", "shop", domain.TxBlocked, 5000), &blocked)
			g.flush()

			want := map[string]string{"tx_a": domain.TxCompleted, "tx_b": domain.TxExecuting, "tx_c": domain.TxDenied,
				"tx_d": domain.TxExpired, "tx_e": domain.TxExecuting, "tx_f": domain.TxExpired}
			for id, status := range want {
				if got := mustTx(t, g.store, "alice", id); got.Status != status {
					t.Errorf("%s is %s, want %s", id, got.Status, status)
				}
			}
			a := mustTx(t, g.store, "alice", "tx_a")
			if a.BusinessStatus != "ok" || string(a.Data) != `{"order":1}` || a.Seq != 1 || a.UpdatedSeq != 2 || !a.CreatedAt.Equal(created) {
				t.Errorf("tx_a = %+v", a)
			}
			if b := mustTx(t, g.store, "bob", "tx_g"); b.Error == nil || b.Error.Code != domain.CodePolicySpending {
				t.Errorf("blocked transaction has no refusal: %+v", b)
			}
			// Tenant isolation: bob reads none of alice's, alice none of
			// bob's; the admin reads both.
			for _, c := range [][2]string{{"bob", "tx_a"}, {"alice", "tx_g"}, {"alice", "tx_nope"}} {
				if _, err := g.store.Transaction(c[0], c[1]); !errors.Is(err, ErrNotFound) {
					t.Errorf("%s reading %s: %v, want not found", c[0], c[1], err)
				}
			}
			mustTx(t, g.store, domain.AdminPrincipal, "tx_g")
			page, err := g.store.Transactions("bob", TxFilter{}, "", 100)
			if err != nil || len(page.Transactions) != 1 || page.Transactions[0].ID != "tx_g" {
				t.Errorf("bob's transactions: %+v, %v", page, err)
			}
		})
	}
}

// TestTransactionHistoryRebuildsIdentically pins that the history is a
// function of the log: stores applying the same events in batches of
// different sizes are equal key by key.
func TestTransactionHistoryRebuildsIdentically(t *testing.T) {
	var stores []*Store
	for _, batch := range []int{1, 3, 1000} {
		g := newTestGate(t, batch)
		txWorkload(g, 40)
		g.flush()
		stores = append(stores, g.store)
	}
	for _, s := range stores[1:] {
		if d, err := Equal(stores[0], s); err != nil || d != "" {
			t.Fatalf("stores differ: %s %v", d, err)
		}
	}
	// The in-memory fold (time travel, reports) holds what the store does.
	g := newTestGate(t, 1)
	g.keepEvents = true
	txWorkload(g, 40)
	var tally TxTally
	for _, ev := range g.allEvents {
		tally.Add(ev)
	}
	if len(tally.All()) != 40 {
		t.Fatalf("the tally holds %d transactions", len(tally.All()))
	}
	for _, tx := range tally.All() {
		got := mustTx(t, stores[0], tx.Consumer, tx.ID)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", *tx) {
			t.Fatalf("tally %+v, store %+v", *tx, got)
		}
	}
}

// txWorkload decides n transactions of two consumers, alternating agents,
// businesses and statuses, one a second, completing every third.
func txWorkload(g *testGate, n int) {
	for i := range n {
		consumer := []string{"alice", "bob"}[i%2]
		status := []string{domain.TxExecuting, domain.TxBlocked, domain.TxQueued}[i%3]
		tx := testTx(fmt.Sprintf("tx_%03d", i), consumer, fmt.Sprint("bot", i%4), []string{"shop", "bar", "air"}[i%3], status, int64(100*(i+1)), []string{"food", "travel"}[i%2])
		g.txEvent(domain.EvExecuteDecided, tx, nil)
		if i%3 == 0 {
			tx.Status = domain.TxCompleted
			g.txEvent(domain.EvExecuteCompleted, tx, nil)
		}
	}
}

// TestTransactionsPageNewestFirstWithFilters reads a consumer's
// transactions a page at a time under each filter and compares the
// concatenation with the filter applied to the whole history: nothing
// lost, nothing twice, newest first, only the consumer's own.
func TestTransactionsPageNewestFirstWithFilters(t *testing.T) {
	g := newTestGate(t, 5)
	start := g.now
	txWorkload(g, 60)
	g.flush()
	all, err := g.store.Transactions("alice", TxFilter{}, "", 1000)
	if err != nil || all.Next != "" || len(all.Transactions) != 30 {
		t.Fatalf("alice's transactions: %d, next %q, %v", len(all.Transactions), all.Next, err)
	}
	if !slices.IsSortedFunc(all.Transactions, func(a, b Transaction) int { return b.CreatedAt.Compare(a.CreatedAt) }) {
		t.Fatal("not newest first")
	}
	filters := []TxFilter{{}, {Agent: "bot2"}, {Business: "bar"}, {Category: "food"}, {Status: domain.TxCompleted},
		{From: start.Add(20 * time.Second), To: start.Add(60 * time.Second)}, {Agent: "bot0", Status: domain.TxCompleted, Category: "food"}}
	for _, f := range filters {
		var want []string
		for _, tx := range all.Transactions {
			if f.Match(&tx) {
				want = append(want, tx.ID)
			}
		}
		for _, limit := range []int{1, 3, 7} {
			var got []string
			after := ""
			for range 100 {
				p, err := g.store.Transactions("alice", f, after, limit)
				if err != nil {
					t.Fatalf("%+v: %v", f, err)
				}
				for _, tx := range p.Transactions {
					if tx.Consumer != "alice" {
						t.Fatalf("alice read %s of %s", tx.ID, tx.Consumer)
					}
					got = append(got, tx.ID)
				}
				if p.Next == "" {
					break
				}
				after = p.Next
			}
			if !slices.Equal(got, want) {
				t.Errorf("filter %+v limit %d: got %v, want %v", f, limit, got, want)
			}
		}
	}
	if _, err := g.store.Transactions("alice", TxFilter{}, "bm90IGEgY3Vyc29y", 10); !errors.Is(err, ErrBadCursor) {
		t.Errorf("a bad cursor: %v", err)
	}
}

// TestAwaitTransactionWakesOnTheCommit pins the await contract: a waiter
// registered before the business's outcome is committed returns the
// completed transaction when that batch commits (no polling), one asking
// after it returns at once, and one whose context ends first gets the
// context's error with the transaction still executing.
func TestAwaitTransactionWakesOnTheCommit(t *testing.T) {
	g := newTestGate(t, 1)
	tx := testTx("tx_w", "alice", "bot1", "shop", domain.TxExecuting, 700)
	g.txEvent(domain.EvExecuteDecided, tx, nil)

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	got, err := g.store.AwaitTransaction(ctx, "alice", "tx_w")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || got.Status != domain.TxExecuting {
		t.Fatalf("await past its deadline: %+v, %v", got, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	_, err = g.store.AwaitTransaction(ctx, "bob", "tx_w")
	cancel()
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another consumer awaiting: %v", err)
	}

	type result struct {
		tx  Transaction
		err error
	}
	res := make(chan result, 1)
	go func() {
		tx, err := g.store.AwaitTransaction(context.Background(), "alice", "tx_w")
		res <- result{tx, err}
	}()
	for !g.store.txWait.waiting("tx_w") {
		runtime.Gosched()
	}
	tx.Status, tx.BusinessStatus = domain.TxCompleted, "ok"
	g.txEvent(domain.EvExecuteCompleted, tx, nil)
	r := <-res
	if r.err != nil || r.tx.Status != domain.TxCompleted || r.tx.BusinessStatus != "ok" {
		t.Fatalf("awaited: %+v, %v", r.tx, r.err)
	}
	if g.store.txWait.waiting("tx_w") {
		t.Error("a finished wait left its channel behind")
	}
	got, err = g.store.AwaitTransaction(context.Background(), "alice", "tx_w")
	if err != nil || got.Status != domain.TxCompleted {
		t.Fatalf("await after the outcome: %+v, %v", got, err)
	}
}
