package backtest

import (
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// decodeForRedecide decodes p, and when it is an event the fold will
// re-decide (a command of a selected agent in the period, other than a
// registration or a tick) returns only its slim part: its position, its
// command and its outcome, which is all the fold reads of it (the
// re-decided event is folded instead).
func decodeForRedecide(p []byte, from time.Time, selected map[string]bool) (*domain.Event, error) {
	ev, err := eventjson.DecodeEvent(p)
	if err != nil {
		return nil, err
	}
	cmd := ev.Command
	if ev.Time.Before(from) || cmd == nil || cmd.Type == domain.CmdRegisterAgent || cmd.Type == domain.CmdTick || cmd.Type == domain.CmdExecuteTick ||
		!(selected[ev.AgentID] || selected[cmd.AgentID]) {
		return ev, nil
	}
	slim := &domain.Event{Seq: ev.Seq, Partition: ev.Partition, Time: ev.Time, Type: ev.Type, Command: cmd, AgentID: ev.AgentID, Error: ev.Error,
		Transaction: ev.Transaction}
	if d := ev.Decided; d != nil {
		slim.Decided = &domain.ActionDecided{ActionID: d.ActionID, Kind: d.Kind, ActionType: d.ActionType, Tool: d.Tool,
			Decision: d.Decision, Error: d.Error, ReservedCost: d.ReservedCost, ReservedTokens: d.ReservedTokens}
	}
	return slim, nil
}
