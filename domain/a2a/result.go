package a2a

// Result is a guard's verdict on a payload. A forwarded payload has
// Blocked false and Code ""; a blocked one names the guard's code and
// why. A payload the guard cannot read (malformed, a value out of its
// bounds) is blocked with its Problem, whose code (QWED-REQ-001 or
// QWED-REQ-004) Code repeats: an input problem, not an engine error, so
// it is never forwarded in shadow mode (block_on_error=false applies to
// engine errors only). The gate records such a message as a refusal.
type Result struct {
	// Engine is the guard's name (EngineFinance, EngineLogic, EngineCode).
	Engine string
	// Blocked is true when the payload must not be forwarded.
	Blocked bool
	// Code is the catalogue code of a blocked payload: CodeFinanceMismatch,
	// CodeLogicContradiction, CodeDangerousCode, or the Problem's code.
	Code string
	// Reason says what the guard found, in QWED A2A's words.
	Reason string
	// ClaimedTotal and ComputedTotal are finance_guard's totals, rounded
	// half up to 0.01 ("150.00"); "" when the payload makes no financial
	// claim.
	ClaimedTotal  string
	ComputedTotal string
	// Contradictions are logic_guard's claims both asserted and negated,
	// sorted (byte order).
	Contradictions []string
	// Patterns are code_guard's matched pattern names, sorted.
	Patterns []string
	// Problem is why the payload could not be read; nil when it could.
	Problem *Problem
}

// refused is the result of a payload the guard cannot read.
func refused(engine string, p *Problem) Result {
	return Result{Engine: engine, Blocked: true, Code: p.Code, Reason: engine + ": " + p.Message, Problem: p}
}
