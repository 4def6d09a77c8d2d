package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
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
func newCheckpoints(cfg WorkerConfig) checkpoints {
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
func (w *Worker) recoverCheckpoints(ctx context.Context) error {
	w.ck = newCheckpoints(w.cfg)
	last, err := w.cfg.Store.LastLogCheckpoint()
	if err != nil {
		return fmt.Errorf("loading the last log checkpoint: %w", err)
	}
	if last.Seq > 0 && last.Next.Valid() {
		w.ck.policy = last.Next
	}
	head := w.cfg.Log.Head()
	if head.Seq <= last.Seq {
		return nil
	}
	w.ck.uncovered = int64(head.Seq - last.Seq)
	ev, err := ReadEvent(ctx, w.cfg.Log, last.Seq+1)
	if err != nil {
		return fmt.Errorf("reading the first event after the last log checkpoint: %w", err)
	}
	w.ck.first = ev.Time
	return nil
}

// appendCheckpoint counts the batch's events and, when a checkpoint is due
// at its end, appends it to the batch (decided, encoded and folded like
// every event). A checkpoint that cannot be built fails the batch: its
// events would otherwise be appended without the checkpoint that is due.
func (w *Worker) appendCheckpoint(f *flight) {
	ck := &w.ck
	if ck.signer == nil || f.failed {
		return
	}
	for _, ev := range f.fold.Events() {
		if ck.uncovered == 0 {
			ck.first = ev.Time
		}
		ck.uncovered++
	}
	if ck.uncovered == 0 || (ck.uncovered < ck.policy.Events && f.now.Sub(ck.first) < time.Duration(ck.policy.Interval)) {
		return
	}
	if f.fold.Len() == 0 && !hasTick(f.batch) {
		// A batch of retries appends nothing (they get their recorded
		// events); a checkpoint due by time waits for the next tick.
		return
	}
	w.addCheckpoint(f)
}

// addCheckpoint appends to f the checkpoint that covers f's head.
func (w *Worker) addCheckpoint(f *flight) {
	ck := &w.ck
	env := domain.Env{Now: f.now, Seq: f.head.Seq + 1, Partition: w.cfg.Partition}
	ev, err := domain.Checkpoint(env, f.head.Hash, ck.config, ck.signer)
	var payload []byte
	if err == nil {
		ev.Prev = f.head.Hash
		payload, err = EncodeEvent(ev)
	}
	if err != nil {
		w.cfg.Logger.Error("building log checkpoint", "err", err, "seq", env.Seq)
		f.fail(fmt.Errorf("building log checkpoint: %w", err))
		f.records, f.fold = nil, projections.Fold{}
		f.failed = true
		return
	}
	rec := streams.Record{Seq: ev.Seq, Prev: ev.Prev, Payload: payload}
	f.head = streams.Head{Seq: ev.Seq, Hash: rec.Hash()}
	f.fold.Add(w.state, ev)
	f.records = append(f.records, rec)
	ck.uncovered, ck.policy = 0, ck.config
}

func hasTick(batch []*request) bool {
	for _, r := range batch {
		if r.cmd.Type == domain.CmdTick {
			return true
		}
	}
	return false
}

// FinalCheckpointTimeout bounds the append of the checkpoint a graceful
// stop writes.
const FinalCheckpointTimeout = 5 * time.Second

// finalCheckpoint appends, when a graceful stop leaves events that no
// checkpoint covers, the checkpoint that covers them (issue 11): a log
// exported after the stop is then signed up to its last event. It runs
// once every batch is committed; a failure only loses the checkpoint
// (the next start appends it when it is due).
func (w *Worker) finalCheckpoint(ctx context.Context) {
	if w.ck.signer == nil || w.ck.uncovered == 0 || w.stale || w.checkSpace() != nil {
		return // a stale state, or a full disk: no checkpoint to write
	}
	now := w.cfg.Clock().UTC()
	if now.Before(w.state.LastTime) {
		now = w.state.LastTime
	}
	f := &flight{head: w.head, now: now, pending: map[domain.RequestID]*domain.Event{}}
	w.addCheckpoint(f)
	w.prepare(f)
	if f.failed {
		return
	}
	w.head = f.head
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinalCheckpointTimeout)
	defer cancel()
	if err := w.commitNow(cctx, f); err != nil {
		w.cfg.Logger.Warn("appending the final log checkpoint", "err", err, "seq", f.head.Seq)
		return
	}
	w.cfg.Logger.Info("appended the final log checkpoint", "seq", f.head.Seq)
}
