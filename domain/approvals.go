package domain

import (
	"sort"
	"time"
)

// Executions, approvals and their expiry.

func (d *decider) logExecution() *Event {
	r := d.cmd.Execution
	if r == nil {
		return d.reject(missing("execution"))
	}
	scan := d.cmd.OutputScan
	if scan != nil && !d.s.Config.OutputScan {
		return d.reject(unknownMember("output"))
	}
	// Logging what already ran is not acting: a suspended agent may still
	// complete its audit trail.
	a, err := d.authAgent(true)
	if err != nil {
		return d.reject(err)
	}
	if r.ActionID == "" {
		return d.reject(missing("action_id"))
	}
	if r.CostUSD < 0 || r.CostUSD > maxUSD {
		return d.reject(fieldError(CodeInvalidRequest, "cost_usd", "must be between 0 and %s", maxUSD))
	}
	if r.Tokens < 0 {
		return d.reject(fieldError(CodeInvalidRequest, "tokens", "must not be negative"))
	}
	open := a.OpenActions[r.ActionID]
	if open == nil {
		if contains(a.LoggedActions, r.ActionID) {
			return d.reject(Errorf(CodeConflict, "execution of action '%s' already logged", r.ActionID))
		}
		if ap := d.s.Approvals[r.ActionID]; ap != nil && ap.AgentID == a.ID {
			return d.reject(Errorf(CodeConflict, "action '%s' was not approved (approval %s)", r.ActionID, ap.Status))
		}
		return d.reject(Errorf(CodeNotFound, "no approved action '%s' awaits an execution log", r.ActionID))
	}
	if open.Status != Approved && open.Status != Corrected {
		return d.reject(Errorf(CodeConflict, "action '%s' is %s, not approved", r.ActionID, open.Status))
	}
	resultHash := r.ResultHash
	if scan != nil {
		if resultHash, err = executionOutput(r, scan); err != nil {
			return d.reject(err)
		}
	}
	ex := &ExecutionLogged{
		ActionID: r.ActionID, Success: r.Success, CostUSD: r.CostUSD, Tokens: r.Tokens, ResultHash: resultHash,
		CostDelta: r.CostUSD - open.ReservedCost, TokensDelta: r.Tokens - open.ReservedTokens,
		SameDay:          open.Day == dayOf(d.now),
		SandboxViolation: d.s.Config.SandboxAttestation && open.SandboxRequired && !r.Sandboxed,
	}
	if scan != nil {
		ex.OutputFindings, ex.PIIViolation = scan.Findings, piiViolation(scan.Findings)
	}
	// The budget after the correction.
	after := *a
	after.Usage = a.Usage
	if ex.SameDay {
		applyDelta(&after.Usage, d.now, ex.CostDelta, ex.TokensDelta)
	}
	ex.Budget = remaining(&after, d.now, budgetRequest{}, false, new(remainingFigures))
	d.ev.Type = EvExecutionLogged
	d.ev.Executed = ex
	return d.ev
}

// applyDelta corrects today's cost and tokens (never below zero). Usage must
// belong to now's day (rollDay), else nothing changes.
func applyDelta(u *Usage, now time.Time, cost USD, tokens int64) {
	if u.Day != dayOf(now) {
		return
	}
	u.DailyCost = max(u.DailyCost+cost, 0)
	u.DailyTokens = max(u.DailyTokens+tokens, 0)
}

func (d *decider) resolveApproval() *Event {
	r := d.cmd.Resolve
	if r == nil {
		return d.reject(missing("resolve"))
	}
	if r.ApprovalID == "" {
		return d.reject(missing("approval_id"))
	}
	ap := d.s.Approvals[r.ApprovalID]
	if ap == nil {
		return d.reject(Errorf(CodeNotFound, "approval '%s' not found", r.ApprovalID))
	}
	d.ev.AgentID = ap.AgentID
	if err := d.authPrincipal(ap.PrincipalID); err != nil {
		return d.reject(err)
	}
	if ap.Status != ApprovalPending {
		return d.reject(Errorf(CodeConflict, "approval '%s' is already %s", ap.ID, ap.Status))
	}
	if !d.now.Before(ap.ExpiresAt) {
		return d.reject(Errorf(CodeConflict, "approval '%s' expired at %s", ap.ID, ap.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	if r.Approve {
		if err := d.executeApprovable(ap); err != nil {
			return d.reject(err)
		}
	}
	res := d.resolution(ap, r.Approve, d.cmd.Principal, r.Reason)
	if ap.Kind == "trust_elevation" && r.Approve && ap.ToLevel != nil {
		if a := d.s.Agents[ap.AgentID]; a != nil && a.Trust != *ap.ToLevel {
			res.Trust = &TrustChange{From: a.Trust, To: *ap.ToLevel, Reason: "trust elevation " + ap.ID + " approved"}
		}
	}
	d.ev.Type = EvApprovalResolved
	d.ev.Resolved = &res
	d.ev.Transaction = d.executeApproval(ap, res.Approval.Status)
	return d.ev
}

// resolution builds the resolved copy of ap; a denied or expired action
// approval releases its reservation when it was made today.
func (d *decider) resolution(ap *Approval, approve bool, by, reason string) ApprovalResolved {
	out := *ap
	out.ToLevel = cloneTrustPtr(ap.ToLevel)
	now := d.now
	out.ResolvedAt = &now
	out.ResolvedBy = by
	out.Reason = reason
	switch {
	case approve:
		out.Status = ApprovalApproved
	case by == "":
		out.Status = ApprovalExpired
	default:
		out.Status = ApprovalDenied
	}
	res := ApprovalResolved{Approval: out}
	if out.Status != ApprovalApproved && ap.Kind != "trust_elevation" {
		if a := d.s.Agents[ap.AgentID]; a != nil {
			if oa := a.OpenActions[ap.ID]; oa != nil && oa.Day == dayOf(d.now) {
				res.ReleasedCost, res.ReleasedTokens = oa.ReservedCost, oa.ReservedTokens
			}
		}
	}
	return res
}

// tick expires the pending approvals whose time is up, in ID order.
func (d *decider) tick() *Event {
	var due []string
	for id, ap := range d.s.Approvals {
		if ap.Status == ApprovalPending && !d.now.Before(ap.ExpiresAt) {
			due = append(due, id)
		}
	}
	if len(due) == 0 {
		return nil
	}
	sort.Strings(due)
	ex := &ApprovalsExpired{Approvals: make([]ApprovalResolved, 0, len(due))}
	for _, id := range due {
		ap := d.s.Approvals[id]
		ex.Approvals = append(ex.Approvals, d.resolution(ap, false, "", "expired after "+time.Duration(d.s.Config.ApprovalTTL).String()))
	}
	d.ev.Type = EvApprovalsExpired
	d.ev.Expired = ex
	return d.ev
}
