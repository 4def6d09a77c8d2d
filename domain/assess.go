package domain

// Risk assessment and policy checks of a decision (QWED-Agent spec v1.1
// §5.2; docs/ARCHITECTURE.md, "Tool parameters, risk assessment and policy
// checks"). Both are derived, when a reply is rendered, from the recorded
// decision alone (ActionDecided): they add no bytes to the log, a replay
// renders them identically, and they are a function of what Decide
// already decided (its checks, risk, verdict, flags), never a second
// opinion.

// PolicyCheck is one policy check of a decision: a check Decide ran
// (checks_passed / checks_failed) or, later, a detector's finding.
type PolicyCheck struct {
	// Policy names the check (QWED-Agent spec v1.1 §5.2 "policy").
	Policy string `json:"policy"`
	Passed bool   `json:"passed"`
	// Severity, Code and Details describe a failed check: its severity
	// (critical for a security violation, high otherwise), the decision's
	// error code and details.
	Severity string  `json:"severity,omitempty"`
	Code     Code    `json:"code,omitempty"`
	Details  Details `json:"details,omitempty"`
}

// RiskFactor is one factor of a risk assessment, with its fixed weight.
type RiskFactor struct {
	Factor string  `json:"factor"`
	Weight float64 `json:"weight"`
}

// RiskAssessment is QWED-Agent spec v1.1 §5.2's risk_assessment.
type RiskAssessment struct {
	// BaseRisk is the risk of the action type or tool before its content
	// is looked at; FinalRisk the risk the decision used (critical for a
	// security violation).
	BaseRisk         Risk         `json:"base_risk"`
	Factors          []RiskFactor `json:"factors"`
	FinalRisk        Risk         `json:"final_risk"`
	RequiresApproval bool         `json:"requires_approval"`
}

// riskFactorWeights are the fixed weights of the factors, in the order
// factors are listed.
var riskFactorWeights = []RiskFactor{
	{"content_risk_class", 0.4},   // the content's class raised the risk above the base
	{"security_violation", 1.0},   // a security violation (blocked)
	{"verification_failed", 0.8},  // an engine or gate check refuted it
	{"unknown_tool", 0.9},         // an unknown tool (risk score set)
	{"insufficient_trust", 0.7},   // the trust level does not allow the risk
	{"loop_detected", 0.6},        // a conversation control failed
	{"budget_exhausted", 0.5},     // a budget is exhausted
	{"approval_required", 0.3},    // the decision waits for a principal
	{"attestation_required", 0.2}, // high risk: approved only with an attestation
	{"pii_in_content", 0.5},       // the PII scan found something (§5.2's example)
}

// loopChecks are the conversation controls.
var loopChecks = map[string]bool{checkContext: true, checkStepLimit: true, checkReplay: true, checkRepetition: true, checkDoomLoop: true}

// AssessDecision returns the risk assessment and the policy checks of a
// recorded decision.
func AssessDecision(d *ActionDecided) (*RiskAssessment, []PolicyCheck) {
	ver := &d.Verification
	base := ver.RiskLevel
	if d.Kind != KindTool {
		if spec, ok := actionSpecs[d.ActionType]; ok {
			base = spec.Risk
			if spec.SQL && spec.Risk == RiskCritical {
				base = RiskLow // execute_sql's risk is its statement's class
			}
		}
	}
	final := ver.RiskLevel
	if d.SecurityViolation {
		final = RiskCritical
	}
	if base == "" {
		base = final
	}
	failed := ""
	if len(ver.ChecksFailed) > 0 {
		failed = ver.ChecksFailed[0]
	}
	on := [...]bool{
		final.Rank() > base.Rank(),
		d.SecurityViolation,
		!d.SecurityViolation && (failed == checkEngineVerdict || failed == checkSQLSafe || failed == checkEngine || failed == checkTypeKnown || failed == checkToolAllowed) && ver.RiskScore == "",
		ver.RiskScore != "",
		failed == checkTrust,
		loopChecks[failed],
		d.Decision == BudgetExceeded,
		d.Decision == Pending,
		d.HighRisk && d.Decision == Approved,
		len(ver.PII) > 0 || failed == checkNoPII,
	}
	ra := &RiskAssessment{BaseRisk: base, FinalRisk: final, RequiresApproval: d.Decision == Pending, Factors: []RiskFactor{}}
	for i, set := range on {
		if set {
			ra.Factors = append(ra.Factors, riskFactorWeights[i])
		}
	}
	checks := make([]PolicyCheck, 0, len(ver.ChecksPassed)+len(ver.ChecksFailed))
	for _, c := range ver.ChecksPassed {
		checks = append(checks, PolicyCheck{Policy: c, Passed: true})
	}
	for _, c := range ver.ChecksFailed {
		pc := PolicyCheck{Policy: c, Severity: "high"}
		if d.SecurityViolation {
			pc.Severity = "critical"
		}
		if d.Error != nil {
			pc.Code, pc.Details = d.Error.Code, d.Error.Details
		}
		checks = append(checks, pc)
	}
	return ra, checks
}
