package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/fair"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// Named limits of the worker.
const (
	// MaxBatch is the most commands decided and appended together.
	MaxBatch = 1024
	// MaxQueue is the most commands waiting for the worker; Submit blocks
	// (until its context ends) when the queue is full.
	MaxQueue = 8192
	// TickInterval is how often the worker lets time pass (approval expiry;
	// confirmation token expiry and queued executes' release).
	TickInterval = time.Second
	// recoverBatch is how many events recovery applies per projection batch.
	recoverBatch = 1024
)

// ErrUnavailable is returned by Submit when the worker cannot decide: it is
// stopped, or the log refused the batch. The command was not decided. When
// the cause is a full disk, the error also wraps streams.ErrNoSpace.
var ErrUnavailable = errors.New("gate unavailable")

// Recovery back-off while the worker cannot rebuild its state (a full
// disk): the first retry waits recoverRetryMin, each next one twice as
// long, up to recoverRetryMax.
const (
	recoverRetryMin = 100 * time.Millisecond
	recoverRetryMax = 5 * time.Second
)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Log       streams.Log
	Store     *projections.Store
	Signer    domain.Signer
	Partition int32
	// Clock returns the wall-clock time; the worker never uses a time
	// earlier than the last event's.
	Clock func() time.Time
	// Config is the decision configuration; when it differs from the one
	// in the log, the worker records the change before serving.
	Config *domain.Config
	Logger *slog.Logger
	// OnBatch, if set, observes each committed batch (metrics).
	OnBatch func(events []*domain.Event, appendDur time.Duration)
	// Verifier, if set, runs the verification engine of a verify_action
	// command, and of an A2A message that one checks (the code engine on
	// a code_execution payload's code, the logic engine on a
	// logic_assertion payload's "dsl": domain.A2AEngineAction; issue 13),
	// before it is decided (issue 4), never on the worker's
	// goroutine: Submit attaches its verdict in the caller's goroutine
	// before queueing the command; Enqueue queues it at once and runs the
	// engine on a goroutine of its own, so that the verdicts of commands
	// enqueued one after another overlap (issue 11), and Run decides the
	// command, in its place, once the verdict is in. Decide stays pure and
	// never waits on an engine. Nil decides by the rules alone.
	Verifier ActionVerifier
	// VerdictSlots, if set, bounds the engine runs of enqueued commands in
	// flight at once, shared by every worker given the same channel (its
	// capacity is the bound): Enqueue waits for a slot. Each run also waits
	// up to VerdictQueueWait for a place in a full engine queue. Nil: no
	// bound.
	VerdictSlots chan struct{}
	// Checkpoint is when the worker appends a signed log checkpoint
	// (issue 5); zero fields take domain.DefaultCheckpointPolicy's. The
	// checkpoints are signed by Signer when it implements
	// domain.CheckpointSigner (attest's signers do); otherwise none is
	// appended.
	Checkpoint domain.CheckpointPolicy
	// Copier, if set, supplies the principal-wide events another
	// partition decided (Kafka: partition 0, docs/ARCHITECTURE.md
	// "Principal-wide state on Kafka, built"): before deciding each batch
	// the worker puts first in it the command that copies those it has
	// not copied yet, and it decides a batch when Copier signals new ones
	// even with no request queued.
	Copier PrincipalCopier
}

// PrincipalCopier supplies principal-wide events decided on another
// partition for a worker to copy (domain.CmdCopyPrincipalState).
type PrincipalCopier interface {
	// CopyAfter returns the command copying the principal-wide changes
	// after pos, the worker's last copy (at most domain.MaxCopiedChanges),
	// or nil when it knows of none. It is called on the worker's
	// goroutine and must not block.
	CopyAfter(pos domain.CopyPosition) *domain.Command
	// Ready receives when changes may be there that CopyAfter did not
	// return yet.
	Ready() <-chan struct{}
}

// ActionVerifier gives the verdict of the engine that verifies an action
// (nil when no engine applies); *verify.ActionVerifier implements it.
type ActionVerifier interface {
	Verdict(ctx context.Context, act *domain.Action) *domain.EngineVerdict
}

