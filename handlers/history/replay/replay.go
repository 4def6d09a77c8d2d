package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// ReplayReport is the outcome of Replay.
type ReplayReport struct {
	Events int
	// Elapsed is the time the rebuild of the projections took.
	Elapsed time.Duration
	// ProjectionDiff describes the first difference between the live and
	// the rebuilt projections ("" when equal).
	ProjectionDiff string
	// Redecided counts the commands re-decided (Verify only); Mismatches
	// describes each recorded event that re-deciding did not reproduce.
	Redecided  int
	Mismatches []string
}

// OK reports whether the replay found nothing wrong.
func (r *ReplayReport) OK() bool { return r.ProjectionDiff == "" && len(r.Mismatches) == 0 }

// maxMismatches bounds the mismatches a report lists.
const maxMismatches = 100

// SignerFor returns the signer that re-signs an event's attestations
// during verification, given the tokens the event recorded: the key that
// signed them (by kid), with the TTL and the signature encoding they were
// recorded with.
type SignerFor func(recordedTokens ...string) domain.Signer

// Replay rebuilds every projection from log into a fresh store in a
// temporary directory and compares it with live, which must already be
// caught up with the log (OpenGate recovers it). With verify, it also
// re-decides every recorded command on the state before it and compares
// the event byte for byte (decisions and attestations).
func Replay(ctx context.Context, log streams.Log, live *projections.Store, verify bool, signerFor SignerFor) (*ReplayReport, error) {
	tmp, err := os.MkdirTemp("", "agentgate-replay-")
	if err != nil {
		return nil, fmt.Errorf("creating replay dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	fresh, err := projections.Open(filepath.Join(tmp, "state"), nil)
	if err != nil {
		return nil, err
	}
	defer fresh.Close()
	rep := &ReplayReport{}
	start := time.Now()
	n, err := handlers.ApplyLog(ctx, log, fresh, domain.NewState(), projections.Checkpoint{})
	if err != nil {
		return nil, fmt.Errorf("rebuilding projections: %w", err)
	}
	rep.Events, rep.Elapsed = n, time.Since(start)
	if rep.ProjectionDiff, err = projections.Equal(live, fresh); err != nil {
		return nil, err
	}
	if verify {
		if err := redecide(ctx, log, signerFor, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// redecide re-decides every recorded command and compares.
func redecide(ctx context.Context, log streams.Log, signerFor SignerFor, rep *ReplayReport) error {
	d := NewRedecider(signerFor)
	return log.Read(ctx, 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return fmt.Errorf("decoding log record %d: %w", r.Seq, err)
		}
		if ev.Command != nil {
			rep.Redecided++
		}
		if m := d.Next(ev, r.Payload); m != "" && len(rep.Mismatches) < maxMismatches {
			rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("seq %d (%s): %s", ev.Seq, ev.Type, m))
		}
		return nil
	})
}

// Redecider re-decides a log's events one at a time, in log order from
// seq 1: each recorded command on the state before it, each checkpoint
// from the position it covers. replay --verify runs one over the whole
// log; the simulator (handlers/sim) runs one behind the log as it grows.
type Redecider struct {
	st        *domain.State
	retired   *domain.RetiredSteps
	signerFor SignerFor
}

// NewRedecider returns a Redecider at the start of the log. signerFor gives
// the signer of each event's attestations and checkpoint (nil: no signer;
// checkpoints are then not compared).
func NewRedecider(signerFor SignerFor) *Redecider {
	return &Redecider{st: domain.NewState(), retired: domain.NewRetiredSteps(), signerFor: signerFor}
}

// Next re-decides ev, the next event of the log, whose record payload is
// payload, folds it, and returns how the re-decided event differs from
// the recorded one ("" when it does not).
func (d *Redecider) Next(ev *domain.Event, payload []byte) string {
	var mismatch string
	if ev.Checkpoint != nil && d.signerFor != nil {
		// A checkpoint is reproducible from the log: re-sign what it
		// covers and compare the bytes.
		mismatch = recheckpoint(ev, d.signerFor(ev.Checkpoint.Signature), payload)
	}
	if ev.Command != nil {
		var signer domain.Signer
		if d.signerFor != nil {
			var toks []string
			if ev.Decided != nil {
				toks = []string{ev.Decided.Attestation}
			}
			if ev.QWEDVerified != nil {
				toks = ev.QWEDVerified.Attestations
			}
			if ev.A2AVerdict != nil {
				toks = []string{ev.A2AVerdict.Attestation}
			}
			signer = d.signerFor(toks...)
		}
		env := domain.Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition, Signer: signer, RetiredStep: d.retired.Step}
		mismatch = compareEvent(ev, domain.Decide(d.st, env, ev.Command), payload)
	}
	d.retired.Note(d.st, ev)
	domain.Apply(d.st, ev)
	return mismatch
}

func compareEvent(recorded, got *domain.Event, payload []byte) string {
	if got == nil {
		return "re-deciding recorded nothing"
	}
	got.Prev = recorded.Prev
	b, err := handlers.EncodeEvent(got)
	if err != nil {
		return "encoding re-decided event: " + err.Error()
	}
	if bytes.Equal(b, payload) {
		return ""
	}
	switch {
	case recorded.Decided != nil && got.Decided != nil && recorded.Decided.Decision != got.Decided.Decision:
		return fmt.Sprintf("decision %s, re-decided %s", recorded.Decided.Decision, got.Decided.Decision)
	case recorded.Decided != nil && got.Decided != nil && recorded.Decided.Attestation != got.Decided.Attestation:
		return "attestation differs"
	case recorded.A2AVerdict != nil && got.A2AVerdict != nil && recorded.A2AVerdict.Status != got.A2AVerdict.Status:
		return fmt.Sprintf("A2A verdict %s, re-decided %s", recorded.A2AVerdict.Status, got.A2AVerdict.Status)
	case recorded.A2AVerdict != nil && got.A2AVerdict != nil && recorded.A2AVerdict.Attestation != got.A2AVerdict.Attestation:
		return "A2A attestation differs"
	}
	return fmt.Sprintf("event differs:\n  recorded %s\n  decided  %s", payload, b)
}

// recheckpoint rebuilds a recorded checkpoint from the position it covers
// and compares it with the recorded bytes ("" when equal).
func recheckpoint(recorded *domain.Event, signer domain.Signer, payload []byte) string {
	cs, ok := signer.(domain.CheckpointSigner)
	if !ok {
		return "no checkpoint signer to reproduce the checkpoint"
	}
	env := domain.Env{Now: recorded.Time, Seq: recorded.Seq, Partition: recorded.Partition}
	got, err := domain.Checkpoint(env, recorded.Prev, recorded.Checkpoint.Next, cs)
	if err != nil {
		return "rebuilding the checkpoint: " + err.Error()
	}
	return compareEvent(recorded, got, payload)
}

// State is the state after the events Next was given: the log's fold. It
// is the Redecider's: read it between calls, never change it.
func (d *Redecider) State() *domain.State { return d.st }
