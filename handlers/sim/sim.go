package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// Options configure one simulation.
type Options struct {
	// Seed drives everything: the clients, time, the failures, crashes,
	// rebalances and zombie writers.
	Seed uint64
	// Steps is the number of steps simulated.
	Steps int
	// Trace, when set, is told each step's action (a failing seed's
	// story: make simulate SEED=… TRACE=1).
	Trace func(format string, args ...any)
	// Bug, when set, runs the simulation with that bug injected in the
	// driver (see Bugs): the proof that the checks catch it.
	Bug Bug
}

// Bug is a defect the simulator can inject in its own driver, to show that
// its checks catch it.
type Bug string

// The injectable bugs.
const (
	// BugRedeliveredDecidedAgain hands a redelivered request to the
	// machine under a fresh request id, so the dedup never sees it.
	BugRedeliveredDecidedAgain Bug = "redelivered-decided-again"
	// BugAnswerBeforeAppend answers a batch before its records are
	// appended, so an append failure loses acknowledged decisions.
	BugAnswerBeforeAppend Bug = "answer-before-append"
)

// Failure is a violated invariant (or a crash of the code under test),
// with what reproduces it.
type Failure struct {
	Seed uint64
	// Step is the step that failed, of Steps.
	Step, Steps int
	Bug         Bug
	Err         error
}

func (f *Failure) Error() string {
	msg := fmt.Sprintf("seed %d failed at step %d: %v (reproduce: make simulate SEED=%d STEPS=%d)", f.Seed, f.Step, f.Err, f.Seed, f.Steps)
	if f.Bug != "" {
		msg += " with the bug " + string(f.Bug) + " injected"
	}
	return msg
}

// quiet is the logger of the simulated instances: their recoveries and
// failures are the simulation's normal course.
var quiet = slog.New(slog.DiscardHandler)

func (f *Failure) Unwrap() error { return f.Err }

// Stats count what a simulation did.
type Stats struct {
	Steps, Requests, Acked, Batches, Appended, Projected int
	AppendFailures, ProjectionFailures, Conflicts        int
	Crashes, Rebalances, ZombieAppends, ZombieAcks       int
	Events                                               uint64
	// LogHead is the hash of the log's last event: two runs of a seed
	// write the same log.
	LogHead                string
	Recoveries, FullChecks int
	// What the log holds: decisions by kind, and the other events the
	// clients' commands make.
	Approved, Denied, Pending, BudgetExceeded          int
	Executed, Resolved, Expired, Rejected, Checkpoints int
	// Agent-to-agent verdicts by status, and boundary changes.
	A2AForwarded, A2ABlocked, A2ARateLimited, A2ABoundaryChanges int
	// Executes by the status decided, the business's outcomes, and the
	// execute ticks that expired or released something.
	ExecExecuting, ExecBlocked, ExecPending, ExecCompleted, ExecTimers int
}

// Run runs one simulation and returns its statistics, and a *Failure when
// an invariant is violated.
func Run(opts Options) (st Stats, err error) {
	keys, err := os.MkdirTemp("", "agentgate-sim-")
	if err != nil {
		return st, fmt.Errorf("creating the key directory: %w", err)
	}
	defer os.RemoveAll(keys)
	ring, err := testKeyring(keys)
	if err != nil {
		return st, err
	}
	w := &world{
		opts:  opts,
		r:     rand.New(rand.NewPCG(opts.Seed, 0x51a7e)),
		now:   time.Date(2026, 11, 1, 22, 0, 0, 0, time.UTC),
		part:  &partition{},
		ring:  ring,
		acked: map[domain.RequestID]uint64{},
		seen:  map[domain.RequestID]uint64{},
	}
	w.redo = replay.NewRedecider(ring.SignerFor(nodeID))
	defer w.close()
	defer func() {
		if p := recover(); p != nil {
			err = &Failure{Seed: opts.Seed, Step: w.stats.Steps, Steps: opts.Steps, Bug: opts.Bug, Err: fmt.Errorf("panic: %v", p)}
		}
		w.stats.LogHead = w.part.head.Hash
		st = w.stats
	}()
	for i := range 3 {
		w.instances = append(w.instances, &instance{name: fmt.Sprint("instance-", i), fs: vfs.NewMem()})
	}
	if err := w.own(w.instances[0]); err != nil {
		return w.stats, w.fail(err)
	}
	for w.stats.Steps = 1; w.stats.Steps <= opts.Steps; w.stats.Steps++ {
		if err := w.step(); err != nil {
			return w.stats, w.fail(err)
		}
		if err := w.check(); err != nil {
			return w.stats, w.fail(err)
		}
		w.fullDue = w.fullDue || w.stats.Steps%250 == 0
		if w.fullDue && len(w.flights) == 0 && !w.needRecover {
			if err := w.fullCheck(); err != nil {
				return w.stats, w.fail(err)
			}
			w.fullDue = false
		}
	}
	w.stats.Steps = opts.Steps
	// Settle: everything in flight is written, then the whole check.
	for len(w.flights) > 0 || w.needRecover {
		if err := w.progress(); err != nil {
			return w.stats, w.fail(err)
		}
	}
	if err := w.check(); err != nil {
		return w.stats, w.fail(err)
	}
	if err := w.fullCheck(); err != nil {
		return w.stats, w.fail(err)
	}
	return w.stats, nil
}