// Worker is the single writer of one partition: the driver of its Machine.
// It queues the commands of its callers, hands them to the machine in
// batches, appends each batch's records, commits its projections and
// answers the callers, pipelined (see Run).
type Worker struct {
	cfg  WorkerConfig
	m    *Machine
	pub  atomic.Pointer[streams.Head]
	reqs chan *request
	done chan struct{}
	// copies tracks the principal-wide copies appended and the position
	// the projections have committed, for WaitCopiesProjected.
	copies copyWatch
	// stale is set when the state could not be rebuilt (the projections
	// could not catch up with the log on a full disk): nothing is decided
	// until a retry succeeds, at retryAt at the earliest, waiting retryWait
	// more after each failure. configured is cleared until the configured
	// options are recorded. All owned by the worker goroutine.
	stale      bool
	configured bool
	// full is set while a batch was last refused for lack of space: the
	// disks are checked before deciding (rather than deciding a batch the
	// log or the store would refuse, then rebuilding the state).
	full      bool
	retryAt   time.Time
	retryWait time.Duration
	quiet     diskspace.LogLimiter
}

type request struct {
	cmd      *domain.Command
	ev       *domain.Event
	err      error
	done     chan struct{}
	answered bool
	// verdict, when set, is closed once the engine verdict of an enqueued
	// command is attached (Enqueue); stale is then set when the enqueuer's
	// context ended meanwhile: the verdict may be the cancellation's, so
	// the command is not decided.
	verdict chan struct{}
	stale   bool
}

// NewWorker recovers the partition's state (projections, then the log tail
// beyond their checkpoint) and returns a worker ready to Run.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Worker{cfg: cfg, reqs: make(chan *request, MaxQueue), done: make(chan struct{})}
	var err error
	w.m, err = NewMachine(context.Background(), MachineConfig{
		Log: cfg.Log, Store: cfg.Store, Signer: cfg.Signer, Partition: cfg.Partition,
		Config: cfg.Config, Checkpoint: cfg.Checkpoint, Logger: cfg.Logger,
	})
	if err != nil {
		if !errors.Is(err, streams.ErrNoSpace) {
			return nil, err
		}
		// Serve reads (the projections as of their checkpoint) and refuse
		// writes until the disk has room to catch the projections up.
		cfg.Logger.Warn("the disk is full: the projections cannot catch up with the log; commands are refused until space is freed", "err", err)
		w.stale = true
		h := cfg.Log.Head()
		w.pub.Store(&h)
		return w, nil
	}
	w.publish()
	return w, nil
}

// copyWatch is the position of the last principal-state copy appended and
// of the last event whose projections are committed; wake is closed and
// replaced each time the latter moves.
type copyWatch struct {
	mu        sync.Mutex
	copied    uint64
	projected uint64
	wake      chan struct{}
}

