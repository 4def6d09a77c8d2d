package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// MachineConfig configures a Machine: WorkerConfig's fields that decide.
type MachineConfig struct {
	// Log is read for the events of requests already recorded and, by
	// Recover, for the tail the projections have not applied.
	Log streams.Log
	// Store is read for the state, the request index and retired
	// conversations; Decide prepares each batch's projections on it.
	Store     *projections.Store
	Signer    domain.Signer
	Partition int32
	// Config is the decision configuration (nil: keep what the log says).
	Config *domain.Config
	// Checkpoint is the log checkpoint policy (see WorkerConfig).
	Checkpoint domain.CheckpointPolicy
	Logger     *slog.Logger
}

// Machine is the partition worker's logic as a state machine (etcd/raft's
// Ready pattern): it holds the decided state and answers each input with
// its output as data, and never starts a goroutine, reads a clock or writes
// anything but through Recover.
//
// Decide takes a batch of commands and the time its driver read, and
// returns a Batch: the records to append in one write, the projection
// batch to commit after them, and the reply to each command. The driver
// (Worker.Run in production, handlers/sim in the simulator) does the IO:
// it appends the records, commits the projections in log order once the
// records are in the log, and answers the callers after their batch's
// projections. The machine's state already includes every batch it
// returned, so the driver may decide the next batches while earlier ones
// are still being appended and projected (the worker decides n+2 while n+1
// is appended and n projected); Decide answers the retries of the two
// batches before it from their events, since their projections may not be
// committed yet. When the driver learns that a batch was not appended (or
// was refused, Batch.Err), the state is ahead of the log: it waits until
// every batch handed on is done, then calls Recover before deciding again.
//
// The only reads are of the projections and the log (the request index,
// retired conversations, recorded events), deterministic for a given log
// and store. A Machine is not safe for concurrent use.
type Machine struct {
	cfg   MachineConfig
	state *domain.State
	head  streams.Head // the last decided event
	// prev holds the events of the two batches last decided, by request,
	// for the retries that arrive before their projections do.
	prev [2]map[domain.RequestID]*domain.Event
	// prevRetired holds the conversations those two batches evicted
	// (projections.Fold.Retirements), for the RetiredStep of the next ones.
	prevRetired [2][]projections.Retired
	ck          checkpoints // the log checkpoint cadence
	quiet       diskspace.LogLimiter
}

// Batch is the output of Machine.Decide: what the driver writes, and the
// answers it gives once written.
type Batch struct {
	// Records are the batch's events (a log checkpoint last when one is
	// due), to append in one write; none when the batch records nothing.
	Records []streams.Record
	// Head is the log's head once Records are appended.
	Head streams.Head
	// Time is the batch's decision time (never before the last event's).
	Time time.Time
	// Prepared is the batch's projection batch (nil when Records is
	// empty): committed with Checkpoint() once Records are in the log and
	// every earlier batch is projected, or discarded.
	Prepared *projections.Prepared
	// Replies answer the commands of the batch, in order.
	Replies []Reply
	// Err, when set, refuses the whole batch: nothing is to be appended,
	// every command is answered with it, and the machine must be
	// recovered, as after a failed append.
	Err error

	fold    projections.Fold // the batch's events, folded
	pending map[domain.RequestID]*domain.Event
}

// Reply answers one command of a batch: its event (the new one, or the one
// recorded for an earlier identical request; nil when the command records
// nothing), or the error that refused it (wrapping ErrUnavailable).
type Reply struct {
	Event *domain.Event
	Err   error
}

// Checkpoint is the projections' checkpoint once the batch is projected.
func (b *Batch) Checkpoint() projections.Checkpoint {
	return projections.Checkpoint{Seq: b.Head.Seq, Hash: b.Head.Hash, Time: b.Time}
}

// Events are the batch's events, in log order.
func (b *Batch) Events() []*domain.Event { return b.fold.Events() }

// Discard drops the batch's projection batch (the batch will not be
// projected).
func (b *Batch) Discard() {
	if b.Prepared != nil {
		b.Prepared.Discard()
		b.Prepared = nil
	}
}

// NewMachine returns a machine over cfg's log and store, recovered
// (Recover).
func NewMachine(ctx context.Context, cfg MachineConfig) (*Machine, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Machine{cfg: cfg}
	return m, m.Recover(ctx)
}

