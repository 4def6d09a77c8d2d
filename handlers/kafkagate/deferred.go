package kafkagate

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/ce"
)

// An execute CloudEvent with a replyto is answered when it is decided,
// unless its transaction became executing: then it is answered once the
// business's outcome is recorded (execute.completed, the adapter runner's
// CmdExecuteOutcome), with the body of that event, as POST /agp/execute
// waits for the outcome (docs/ARCHITECTURE.md, "Executes on Kafka: the
// consumer's home partition").

// maxEarlyOutcomes bounds the outcomes a partition keeps whose execute's
// reply was not held yet (the business answered before the partition
// answered the execute's decision): the oldest are forgotten first.
const maxEarlyOutcomes = 1024

// maxAwaited bounds the executes a partition remembers as decided
// executing with a replyto and not held yet (a takeover's first batches
// may hold executes whose requests this owner never reads): the oldest
// are forgotten first.
const maxAwaited = 65536

// deferredQueue bounds the held replies of a partition waiting to be
// written.
const deferredQueue = 1024

// heldReply is the request of an execute held until its outcome: its
// CloudEvent attributes (no data) and the topic of its replyto.
type heldReply struct {
	req ce.Event
	to  string
}

// deferred holds one partition's executes answered at their outcome.
type deferred struct {
	g    *Gate
	mu   sync.Mutex
	held map[string]heldReply // by transaction id
	// awaited are the transactions decided executing for a request with
	// a replyto whose reply is not held yet; early the outcomes of those
	// recorded before it was.
	awaited bounded[bool]
	early   bounded[*domain.Event]
	out     chan kafka.Message
}

func newDeferred(g *Gate) *deferred {
	return &deferred{g: g, held: map[string]heldReply{}, awaited: newBounded[bool](maxAwaited),
		early: newBounded[*domain.Event](maxEarlyOutcomes), out: make(chan kafka.Message, deferredQueue)}
}

// executingTx returns the transaction an execute.decided event made
// executing.
func executingTx(ev *domain.Event) (*domain.Transaction, bool) {
	if ev == nil || ev.Type != domain.EvExecuteDecided || ev.Transaction == nil || ev.Transaction.Status != domain.TxExecuting {
		return nil, false
	}
	return ev.Transaction, true
}

// hold takes the decision ev of an execute request req whose replyto is
// to: held is true when ev made its transaction executing, this owner
// committed that decision (completed saw it) and its outcome is not
// recorded yet (the reply is written once it is); when the outcome is
// recorded already, it is returned (the reply answers with it now).
func (d *deferred) hold(req ce.Event, to string, ev *domain.Event) (outcome *domain.Event, held bool) {
	tx, ok := executingTx(ev)
	if !ok {
		return nil, false
	}
	id := tx.ID
	d.mu.Lock()
	defer d.mu.Unlock()
	if o, ok := d.early.take(id); ok {
		return o, false
	}
	if _, ok := d.awaited.take(id); !ok {
		// This owner did not see the decision committed (a redelivery or
		// a retry answered from the log, after a takeover or once the
		// outcome is recorded), or forgot it: nothing would answer it
		// later, so it is answered as decided (202 executing).
		return nil, false
	}
	req.Data = nil
	d.held[id] = heldReply{req: req, to: to}
	return nil, true
}

// completed is the partition's OnBatch: the reply of each held execute
// whose outcome the batch recorded is queued for writing (run); the
// outcome of an execute decided executing for a request with a replyto
// whose reply is not held yet is kept for hold (the partition answers a
// decision after its batch is committed, and a fast business may answer
// before).
func (d *deferred) completed(ctx context.Context, events []*domain.Event) {
	for _, ev := range events {
		if tx, ok := executingTx(ev); ok && ev.Command != nil && ev.Command.Execute != nil && ev.Command.Execute.ReplyTo != "" {
			d.mu.Lock()
			if _, held := d.held[tx.ID]; !held {
				d.awaited.put(tx.ID, true)
			}
			d.mu.Unlock()
			continue
		}
		if ev.Type != domain.EvExecuteCompleted || ev.Transaction == nil {
			continue
		}
		id := ev.Transaction.ID
		d.mu.Lock()
		h, ok := d.held[id]
		if ok {
			delete(d.held, id)
		} else if _, ok := d.awaited.take(id); ok {
			d.early.put(id, ev)
		}
		d.mu.Unlock()
		if !ok {
			continue
		}
		status, body := outcomeReply(ev)
		m, ok := d.g.reply(h.req, h.to, status, body, d.g.cfg.Clock().UTC())
		if !ok {
			continue
		}
		select {
		case d.out <- m:
		case <-ctx.Done():
			return
		}
	}
}

// bounded is a map of at most max entries: past it the oldest put is
// forgotten first.
type bounded[V any] struct {
	m     map[string]V
	order []string // the keys put, oldest first (some maybe taken since)
	max   int
}

func newBounded[V any](max int) bounded[V] { return bounded[V]{m: map[string]V{}, max: max} }

// put adds k (a key already held keeps its value).
func (b *bounded[V]) put(k string, v V) {
	if _, dup := b.m[k]; dup {
		return
	}
	for len(b.order) >= b.max {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
	b.m[k] = v
	b.order = append(b.order, k)
}

// take removes k and returns its value.
func (b *bounded[V]) take(k string) (V, bool) {
	v, ok := b.m[k]
	delete(b.m, k)
	return v, ok
}

// outcomeReply is the status and body of an execute answered at its
// outcome: the reply of the execute.completed event.
func outcomeReply(ev *domain.Event) (int, []byte) {
	status, body := domain.Reply(ev)
	b, err := json.Marshal(body)
	if err != nil {
		return 500, []byte(`{"error":{"code":"` + string(domain.CodeInternal) + `","message":"the outcome could not be rendered","details":{}}}`)
	}
	return status, b
}

// run writes the queued replies until ctx ends, retrying a failed write
// (a reply is written at least once while the partition is owned).
func (d *deferred) run(ctx context.Context) {
	for {
		var m kafka.Message
		select {
		case <-ctx.Done():
			return
		case m = <-d.out:
		}
		batch := []kafka.Message{m}
		for len(batch) < 512 && len(d.out) > 0 {
			batch = append(batch, <-d.out)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		d.g.place(wctx, batch)
		for {
			err := d.g.out.Write(wctx, batch...)
			if err == nil || wctx.Err() != nil {
				break
			}
			d.g.log.Warn("writing the replies of executes at their outcome", "replies", len(batch), "err", err)
			select {
			case <-wctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		cancel()
	}
}
