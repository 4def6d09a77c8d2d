package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// checkpoints is the worker's log checkpoint cadence (issue 5): it appends
// a signed log.checkpointed event at the end of the batch in which the
// policy of the last checkpoint made one due, in the same atomic append.
// Owned by the worker goroutine.
type checkpoints struct {
	signer domain.CheckpointSigner // nil: no checkpoints
	config domain.CheckpointPolicy // declared by each new checkpoint
	// policy is the one the last checkpoint declared (config before the
	// first): it decides when the next one is due.
	policy    domain.CheckpointPolicy
	uncovered int64     // events after the last checkpoint
	first     time.Time // the time of the first of them
}

// newCheckpoints returns the cadence of cfg: its Checkpoint policy
// (domain.DefaultCheckpointPolicy when zero), signed by its Signer when
// that implements domain.CheckpointSigner (attest's signers do).
func newCheckpoints(cfg MachineConfig) checkpoints {
	p := cfg.Checkpoint
	if p.Events <= 0 {
		p.Events = domain.DefaultCheckpointEvents
	}
	if p.Interval <= 0 {
		p.Interval = domain.Duration(domain.DefaultCheckpointInterval)
	}
	cs, _ := cfg.Signer.(domain.CheckpointSigner)
	return checkpoints{signer: cs, config: p, policy: p}
}

// recoverCheckpoints resumes the cadence from the store, which must be
// caught up with the log: the last checkpoint's policy, the events after
// it and the time of the first of them.
func (m *Machine) recoverCheckpoints(ctx context.Context) error {
	m.ck = newCheckpoints(m.cfg)
	last, err := m.cfg.Store.LastLogCheckpoint()
	if err != nil {
		return fmt.Errorf("loading the last log checkpoint: %w", err)
	}
	if last.Seq > 0 && last.Next.Valid() {
		m.ck.policy = last.Next
	}
	head := m.cfg.Log.Head()
	if head.Seq <= last.Seq {
		return nil
	}
	m.ck.uncovered = int64(head.Seq - last.Seq)
	ev, err := ReadEvent(ctx, m.cfg.Log, last.Seq+1)
	if err != nil {
		return fmt.Errorf("reading the first event after the last log checkpoint: %w", err)
	}
	m.ck.first = ev.Time
	return nil
}

// appendCheckpoint counts the batch's events and, when a checkpoint is due
// at its end, appends it to the batch (decided, encoded and folded like
// every event). A checkpoint that cannot be built refuses the batch: its
// events would otherwise be appended without the checkpoint that is due.
// tick tells whether the batch holds a tick.
func (m *Machine) appendCheckpoint(b *Batch, tick bool) {
	ck := &m.ck
	if ck.signer == nil || b.Err != nil {
		return
	}
	for _, ev := range b.fold.Events() {
		if ck.uncovered == 0 {
			ck.first = ev.Time
		}
		ck.uncovered++
	}
	if ck.uncovered == 0 || (ck.uncovered < ck.policy.Events && b.Time.Sub(ck.first) < time.Duration(ck.policy.Interval)) {
		return
	}
	if b.fold.Len() == 0 && !tick {
		// A batch of retries appends nothing (they get their recorded
		// events); a checkpoint due by time waits for the next tick.
		return
	}
	m.addCheckpoint(b)
}

// addCheckpoint appends to b the checkpoint that covers b's head.
func (m *Machine) addCheckpoint(b *Batch) {
	ck := &m.ck
	env := domain.Env{Now: b.Time, Seq: b.Head.Seq + 1, Partition: m.cfg.Partition}
	ev, err := domain.Checkpoint(env, b.Head.Hash, ck.config, ck.signer)
	if err == nil {
		err = m.add(b, ev)
	}
	if err != nil {
		m.cfg.Logger.Error("building log checkpoint", "err", err, "seq", env.Seq)
		m.refuse(b, fmt.Errorf("building log checkpoint: %w", err))
		return
	}
	ck.uncovered, ck.policy = 0, ck.config
}

func hasTick(cmds []*domain.Command) bool {
	for _, c := range cmds {
		if c.Type == domain.CmdTick {
			return true
		}
	}
	return false
}

// FinalCheckpointTimeout bounds the append of the checkpoint a graceful
// stop writes.
const FinalCheckpointTimeout = 5 * time.Second

// FinalCheckpoint returns, when events are left that no checkpoint
// covers, the batch of the checkpoint that covers them, decided at now (a
// graceful stop appends it once every batch is committed, issue 11: a log
// exported after the stop is then signed up to its last event); nil when
// there is none to write.
func (m *Machine) FinalCheckpoint(now time.Time) *Batch {
	if m.ck.signer == nil || m.ck.uncovered == 0 {
		return nil
	}
	b := &Batch{Head: m.head, Time: m.timeAt(now), pending: map[domain.RequestID]*domain.Event{}}
	m.addCheckpoint(b)
	m.prepare(b)
	if b.Err != nil {
		return nil
	}
	m.head = b.Head
	return b
}

// finalCheckpoint appends the machine's final checkpoint (FinalCheckpoint)
// once every batch is committed; a failure only loses the checkpoint (the
// next start appends it when it is due).
func (w *Worker) finalCheckpoint(ctx context.Context) {
	if w.stale || w.checkSpace() != nil {
		return // a stale state, or a full disk: no checkpoint to write
	}
	b := w.m.FinalCheckpoint(w.cfg.Clock())
	if b == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinalCheckpointTimeout)
	defer cancel()
	if err := w.commitNow(cctx, &flight{Batch: b}); err != nil {
		w.cfg.Logger.Warn("appending the final log checkpoint", "err", err, "seq", b.Head.Seq)
		return
	}
	w.cfg.Logger.Info("appended the final log checkpoint", "seq", b.Head.Seq)
}