// Recover loads the projections, applies the log beyond their checkpoint
// to them and resumes the checkpoint cadence: the state after a start, or
// after a batch that failed. It forgets the batches decided before it. It
// is the one call that writes (the projections, through ApplyLog).
func (m *Machine) Recover(ctx context.Context) error {
	m.prev = [2]map[domain.RequestID]*domain.Event{}
	m.prevRetired = [2][]projections.Retired{}
	st, err := m.cfg.Store.LoadState()
	if err != nil {
		return fmt.Errorf("loading state: %w", err)
	}
	ck, err := m.cfg.Store.Checkpoint()
	if err != nil {
		return fmt.Errorf("loading checkpoint: %w", err)
	}
	// A lazily opened log (kafkalog.Options.Lazy) knows its head once
	// ApplyLog's read has caught up with it: compare after.
	n, err := ApplyLog(ctx, m.cfg.Log, m.cfg.Store, st, ck)
	if err != nil {
		return err
	}
	head := m.cfg.Log.Head()
	if ck.Seq > head.Seq {
		return fmt.Errorf("projections at seq %d are ahead of the log at seq %d: the log lost events", ck.Seq, head.Seq)
	}
	if n > 0 {
		m.cfg.Logger.Info("recovered projections from the log", "events", n, "from_seq", ck.Seq+1, "to_seq", head.Seq)
	}
	if err := m.recoverCheckpoints(ctx); err != nil {
		return err
	}
	m.state, m.head = st, m.cfg.Log.Head()
	return nil
}

// Head is the position of the last event the machine decided.
func (m *Machine) Head() streams.Head { return m.head }

// State is the decided state. It is the machine's: read it between
// inputs, never change it.
func (m *Machine) State() *domain.State { return m.state }

// ConfigureCommand returns the command that records the configured
// decision options, or nil when they are those in force.
func (m *Machine) ConfigureCommand() *domain.Command {
	if m.cfg.Config == nil || m.cfg.Config.Equal(m.state.Config) {
		return nil
	}
	return &domain.Command{
		Type:      domain.CmdConfigure,
		Principal: domain.AdminPrincipal,
		Request:   domain.RequestID{Source: "agentgate/config", ID: fmt.Sprintf("seq-%d", m.head.Seq+1)},
		Configure: &domain.Configure{Config: *m.cfg.Config},
	}
}

// Decide decides cmds, in order, at now (or the last event's time, if
// later), each on the state the previous left, and returns the batch.
// The machine's head and state move past it at once.
//
// A command already recorded (same RequestID) in this batch, the two
// before it or the log is answered with its recorded event and decided
// no more. A tick (domain.CmdTick, domain.CmdExecuteTick: the gate's
// clock, with no request of its own) is never looked up. cmds holds at most
// MaxBatch commands (more panics: the driver broke its contract).
//
// The driver decides a batch only while at most two batches decided
// before it are not yet projected: the retries of those two are answered
// from their events, the older ones from the store.
func (m *Machine) Decide(ctx context.Context, now time.Time, cmds []*domain.Command) *Batch {
	b := m.decide(ctx, now, cmds)
	// Retries of the two batches whose projections may not be committed
	// yet find their events here.
	m.prev[1], m.prev[0] = b.pending, m.prev[1]
	m.prevRetired[1], m.prevRetired[0] = b.fold.Retirements(), m.prevRetired[1]
	return b
}

// decide is Decide without remembering the batch for the next ones' retries
// (the configuration and the final checkpoint, committed before anything
// else is decided).
func (m *Machine) decide(ctx context.Context, now time.Time, cmds []*domain.Command) *Batch {
	if len(cmds) > MaxBatch {
		panic(fmt.Sprintf("handlers: a batch of %d commands, more than MaxBatch (%d)", len(cmds), MaxBatch))
	}
	now = m.timeAt(now)
	b := &Batch{
		Head:    m.head,
		Time:    now,
		Replies: make([]Reply, len(cmds)),
		Records: make([]streams.Record, 0, len(cmds)),
		pending: make(map[domain.RequestID]*domain.Event, len(cmds)),
	}
	b.fold.Grow(len(cmds))
	retired := m.retiredStep(b)
	for i, cmd := range cmds {
		if !isTick(cmd.Type) {
			if ev, ok := b.pending[cmd.Request]; ok {
				b.Replies[i].Event = ev
				continue
			}
			// The batches being committed are not in the projections yet.
			if ev, ok := m.prev[1][cmd.Request]; ok {
				b.Replies[i].Event = ev
				continue
			}
			if ev, ok := m.prev[0][cmd.Request]; ok {
				b.Replies[i].Event = ev
				continue
			}
			if ev, err := m.recorded(ctx, cmd.Request); err != nil {
				b.Replies[i].Err = err
				continue
			} else if ev != nil {
				b.Replies[i].Event = ev
				continue
			}
		}
		env := domain.Env{Now: now, Seq: b.Head.Seq + 1, Partition: m.cfg.Partition, Signer: m.cfg.Signer, RetiredStep: retired}
		ev := domain.Decide(m.state, env, cmd)
		if ev == nil {
			continue
		}
		if err := m.add(b, ev); err != nil {
			b.Replies[i].Err = err
			continue
		}
		if !isTick(cmd.Type) {
			b.pending[cmd.Request] = ev
		}
		b.Replies[i].Event = ev
	}
	m.appendCheckpoint(b, hasTick(cmds))
	m.prepare(b)
	m.head = b.Head
	return b
}

