package domain

import (
	"slices"
	"time"
)

// Apply folds ev into s. It cannot fail: an event that does not fit the
// state (an unknown agent, an approval that is not pending) is ignored, so
// that a log replayed onto any prefix-consistent state converges. Apply
// follows the event and never re-decides: every figure it adds comes from
// the event.
func Apply(s *State, ev *Event) {
	if ev == nil {
		return
	}
	t := ev.Time.UTC()
	if t.After(s.LastTime) {
		s.LastTime = t
	}
	ensureMaps(s)
	applyA2AEvict(s, t)
	switch ev.Type {
	case EvAgentRegistered:
		applyRegistered(s, ev.Registered, t)
	case EvActionDecided:
		applyDecided(s, ev.AgentID, ev.Decided, ev.Seq, t)
	case EvExecutionLogged:
		applyExecuted(s, ev.AgentID, ev.Executed, t)
	case EvTrustElevationRequested:
		if el := ev.Elevation; el != nil && el.Accepted && el.Approval != nil {
			if _, dup := s.Approvals[el.Approval.ID]; !dup {
				s.Approvals[el.Approval.ID] = cloneApproval(el.Approval)
			}
		}
	case EvApprovalResolved:
		if ev.Resolved != nil {
			applyResolved(s, ev.Resolved, t)
			applyExecuteResolution(s, &ev.Resolved.Approval, t)
		}
	case EvApprovalsExpired:
		if ev.Expired != nil {
			for i := range ev.Expired.Approvals {
				applyResolved(s, &ev.Expired.Approvals[i], t)
				applyExecuteResolution(s, &ev.Expired.Approvals[i].Approval, t)
			}
		}
	case EvTrustChanged:
		if a := s.Agents[ev.AgentID]; a != nil && ev.TrustChanged != nil {
			a.Trust = ev.TrustChanged.To
		}
	case EvAgentStatusChanged:
		if a := s.Agents[ev.AgentID]; a != nil && ev.Status != nil {
			a.Status = ev.Status.Status
		}
	case EvAgentTokenRotated, EvAgentTokenRevoked:
		if a := s.Agents[ev.AgentID]; a != nil && ev.TokenChanged != nil {
			a.TokenHash = ev.TokenChanged.TokenHash
		}
	case EvA2AVerdict:
		applyA2AVerdict(s, ev.A2AVerdict, ev.Seq, t)
	case EvPrincipalStateCopied:
		applyCopied(s, ev)
	case EvWebhookChanged:
		applyWebhook(s, ev.Webhook)
	case EvPolicyChanged:
		applyPolicyChanged(s, ev)
	case EvLogCheckpointed:
		// A checkpoint vouches for the chain; it changes no decision state
		// (only LastTime, above, as every event does).
	default:
		if !applyExec(s, ev) {
			applyPrincipalWide(s, ev)
		}
	}
}

// applyPrincipalWide folds the events that change principal-wide state
// (the ones a partition copies from GlobalPartition, global.go).
func applyPrincipalWide(s *State, ev *Event) {
	switch ev.Type {
	case EvToolRegistrySet:
		if r := ev.ToolRegistry; r != nil {
			p := principal(s, r.PrincipalID)
			p.Tools = make(map[string]ToolSpec, len(r.Tools))
			for _, tool := range r.Tools {
				p.Tools[tool.Name] = tool
			}
			if len(p.Tools) == 0 {
				p.Tools = nil
			}
		}
	case EvPrincipalPermissionsSet:
		if r := ev.PrincipalPermissions; r != nil {
			applyPrincipalPermissions(s, r)
		}
	case EvPrincipalKeyIssued:
		if k := ev.KeyIssued; k != nil {
			if _, dup := s.Keys[k.KeyHash]; !dup {
				if k.ReplacedHash != "" {
					revokeKey(s, k.Replaces, k.ReplacedHash)
				}
				s.Keys[k.KeyHash] = k.PrincipalID
				if k.KeyID != "" {
					if s.KeyIDs == nil {
						s.KeyIDs = map[string]string{}
					}
					s.KeyIDs[k.KeyID] = k.KeyHash
				}
				principal(s, k.PrincipalID)
			}
		}
	case EvPrincipalKeyRevoked:
		if k := ev.KeyRevoked; k != nil {
			revokeKey(s, k.KeyID, k.KeyHash)
		}
	case EvConfigured:
		if ev.Configured != nil {
			s.Config = *ev.Configured
			s.Config.A2A = ev.Configured.A2A.clone()
			s.Config.Execute = ev.Configured.Execute.clone()
		}
	case EvA2ABoundaryChanged:
		if ev.Command != nil {
			applyA2ABoundary(s, ev.Command.Principal, ev.A2ABoundary)
		}
	case EvBusinessChanged:
		applyBusiness(s, ev.Business)
	}
}