const nodeID = "node_sim"

// world is the simulated deployment: one partition of the events topic,
// three gate instances that own it in turn, the clients, and the checker.
type world struct {
	opts  Options
	r     *rand.Rand
	now   time.Time
	part  *partition
	ring  *attest.Keyring
	stats Stats

	instances []*instance
	owner     *instance // the instance the partition is assigned to
	zombie    *instance // a former owner that still writes, or nil
	queue     []*request
	flights   []*flight // the owner's batches in flight, oldest first
	// needRecover is set after a failed batch: the owner decides nothing
	// until every batch in flight is done and its machine recovered.
	// projFailed is set after a failed projection commit: the batches
	// after it are in the log but not projected (the recovery applies
	// them).
	needRecover, projFailed bool
	// fullDue is set when the full check is due at the next quiet step.
	fullDue bool

	clients clients
	// acked maps each acknowledged request to the seq of its event (0:
	// acknowledged with nothing recorded).
	acked map[domain.RequestID]uint64
	// seen maps each request recorded in the log to its event's seq.
	seen map[domain.RequestID]uint64
	redo *replay.Redecider
}

// instance is a gate instance: its own projection store (Pebble on an
// in-memory file system that survives its crashes), its view of the
// partition and its machine while it runs.
type instance struct {
	name  string
	fs    vfs.FS
	store *projections.Store
	log   *view
	m     *handlers.Machine
}

// request is a command delivered to the owner, waiting for its answer.
type request struct {
	cmd *domain.Command
}

// flight is a batch of the owner's on its way to the log and the store.
type flight struct {
	b        *handlers.Batch
	reqs     []*request
	appended bool
}

func (w *world) trace(format string, args ...any) {
	if w.opts.Trace != nil {
		w.opts.Trace(fmt.Sprintf("step %d: ", w.stats.Steps)+format, args...)
	}
}

// requestsOf names the requests of a batch's records, for the trace.
func requestsOf(b *handlers.Batch) []string {
	var out []string
	for _, ev := range b.Events() {
		if ev.Command != nil {
			out = append(out, fmt.Sprint(ev.Seq, ":", ev.Command.Request.ID))
		} else {
			out = append(out, fmt.Sprint(ev.Seq, ":", ev.Type))
		}
	}
	return out
}

func (w *world) fail(err error) error {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return &Failure{Seed: w.opts.Seed, Step: w.stats.Steps, Steps: w.opts.Steps, Bug: w.opts.Bug, Err: err}
}

func (w *world) close() {
	for _, in := range w.instances {
		if in.store != nil {
			in.store.Close()
		}
	}
}

// open opens (or reopens) the instance's store and starts its machine on
// a view of the partition that has caught up with it (kafkagate's new
// owner syncs before deciding).
func (w *world) open(in *instance) error {
	if in.store == nil {
		s, err := projections.OpenWith("state", projections.Options{FS: in.fs, MinFreeBytes: -1, Logger: quiet})
		if err != nil {
			return fmt.Errorf("opening %s's store: %w", in.name, err)
		}
		in.store = s
	}
	in.log = newView(w.part)
	m, err := handlers.NewMachine(context.Background(), handlers.MachineConfig{
		Log: in.log, Store: in.store, Signer: w.ring.Signer(nodeID),
		Checkpoint: domain.CheckpointPolicy{Events: 25, Interval: domain.Duration(20 * time.Minute)}, Logger: quiet,
	})
	if err != nil {
		return fmt.Errorf("recovering %s: %w", in.name, err)
	}
	in.m = m
	w.stats.Recoveries++
	return nil
}

// own assigns the partition to in.
func (w *world) own(in *instance) error {
	w.owner = in
	w.flights, w.needRecover, w.projFailed = nil, false, false
	return w.open(in)
}

