package handlers

import (
	"errors"
	"fmt"

	"github.com/agentgate/agentgate/domain"
)

// fits reports how an event the machine just decided does not fit the
// state it was decided on, or nil. domain.Apply ignores such an event (a
// log replayed onto a partial state must converge), but the machine's state
// is whole and the event is its own decision: one that does not fit is a
// defect of Decide, asserted rather than folded into nothing.
func fits(s *domain.State, ev *domain.Event) error {
	agent := func() error {
		if s.Agents[ev.AgentID] == nil {
			return fmt.Errorf("agent %q is not registered", ev.AgentID)
		}
		return nil
	}
	pending := func(id string) error {
		if ap := s.Approvals[id]; ap == nil || ap.Status != domain.ApprovalPending {
			return fmt.Errorf("approval %q is not pending", id)
		}
		return nil
	}
	switch ev.Type {
	case domain.EvAgentRegistered:
		if ev.Registered == nil {
			return errors.New("no registration")
		}
		if s.Agents[ev.Registered.AgentID] != nil {
			return fmt.Errorf("agent %q is registered already", ev.Registered.AgentID)
		}
	case domain.EvActionDecided:
		if ev.Decided == nil {
			return errors.New("no decision")
		}
		return agent()
	case domain.EvExecutionLogged:
		if ev.Executed == nil {
			return errors.New("no execution")
		}
		if err := agent(); err != nil {
			return err
		}
		if s.Agents[ev.AgentID].OpenActions[ev.Executed.ActionID] == nil {
			return fmt.Errorf("action %q is not open", ev.Executed.ActionID)
		}
	case domain.EvApprovalResolved:
		if ev.Resolved == nil {
			return errors.New("no resolution")
		}
		return pending(ev.Resolved.Approval.ID)
	case domain.EvApprovalsExpired:
		if ev.Expired == nil {
			return errors.New("no expiry")
		}
		for _, r := range ev.Expired.Approvals {
			if err := pending(r.Approval.ID); err != nil {
				return err
			}
		}
	case domain.EvTrustChanged:
		if ev.TrustChanged == nil {
			return errors.New("no trust change")
		}
		return agent()
	case domain.EvAgentStatusChanged:
		if ev.Status == nil {
			return errors.New("no status change")
		}
		return agent()
	case domain.EvAgentTokenRotated, domain.EvAgentTokenRevoked:
		if ev.TokenChanged == nil {
			return errors.New("no token change")
		}
		return agent()
	}
	return nil
}
