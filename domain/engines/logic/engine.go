package logic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentgate/agentgate/domain/engines"
)

// Version is the engine's version in its capabilities document.
const Version = "1.0.0"

// The errors a Solver wraps so that the engine answers with the right code.
var (
	// ErrSolverUnavailable: there is no solver (z3 is not installed, it
	// cannot start, or the pool is closed): ERROR with QWED-ENG-004.
	ErrSolverUnavailable = errors.New("logic solver not available")
	// ErrSolverTimeout: the solver passed its hard deadline and was
	// killed: TIMEOUT with QWED-ENG-003.
	ErrSolverTimeout = errors.New("logic solver timed out")
	// ErrSolverBusy: the solver's queue is full: ERROR with QWED-SYS-002.
	ErrSolverBusy = errors.New("logic solver queue full")
	// ErrSolverInit: the solver was there but a fresh solver process could
	// not be started for the query (the one before it died): ERROR with
	// QWED-ENG-001, engine initialization failed. It takes precedence
	// over ErrSolverUnavailable when an error wraps both.
	ErrSolverInit = errors.New("logic solver could not be initialized")
)

// The statuses of an Answer (the solver's check-sat reply).
const (
	Sat     = "sat"
	Unsat   = "unsat"
	Unknown = "unknown"
)

// Query is one satisfiability check for a Solver.
type Query struct {
	// Script declares and asserts (Translation.Script); it holds no
	// check-sat, get-value, push, pop or reset: the Solver adds them.
	Script string
	// Values are the terms to ask get-value for when the answer is sat
	// (none: no get-value).
	Values []string
}

// Answer is a Solver's reply.
type Answer struct {
	// Status is Sat, Unsat or Unknown.
	Status string
	// Values is the solver's get-value reply, ((term value) ...), when
	// Status is Sat and the Query had Values.
	Values string
	// Reason is the solver's reason-unknown when Status is Unknown
	// ("timeout" and "canceled" mean it ran out of time).
	Reason string
}

// Solver decides SMT-LIB2 queries. An implementation (handlers/verify/z3pool)
// runs each query in a fresh solver state, so that the answer to a query,
// model included, depends on the query alone; it bounds the query's time
// and wraps ErrSolverUnavailable, ErrSolverTimeout or ErrSolverBusy in
// its errors when they apply. It is safe for concurrent use.
type Solver interface {
	Solve(ctx context.Context, q Query) (Answer, error)
}

// Params are the logic engine's params (QWED protocol v1.0 §5.2.2), decoded
// strictly: an unknown field or a field of the wrong type is QWED-REQ-001.
type Params struct {
	// Format is "dsl" (the only format, and the default).
	Format string `json:"format,omitempty"`
	// Mode is "satisfiable" (the default) or "valid" ("prove" is a synonym).
	Mode string `json:"mode,omitempty"`
}

// Result is the engine's result object (QWED protocol v1.0 §6.3.3).
type Result struct {
	// IsValid is true when the claim of the mode holds (VERIFIED).
	IsValid bool `json:"is_valid"`
	// Mode is "satisfiable" or "valid".
	Mode Mode `json:"mode"`
	// Satisfiability is the solver's answer for the script it was given:
	// "SAT", "UNSAT" or "UNKNOWN" (in mode valid the script is the
	// negation of the formula).
	Satisfiability string `json:"satisfiability"`
	// Model maps each free variable to its value when the script is SAT:
	// a witness in mode satisfiable, a counterexample in mode valid.
	// Numbers are exact (a JSON number for an integer or a finite
	// decimal, else a string "p/q", or the SMT-LIB root-obj term of an
	// irrational algebraic number).
	Model map[string]any `json:"model,omitempty"`
	// ConstraintsEvaluated is the number of constraints (the operands of a
	// top-level AND, else 1).
	ConstraintsEvaluated int `json:"constraints_evaluated"`
	// Expected and Actual name the claim and what was found, for FAILED.
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	// Message says what the answer means.
	Message string `json:"message"`
}