func ensureMaps(s *State) {
	if s.Agents == nil {
		s.Agents = map[string]*Agent{}
	}
	if s.Approvals == nil {
		s.Approvals = map[string]*Approval{}
	}
	if s.Principals == nil {
		s.Principals = map[string]*Principal{}
	}
	if s.Keys == nil {
		s.Keys = map[string]string{}
	}
}

func principal(s *State, id string) *Principal {
	p := s.Principals[id]
	if p == nil {
		p = &Principal{ID: id}
		s.Principals[id] = p
	}
	return p
}

func applyRegistered(s *State, r *AgentRegistered, t time.Time) {
	if r == nil || s.Agents[r.AgentID] != nil {
		return
	}
	s.Agents[r.AgentID] = &Agent{
		ID: r.AgentID, DID: r.DID, Info: r.Info, Permissions: clonePermissions(r.Permissions),
		Budget: r.Budget, TokenHash: r.TokenHash, Status: StatusActive, Trust: r.TrustLevel, CreatedAt: t,
		Usage:         Usage{Day: dayOf(t)},
		Conversations: map[string]*Conversation{},
		OpenActions:   map[string]*OpenAction{},
	}
}

// rollDay starts a new day's counters when t is on a later UTC day, and
// drops the sliding-window entries that have left the hour.
func rollDay(a *Agent, t time.Time) {
	if day := dayOf(t); day != a.Usage.Day {
		a.Usage.Day = day
		a.Usage.DailyCost, a.Usage.DailyRequests, a.Usage.DailyTokens, a.Usage.DailyHighRisk = 0, 0, 0, 0
	}
	a.Usage.HourlyRequests = pruneWindow(a.Usage.HourlyRequests, t)
	a.Usage.HourlyToolCalls = pruneWindow(a.Usage.HourlyToolCalls, t)
}

func pruneWindow(w []time.Time, t time.Time) []time.Time {
	i := windowStart(w, t)
	if i == len(w) {
		return nil
	}
	// Reslicing keeps the cost amortized: the next growth of the
	// backing array copies only the live part.
	return w[i:]
}

func applyDecided(s *State, agentID string, dec *ActionDecided, seq uint64, t time.Time) {
	a := s.Agents[agentID]
	if dec == nil || a == nil {
		return
	}
	rollDay(a, t)
	denied := dec.Denied()
	a.TotalActions++
	if denied {
		a.DeniedActions++
	}
	a.Recent = append(a.Recent, denied)
	if len(a.Recent) > RecentWindow {
		a.Recent = keepLast(a.Recent, RecentWindow)
	}
	if dec.ResetRecent {
		a.Recent = nil
	}
	if dec.Decision == BudgetExceeded {
		a.BudgetDenials = append(pruneWindow(a.BudgetDenials, t), t)
	}
	if dec.ResetBudgetDenials {
		a.BudgetDenials = nil
	}
	if dec.Trust != nil {
		a.Trust = dec.Trust.To
	}
	if dec.Attestation != "" {
		a.Attestations++
	}
	if denied {
		return
	}
	if dec.StepConsumed {
		commitStep(a, dec, t)
	}
	u := &a.Usage
	u.DailyRequests++
	u.DailyCost += dec.ReservedCost
	u.DailyTokens += dec.ReservedTokens
	if dec.HighRisk {
		u.DailyHighRisk++
	}
	if a.Budget.MaxRequestsPerHour > 0 {
		u.HourlyRequests = append(u.HourlyRequests, t)
	}
	if dec.Kind == KindTool && a.Budget.MaxToolCallsPerHour > 0 {
		u.HourlyToolCalls = append(u.HourlyToolCalls, t)
	}
	if a.OpenActions == nil {
		a.OpenActions = map[string]*OpenAction{}
	}
	if _, dup := a.OpenActions[dec.ActionID]; !dup {
		if len(a.OpenOrder) >= MaxOpenActions {
			delete(a.OpenActions, a.OpenOrder[0])
			a.OpenOrder = keepLast(a.OpenOrder, len(a.OpenOrder)-1)
		}
		a.OpenActions[dec.ActionID] = &OpenAction{
			Seq: seq, Day: dayOf(t), ReservedCost: dec.ReservedCost, ReservedTokens: dec.ReservedTokens, Status: dec.Decision, At: t,
			SandboxRequired: dec.Verification.Sandbox,
		}
		a.OpenOrder = append(a.OpenOrder, dec.ActionID)
	}
	if dec.Decision == Pending && dec.Approval != nil {
		if _, dup := s.Approvals[dec.Approval.ID]; !dup {
			s.Approvals[dec.Approval.ID] = cloneApproval(dec.Approval)
		}
	}
}

