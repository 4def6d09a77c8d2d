package timetravel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// AgentState is an agent's state right after one event of the log was
// decided (issue 5, time travel).
type AgentState struct {
	// Seq and Time are the event's.
	Seq  uint64
	Time time.Time
	// Agent is the agent's whole domain state then.
	Agent *domain.Agent
	// Approvals are its pending approvals then, by ID.
	Approvals []*domain.Approval
	// FromSnapshot is the seq of the projection snapshot the fold started
	// from (0: from the registration); Folded counts the events applied.
	FromSnapshot uint64
	Folded       int
}

// ErrNotRegisteredAt is returned by AgentStateAt for a seq before the
// agent's registration.
var ErrNotRegisteredAt = errors.New("the agent was not registered at that seq")

// ErrBeyondHead is returned for a seq past the log's head (or a time
// before the first event).
var ErrBeyondHead = errors.New("the position is not in the log")

var errFolded = errors.New("folded up to the seq")

// AgentStateAt computes the agent's state as of event seq: from the
// agent's last projection snapshot at or before seq (or from its
// registration; from the log's first event when store is nil), it folds
// the log's events up to seq with domain.Apply, exactly as the worker
// folded them. Only events that name the agent are decoded: no other
// event changes its state.
func AgentStateAt(ctx context.Context, log streams.Log, store *projections.Store, agentID string, seq uint64) (*AgentState, error) {
	if seq == 0 || seq > log.Head().Seq {
		return nil, fmt.Errorf("%w: seq %d (head %d)", ErrBeyondHead, seq, log.Head().Seq)
	}
	if store == nil {
		return foldAgent(ctx, log, agentID, seq, domain.NewState(), 1, &AgentState{Seq: seq})
	}
	from := uint64(1)
	switch reg, err := store.RegisteredAt(agentID); {
	case err == nil && seq < reg:
		return nil, fmt.Errorf("%w: registered at seq %d", ErrNotRegisteredAt, reg)
	case err == nil:
		from = reg
	case !errors.Is(err, projections.ErrNotFound):
		return nil, err
	}
	st := domain.NewState()
	out := &AgentState{Seq: seq}
	snap, err := store.SnapshotAt(agentID, seq)
	switch {
	case err == nil && snap.Seq >= from:
		st.Agents[agentID] = snap.Agent
		for _, ap := range snap.Approvals {
			st.Approvals[ap.ID] = ap
		}
		from, out.FromSnapshot, out.Time = snap.Seq+1, snap.Seq, snap.Time
	case err != nil && !errors.Is(err, projections.ErrNotFound):
		return nil, err
	}
	return foldAgent(ctx, log, agentID, seq, st, from, out)
}