// appending notes the copies among the events of a batch about to be
// appended, before the append: a reader of the events log may see them,
// and answer for them, as soon as the log has them. It returns what to
// restore should the append fail (the batch is then decided again).
func (c *copyWatch) appending(evs []*domain.Event) (restore uint64) {
	// A batch holds at most one copy, first (Worker.withCopy); the scan
	// runs outside the lock so that key lookups never wait on it.
	var seq uint64
	for _, ev := range evs {
		if ev.Type == domain.EvPrincipalStateCopied {
			seq = max(seq, ev.Seq)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	restore = c.copied
	c.copied = max(c.copied, seq)
	return restore
}

// failed undoes appending after a failed append.
func (c *copyWatch) failed(restore uint64) {
	c.mu.Lock()
	c.copied = restore
	c.mu.Unlock()
}

// committed notes that the projections hold every event up to seq.
func (c *copyWatch) committed(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.projected = max(c.projected, seq)
	if c.wake != nil {
		close(c.wake)
		c.wake = nil
	}
}

// WaitCopiesProjected waits until the partition's projections hold every
// principal-wide copy the worker has appended (domain.EvPrincipalStateCopied):
// a lookup in the projections after it returns sees every API key change
// whose copy is in the log. A copy is in the log (and so acknowledged to
// the HTTP instance that waits for it) before its batch's projections are
// committed; the Kafka gate calls this before it reads an API key from
// them, so a key answered as revoked is refused at once (issue 13's
// review). It returns at once when no copy is pending, ctx's error if ctx
// ends first, and ErrUnavailable when the worker stops.
func (w *Worker) WaitCopiesProjected(ctx context.Context) error {
	c := &w.copies
	for {
		c.mu.Lock()
		if c.projected >= c.copied {
			c.mu.Unlock()
			return nil
		}
		if c.wake == nil {
			c.wake = make(chan struct{})
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-w.done:
			return ErrUnavailable
		}
	}
}

// EncodeEvent encodes an event as it is stored in the log: the event
// format v1 of domain/eventjson (eventjson.Marshal).
func EncodeEvent(ev *domain.Event) ([]byte, error) { return eventjson.Marshal(ev) }

// Submit hands cmd to the worker and waits for its event: the recorded event
// of an earlier identical request, the new event once it is durably in the
// log, or nil when the command had nothing to record. It returns
// ErrUnavailable when the worker cannot decide, and ctx's error if ctx ends
// first (the command may still be decided: retry with the same RequestID).
// It is Enqueue and Wait, with the engine verdict of a verify_action or an
// A2A message attached on the caller's goroutine before the command is
// queued.
func (w *Worker) Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	w.attachVerdict(ctx, cmd)
	r, err := w.enqueue(ctx, cmd, nil)
	if err != nil {
		return nil, err
	}
	return w.wait(ctx, r)
}

// attachVerdict sets cmd.Verdict on a verify_action or A2A command that
// has none when a Verifier is configured, running the engine on the
// caller's goroutine (verdictJob).
func (w *Worker) attachVerdict(ctx context.Context, cmd *domain.Command) {
	if run := w.verdictJob(ctx, cmd); run != nil {
		run()
	}
}

// verdictJob prepares cmd.Verdict on a verify_action or A2A command that
// has none when a Verifier is configured; it returns the engine run that
// sets it, or nil when no engine is to run. The verdict is recorded with
// the command: re-deciding it reproduces the decision without running
// the engine.
func (w *Worker) verdictJob(ctx context.Context, cmd *domain.Command) func() {
	if w.cfg.Verifier == nil || cmd == nil || cmd.Verdict != nil {
		return nil
	}
	switch {
	case cmd.Type == domain.CmdVerifyAction && cmd.Verify != nil:
		return w.actionVerdictJob(ctx, cmd)
	case cmd.Type == domain.CmdA2AMessage && cmd.A2A != nil:
		return w.a2aVerdictJob(ctx, cmd)
	case cmd.Type == domain.CmdVerifyToolCall && cmd.Tool != nil:
		return w.toolVerdictJob(ctx, cmd)
	}
	return nil
}

// toolVerdictJob is verdictJob of a tool call (domain/toolverify.go):
// the engine of the tool's verification plan, under the agent's
// principal's registry as last committed, runs on each parameter to
// verify, and the most severe verdict is recorded, naming its parameter.
// It runs only for a request domain.MayRunToolEngine admits, in the turn
// of the agent and its principal; anything else records no verdict, which
// Decide treats as unverified (never APPROVED on a tool to verify).
func (w *Worker) toolVerdictJob(ctx context.Context, cmd *domain.Command) func() {
	a, err := w.cfg.Store.AgentAuth(cmd.AgentID)
	if err != nil || !domain.MayRunToolEngine(a, cmd) {
		return nil
	}
	p, err := w.cfg.Store.Principal(a.Info.PrincipalID)
	if err != nil {
		p = nil // unknown (or unreadable): the built-in defaults
	}
	call := &cmd.Tool.ToolCall
	plan := domain.ToolVerification(p, call.ToolName)
	if plan.ActionType == "" {
		return nil
	}
	// StrictSubjects holds Subjects' parameters and more: Decide picks
	// those of the gate's configuration (Config.StrictGuards).
	subjects, _ := plan.StrictSubjects(call.Parameters)
	if len(subjects) == 0 || len(subjects) > domain.MaxVerifyParameters {
		return nil
	}
	ctx = fair.WithTenant(ctx, fair.Tenant{Principal: a.Info.PrincipalID, Agent: a.ID})
	return func() {
		var worst *domain.EngineVerdict
		for _, s := range subjects {
			v := w.cfg.Verifier.Verdict(ctx, domain.ToolSubjectAction(&plan, s, call.Parameters))
			if v == nil {
				continue
			}
			v.Parameter = s.Parameter
			if domain.MoreSevereVerdict(v, worst) {
				worst = v
			}
		}
		cmd.Verdict = worst
	}
}

// actionVerdictJob is verdictJob of a verify_action. The engine runs only
// for a request that authenticates, as the agent was last committed, as
// an active agent allowed to use it (domain.MayRunEngine): anything else
// gets domain.NotRunVerdict at once and costs no engine time. The engine
// runs in the turn of the agent and its principal (fair.Tenant) on the
// Verifier's queues.
func (w *Worker) actionVerdictJob(ctx context.Context, cmd *domain.Command) func() {
	if domain.EngineFor(cmd.Verify.Action.Type) == "" {
		return nil
	}
	a, err := w.cfg.Store.AgentAuth(cmd.AgentID)
	if err != nil {
		a = nil // unknown (or unreadable): fail closed, no engine time
	}
	if !domain.MayRunEngine(a, cmd) {
		cmd.Verdict = domain.NotRunVerdict(cmd.Verify.Action.Type)
		return nil
	}
	ctx = fair.WithTenant(ctx, fair.Tenant{Principal: a.Info.PrincipalID, Agent: a.ID})
	return func() { cmd.Verdict = w.cfg.Verifier.Verdict(ctx, &cmd.Verify.Action) }
}

// a2aVerdictJob is verdictJob of an A2A message: the engine of its
// payload (domain.A2AEngineAction) runs on it as on the action of that
// engine, only for a message that comes with an API key the transport
// authenticated or with its sender's token as that agent was last
// committed (domain.MayRunA2AEngine): anything else gets
// domain.NotRunVerdict. It runs in the turn of the boundary's principal
// and the sender (fair.Tenant).
func (w *Worker) a2aVerdictJob(ctx context.Context, cmd *domain.Command) func() {
	act := domain.A2AEngineAction(cmd.A2A)
	if act == nil {
		return nil
	}
	tenant := fair.Tenant{Principal: cmd.Principal, Agent: cmd.A2A.SenderAgentID}
	if cmd.Principal == "" {
		a, err := w.cfg.Store.AgentAuth(cmd.AgentID)
		if err != nil {
			a = nil // unknown (or unreadable): fail closed, no engine time
		}
		if !domain.MayRunA2AEngine(a, cmd) {
			cmd.Verdict = domain.NotRunVerdict(act.Type)
			return nil
		}
		tenant.Principal = a.Info.PrincipalID
	}
	ctx = fair.WithTenant(ctx, tenant)
	return func() { cmd.Verdict = w.cfg.Verifier.Verdict(ctx, act) }
}

// Run decides batches until ctx ends, then answers what is queued with
// ErrUnavailable and returns.
//
// A command enqueued with its engine verdict still running (Enqueue) is
// held, with every command queued after it, until the verdict is in: the
// commands are decided in the order they were queued, while the worker
// goes on settling the batches in flight (holdBack).
//
// Run pipelines three stages: while batch n is projected and batch n+1 is
// appended (fsync), batch n+2 is decided on the state that includes both.
// A batch is handed on only once every batch before it is in the log and
// every batch but the last is projected; every reply waits for its own
// batch's projections. When a batch fails, the batch decided after it fails
// too and the state is rebuilt from the projections and the log.
func (w *Worker) Run(ctx context.Context) error {
	defer close(w.done)
	w.full = w.checkSpace() != nil
	if !w.full && !w.stale {
		if err := w.configure(ctx); err != nil {
			return err
		}
	}
	tick := time.NewTicker(TickInterval)
	defer tick.Stop()
	var (
		last  *flight    // the last batch handed on
		ready chan error // last.ready until it is read
		// held are the requests taken from the queue, in order, from the
		// first whose verdict is not in yet.
		held []*request
	)
	// settle waits until last is appended and everything before it is
	// projected (a non-nil error: the state must be rebuilt).
	settle := func() error {
		if ready == nil {
			return nil
		}
		err := <-ready
		ready = nil
		return err
	}
	// recoverFromFailure waits until every batch handed on is done and
	// rebuilds the state after a failed batch.
	recoverFromFailure := func(err error) {
		<-last.projected
		last = nil
		w.full = w.full || errors.Is(err, streams.ErrNoSpace)
		w.rebuild(ctx)
	}
	var copied <-chan struct{}
	limit := MaxBatch
	if w.cfg.Copier != nil {
		copied = w.cfg.Copier.Ready()
		limit-- // room for the copy put first in each batch
	}
	for {
		batch := make([]*request, 0, 64)
		reqs, verdict := w.reqs, (<-chan struct{})(nil)
		if len(held) > 0 {
			reqs, verdict = nil, held[0].verdict // nothing is taken past held
		}
		nudged := false
		select {
		case <-ctx.Done():
			err := settle()
			if last != nil {
				<-last.projected
				if last.projErr != nil {
					err = last.projErr
				}
			}
			refuse(held)
			w.drain()
			if err == nil {
				w.finalCheckpoint(ctx)
			}
			return nil
		case err := <-ready:
			// Settle as soon as the last batch is appended: a failure is
			// recovered from before the next request is decided on it.
			ready = nil
			if err != nil {
				recoverFromFailure(err)
			}
			continue
		case r := <-reqs:
			batch = append(batch, r)
		case <-verdict:
			batch, held = held, nil
		case <-tick.C:
			// Approvals expire; confirmation tokens expire and queued
			// executes are released (the consumer policy engine's clock).
			batch = append(batch, &request{cmd: &domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}}},
				&request{cmd: &domain.Command{Type: domain.CmdExecuteTick}})
		case <-copied:
			nudged = true
		}
	fill:
		for len(held) == 0 && len(batch) < limit {
			select {
			case r := <-w.reqs:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		if batch, held = holdBack(batch, held); len(batch) == 0 && !nudged {
			continue
		}
		// A failure reported meanwhile is recovered from before the batch
		// is decided (commit reports it before answering anyone).
		select {
		case err := <-ready:
			ready = nil
			if err != nil {
				recoverFromFailure(err)
			}
		default:
		}
		if err := w.canDecide(ctx); err != nil {
			// Nothing decided, nothing to rebuild.
			(&flight{reqs: batch}).fail(err)
			continue
		}
		if batch = w.withCopy(batch); len(batch) == 0 {
			continue
		}
		f := w.decide(ctx, batch, true)
		if err := settle(); err != nil {
			f.fail(err)
			recoverFromFailure(err)
			continue
		}
		f.ready, f.projected = make(chan error, 1), make(chan struct{})
		go w.commit(ctx, f, last)
		last, ready = f, f.ready
	}
}

// withCopy puts first in batch the command copying the principal-wide
// events the machine's state has not copied yet (WorkerConfig.Copier), if
// any: decided before the batch's requests, on the state every earlier
// batch left.
func (w *Worker) withCopy(batch []*request) []*request {
	if w.cfg.Copier == nil {
		return batch
	}
	cmd := w.cfg.Copier.CopyAfter(w.m.State().Copies[w.cfg.Partition])
	if cmd == nil {
		return batch
	}
	return append([]*request{{cmd: cmd}}, batch...)
}

// holdBack cuts batch before its first request whose verdict is not in
// yet, which goes, with the rest, in front of held (empty unless batch is
// a tick). A request whose verdict went stale is answered ErrUnavailable
// and dropped.
func holdBack(batch, held []*request) ([]*request, []*request) {
	out := batch[:0]
	for i, r := range batch {
		if r.verdict != nil {
			select {
			case <-r.verdict:
			default:
				return out, append(slices.Clone(batch[i:]), held...)
			}
			if r.stale {
				refuse([]*request{r})
				continue
			}
		}
		out = append(out, r)
	}
	return out, held
}

// refuse answers requests that will not be decided with ErrUnavailable.
func refuse(rs []*request) {
	for _, r := range rs {
		if r.done == nil || r.answered {
			continue
		}
		r.err = ErrUnavailable
		r.answered = true
		close(r.done)
	}
}

func (w *Worker) drain() {
	for {
		select {
		case r := <-w.reqs:
			r.err = ErrUnavailable
			close(r.done)
		default:
			return
		}
	}
}

// spaceChecker is implemented by a log or store that refuses writes on a
// full disk (pebblelog.Log, projections.Store).
type spaceChecker interface{ CheckSpace() error }

// checkSpace returns streams.ErrNoSpace (wrapped) when the log's or the
// projections' disk is below its reserve: a batch decided then would be
// refused, and the state rebuilt, for nothing.
func (w *Worker) checkSpace() error {
	if c, ok := w.cfg.Log.(spaceChecker); ok {
		if err := c.CheckSpace(); err != nil {
			return err
		}
	}
	return w.cfg.Store.CheckSpace()
}

// canDecide returns nil when the worker may decide a batch: the disks have
// room (checked after a refusal for lack of space), the state is rebuilt (retried with back-off after a failure) and
// the configured options are recorded. Refusals are logged at most once
// per diskspace.DefaultLogEvery.
func (w *Worker) canDecide(ctx context.Context) error {
	var err error
	if w.full || w.stale || !w.configured {
		if err = w.checkSpace(); err == nil {
			w.full = false
		}
	}
	if err == nil && w.stale {
		err = w.retryRecover(ctx)
	}
	if err == nil && !w.configured {
		err = w.configure(ctx)
	}
	if err != nil {
		w.quiet.Log(w.cfg.Logger, slog.LevelError, "refusing", "refusing commands", "err", err)
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// retryRecover rebuilds a stale state, at most once per back-off step.
func (w *Worker) retryRecover(ctx context.Context) error {
	now := time.Now()
	if now.Before(w.retryAt) {
		return fmt.Errorf("the state is being rebuilt after a failure: %w", streams.ErrNoSpace)
	}
	if err := w.m.Recover(ctx); err != nil {
		w.retryWait = min(max(2*w.retryWait, recoverRetryMin), recoverRetryMax)
		w.retryAt = now.Add(w.retryWait)
		return fmt.Errorf("rebuilding the state: %w", err)
	}
	w.publish()
	w.stale, w.retryWait, w.retryAt = false, 0, time.Time{}
	w.cfg.Logger.Info("state rebuilt; deciding again", "seq", w.m.Head().Seq)
	return nil
}

// configure records the configured decision options when they differ
// from those in force.
func (w *Worker) configure(ctx context.Context) error {
	cmd := w.m.ConfigureCommand()
	if cmd == nil {
		w.configured = true
		return nil
	}
	r := &request{cmd: cmd}
	if err := w.commitNow(ctx, w.decide(ctx, []*request{r}, false)); err != nil {
		w.rebuild(ctx)
	}
	if r.err != nil {
		return fmt.Errorf("recording configuration: %w", r.err)
	}
	w.configured = true
	return nil
}

// flight is a decided batch on its way to the log and the projections,
// with the requests it answers.
type flight struct {
	*Batch
	reqs []*request
	// ready receives, once, nil when the batch is in the log and every
	// earlier batch is projected, or the error that stopped it.
	ready chan error
	// projected is closed when the batch is done: projected and answered,
	// or failed; projErr is then set when its projections are not
	// committed (the state must be rebuilt).
	projected chan struct{}
	projErr   error
	appendDur time.Duration
}

// decide has the machine decide the batch's commands at the clock's time
// (remember: Machine.Decide; otherwise the batch is committed before any
// other is decided). A batch the machine refuses is answered at once.
func (w *Worker) decide(ctx context.Context, batch []*request, remember bool) *flight {
	cmds := make([]*domain.Command, len(batch))
	for i, r := range batch {
		cmds[i] = r.cmd
	}
	var b *Batch
	if remember {
		b = w.m.Decide(ctx, w.cfg.Clock(), cmds)
	} else {
		b = w.m.decide(ctx, w.cfg.Clock(), cmds)
	}
	f := &flight{Batch: b, reqs: batch}
	if b.Err != nil {
		w.full = w.full || errors.Is(b.Err, streams.ErrNoSpace)
		f.fail(b.Err)
	}
	return f
}

// fail answers every request of the batch with ErrUnavailable and discards
// its projections.
func (f *flight) fail(err error) {
	if f.Batch != nil {
		f.Discard()
	}
	for _, r := range f.reqs {
		if r.done == nil || r.answered {
			continue
		}
		r.answered = true
		r.err = err
		if !errors.Is(err, ErrUnavailable) {
			r.err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		close(r.done)
	}
}

// commit appends a decided batch, publishes the head, commits its
// projections once prev's are (prev is the batch handed on before it, nil
// for none) and answers its requests. It reports on f.ready and
// f.projected (see flight).
func (w *Worker) commit(ctx context.Context, f, prev *flight) {
	defer close(f.projected)
	err := w.appendBatch(ctx, f)
	if err != nil {
		// Run hears of the failure before any caller does: a request
		// sent after its caller saw the failure is decided on the rebuilt
		// state, never refused for it (see Run).
		f.projErr = err
		f.ready <- err
		f.fail(fmt.Errorf("appending to the log: %w", err))
		if prev != nil {
			<-prev.projected
		}
		return
	}
	if prev != nil {
		<-prev.projected
		if prev.projErr != nil {
			// The batch is in the log, but its projections cannot follow
			// the ones that failed: answer it; the projections catch up
			// from the log when the state is rebuilt.
			f.projErr = prev.projErr
			f.Discard()
			f.ready <- f.projErr
			f.answer()
			return
		}
	}
	f.ready <- nil
	f.projErr = w.project(f)
	f.answer()
}

// commitNow appends and projects f on the caller's goroutine (no batch is
// in flight); a non-nil error means the state must be rebuilt.
func (w *Worker) commitNow(ctx context.Context, f *flight) error {
	f.ready, f.projected = make(chan error, 1), make(chan struct{})
	w.commit(ctx, f, nil)
	return f.projErr
}

// appendBatch appends f's records to the log and publishes the head.
func (w *Worker) appendBatch(ctx context.Context, f *flight) error {
	if f.Err != nil {
		return errors.New("the batch was refused")
	}
	if len(f.Records) == 0 {
		return nil
	}
	start := time.Now()
	restore := w.copies.appending(f.Events())
	if err := w.cfg.Log.Append(ctx, f.Records); err != nil {
		w.copies.failed(restore)
		w.quiet.Log(w.cfg.Logger, slog.LevelError, "appending", "appending batch", "err", err, "events", len(f.Records))
		return err
	}
	f.appendDur = time.Since(start)
	h := f.Head
	w.pub.Store(&h)
	return nil
}

// project commits f's projections (the events are in the log and every
// earlier batch is projected).
func (w *Worker) project(f *flight) error {
	if len(f.Records) == 0 {
		return nil
	}
	if testHookBeforeProject != nil {
		testHookBeforeProject()
	}
	err := f.Prepared.Commit(f.Checkpoint())
	f.Prepared = nil
	if err == nil {
		w.copies.committed(f.Head.Seq)
	}
	if w.cfg.OnBatch != nil {
		w.cfg.OnBatch(f.Events(), f.appendDur)
	}
	if err != nil {
		w.quiet.Log(w.cfg.Logger, slog.LevelError, "projecting", "applying projections", "err", err, "seq", f.Head.Seq)
		return err
	}
	return nil
}

// answer answers the requests of a committed batch.
func (f *flight) answer() {
	for i, r := range f.reqs {
		if r.done == nil || r.answered {
			continue
		}
		r.answered = true
		if r.err = f.Replies[i].Err; r.err == nil {
			r.ev = f.Replies[i].Event
		}
		close(r.done)
	}
}

// rebuild reloads the state after a failed batch. When that fails too, the
// state is stale: nothing is decided on it until a retry succeeds
// (canDecide).
func (w *Worker) rebuild(ctx context.Context) {
	if err := w.m.Recover(ctx); err != nil {
		w.quiet.Log(w.cfg.Logger, slog.LevelError, "rebuilding", "rebuilding state after a failed batch", "err", err)
		w.stale = true
		return
	}
	w.publish()
}

var errStop = errors.New("stop")

// ReadEvent reads the event at seq from the log.
func ReadEvent(ctx context.Context, log streams.Log, seq uint64) (*domain.Event, error) {
	var ev *domain.Event
	err := log.Read(ctx, seq, func(r streams.Record) error {
		var err error
		if r.Seq == seq {
			ev, err = eventjson.DecodeEvent(r.Payload)
		}
		if err != nil {
			return err
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("reading event %d: %w", seq, err)
	}
	if ev == nil {
		return nil, fmt.Errorf("reading event %d: not in the log", seq)
	}
	return ev, nil
}

// publish publishes the machine's head (no batch is in flight): its
// state, and so its projections, hold every event up to it.
func (w *Worker) publish() {
	h := w.m.Head()
	w.pub.Store(&h)
	w.copies.committed(h.Seq)
}

// testHookBeforeProject, when set by a test, runs before a batch's
// projections are committed (its events are in the log).
var testHookBeforeProject func()

// Head returns the position of the last committed event; safe to call
// from any goroutine.
func (w *Worker) Head() streams.Head { return *w.pub.Load() }
