package sim

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/projections"
)

// check follows the log's chain from where it last stopped, as every
// reader does, and checks each new event: it is at its seq, its request
// was not decided before (no step consumed twice), re-deciding its
// command on the state before it reproduces its bytes (replay --verify),
// and it leaves no agent over its daily cost budget.
func (w *world) check() error {
	for seq := w.stats.Events + 1; seq <= w.part.head.Seq; seq++ {
		rec := w.part.record(seq)
		ev, err := eventjson.DecodeEvent(rec.Payload)
		if err != nil {
			return fmt.Errorf("decoding event %d: %w", seq, err)
		}
		if ev.Seq != seq {
			return fmt.Errorf("the log's record %d holds event %d", seq, ev.Seq)
		}
		if c := ev.Command; c != nil && c.Type != domain.CmdTick && c.Type != domain.CmdExecuteTick && c.Request.ID != "" {
			if at, dup := w.seen[c.Request]; dup {
				return fmt.Errorf("request %s decided twice: events %d and %d", c.Request.ID, at, seq)
			}
			w.seen[c.Request] = seq
		}
		if m := w.redo.Next(ev, rec.Payload); m != "" {
			return fmt.Errorf("replay does not re-decide event %d (%s): %s", seq, ev.Type, m)
		}
		if a := w.redo.State().Agents[ev.AgentID]; a != nil && a.Budget.MaxDailyCost > 0 && a.Usage.DailyCost > a.Budget.MaxDailyCost {
			return fmt.Errorf("event %d leaves agent %s at a daily cost of %d µ$, over its budget of %d", seq, a.ID, a.Usage.DailyCost, a.Budget.MaxDailyCost)
		}
		if x := w.redo.State().Exec; x != nil {
			if ce := x.Consumers["org_1"]; ce != nil && ce.Ledger != nil {
				if day := ce.Ledger.Totals(ev.Time, nil, "").Day; day > simDailyCents {
					return fmt.Errorf("event %d leaves consumer org_1 at a rolling day of %d cents, over its limit of %d", seq, day, simDailyCents)
				}
			}
		}
		w.count(ev)
		w.stats.Events = seq
	}
	return nil
}

// fullCheck, with nothing in flight, checks that the owner's machine is at
// the head of what it reads of the log, that its projections equal the
// projections rebuilt from that log, and that the state it decides on is
// the one its store gives back.
func (w *world) fullCheck() error {
	w.stats.FullChecks++
	in := w.owner
	if mh, lh := in.m.Head(), in.log.Head(); mh != lh {
		return fmt.Errorf("%s's machine is at event %d, its log at %d with nothing in flight", in.name, mh.Seq, lh.Seq)
	}
	fresh, err := projections.OpenWith("rebuilt", projections.Options{FS: vfs.NewMem(), MinFreeBytes: -1, Logger: quiet})
	if err != nil {
		return fmt.Errorf("opening a store to rebuild: %w", err)
	}
	defer fresh.Close()
	if _, err := handlers.ApplyLog(context.Background(), in.log, fresh, domain.NewState(), projections.Checkpoint{}); err != nil {
		return fmt.Errorf("rebuilding the projections from the log: %w", err)
	}
	if diff, err := projections.Equal(in.store, fresh); err != nil || diff != "" {
		return fmt.Errorf("%s's projections differ from a rebuild from the log: %s %v", in.name, diff, err)
	}
	return nil
}

// count counts ev in the statistics.
func (w *world) count(ev *domain.Event) {
	st := &w.stats
	switch ev.Type {
	case domain.EvActionDecided:
		switch ev.Decided.Decision {
		case domain.Approved:
			st.Approved++
		case domain.Denied:
			st.Denied++
		case domain.Pending:
			st.Pending++
		case domain.BudgetExceeded:
			st.BudgetExceeded++
		}
	case domain.EvExecutionLogged:
		st.Executed++
	case domain.EvApprovalResolved:
		st.Resolved++
	case domain.EvApprovalsExpired:
		st.Expired++
	case domain.EvCommandRejected:
		st.Rejected++
	case domain.EvLogCheckpointed:
		st.Checkpoints++
	case domain.EvA2AVerdict:
		switch ev.A2AVerdict.Status {
		case a2a.StatusForwarded:
			st.A2AForwarded++
		case a2a.StatusBlocked:
			st.A2ABlocked++
		case a2a.StatusRateLimited:
			st.A2ARateLimited++
		}
	case domain.EvA2ABoundaryChanged:
		st.A2ABoundaryChanges++
	case domain.EvExecuteDecided:
		switch ev.Transaction.Status {
		case domain.TxExecuting:
			st.ExecExecuting++
		case domain.TxBlocked:
			st.ExecBlocked++
		case domain.TxPendingApproval:
			st.ExecPending++
		}
	case domain.EvExecuteCompleted:
		st.ExecCompleted++
	case domain.EvExecuteTimers:
		st.ExecTimers++
	}
}
