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
// partition, enqueues from one goroutine and waits from another). Nor does
// it wait for the engine verdict of a verify_action (WorkerConfig.Verifier):
// the engine runs on a goroutine of its own, under ctx, and the command and
// those enqueued after it are decided once the verdict is in; should ctx
// end first, the command is answered ErrUnavailable, undecided. It blocks
// only while the queue is full; it returns ErrUnavailable when the worker
// has stopped and ctx's error if ctx ends first (the command was not
// enqueued).
func (w *Worker) Enqueue(ctx context.Context, cmd *domain.Command) (*Pending, error) {
	r := &request{cmd: cmd, done: make(chan struct{})}
	run := w.verdictJob(ctx, cmd)
	if run != nil {
		r.verdict = make(chan struct{})
	}
	select {
	case w.reqs <- r:
		if run != nil {
			go func() {
				run()
				r.stale = ctx.Err() != nil
				close(r.verdict)
			}()
		}
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