// step takes one seeded action.
func (w *world) step() error {
	switch p := w.r.IntN(1000); {
	case p < 380:
		w.deliver(w.clients.next(w))
	case p < 460:
		if c := w.clients.retry(w); c != nil {
			w.deliver(c)
		}
	case p < 800:
		return w.progress()
	case p < 900:
		w.now = w.now.Add(time.Duration(w.r.IntN(120)+1) * time.Second)
		if w.r.IntN(20) == 0 {
			w.now = w.now.Add(time.Duration(w.r.IntN(180)) * time.Minute) // crosses hours and days
		}
		w.deliver(&domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}})
		w.deliver(&domain.Command{Type: domain.CmdExecuteTick})
	case p < 904:
		return w.crash()
	case p < 909:
		return w.rebalance()
	case p < 980:
		if w.zombie != nil {
			return w.zombieWrites()
		}
	default:
		if w.zombie != nil && w.r.IntN(4) == 0 {
			w.zombie.m, w.zombie.log = nil, nil // fenced at last
			w.zombie = nil
		}
	}
	return nil
}

// deliver queues a command at the owner.
func (w *world) deliver(c *domain.Command) {
	if c.Type != domain.CmdTick && c.Type != domain.CmdExecuteTick {
		w.stats.Requests++
	}
	w.queue = append(w.queue, &request{cmd: c})
}

// progress moves the owner's pipeline one stage, as Worker.Run does:
// decide a batch while at most two earlier batches are not projected, the
// older of them appended (the machine answers retries of those two from
// their events; older ones must be in the store); append the oldest batch
// not yet appended once at most one batch before it is not projected;
// project the oldest batch once it is appended. After a failure, recover
// once every batch in flight is done.
func (w *world) progress() error {
	n := len(w.flights)
	canDecide := !w.needRecover && len(w.queue) > 0 && (n < 2 || n == 2 && w.flights[0].appended)
	canAppend := n > 0 && !w.flights[0].appended || n > 1 && !w.flights[1].appended
	canProject := n > 0 && w.flights[0].appended
	switch {
	case w.needRecover && len(w.flights) == 0:
		if err := w.owner.m.Recover(context.Background()); err != nil {
			return fmt.Errorf("recovering after a failed batch: %w", err)
		}
		w.trace("%s recovers at %d", w.owner.name, w.owner.m.Head().Seq)
		w.stats.Recoveries++
		w.needRecover, w.projFailed = false, false
		return nil
	case !canDecide && !canAppend && !canProject:
		return nil
	}
	for {
		switch w.r.IntN(3) {
		case 0:
			if canDecide {
				return w.decide()
			}
		case 1:
			if canAppend {
				return w.appendNext()
			}
		default:
			if canProject {
				return w.project()
			}
		}
	}
}

// decide has the owner's machine decide the next commands of the queue.
func (w *world) decide() error {
	n := min(len(w.queue), 1+w.r.IntN(12))
	reqs := w.queue[:n:n]
	w.queue = w.queue[n:]
	cmds := make([]*domain.Command, n)
	for i, r := range reqs {
		cmds[i] = r.cmd
		if w.opts.Bug == BugRedeliveredDecidedAgain && w.acked[r.cmd.Request] != 0 {
			c := *r.cmd
			c.Request.ID += "/again"
			cmds[i] = &c
		}
	}
	b := w.owner.m.Decide(context.Background(), w.now, cmds)
	w.trace("%s decides %d commands: %v", w.owner.name, len(cmds), requestsOf(b))
	w.stats.Batches++
	f := &flight{b: b, reqs: reqs}
	if b.Err != nil {
		// Refused whole (its projections could not be prepared): answered
		// with the error; the state is ahead of the log.
		w.needRecover = true
		f.appended = true
		b.Records = nil
	}
	w.flights = append(w.flights, f)
	if w.opts.Bug == BugAnswerBeforeAppend {
		return w.answer(f)
	}
	return nil
}

// appendNext appends the oldest batch not yet appended. A failure fails it
// and every batch decided on top of it; the owner recovers once the
// batches before it are done.
func (w *world) appendNext() error {
	i := 0
	for w.flights[i].appended {
		i++
	}
	f := w.flights[i]
	switch p := w.r.IntN(100); {
	case p < 4:
		w.owner.log.next = failBefore
	case p < 7:
		w.owner.log.next = failAfter
	}
	err := w.owner.log.Append(context.Background(), f.b.Records)
	w.trace("%s appends %v: %v", w.owner.name, requestsOf(f.b), err)
	if err == nil {
		f.appended = true
		w.stats.Appended++
		return nil
	}
	if errors.Is(err, streams.ErrConflict) {
		w.stats.Conflicts++
	} else {
		w.stats.AppendFailures++
	}
	for _, g := range w.flights[i:] {
		g.b.Discard()
	}
	w.flights = w.flights[:i]
	w.needRecover = true
	return nil
}

