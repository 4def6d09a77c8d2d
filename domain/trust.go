package domain

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Trust (QWED-Agent spec v1.1 §8). Degradation is decided with the decision that
// triggers it and recorded in ActionDecided.Trust; the fold only follows.
//
//	security violation                                  -2 levels
//	denial rate > 10% of the last 100 decisions (≥ 20)  -1 level, the window clears
//	3 budget denials within one hour                    -1 level, those clear
//	principal complaint                                 suspension
//
// Penalties triggered by one decision add up; the level never drops below 0.

// maxDenialRatePercent is the denial rate above which trust degrades and
// elevation is refused.
const maxDenialRatePercent = 10

// budgetAbuseCount is the number of budget denials within an hour that
// costs a level.
const budgetAbuseCount = 3

// degrade computes the trust consequences of dec (already decided) for a.
func (d *decider) degrade(a *Agent, dec *ActionDecided) {
	denied := dec.Decision == Denied || dec.Decision == BudgetExceeded
	penalty := 0
	var reasons []string
	if dec.SecurityViolation {
		penalty += 2
		reasons = append(reasons, "security violation")
	}
	// The window as it will be after this decision.
	n, deniedN := 0, 0
	start := 0
	if len(a.Recent) >= RecentWindow {
		start = len(a.Recent) - RecentWindow + 1
	}
	for _, x := range a.Recent[start:] {
		n++
		if x {
			deniedN++
		}
	}
	n++
	if denied {
		deniedN++
	}
	if n >= RecentMinimum && deniedN*100 > maxDenialRatePercent*n {
		penalty++
		dec.ResetRecent = true
		reasons = append(reasons, "denial rate "+strconv.Itoa(deniedN)+"/"+strconv.Itoa(n)+" above 10%")
	}
	if dec.Decision == BudgetExceeded {
		c, _ := windowCount(a.BudgetDenials, d.now)
		if c+1 >= budgetAbuseCount {
			penalty++
			dec.ResetBudgetDenials = true
			reasons = append(reasons, strconv.FormatInt(c+1, 10)+" budget denials within one hour")
		}
	}
	if penalty == 0 {
		return
	}
	to := max(a.Trust-TrustLevel(penalty), TrustUntrusted)
	if to == a.Trust {
		return
	}
	dec.Trust = &TrustChange{From: a.Trust, To: to, Reason: strings.Join(reasons, "; ")}
}

// evidence computes the trust evidence of a at now.
func evidence(a *Agent, now time.Time) TrustEvidence {
	days := int64(0)
	if now.After(a.CreatedAt) {
		days = int64(now.Sub(a.CreatedAt) / (24 * time.Hour))
	}
	return TrustEvidence{
		DaysActive: days, TotalActions: a.TotalActions, DeniedActions: a.DeniedActions,
		DenialRate: json.Number(ratePPM(a.DeniedActions, a.TotalActions)), Attestations: a.Attestations,
	}
}

// ratePPM renders denied/total as a decimal rounded half-up to six places.
func ratePPM(denied, total int64) string {
	if total <= 0 || denied <= 0 {
		return "0"
	}
	ppm := (denied*2_000_000 + total) / (2 * total)
	s := strconv.FormatInt(ppm/1_000_000, 10)
	if f := ppm % 1_000_000; f != 0 {
		fs := strconv.FormatInt(f+1_000_000, 10)[1:]
		s += "." + strings.TrimRight(fs, "0")
	}
	return s
}