// timeAt is the decision time of a batch decided when the driver's clock
// read now: now, or the last event's time if later.
func (m *Machine) timeAt(now time.Time) time.Time {
	now = now.UTC()
	if now.Before(m.state.LastTime) {
		return m.state.LastTime
	}
	return now
}

// add encodes ev as the next record of b and folds it into the state. An
// event that cannot be encoded is not added (the command is refused).
func (m *Machine) add(b *Batch, ev *domain.Event) error {
	if ev.Seq != b.Head.Seq+1 {
		panic(fmt.Sprintf("handlers: decided event %d after head %d: the chain would have a gap", ev.Seq, b.Head.Seq))
	}
	if err := fits(m.state, ev); err != nil {
		panic(fmt.Sprintf("handlers: decided event %d (%s) does not fit the state: %v", ev.Seq, ev.Type, err))
	}
	ev.Prev = b.Head.Hash
	payload, err := EncodeEvent(ev)
	if err != nil {
		return fmt.Errorf("encoding event: %w", err)
	}
	rec := streams.Record{Seq: ev.Seq, Prev: ev.Prev, Payload: payload}
	b.Head = streams.Head{Seq: ev.Seq, Hash: rec.Hash()}
	b.fold.Add(m.state, ev)
	b.Records = append(b.Records, rec)
	return nil
}

// prepare prepares the projections of b's events.
func (m *Machine) prepare(b *Batch) {
	if b.Err != nil || b.fold.Len() == 0 {
		return
	}
	prep, err := m.cfg.Store.Prepare(m.state, &b.fold)
	if err != nil {
		// Appended without its projections, the batch would leave the
		// store behind the state: refuse it (the driver recovers).
		m.quiet.Log(m.cfg.Logger, slog.LevelError, "preparing", "preparing projections", "err", err, "seq", b.Head.Seq)
		m.refuse(b, fmt.Errorf("preparing projections: %w", err))
		return
	}
	b.Prepared = prep
}

// refuse refuses the whole batch with err.
func (m *Machine) refuse(b *Batch, err error) {
	b.Discard()
	b.Err = err
	b.Records, b.fold = nil, projections.Fold{}
}

// retiredStep returns the domain.Env.RetiredStep of the batch b: the
// conversations evicted by b itself, then by the two batches before it
// (whose projections may not be committed yet), then the store. A store
// that cannot be read answers a step no request exceeds: the request is
// refused as a replay rather than a step accepted twice (fail closed).
func (m *Machine) retiredStep(b *Batch) func(agent, conv string) (int64, bool) {
	return func(agent, conv string) (int64, bool) {
		if s, ok := b.fold.RetiredStep(agent, conv); ok {
			return s, true
		}
		for _, rs := range [...][]projections.Retired{m.prevRetired[1], m.prevRetired[0]} {
			if s, ok := projections.RetiredIn(rs, agent, conv); ok {
				return s, true
			}
		}
		s, ok, err := m.cfg.Store.RetiredStep(agent, conv)
		if err != nil {
			m.cfg.Logger.Error("reading a retired conversation", "agent", agent, "err", err)
			return math.MaxInt64, true
		}
		return s, ok
	}
}

// recorded returns the event already recorded for a request, or nil.
func (m *Machine) recorded(ctx context.Context, id domain.RequestID) (*domain.Event, error) {
	seq, err := m.cfg.Store.RequestSeq(id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return ReadEvent(ctx, m.cfg.Log, seq)
}

// isTick reports whether commands of type t are the gate's clock: they
// carry no request of their own, so they are never looked up as retries
// nor remembered as a request's decision.
func isTick(t domain.CommandType) bool {
	return t == domain.CmdTick || t == domain.CmdExecuteTick
}