// project commits the oldest batch's projections (or injects their
// failure) and answers its requests.
func (w *world) project() error {
	f := w.flights[0]
	w.flights = w.flights[1:]
	switch {
	case f.b.Err != nil:
	case f.b.Prepared == nil:
	case w.projFailed || w.r.IntN(100) < 3:
		// A failed commit, or a batch after one: in the log, not
		// projected; the batches not appended yet fail, and the owner
		// recovers from the log.
		f.b.Discard()
		if !w.projFailed {
			w.stats.ProjectionFailures++
		}
		w.needRecover, w.projFailed = true, true
		kept := w.flights[:0]
		for _, g := range w.flights {
			if g.appended {
				kept = append(kept, g)
			} else {
				g.b.Discard()
			}
		}
		w.flights = kept
	default:
		if err := f.b.Prepared.Commit(f.b.Checkpoint()); err != nil {
			return fmt.Errorf("committing projections: %w", err)
		}
		f.b.Prepared = nil
		w.stats.Projected++
	}
	if w.opts.Bug == BugAnswerBeforeAppend {
		return nil
	}
	return w.answer(f)
}

// answer acknowledges a batch's replies to its clients and checks each
// one: an event answered is in the log (it was appended), and a request
// answered twice gets the same event.
func (w *world) answer(f *flight) error {
	if f.b.Err != nil {
		return nil // refused: nothing acknowledged
	}
	if err := w.check(); err != nil {
		return err
	}
	for i, r := range f.reqs {
		rep := f.b.Replies[i]
		if rep.Err != nil || r.cmd.Type == domain.CmdTick || r.cmd.Type == domain.CmdExecuteTick {
			continue
		}
		var seq uint64
		if rep.Event != nil {
			seq = rep.Event.Seq
		}
		if seq != 0 && w.seen[r.cmd.Request] != seq {
			return fmt.Errorf("request %s answered with event %d, which the log does not hold for it (log head %d): an acknowledged decision lost", r.cmd.Request.ID, seq, w.part.head.Seq)
		}
		if prev, ok := w.acked[r.cmd.Request]; ok && prev != seq {
			return fmt.Errorf("request %s answered with event %d, and earlier with event %d: a step consumed twice", r.cmd.Request.ID, seq, prev)
		}
		w.acked[r.cmd.Request] = seq
		w.stats.Acked++
		w.clients.learn(r.cmd, rep.Event)
	}
	return nil
}

// crash stops the owner without warning: the batches in flight and the
// queue are lost, the store keeps what was committed; the instance
// restarts and recovers. Half the time its store is lost too (a new
// machine), and it is rebuilt from the log.
func (w *world) crash() error {
	w.stats.Crashes++
	w.trace("%s crashes", w.owner.name)
	for _, f := range w.flights {
		f.b.Discard()
	}
	w.queue = nil
	in := w.owner
	if err := in.store.Close(); err != nil {
		return fmt.Errorf("closing %s's store: %w", in.name, err)
	}
	in.store = nil
	if w.r.IntN(2) == 0 {
		in.fs = vfs.NewMem()
	}
	return w.own(in)
}

// rebalance assigns the partition to another instance; the former owner
// becomes a zombie that may still write (its batches in flight are
// abandoned, its machine back at what it last wrote).
func (w *world) rebalance() error {
	w.stats.Rebalances++
	w.trace("rebalance: %s loses the partition", w.owner.name)
	old := w.owner
	for _, f := range w.flights {
		f.b.Discard()
	}
	if w.zombie != nil {
		w.zombie.m, w.zombie.log = nil, nil
	}
	w.zombie = old
	if err := old.m.Recover(context.Background()); err != nil {
		return fmt.Errorf("resetting the zombie %s: %w", old.name, err)
	}
	var next *instance
	for next == nil || next == old {
		next = w.instances[w.r.IntN(len(w.instances))]
	}
	return w.own(next)
}

// zombieWrites has the zombie decide a few commands the partition
// redelivered to it and write them: its records either extend the chain
// (the new owner had not written yet; they are acknowledged, and the
// owner's next append conflicts and recovers over them) or are skipped by
// every reader, and the zombie, fenced, stops.
func (w *world) zombieWrites() error {
	z := w.zombie
	var cmds []*domain.Command
	for range 1 + w.r.IntN(3) {
		if c := w.clients.retry(w); c != nil {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	b := z.m.Decide(context.Background(), w.now, cmds)
	if b.Err != nil {
		b.Discard()
		return nil
	}
	w.stats.ZombieAppends++
	err := z.log.Append(context.Background(), b.Records)
	w.trace("zombie %s appends %v: %v", z.name, requestsOf(b), err)
	if err != nil {
		b.Discard()
		z.m, z.log = nil, nil
		w.zombie = nil
		return nil
	}
	if b.Prepared != nil {
		if err := b.Prepared.Commit(b.Checkpoint()); err != nil {
			return fmt.Errorf("committing the zombie's projections: %w", err)
		}
	}
	w.stats.ZombieAcks++
	reqs := make([]*request, len(cmds))
	for i, c := range cmds {
		reqs[i] = &request{cmd: c}
	}
	return w.answer(&flight{b: b, reqs: reqs})
}
