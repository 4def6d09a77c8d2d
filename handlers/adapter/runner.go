package adapter

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Named limits of the runner.
const (
	// MaxConcurrent is the most business calls one runner (one partition)
	// makes at once.
	MaxConcurrent = 64
	// MaxPerBusiness is the most calls in flight to one business from one
	// runner: a slow business holds at most this many of the runner's
	// slots, never all of them.
	MaxPerBusiness = 8
	// OutcomeSource is the request source of the outcomes the runner
	// submits; the request ID is the transaction ID, so an outcome
	// submitted again (after a restart) is answered with the recorded one.
	OutcomeSource = "agentgate/adapter"
	// submitRetryMax bounds the pause between attempts to record an
	// outcome while the worker is unavailable.
	submitRetryMax = 2 * time.Second
	// lookupRetry is the pause before a transaction whose call could not
	// be read from the state is looked up again.
	lookupRetry = time.Second
)

// Gate records outcomes: the partition's worker (handlers.Worker).
type Gate interface {
	Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error)
}

// Source reads what a call needs from the partition's committed state.
type Source interface {
	// Executing returns the IDs of every transaction executing in the
	// state now (after a start or a takeover: their calls may have been
	// made, or be in flight, without an outcome recorded).
	Executing(ctx context.Context) ([]string, error)
	// Lookup returns the call of transaction id if it is executing, ok
	// false if it is not (any more) or is unknown. A transaction whose
	// business left the registry since its decision has a call with no
	// endpoint, which fails.
	Lookup(ctx context.Context, id string) (call Call, ok bool, err error)
}

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	Caller *Caller
	Gate   Gate
	Source Source
	Logger *slog.Logger
	// MaxConcurrent and MaxPerBusiness bound the calls in flight (0: the
	// package's defaults).
	MaxConcurrent  int
	MaxPerBusiness int
}

// Runner calls businesses for the transactions of one partition that
// became executing, and records each call's outcome through the worker.
// Observe hands it committed batches; Run resumes the transactions
// executing at start and makes the calls.
type Runner struct {
	cfg RunnerConfig
	log *slog.Logger

	mu       sync.Mutex
	pending  []string            // transaction IDs observed, not yet looked up
	inFlight map[string]bool     // transactions being called or recorded
	perBiz   map[string]*bizSlot // the per-business bounds in use
	wake     chan struct{}
	slots    chan struct{}
}

// bizSlot bounds the calls to one business; users counts the goroutines
// holding or waiting for it, so the entry goes when the last leaves.
type bizSlot struct {
	ch    chan struct{}
	users int
}

// NewRunner returns a runner.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.Caller == nil || cfg.Gate == nil || cfg.Source == nil {
		return nil, errors.New("adapter: a caller, a gate and a source are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = MaxConcurrent
	}
	if cfg.MaxPerBusiness <= 0 {
		cfg.MaxPerBusiness = MaxPerBusiness
	}
	return &Runner{
		cfg: cfg, log: cfg.Logger,
		inFlight: map[string]bool{}, perBiz: map[string]*bizSlot{},
		wake: make(chan struct{}, 1), slots: make(chan struct{}, cfg.MaxConcurrent),
	}, nil
}

// Executing returns the IDs of the transactions that became executing
// with ev: an execute decided executing, an execute approval approved, or
// queued executes released.
func Executing(ev *domain.Event) []string {
	switch ev.Type {
	case domain.EvExecuteDecided, domain.EvApprovalResolved:
		if tx := ev.Transaction; tx != nil && tx.Status == domain.TxExecuting {
			return []string{tx.ID}
		}
	case domain.EvExecuteTimers:
		if ev.Timers != nil {
			return ev.Timers.Released
		}
	}
	return nil
}

// Observe notes the transactions that became executing in a committed
// batch (the worker's OnBatch: the events are in the log and projected).
// It never blocks: the calls are made by Run. A nil Runner observes
// nothing.
func (r *Runner) Observe(events []*domain.Event) {
	if r == nil {
		return
	}
	var ids []string
	for _, ev := range events {
		ids = append(ids, Executing(ev)...)
	}
	r.enqueue(ids)
}

