package domain

// RetiredSteps remembers, for a fold that keeps everything in memory
// (replay, backtest), the last committed step of each conversation a
// decision evicted from the state: the Env.RetiredStep that the live
// worker reads from its projections. The zero value is not usable; make
// one with NewRetiredSteps.
type RetiredSteps struct {
	m map[[2]string]int64
}

// NewRetiredSteps returns an empty RetiredSteps.
func NewRetiredSteps() *RetiredSteps { return &RetiredSteps{m: map[[2]string]int64{}} }

// Note records the conversation ev evicts, with its last step in s. Call
// it with the state before ev is applied to it.
func (r *RetiredSteps) Note(s *State, ev *Event) {
	d := ev.Decided
	if d == nil || d.ConversationEvicted == "" {
		return
	}
	if a := s.Agents[ev.AgentID]; a != nil {
		if c := a.Conversations[d.ConversationEvicted]; c != nil {
			r.m[[2]string{ev.AgentID, d.ConversationEvicted}] = c.LastStep
		}
	}
}

// Step is an Env.RetiredStep.
func (r *RetiredSteps) Step(agentID, conversationID string) (int64, bool) {
	s, ok := r.m[[2]string{agentID, conversationID}]
	return s, ok
}
