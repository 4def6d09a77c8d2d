package math

import (
	"fmt"

	"github.com/agentgate/agentgate/domain/engines"
)

// The §8 codes the math engine answers with.
const (
	// CodeInvalid (QWED-REQ-001): bad params, or an expression that is
	// undefined (division by zero, 0**0, log(0), sqrt(-1) in the real
	// domain).
	CodeInvalid = "QWED-REQ-001"
	// CodeSyntax (QWED-REQ-003): a syntax error or an ambiguous expression,
	// with details position, expected and found (and reason).
	CodeSyntax = "QWED-REQ-003"
	// CodeTooLarge (QWED-REQ-004): the query or the work is past a limit.
	CodeTooLarge = "QWED-REQ-004"
	// CodeUnsupported (QWED-REQ-005): the engine cannot decide the query
	// exactly (status UNSUPPORTED).
	CodeUnsupported = "QWED-REQ-005"
	// CodeInternal (QWED-ENG-002): an internal fault, answered as ERROR
	// rather than crash; no input is expected to reach it.
	CodeInternal = "QWED-ENG-002"
)

// failure is the one error of the engine's internals: a status with its §8
// problem. The evaluator raises it with fail (a panic carrying *failure)
// from however deep it is, and Verify recovers it into an Outcome; it never
// leaves the package as a panic.
type failure struct {
	status  engines.Status
	problem engines.Problem
}

func (f *failure) Error() string { return f.problem.Code + ": " + f.problem.Message }

// fail raises f; Verify's recover turns it into the Outcome.
func fail(f *failure) { panic(f) }

// syntaxProblem is QWED-REQ-003 at byte offset pos.
func syntaxProblem(pos int, expected, found, reason string) *failure {
	d := map[string]any{"position": pos, "expected": expected, "found": found}
	msg := "Invalid query syntax"
	if reason != "" {
		d["reason"] = reason
		msg += ": " + reason
	}
	return &failure{engines.Error, engines.Problem{Code: CodeSyntax, Message: msg, Details: d}}
}

// ambiguous refuses an implicit multiplication that can be read two ways.
func ambiguous(pos int, found, reason string) *failure {
	return syntaxProblem(pos, "an explicit operator (* or /) and parentheses", found, "ambiguous implicit multiplication: "+reason)
}

// limitProblem is QWED-REQ-004 for limit name (pos < 0: no position).
func limitProblem(name string, max, pos int) *failure {
	d := map[string]any{"limit": name, "max": max}
	if pos >= 0 {
		d["position"] = pos
	}
	return &failure{engines.Error, engines.Problem{Code: CodeTooLarge,
		Message: fmt.Sprintf("Query too large: past the limit %s (%d)", name, max), Details: d}}
}

// undefined is QWED-REQ-001 for an expression without a value.
func undefined(pos int, reason, msg string) *failure {
	d := map[string]any{"reason": reason}
	if pos >= 0 {
		d["position"] = pos
	}
	return &failure{engines.Error, engines.Problem{Code: CodeInvalid, Message: msg, Details: d}}
}

// unsupported is an UNSUPPORTED answer with its reason.
func unsupported(pos int, reason string) *failure {
	d := map[string]any{"reason": reason}
	if pos >= 0 {
		d["position"] = pos
	}
	return &failure{engines.Unsupported, engines.Problem{Code: CodeUnsupported,
		Message: "Not decidable exactly: " + reason, Details: d}}
}

// invalidParams is QWED-REQ-001 for a bad params field.
func invalidParams(field, msg string) *failure {
	return &failure{engines.Error, engines.Problem{Code: CodeInvalid, Message: "Invalid request format: " + msg,
		Details: map[string]any{"field": field}}}
}
