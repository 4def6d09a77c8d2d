package logic

import (
	"fmt"

	"github.com/agentgate/agentgate/domain/engines"
)

// The QWED protocol v1.0 §8 codes the logic engine answers with.
const (
	// CodeInvalid (QWED-REQ-001): params of the wrong shape.
	CodeInvalid = "QWED-REQ-001"
	// CodeSyntax (QWED-REQ-003): a syntax, arity or sort error, with
	// details position (byte offset), line, column, expected and found.
	CodeSyntax = "QWED-REQ-003"
	// CodeTooLarge (QWED-REQ-004): the query is past a limit of limits.go.
	CodeTooLarge = "QWED-REQ-004"
	// CodeUnsupported (QWED-REQ-005): the query uses a construct the
	// engine cannot decide exactly (a regular expression feature outside
	// the decidable subset, a non-literal exponent, ...) or the solver
	// answered unknown for a reason other than its time limit (status
	// UNSUPPORTED, details reason).
	CodeUnsupported = "QWED-REQ-005"
	// CodeInit (QWED-ENG-001): the solver could not be started for the
	// query (ErrSolverInit), status ERROR.
	CodeInit = "QWED-ENG-001"
	// CodeFailed (QWED-ENG-002): the solver misbehaved (it rejected the
	// translated script or died), status ERROR.
	CodeFailed = "QWED-ENG-002"
	// CodeTimeout (QWED-ENG-003): the solver ran out of time, status
	// TIMEOUT.
	CodeTimeout = "QWED-ENG-003"
	// CodeUnavailable (QWED-ENG-004): no solver (z3 is not installed or
	// the pool is closed), status ERROR.
	CodeUnavailable = "QWED-ENG-004"
	// CodeBusy (QWED-SYS-002): the solver's queue is full, status ERROR.
	CodeBusy = "QWED-SYS-002"
)

// failure is the one error of the parser, checker and translator: a status
// with its §8 problem. Verify turns it into the Outcome.
type failure struct {
	status  engines.Status
	problem engines.Problem
}

func (f *failure) Error() string { return f.problem.Code + ": " + f.problem.Message }

// lineCol is the 1-based line and column (in bytes) of byte offset pos.
func lineCol(src string, pos int) (line, col int) {
	line, col = 1, 1
	for i := 0; i < pos && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// syntaxErr is QWED-REQ-003 at byte offset pos of src.
func syntaxErr(src string, pos int, expected, found string) *failure {
	line, col := lineCol(src, pos)
	return &failure{engines.Error, engines.Problem{
		Code:    CodeSyntax,
		Message: fmt.Sprintf("Invalid query syntax at line %d column %d: expected %s, found %s", line, col, expected, found),
		Details: map[string]any{"position": pos, "line": line, "column": col, "expected": expected, "found": found},
	}}
}

// limitErr is QWED-REQ-004 for the named limit, crossed at byte offset pos.
func limitErr(src string, pos int, name string, max int) *failure {
	line, col := lineCol(src, pos)
	return &failure{engines.Error, engines.Problem{
		Code:    CodeTooLarge,
		Message: fmt.Sprintf("Query too large: %s is limited to %d (line %d column %d)", name, max, line, col),
		Details: map[string]any{"limit": name, "max": max, "position": pos, "line": line, "column": col},
	}}
}

// unsupported is an UNSUPPORTED outcome at byte offset pos (pos < 0: none).
func unsupported(src string, pos int, reason string) *failure {
	d := map[string]any{"reason": reason}
	if pos >= 0 {
		line, col := lineCol(src, pos)
		d["position"], d["line"], d["column"] = pos, line, col
	}
	return &failure{engines.Unsupported, engines.Problem{Code: CodeUnsupported, Message: "Unsupported: " + reason, Details: d}}
}
