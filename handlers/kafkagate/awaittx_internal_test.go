package kafkagate

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// TestReadModelAwaitWakesTheHomePartition pins the Kafka side of awaiting
// a transaction: while a reader awaits a transaction of a consumer, the
// read model keeps waking the follower of the consumer's home partition
// (where its outcome is appended), and the await returns when the read
// model applies the outcome; once no reader waits, nothing is woken.
func TestReadModelAwaitWakesTheHomePartition(t *testing.T) {
	s, err := projections.OpenWith(t.TempDir(), projections.Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &ReadModel{store: s, st: domain.NewState(), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		pos: map[int32]projections.Position{}, parts: map[int32]*progress{}, partitions: 8}
	s.SetAwaitHook(m.awaitWait, m.awaitDone)
	home := m.homePartition("alice")
	pr := m.part(home)
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tx := domain.Transaction{ID: "tx_1", Consumer: "alice", AgentID: "bot", BusinessID: "shop", AmountCents: 100, Currency: "USD", Status: domain.TxExecuting}
	ev := func(seq uint64, typ domain.EventType, tx domain.Transaction) *domain.Event {
		return &domain.Event{Seq: seq, Partition: home, Time: at, Type: typ, AgentID: tx.AgentID, Transaction: &tx}
	}
	m.apply(context.Background(), pr, []*domain.Event{ev(1, domain.EvExecuteDecided, tx)}, projections.Position{Partition: home, Seq: 1})

	done := make(chan projections.Transaction, 1)
	go func() {
		got, err := s.AwaitTransaction(context.Background(), "alice", "tx_1")
		if err != nil {
			t.Errorf("awaiting: %v", err)
		}
		done <- got
	}()
	// The follower of the home partition is woken (twice: at once, then
	// after the backoff), with no poll interval involved.
	<-pr.kick
	<-pr.kick
	tx.Status = domain.TxCompleted
	m.apply(context.Background(), pr, []*domain.Event{ev(2, domain.EvExecuteCompleted, tx)}, projections.Position{Partition: home, Seq: 2})
	if got := <-done; got.Status != domain.TxCompleted {
		t.Fatalf("awaited %+v", got)
	}
	m.awaits.mu.Lock()
	left := len(m.awaits.by)
	m.awaits.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d partitions still repolled after the wait", left)
	}
}