// Proof is the derivation given when the request asks for it: the exact
// SMT-LIB2 script the solver checked and the sorts inferred for the free
// variables.
type Proof struct {
	Solver string          `json:"solver"`
	Script string          `json:"smtlib"`
	Check  string          `json:"check"`
	Sorts  map[string]Sort `json:"sorts,omitempty"`
}

// Engine is the logic engine (QWED protocol v1.0 §4.1 "logic", §7).
type Engine struct {
	solver Solver
}

// New is the logic engine answering through solver (nil: every query that
// parses is answered ERROR with QWED-ENG-004, engine not available).
func New(solver Solver) *Engine { return &Engine{solver: solver} }

var _ engines.Engine = (*Engine)(nil)

// Capabilities is the engine's capabilities document (QWED protocol v1.0 §4.2).
func (e *Engine) Capabilities() engines.Capabilities {
	return engines.Capabilities{
		EngineID: "logic",
		Name:     "Logic Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"dsl":                 "QWED-Logic 1.0",
			"operators":           Operators(),
			"sorts":               []string{string(SortBool), string(SortInt), string(SortReal), string(SortString)},
			"quantifiers":         true,
			"regular_expressions": true,
			"modes":               []string{string(ModeSatisfiable), string(ModeValid)},
			"solver":              "z3",
			"models":              true,
		},
		InputTypes:  []string{"dsl"},
		OutputTypes: []string{"verification_result", "model", "proof"},
		Limits: map[string]int{
			"query_bytes": MaxQueryBytes, "depth": MaxDepth, "nodes": MaxNodes,
			"variables": MaxVariables, "name_bytes": MaxNameBytes, "number_digits": MaxNumberDigits,
			"string_bytes": MaxStringBytes, "regex_bytes": MaxRegexBytes, "regex_repeat": MaxRegexRepeat,
			"regex_depth": MaxRegexDepth, "pow_exponent": MaxPowExponent,
		},
		Params: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"format":{"enum":["dsl"]},"mode":{"enum":["satisfiable","valid","prove"]}}}`),
	}
}

// decodeParams decodes raw strictly.
func decodeParams(raw json.RawMessage) (Mode, *failure) {
	var p Params
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&p); err != nil {
			return "", invalid(fmt.Sprintf("decoding params: %v", err))
		}
	}
	if p.Format != "" && p.Format != "dsl" {
		return "", invalid(fmt.Sprintf("params.format %q: the logic engine reads the QWED-Logic DSL (\"dsl\")", p.Format))
	}
	switch p.Mode {
	case "", string(ModeSatisfiable):
		return ModeSatisfiable, nil
	case string(ModeValid), "prove":
		return ModeValid, nil
	}
	return "", invalid(fmt.Sprintf("params.mode %q: expected \"satisfiable\" or \"valid\"", p.Mode))
}

func invalid(msg string) *failure {
	return &failure{engines.Error, engines.Problem{Code: CodeInvalid, Message: "Invalid request format: " + msg}}
}

func outcomeOf(f *failure) engines.Outcome {
	p := f.problem
	return engines.Outcome{Status: f.status, Err: &p}
}

// Verify decides req (QWED protocol v1.0 §6.3.3). In mode satisfiable the query is
// a set of constraints and VERIFIED means they can all hold at once: the
// solver found an assignment, given as the model (one witness, not the
// only one); FAILED means no assignment satisfies them all (UNSAT). In
// mode valid VERIFIED means the formula holds for every assignment of its
// free variables (its negation is UNSAT) and FAILED gives a
// counterexample. A solver answer of unknown is TIMEOUT when the solver
// ran out of time and UNSUPPORTED otherwise: never VERIFIED.
func (e *Engine) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	if len(req.Query) == 0 {
		return outcomeOf(&failure{engines.Error, engines.Problem{Code: "QWED-REQ-002", Message: "Missing required field: query"}})
	}
	mode, f := decodeParams(req.Params)
	if f != nil {
		return outcomeOf(f)
	}
	t, f := translate(req.Query, mode)
	if f != nil {
		return outcomeOf(f)
	}
	var proof any
	if req.IncludeProof {
		pr := Proof{Solver: "z3", Script: t.Script, Check: "check-sat of the formula"}
		if mode == ModeValid {
			pr.Check = "check-sat of the negated formula (UNSAT proves validity)"
		}
		if len(t.Names) > 0 {
			pr.Sorts = make(map[string]Sort, len(t.Names))
			for i, n := range t.Names {
				pr.Sorts[n] = t.Sorts[i]
			}
		}
		proof = pr
	}
	if e.solver == nil {
		return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeUnavailable, Message: "Engine not available: no SMT solver (install z3)"}}
	}
	ans, err := e.solver.Solve(ctx, Query{Script: t.Script, Values: t.Values})
	if err != nil {
		return solverErr(err, proof)
	}
	res := Result{Mode: mode, ConstraintsEvaluated: t.Constraints}
	switch ans.Status {
	case Sat:
		res.Satisfiability = "SAT"
		model := map[string]any{}
		if len(t.Values) > 0 {
			if model, err = parseModel(t, ans.Values); err != nil {
				return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeFailed, Message: "Verification failed unexpectedly: " + err.Error()}}
			}
		}
		res.Model = model
		if mode == ModeSatisfiable {
			res.IsValid = true
			res.Message = "The constraints are satisfiable: the model is an assignment that satisfies all of them"
			return engines.Outcome{Status: engines.Verified, Result: res, Proof: proof}
		}
		res.Expected, res.Actual = "valid", "not valid"
		res.Message = "The formula does not hold for every assignment: the model is a counterexample"
		return engines.Outcome{Status: engines.Failed, Result: res, Proof: proof}
	case Unsat:
		res.Satisfiability = "UNSAT"
		if mode == ModeValid {
			res.IsValid = true
			res.Message = "The formula holds for every assignment (its negation is unsatisfiable)"
			return engines.Outcome{Status: engines.Verified, Result: res, Proof: proof}
		}
		res.Expected, res.Actual = "satisfiable", "unsatisfiable"
		res.Message = "The constraints cannot all hold: no assignment satisfies them (UNSAT)"
		return engines.Outcome{Status: engines.Failed, Result: res, Proof: proof}
	case Unknown:
		res.Satisfiability = "UNKNOWN"
		if ans.Reason == "timeout" || ans.Reason == "canceled" {
			res.Message = "The solver ran out of time"
			return engines.Outcome{Status: engines.Timeout, Result: res, Proof: proof, Err: &engines.Problem{Code: CodeTimeout, Message: "Verification timeout", Details: map[string]any{"reason": ans.Reason}}}
		}
		res.Message = "The solver could not decide the query: " + ans.Reason
		return engines.Outcome{Status: engines.Unsupported, Result: res, Proof: proof, Err: &engines.Problem{Code: CodeUnsupported, Message: "Unsupported: the solver could not decide the query", Details: map[string]any{"reason": ans.Reason}}}
	}
	return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeFailed, Message: fmt.Sprintf("Verification failed unexpectedly: solver answered %q", ans.Status)}}
}

// solverErr maps a Solver error to its outcome.
func solverErr(err error, proof any) engines.Outcome {
	switch {
	case errors.Is(err, ErrSolverTimeout), errors.Is(err, context.DeadlineExceeded):
		return engines.Outcome{Status: engines.Timeout, Proof: proof, Err: &engines.Problem{Code: CodeTimeout, Message: "Verification timeout"}}
	case errors.Is(err, ErrSolverInit):
		return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeInit, Message: "Engine initialization failed: " + err.Error()}}
	case errors.Is(err, ErrSolverUnavailable):
		return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeUnavailable, Message: "Engine not available: " + err.Error()}}
	case errors.Is(err, ErrSolverBusy), errors.Is(err, context.Canceled):
		return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeBusy, Message: "Service unavailable: " + err.Error()}}
	}
	return engines.Outcome{Status: engines.Error, Proof: proof, Err: &engines.Problem{Code: CodeFailed, Message: "Verification failed unexpectedly: " + err.Error()}}
}
