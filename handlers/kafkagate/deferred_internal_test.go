package kafkagate

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/ce"
)

// The replies of executes answered at their outcome: a decision that made
// its transaction executing is held and answered when the outcome's batch
// is committed; an outcome committed before the decision's reply was due
// answers it at once; an outcome of an execute no request waits for (an
// HTTP execute, no replyto) is not kept; a decision of any other status is
// not held.
func TestDeferredExecuteReplies(t *testing.T) {
	g := &Gate{cfg: Config{Clock: time.Now}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	d := newDeferred(g)
	ctx := context.Background()
	decided := func(id, status, replyTo string) *domain.Event {
		return &domain.Event{Type: domain.EvExecuteDecided, Transaction: &domain.Transaction{ID: id, Status: status},
			Command: &domain.Command{Type: domain.CmdExecute, Execute: &domain.ExecuteRequest{ReplyTo: replyTo}}}
	}
	completed := func(id string) *domain.Event {
		return &domain.Event{Type: domain.EvExecuteCompleted, Transaction: &domain.Transaction{ID: id, Status: domain.TxCompleted, Data: []byte(`{"n":1}`)}}
	}
	req := func(id string) ce.Event {
		return ce.Event{Type: string(domain.CmdExecute), Source: "s", ID: id, Extensions: map[string]string{ce.ExtCorrelationID: "corr-" + id}}
	}

	// Held, then answered by the outcome's batch.
	d.completed(ctx, []*domain.Event{decided("tx_a", domain.TxExecuting, "replies")})
	if o, held := d.hold(req("a"), "replies", decided("tx_a", domain.TxExecuting, "replies")); !held || o != nil {
		t.Fatalf("an executing decision: held %v outcome %v", held, o)
	}
	d.completed(ctx, []*domain.Event{completed("tx_a")})
	select {
	case m := <-d.out:
		if m.Topic != "replies" || !strings.Contains(string(m.Value), `"status":"completed"`) || !hasHeader(m.Headers, "ce_correlationid", "corr-a") {
			t.Fatalf("the reply at the outcome: %s %s %v", m.Topic, m.Value, m.Headers)
		}
	default:
		t.Fatal("no reply queued at the outcome")
	}

	// The outcome first: the decision is answered with it at once.
	d.completed(ctx, []*domain.Event{decided("tx_b", domain.TxExecuting, "replies"), completed("tx_b")})
	if o, held := d.hold(req("b"), "replies", decided("tx_b", domain.TxExecuting, "replies")); held || o == nil || o.Transaction.ID != "tx_b" {
		t.Fatalf("a decision whose outcome came first: held %v outcome %v", held, o)
	}

	// No request waits for an HTTP execute's outcome: nothing is kept.
	d.completed(ctx, []*domain.Event{decided("tx_c", domain.TxExecuting, ""), completed("tx_c")})
	if len(d.early.m) != 0 || len(d.awaited.m) != 0 {
		t.Fatalf("kept %d outcomes and %d awaited for executes without a replyto", len(d.early.m), len(d.awaited.m))
	}

	// A decision this owner did not see committed (a redelivery answered
	// from the log after a takeover, a retry once the outcome is
	// recorded) is answered as decided: nothing would answer it later.
	if o, held := d.hold(req("e"), "replies", decided("tx_e", domain.TxExecuting, "replies")); held || o != nil {
		t.Fatalf("a decision not seen committed: held %v outcome %v", held, o)
	}

	// A decision that is not executing is answered as it is.
	if o, held := d.hold(req("d"), "replies", decided("tx_d", domain.TxPendingApproval, "replies")); held || o != nil {
		t.Fatalf("a pending decision: held %v outcome %v", held, o)
	}
	if len(d.out) != 0 || len(d.held) != 0 {
		t.Fatalf("%d replies queued and %d held after the outcomes", len(d.out), len(d.held))
	}
}

func hasHeader(hs []kafka.Header, k, v string) bool {
	for _, h := range hs {
		if h.Key == k && string(h.Value) == v {
			return true
		}
	}
	return false
}
