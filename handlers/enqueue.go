package handlers

import (
	"context"

	"github.com/agentgate/agentgate/domain"
)

// Pending is a command handed to the worker by Enqueue, waiting for its
// answer.
type Pending struct {
	w *Worker
	r *request
}

// Enqueue hands cmd to the worker without waiting for its decision:
// commands enqueued by one goroutine are decided in the order they were
// enqueued (a transport that must keep its input order, such as a Kafka
// partition, enqueues from one goroutine and waits from another). It blocks
// only while the queue is full; it returns ErrUnavailable when the worker
// has stopped and ctx's error if ctx ends first (the command was not
// enqueued).
func (w *Worker) Enqueue(ctx context.Context, cmd *domain.Command) (*Pending, error) {
	w.attachVerdict(ctx, cmd)
	r := &request{cmd: cmd, done: make(chan struct{})}
	select {
	case w.reqs <- r:
		return &Pending{w: w, r: r}, nil
	case <-w.done:
		return nil, ErrUnavailable
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Wait returns the answer to the enqueued command, as Submit does: the
// recorded event (nil when the command had nothing to record),
// ErrUnavailable, or ctx's error if ctx ends first (the command may still
// be decided).
func (p *Pending) Wait(ctx context.Context) (*domain.Event, error) {
	select {
	case <-p.r.done:
		return p.r.ev, p.r.err
	case <-p.w.done:
		select {
		case <-p.r.done:
			return p.r.ev, p.r.err
		default:
			return nil, ErrUnavailable
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