// Run calls, first, every transaction executing in the state, then those
// Observe hands it, until ctx ends; it then waits for the calls in flight
// to stop (a call cut short records nothing: the next start makes it
// again, with the same Idempotency-Key) and returns. A failure to read
// the state is retried after a pause, never fatal.
func (r *Runner) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, submitRetryMax) {
		ids, err := r.cfg.Source.Executing(ctx)
		if err == nil {
			if len(ids) > 0 {
				r.log.Info("calling the businesses of the transactions executing at start", "transactions", len(ids))
			}
			r.enqueue(ids)
			break
		}
		r.log.Error("reading the transactions executing at start", "err", err)
		if !pause(ctx, wait) {
			return nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
		}
		r.mu.Lock()
		ids := r.pending
		r.pending = nil
		r.mu.Unlock()
		var failed []string
		for _, id := range ids {
			if r.busy(id) {
				continue
			}
			c, ok, err := r.cfg.Source.Lookup(ctx, id)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				r.log.Error("reading an executing transaction; retrying", "transaction", id, "err", err)
				failed = append(failed, id)
				continue
			}
			if ok {
				r.start(ctx, &wg, c)
			}
		}
		if len(failed) > 0 {
			// The state could not be read: try again after a pause (the
			// transactions stay executing meanwhile).
			wg.Add(1)
			go func() {
				defer wg.Done()
				if pause(ctx, lookupRetry) {
					r.enqueue(failed)
				}
			}()
		}
	}
}

// Start runs the runner on a goroutine of its own until stop is called;
// stop returns once its calls in flight have stopped.
func (r *Runner) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// enqueue adds transaction IDs for Run to look up and call.
func (r *Runner) enqueue(ids []string) {
	if len(ids) == 0 {
		return
	}
	r.mu.Lock()
	r.pending = append(r.pending, ids...)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// busy reports whether transaction id is being called or recorded.
func (r *Runner) busy(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight[id]
}

// start makes call c on a goroutine of its own unless its transaction is
// in flight already.
func (r *Runner) start(ctx context.Context, wg *sync.WaitGroup, c Call) {
	id := c.Decision.TransactionID
	r.mu.Lock()
	if r.inFlight[id] {
		r.mu.Unlock()
		return
	}
	r.inFlight[id] = true
	r.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.inFlight, id)
			r.mu.Unlock()
		}()
		r.run(ctx, c)
	}()
}

// run makes one transaction's call within the bounds and records its
// outcome.
func (r *Runner) run(ctx context.Context, c Call) {
	release, ok := r.acquire(ctx, c.Decision.BusinessID)
	if !ok {
		return
	}
	res, err := r.cfg.Caller.Do(ctx, c)
	release()
	if err != nil {
		return // stopping: the next start calls it again
	}
	if res.Status == StatusFailed {
		r.log.Warn("business call failed", "transaction", c.Decision.TransactionID, "business", c.Decision.BusinessID,
			"http_status", res.HTTPStatus, "attempts", res.Attempts, "err", res.Error)
	}
	r.record(ctx, c.Decision.TransactionID, res)
}

// acquire takes a slot of the business, then one of the runner: a
// goroutine waiting for a busy business holds none of the runner's slots.
func (r *Runner) acquire(ctx context.Context, business string) (release func(), ok bool) {
	r.mu.Lock()
	b := r.perBiz[business]
	if b == nil {
		b = &bizSlot{ch: make(chan struct{}, r.cfg.MaxPerBusiness)}
		r.perBiz[business] = b
	}
	b.users++
	r.mu.Unlock()
	leave := func() {
		r.mu.Lock()
		if b.users--; b.users == 0 {
			delete(r.perBiz, business)
		}
		r.mu.Unlock()
	}
	select {
	case b.ch <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, false
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		<-b.ch
		leave()
		return nil, false
	}
	return func() {
		<-r.slots
		<-b.ch
		leave()
	}, true
}

// OutcomeCommand is the command recording res as transaction id's
// outcome. Its request identity is the transaction's, so that a second
// submission (the call made again after a restart, whose first outcome
// was recorded meanwhile) is answered with the first outcome's event.
func OutcomeCommand(id string, res Result) *domain.Command {
	return &domain.Command{
		Type:    domain.CmdExecuteOutcome,
		Request: domain.RequestID{Source: OutcomeSource, ID: id},
		Outcome: &domain.ExecuteOutcome{
			TransactionID: id, HTTPStatus: res.HTTPStatus, Status: res.Status, Data: res.Data,
			ConfirmationToken: res.ConfirmationToken, Error: res.Error,
		},
	}
}

// record submits the outcome, retrying while the worker is unavailable,
// until ctx ends (then the transaction stays executing: the next start
// calls it again).
func (r *Runner) record(ctx context.Context, id string, res Result) {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, submitRetryMax) {
		ev, err := r.cfg.Gate.Submit(ctx, OutcomeCommand(id, res))
		if err == nil {
			if ev != nil && ev.Type == domain.EvCommandRejected && ev.Error != nil {
				// Not executing any more (an outcome recorded by a previous
				// owner of the partition), or an outcome Decide refuses:
				// either way nothing more is to be done for it here.
				r.log.Warn("the outcome was refused", "transaction", id, "code", ev.Error.Code, "message", ev.Error.Message)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		r.log.Warn("recording a business call's outcome", "transaction", id, "err", err)
		if !pause(ctx, wait) {
			return
		}
	}
}

// pause waits d or until ctx ends (false).
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
