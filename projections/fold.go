package projections

import (
	"slices"

	"github.com/agentgate/agentgate/domain"
)

// A Fold is the events of one projection batch as they are folded into the
// state the batch is projected from (Prepare's st). Add folds an event
// (domain.Apply) and notes what its projection needs that the state no
// longer holds once the event is folded: the seq of each open action the
// event refers to, which keys the action's stored entry — an execution or
// a refused or expired approval closes the action, and the state then
// forgets it. The zero Fold is empty; a Fold is used by one goroutine.
type Fold struct {
	events []*domain.Event
	// refs are the open actions the events referred to that were open
	// before them, with the seqs that opened them, in event order.
	refs []openRef
	// retired are the conversations the events evicted from the state,
	// with their last committed steps, in event order.
	retired []Retired
	// evicted are the A2A token buckets the events evicted.
	evicted []domain.A2APair
	// exec are the consumer policy engine's entities the events touched
	// (execstate.go).
	exec execTouched
	// notices are the events with notices and their consumers' webhooks
	// as of each (webhooks.go).
	notices []noticeHooks
}

// Retired is a conversation evicted from the state (at
// domain.MaxConversations) and the last step committed in it: its replay
// protection, which the store keeps after the state forgets it.
type Retired struct {
	Agent, Conversation string
	LastStep            int64
}

// RetiredStep returns the last committed step of conversation conv of
// agent if an event of the fold evicted it (the latest such event's).
func (f *Fold) RetiredStep(agent, conv string) (int64, bool) {
	return RetiredIn(f.retired, agent, conv)
}

// Retirements returns the conversations the fold's events evicted, in
// event order. The slice is the fold's: read, don't change it.
func (f *Fold) Retirements() []Retired { return f.retired }

// RetiredIn looks conv of agent up in rs, the latest entry first.
func RetiredIn(rs []Retired, agent, conv string) (int64, bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Agent == agent && rs[i].Conversation == conv {
			return rs[i].LastStep, true
		}
	}
	return 0, false
}

// Add folds ev into st and adds it to the fold. Every event of a batch is
// folded through Add, in log order, and st is changed by nothing else
// until the batch is prepared.
func (f *Fold) Add(st *domain.State, ev *domain.Event) {
	switch {
	case ev.Executed != nil:
		f.ref(st, ev.AgentID, ev.Executed.ActionID)
	case ev.Resolved != nil:
		f.refResolved(st, ev.Resolved)
	case ev.Expired != nil:
		for i := range ev.Expired.Approvals {
			f.refResolved(st, &ev.Expired.Approvals[i])
		}
	}
	if d := ev.Decided; d != nil && d.ConversationEvicted != "" {
		if a := st.Agents[ev.AgentID]; a != nil {
			if c := a.Conversations[d.ConversationEvicted]; c != nil {
				f.retired = append(f.retired, Retired{Agent: ev.AgentID, Conversation: d.ConversationEvicted, LastStep: c.LastStep})
			}
		}
	}
	f.noteA2AEvictions(st, ev)
	f.noteExec(st, ev)
	f.noteNotices(st, ev)
	domain.Apply(st, ev)
	f.events = append(f.events, ev)
}

// Grow makes room for n more events.
func (f *Fold) Grow(n int) { f.events = slices.Grow(f.events, n) }

// Events returns the events added, in order.
func (f *Fold) Events() []*domain.Event { return f.events }

// Len returns the number of events added.
func (f *Fold) Len() int { return len(f.events) }

// refResolved notes the open action an approval's resolution refers to:
// an action approval's ID is its action's (trust elevations open none).
func (f *Fold) refResolved(st *domain.State, r *domain.ApprovalResolved) {
	if r.Approval.Kind != "trust_elevation" {
		f.ref(st, r.Approval.AgentID, r.Approval.ID)
	}
}

// ref notes the open action id of agent, if it is open in st.
func (f *Fold) ref(st *domain.State, agent, id string) {
	if a := st.Agents[agent]; a != nil {
		if oa := a.OpenActions[id]; oa != nil {
			f.refs = append(f.refs, openRef{agent: agent, id: id, seq: oa.Seq})
		}
	}
}
