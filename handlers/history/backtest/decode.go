package backtest

import (
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// slimEvent holds what a backtest needs of a recorded event it
// re-decides: its position, its command and its outcome. Decoding it
// skips the rest of the payload (verification, budget, approval,
// attestation), about half the bytes.
type slimEvent struct {
	Seq       uint64           `json:"seq"`
	Partition int32            `json:"partition"`
	Time      time.Time        `json:"time"`
	Type      domain.EventType `json:"type"`
	Command   *domain.Command  `json:"command"`
	AgentID   string           `json:"agent_id"`
	Error     *domain.Error    `json:"error"`
	Decided   *slimDecided     `json:"decided"`
}

type slimDecided struct {
	ActionID       string            `json:"action_id"`
	Kind           domain.ActionKind `json:"kind"`
	ActionType     string            `json:"action_type"`
	Tool           string            `json:"tool"`
	Decision       domain.Decision   `json:"decision"`
	Error          *domain.Error     `json:"error"`
	ReservedCost   domain.USD        `json:"reserved_cost_usd"`
	ReservedTokens int64             `json:"reserved_tokens"`
}

// decodeForRedecide decodes p completely, unless it is an event the fold
// will re-decide (a command of a selected agent in the period, other than
// a registration or a tick): then only its slim part, which is all the
// fold reads of it (its outcome; the re-decided event is folded instead).
func decodeForRedecide(p []byte, from time.Time, selected map[string]bool) (*domain.Event, error) {
	var s slimEvent
	if err := eventjson.API.Unmarshal(p, &s); err != nil {
		return nil, err
	}
	cmd := s.Command
	if s.Time.Before(from) || cmd == nil || cmd.Type == domain.CmdRegisterAgent || cmd.Type == domain.CmdTick ||
		!(selected[s.AgentID] || selected[cmd.AgentID]) {
		return eventjson.DecodeEvent(p)
	}
	ev := &domain.Event{Seq: s.Seq, Partition: s.Partition, Time: s.Time, Type: s.Type, Command: cmd, AgentID: s.AgentID, Error: s.Error}
	if d := s.Decided; d != nil {
		ev.Decided = &domain.ActionDecided{ActionID: d.ActionID, Kind: d.Kind, ActionType: d.ActionType, Tool: d.Tool,
			Decision: d.Decision, Error: d.Error, ReservedCost: d.ReservedCost, ReservedTokens: d.ReservedTokens}
	}
	return ev, nil
}
