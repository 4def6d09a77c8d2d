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
