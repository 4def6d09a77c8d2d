package timetravel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// A2AState is agent-to-agent interception as it stood right after one
// event of the log: one boundary and the gate-wide one it inherits, and
// the verdicts recorded under that boundary up to the event.
type A2AState struct {
	// Seq and Time are the event's.
	Seq  uint64
	Time time.Time
	// Boundary and Inherited are the boundary's lists and the gate-wide
	// ("*") ones then (the zero value when they listed nothing).
	Boundary, Inherited domain.A2ABoundary
	// Counts are the counters of the boundary's verdicts up to the event,
	// as the projections count them (projections.A2ATally); Pairs its
	// pairs counted one by one.
	Counts projections.A2ACounts
	Pairs  map[[2]string]*projections.StatusCounts
	// Verdict is the event at Seq when it is a verdict under the boundary.
	Verdict *domain.Event
}

// a2aMarker is in the bytes of every A2A event (a2a_verdict, a2a_boundary)
// and of few others: only records holding it are decoded.
var a2aMarker = []byte(`"a2a_`)

// A2AAt folds the log from its first event up to seq into the A2A state
// of boundary (a principal, or domain.AdminPrincipal), exactly as the
// worker folds the boundary changes (domain.Apply) and the projections
// count the verdicts. It holds one boundary's lists and counters, so its
// memory is bounded by domain.MaxA2AAgents, MaxA2APairs and
// projections.MaxA2APairsPerPrincipal.
func A2AAt(ctx context.Context, log streams.Log, boundary string, seq uint64) (*A2AState, error) {
	st := domain.NewState()
	var tally projections.A2ATally
	out := &A2AState{Seq: seq}
	var err error
	out.Time, err = foldUpTo(ctx, log, seq, a2aMarker, func(ev *domain.Event, last bool) {
		switch {
		case ev.A2ABoundary != nil && ev.Command != nil && (ev.Command.Principal == boundary || ev.Command.Principal == domain.AdminPrincipal):
			domain.Apply(st, ev)
		case ev.A2AVerdict != nil && ev.A2AVerdict.Boundary == boundary:
			tally.Add(ev)
			if last {
				out.Verdict = ev
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if a := st.A2A; a != nil {
		if b := a.Boundaries[boundary]; b != nil {
			out.Boundary = *b
		}
		if b := a.Boundaries[domain.AdminPrincipal]; b != nil {
			out.Inherited = *b
		}
	}
	if c := tally.Boundaries[boundary]; c != nil {
		out.Counts = *c
	}
	out.Pairs = tally.PairCounts[boundary]
	return out, nil
}

// foldUpTo decodes the records of log up to seq that hold needle, and
// the one at seq whatever it holds, and hands each to fn in log order
// (last set for the one at seq); it returns the time of the event at
// seq. A seq outside the log is ErrBeyondHead.
func foldUpTo(ctx context.Context, log streams.Log, seq uint64, needle []byte, fn func(ev *domain.Event, last bool)) (time.Time, error) {
	var at time.Time
	if seq == 0 || seq > log.Head().Seq {
		return at, fmt.Errorf("%w: seq %d (head %d)", ErrBeyondHead, seq, log.Head().Seq)
	}
	err := log.Read(ctx, 1, func(r streams.Record) error {
		if r.Seq > seq {
			return errFolded
		}
		if r.Seq != seq && !bytes.Contains(r.Payload, needle) {
			return nil
		}
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return fmt.Errorf("decoding log record %d: %w", r.Seq, err)
		}
		if r.Seq == seq {
			at = ev.Time
		}
		fn(ev, r.Seq == seq)
		if r.Seq == seq {
			return errFolded
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFolded) {
		return at, fmt.Errorf("folding the log up to seq %d: %w", seq, err)
	}
	return at, nil
}