// commitStep records a committed step: replay position, repetition count
// and (APPROVED only) the LOOP-004 window.
func commitStep(a *Agent, dec *ActionDecided, t time.Time) {
	if a.Conversations == nil {
		a.Conversations = map[string]*Conversation{}
	}
	c := a.Conversations[dec.ConversationID]
	if c == nil {
		if dec.ConversationEvicted != "" {
			delete(a.Conversations, dec.ConversationEvicted)
		}
		c = &Conversation{}
		a.Conversations[dec.ConversationID] = c
	}
	c.LastStep = dec.Step
	if c.LastFingerprint == dec.Fingerprint && c.Repeats > 0 {
		c.Repeats++
	} else {
		c.LastFingerprint, c.Repeats = dec.Fingerprint, 1
	}
	if dec.Decision == Approved && dec.StateFingerprint != "" {
		c.StateWindow = append(c.StateWindow, dec.StateFingerprint)
		if len(c.StateWindow) > DoomWindow {
			c.StateWindow = keepLast(c.StateWindow, DoomWindow)
		}
	}
	c.UpdatedAt = t
}

// leastRecentConversation returns the conversation a new one displaces
// when the agent is at MaxConversations: the least recently updated, ties
// broken by the smallest ID, so the choice does not depend on map order.
func leastRecentConversation(a *Agent) string {
	var victim string
	var at time.Time
	first := true
	for id, c := range a.Conversations {
		if first || c.UpdatedAt.Before(at) || (c.UpdatedAt.Equal(at) && id < victim) {
			victim, at, first = id, c.UpdatedAt, false
		}
	}
	return victim
}

func applyExecuted(s *State, agentID string, ex *ExecutionLogged, t time.Time) {
	a := s.Agents[agentID]
	if ex == nil || a == nil {
		return
	}
	if _, ok := a.OpenActions[ex.ActionID]; !ok {
		return
	}
	rollDay(a, t)
	if ex.SameDay {
		applyDelta(&a.Usage, t, ex.CostDelta, ex.TokensDelta)
	}
	removeOpen(a, ex.ActionID)
	a.LoggedActions = append(a.LoggedActions, ex.ActionID)
	if len(a.LoggedActions) > MaxLoggedActions {
		a.LoggedActions = keepLast(a.LoggedActions, MaxLoggedActions)
	}
}

func removeOpen(a *Agent, id string) {
	delete(a.OpenActions, id)
	for i, x := range a.OpenOrder {
		if x == id {
			a.OpenOrder = slices.Delete(a.OpenOrder, i, i+1)
			break
		}
	}
	if len(a.OpenOrder) == 0 {
		a.OpenOrder = nil
	}
}

func applyResolved(s *State, r *ApprovalResolved, t time.Time) {
	ap := s.Approvals[r.Approval.ID]
	if ap == nil || ap.Status != ApprovalPending {
		return
	}
	s.Approvals[ap.ID] = cloneApproval(&r.Approval)
	a := s.Agents[ap.AgentID]
	if a == nil {
		return
	}
	if r.Trust != nil {
		a.Trust = r.Trust.To
	}
	oa := a.OpenActions[ap.ID]
	if oa == nil {
		return
	}
	if r.Approval.Status == ApprovalApproved {
		oa.Status = Approved
		return
	}
	rollDay(a, t)
	if r.ReleasedCost != 0 || r.ReleasedTokens != 0 {
		applyDelta(&a.Usage, t, -r.ReleasedCost, -r.ReleasedTokens)
	}
	removeOpen(a, ap.ID)
}

// keepLast keeps the last n elements of s. It reslices past the dropped
// ones (cleared, so they retain nothing) instead of moving the kept ones:
// a window that drops one element per append then costs amortized O(1)
// (append reallocates, copying only the kept elements, once the spare
// capacity is used up) instead of moving the whole window every time —
// MaxOpenActions is 4096, and an agent at the bound drops one per decision.
func keepLast[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	drop := len(s) - n
	clear(s[:drop])
	return s[drop:]
}

// revokeKey removes the API key id with hash hash from s.
func revokeKey(s *State, id, hash string) {
	delete(s.Keys, hash)
	if s.KeyIDs[id] == hash {
		delete(s.KeyIDs, id)
	}
}