// foldAgent folds the log's events that name the agent, from seq from up
// to seq, into st (which holds the agent as of from-1, or nothing) and
// completes out.
func foldAgent(ctx context.Context, log streams.Log, agentID string, seq uint64, st *domain.State, from uint64, out *AgentState) (*AgentState, error) {
	quoted, err := json.Marshal(agentID)
	if err != nil {
		return nil, fmt.Errorf("encoding agent id: %w", err)
	}
	if from <= seq {
		err = log.Read(ctx, from, func(r streams.Record) error {
			if r.Seq > seq {
				return errFolded
			}
			if r.Seq != seq && !bytes.Contains(r.Payload, quoted) {
				return nil
			}
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return fmt.Errorf("decoding log record %d: %w", r.Seq, err)
			}
			domain.Apply(st, ev)
			out.Folded++
			if r.Seq == seq {
				out.Time = ev.Time
				return errFolded
			}
			return nil
		})
		if err != nil && !errors.Is(err, errFolded) {
			return nil, fmt.Errorf("folding the log up to seq %d: %w", seq, err)
		}
	}
	a := st.Agents[agentID]
	if a == nil {
		return nil, fmt.Errorf("%w: seq %d", ErrNotRegisteredAt, seq)
	}
	out.Agent = a
	for _, ap := range st.Approvals {
		if ap.AgentID == agentID && ap.Status == domain.ApprovalPending {
			out.Approvals = append(out.Approvals, ap)
		}
	}
	slices.SortFunc(out.Approvals, func(x, y *domain.Approval) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// SeqAtTime returns the seq of the last event decided at or before t
// (event times never decrease along the log), by binary search over the
// log; ErrBeyondHead when t is before the first event.
func SeqAtTime(ctx context.Context, log streams.Log, t time.Time) (uint64, error) {
	lo, hi := uint64(1), log.Head().Seq
	if hi == 0 {
		return 0, fmt.Errorf("%w: the log is empty", ErrBeyondHead)
	}
	found := uint64(0)
	for lo <= hi {
		mid := lo + (hi-lo)/2
		ev, err := handlers.ReadEvent(ctx, log, mid)
		if err != nil {
			return 0, err
		}
		if ev.Time.After(t) {
			hi = mid - 1
		} else {
			found, lo = mid, mid+1
		}
	}
	if found == 0 {
		return 0, fmt.Errorf("%w: %s is before the first event", ErrBeyondHead, t.Format(time.RFC3339Nano))
	}
	return found, nil
}

// AgentStateView is the answer of GET /agents/{id}/state: the agent's
// trust level, budgets used and remaining, pending approvals and
// conversation states as of event AtSeq.
type AgentStateView struct {
	AgentID       string                  `json:"agent_id"`
	AtSeq         uint64                  `json:"at_seq"`
	AtTime        time.Time               `json:"at_time"`
	Status        string                  `json:"status"`
	TrustLevel    domain.TrustLevel       `json:"trust_level"`
	Budget        domain.BudgetStatus     `json:"budget"`
	Remaining     BudgetLeft              `json:"budget_remaining"`
	OpenApprovals []domain.Approval       `json:"open_approvals"`
	OpenActions   []OpenActionView        `json:"open_actions"`
	Conversations []ConversationStateView `json:"conversations"`
	TotalActions  int64                   `json:"total_actions"`
	DeniedActions int64                   `json:"denied_actions"`
}

// BudgetLeft is what is left of each limited budget dimension (omitted
// when the agent has no limit on it).
type BudgetLeft struct {
	DailyCostUSD    *domain.USD `json:"daily_cost_usd,omitempty"`
	HourlyRequests  *int64      `json:"hourly_requests,omitempty"`
	DailyRequests   *int64      `json:"daily_requests,omitempty"`
	DailyTokens     *int64      `json:"daily_tokens,omitempty"`
	HourlyToolCalls *int64      `json:"hourly_tool_calls,omitempty"`
	HighRiskCalls   *int64      `json:"high_risk_calls,omitempty"`
}

// OpenActionView is an approved or pending action awaiting its execution
// log, with what it reserved.
type OpenActionView struct {
	ActionID       string          `json:"action_id"`
	Status         domain.Decision `json:"status"`
	ReservedCost   domain.USD      `json:"reserved_cost_usd"`
	ReservedTokens int64           `json:"reserved_tokens"`
	At             time.Time       `json:"at"`
}

// ConversationStateView is one conversation's loop-control state.
type ConversationStateView struct {
	ConversationID  string    `json:"conversation_id"`
	LastStep        int64     `json:"last_step"`
	LastFingerprint string    `json:"last_fingerprint,omitempty"`
	Repeats         int64     `json:"repeats"`
	StateWindow     []string  `json:"state_window"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// ViewAgentState renders agent a with its pending approvals as of event
// seq decided at t. Maps are rendered sorted, so equal states give equal
// bytes.
func ViewAgentState(a *domain.Agent, approvals []*domain.Approval, seq uint64, t time.Time) AgentStateView {
	v := AgentStateView{
		AgentID: a.ID, AtSeq: seq, AtTime: t.UTC(), Status: a.Status, TrustLevel: a.Trust,
		Budget: a.BudgetView(t), TotalActions: a.TotalActions, DeniedActions: a.DeniedActions,
		OpenApprovals: []domain.Approval{}, OpenActions: []OpenActionView{}, Conversations: []ConversationStateView{},
	}
	// count is a sliding-hour count of the view (absent without a limit,
	// when left does not use it).
	count := func(n *int64) int64 {
		if n == nil {
			return 0
		}
		return *n
	}
	left := func(limit, used int64) *int64 {
		if limit <= 0 {
			return nil
		}
		n := max(limit-used, 0)
		return &n
	}
	b, lim := v.Budget, a.Budget
	if lim.MaxDailyCost > 0 {
		c := max(lim.MaxDailyCost-b.Cost.CurrentDailyUSD, 0)
		v.Remaining.DailyCostUSD = &c
	}
	v.Remaining.HourlyRequests = left(lim.MaxRequestsPerHour, count(b.Requests.CurrentHour))
	v.Remaining.DailyRequests = left(lim.MaxRequestsPerDay, b.Requests.CurrentDay)
	v.Remaining.DailyTokens = left(lim.MaxDailyTokens, b.Tokens.CurrentDaily)
	v.Remaining.HourlyToolCalls = left(lim.MaxToolCallsPerHour, count(b.Tools.CurrentHour))
	v.Remaining.HighRiskCalls = left(lim.MaxHighRiskCallsDay, b.Tools.HighRiskCallsToday)
	for _, ap := range approvals {
		v.OpenApprovals = append(v.OpenApprovals, *ap)
	}
	ids := make([]string, 0, len(a.OpenActions))
	for id := range a.OpenActions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		oa := a.OpenActions[id]
		v.OpenActions = append(v.OpenActions, OpenActionView{ActionID: id, Status: oa.Status, ReservedCost: oa.ReservedCost,
			ReservedTokens: oa.ReservedTokens, At: oa.At.UTC()})
	}
	convs := make([]string, 0, len(a.Conversations))
	for id := range a.Conversations {
		convs = append(convs, id)
	}
	slices.Sort(convs)
	for _, id := range convs {
		c := a.Conversations[id]
		w := c.StateWindow
		if w == nil {
			w = []string{}
		}
		v.Conversations = append(v.Conversations, ConversationStateView{ConversationID: id, LastStep: c.LastStep,
			LastFingerprint: c.LastFingerprint, Repeats: c.Repeats, StateWindow: w, UpdatedAt: c.UpdatedAt.UTC()})
	}
	return v
}

// View renders s (ViewAgentState).
func (s *AgentState) View() AgentStateView {
	return ViewAgentState(s.Agent, s.Approvals, s.Seq, s.Time)
}