func (d *decider) requestTrust() *Event {
	r := d.cmd.Trust
	if r == nil {
		return d.reject(missing("trust"))
	}
	a, err := d.authAgent(false)
	if err != nil {
		return d.reject(err)
	}
	if err := d.requestIDPresent(); err != nil {
		return d.reject(err)
	}
	if r.Request != "" && r.Request != "trust_elevation" {
		return d.reject(fieldError(CodeInvalidRequest, "request", "'%s' is not 'trust_elevation'", r.Request))
	}
	if r.FromLevel != a.Trust {
		return d.reject(&Error{Code: CodeConflict,
			Message: "from_level " + strconv.Itoa(int(r.FromLevel)) + " is not the agent's trust level " + strconv.Itoa(int(a.Trust)),
			Details: map[string]any{"trust_level": int(a.Trust)}})
	}
	if r.ToLevel <= r.FromLevel || r.ToLevel > TrustTrusted {
		return d.reject(fieldError(CodeInvalidRequest, "to_level", "must be above from_level and at most 3"))
	}
	var claimedRate *big.Rat
	if r.Evidence.DenialRate != "" {
		q, ok := new(big.Rat).SetString(string(r.Evidence.DenialRate))
		if !ok || q.Sign() < 0 {
			return d.reject(fieldError(CodeInvalidRequest, "evidence.denial_rate", "'%s' is not a non-negative number", string(r.Evidence.DenialRate)))
		}
		claimedRate = q
	}
	id := TrustRequestIDFor(d.cmd.Request)
	if d.s.Approvals[id] != nil {
		return d.reject(Errorf(CodeConflict, "request already recorded as '%s'", id))
	}
	got := evidence(a, d.now)
	var reasons []string
	over := func(name string, claim, computed int64) {
		if claim > computed {
			reasons = append(reasons, name+" claimed "+strconv.FormatInt(claim, 10)+", computed "+strconv.FormatInt(computed, 10))
		}
	}
	c := r.Evidence
	over("days_active", c.DaysActive, got.DaysActive)
	over("total_actions", c.TotalActions, got.TotalActions)
	over("attestations", c.Attestations, got.Attestations)
	if c.DeniedActions < got.DeniedActions {
		reasons = append(reasons, "denied_actions claimed "+strconv.FormatInt(c.DeniedActions, 10)+", computed "+strconv.FormatInt(got.DeniedActions, 10))
	}
	// The claim is compared with the rate as the gate reports it (six
	// decimals), so an agent quoting the gate's own figure is not refused.
	reported, _ := new(big.Rat).SetString(string(got.DenialRate))
	if claimedRate != nil && claimedRate.Cmp(reported) < 0 {
		reasons = append(reasons, "denial_rate claimed "+string(c.DenialRate)+", computed "+string(got.DenialRate))
	}
	if a.DeniedActions*100 > maxDenialRatePercent*a.TotalActions {
		reasons = append(reasons, "computed denial rate "+string(got.DenialRate)+" exceeds 0.1")
	}
	el := &TrustElevationRequested{RequestID: id, Claimed: *r, Computed: got, Accepted: len(reasons) == 0, Reasons: reasons}
	if el.Accepted {
		to := r.ToLevel
		el.Approval = &Approval{
			ID: id, AgentID: a.ID, PrincipalID: a.Info.PrincipalID, Kind: "trust_elevation", Status: ApprovalPending,
			Summary:   "trust elevation from " + strconv.Itoa(int(r.FromLevel)) + " to " + strconv.Itoa(int(to)) + ": " + r.Justification,
			ToLevel:   &to,
			CreatedAt: d.now, ExpiresAt: d.now.Add(time.Duration(d.s.Config.ApprovalTTL)),
		}
	}
	d.ev.Type = EvTrustElevationRequested
	d.ev.Elevation = el
	return d.ev
}

func (d *decider) setTrust() *Event {
	r := d.cmd.SetTrust
	if r == nil {
		return d.reject(missing("set_trust"))
	}
	a, err := d.agentForPrincipal()
	if err != nil {
		return d.reject(err)
	}
	if r.Level < TrustUntrusted || r.Level > TrustTrusted {
		return d.reject(fieldError(CodeInvalidRequest, "trust_level", "must be 0-3"))
	}
	reason := r.Reason
	if reason == "" {
		reason = "set by principal"
	}
	d.ev.Type = EvTrustChanged
	d.ev.TrustChanged = &TrustChange{From: a.Trust, To: r.Level, Reason: reason}
	return d.ev
}

func (d *decider) suspend() *Event {
	r := d.cmd.Suspend
	if r == nil {
		return d.reject(missing("suspend"))
	}
	if _, err := d.agentForPrincipal(); err != nil {
		return d.reject(err)
	}
	st := &AgentStatusChange{Status: StatusActive, Reason: r.Reason}
	if r.Suspended {
		st.Status = StatusSuspended
	}
	if st.Reason == "" {
		st.Reason = "set by principal"
	}
	d.ev.Type = EvAgentStatusChanged
	d.ev.Status = st
	return d.ev
}

func (d *decider) complaint() *Event {
	r := d.cmd.Complaint
	if r == nil {
		return d.reject(missing("complaint"))
	}
	if _, err := d.agentForPrincipal(); err != nil {
		return d.reject(err)
	}
	if r.Reason == "" {
		return d.reject(missing("reason"))
	}
	d.ev.Type = EvAgentStatusChanged
	d.ev.Status = &AgentStatusChange{Status: StatusSuspended, Reason: "principal complaint: " + r.Reason}
	return d.ev
}
