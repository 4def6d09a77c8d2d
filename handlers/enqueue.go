package handlers

import (
	"context"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// VerdictQueueWait is how long an enqueued command's engine run waits for a
// place in the engine's queue (a refusal with QWED-SYS-002, retried with
// back-off) before its ERROR verdict stands. A transport that enqueues a
// backlog (a Kafka partition after a restore or a rebalance) would
// otherwise have its own backlog refused as if its tenant flooded the
// engine, and record PENDING decisions for it.
const VerdictQueueWait = 5 * time.Second

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
// it wait for the engine verdict of a verify_action or an A2A message
// (WorkerConfig.Verifier): the engine runs on a goroutine of its own, under ctx, and the command and
// those enqueued after it are decided once the verdict is in; should ctx
// end first, the command is answered ErrUnavailable, undecided. It blocks
// only while the queue is full; it returns ErrUnavailable when the worker
// has stopped and ctx's error if ctx ends first (the command was not
// enqueued).
func (w *Worker) Enqueue(ctx context.Context, cmd *domain.Command) (*Pending, error) {
	r, err := w.enqueue(ctx, cmd, w.verdictJob(ctx, cmd))
	if err != nil {
		return nil, err
	}
	return &Pending{w: w, r: r}, nil
}

// enqueue queues cmd (the one path of Submit and Enqueue); run, when set,
// is the engine run of an enqueued verify_action or A2A message
// (verdictJob), started on a goroutine of its own once the command is
// queued.
func (w *Worker) enqueue(ctx context.Context, cmd *domain.Command, run func()) (*request, error) {
	r := &request{cmd: cmd, done: make(chan struct{})}
	if run == nil {
		select {
		case w.reqs <- r:
			return r, nil
		case <-w.done:
			return nil, ErrUnavailable
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.verdict = make(chan struct{})
	slots := w.cfg.VerdictSlots
	if slots != nil {
		// At most cap(slots) engine runs of enqueued commands at once:
		// the enqueuing goroutine waits here (a Kafka partition stops
		// reading), not in an engine queue that would refuse it.
		select {
		case slots <- struct{}{}:
		case <-w.done:
			return nil, ErrUnavailable
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	release := func() {
		if slots != nil {
			<-slots
		}
	}
	select {
	case w.reqs <- r:
		go func() {
			defer release()
			w.patiently(ctx, cmd, run)
			r.stale = ctx.Err() != nil
			close(r.verdict)
		}()
		return r, nil
	case <-w.done:
		release()
		return nil, ErrUnavailable
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// patiently runs run (which sets cmd.Verdict) again, with back-off, while
// the engine's queue refuses it as full (QWED-SYS-002), for at most
// VerdictQueueWait; the last verdict stands.
func (w *Worker) patiently(ctx context.Context, cmd *domain.Command, run func()) {
	deadline := time.Now().Add(VerdictQueueWait)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		run()
		v := cmd.Verdict
		if v == nil || v.Code != string(domain.CodeUnavailable) || time.Now().Add(wait).After(deadline) {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		cmd.Verdict = nil
	}
}

// Done is closed once the command is answered; Wait then returns at once.
func (p *Pending) Done() <-chan struct{} { return p.r.done }

// Wait returns the answer to the enqueued command, as Submit does: the
// recorded event (nil when the command had nothing to record),
// ErrUnavailable, or ctx's error if ctx ends first (the command may still
// be decided).
func (p *Pending) Wait(ctx context.Context) (*domain.Event, error) { return p.w.wait(ctx, p.r) }

// wait waits for the answer to a queued request (see Pending.Wait).
func (w *Worker) wait(ctx context.Context, r *request) (*domain.Event, error) {
	select {
	case <-r.done:
		return r.ev, r.err
	case <-w.done:
		// Run answers what it dequeued before closing done; a request
		// still queued is never decided.
		select {
		case <-r.done:
			return r.ev, r.err
		default:
			return nil, ErrUnavailable
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
