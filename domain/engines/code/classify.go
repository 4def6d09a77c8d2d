package code

import "github.com/agentgate/agentgate/domain/engines"

// Assessment is the code engine's verdict on an execute_code action, for
// the gate (QWED-Agent spec v1.1 §2.2: code execution is verified by the code engine;
// §8.2: a security finding is a security violation).
type Assessment struct {
	// Status is the engine status: VERIFIED, BLOCKED, ERROR (code that does
	// not parse or crosses a limit) or UNSUPPORTED (unknown language).
	Status engines.Status `json:"status"`
	// Risk is low, medium, high or critical: the highest finding severity
	// (no finding, info and low are low); critical whenever the code could
	// not be analysed (fail closed).
	Risk string `json:"risk_level"`
	// Violation is true when a finding is critical or high: the action is a
	// security violation for trust degradation.
	Violation bool `json:"security_violation"`
	// Findings are all findings, sorted by position.
	Findings []engines.Finding `json:"findings,omitempty"`
	// Problem is the §8 error of an ERROR, UNSUPPORTED or BLOCKED status.
	Problem *engines.Problem `json:"error,omitempty"`
	// Reason explains a non-low risk in one line.
	Reason string `json:"reason,omitempty"`
}

// ClassifyExecution assesses the code of an execute_code action in the
// language (any params.language spelling; "" is python) with the security
// checks. It is pure, deterministic and never panics.
func ClassifyExecution(language, source string) (a Assessment) {
	defer func() {
		if r := recover(); r != nil {
			a = Assessment{Status: engines.Error, Risk: SevCritical, Reason: "the code engine failed unexpectedly",
				Problem: &engines.Problem{Code: "QWED-ENG-002", Message: "Verification failed unexpectedly"}}
		}
	}()
	if source == "" {
		return Assessment{Status: engines.Error, Risk: SevCritical, Reason: "no code to analyse",
			Problem: &engines.Problem{Code: "QWED-REQ-002", Message: "Missing required field: code", Details: map[string]any{"field": "code"}}}
	}
	an, prob := Analyse(language, source, nil)
	if prob != nil {
		st := engines.Error
		if prob.Code == "QWED-REQ-005" {
			st = engines.Unsupported
		}
		return Assessment{Status: st, Risk: SevCritical, Problem: prob, Reason: "the code could not be analysed: " + prob.Message}
	}
	a = Assessment{Status: engines.Verified, Risk: an.Risk(), Findings: an.Findings}
	if bl := an.Blocking(); len(bl) > 0 {
		a.Status, a.Violation = engines.Blocked, true
		a.Problem = &engines.Problem{Code: "QWED-SEC-002", Message: "Malicious payload detected: " + bl[0].Message,
			Details: map[string]any{"findings": bl}}
	}
	if len(an.Findings) > 0 && a.Risk != SevLow {
		worst := an.Findings[0]
		for _, f := range an.Findings {
			if severityRank(f.Severity) > severityRank(worst.Severity) {
				worst = f
			}
		}
		a.Reason = worst.Rule + " at line " + itoa(worst.Line) + ": " + worst.Message
	}
	return a
}
