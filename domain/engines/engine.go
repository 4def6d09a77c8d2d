package engines

import (
	"context"
	"encoding/json"
)

// Status is a verification status of the QWED protocol v1.0 §6.2.
type Status string

// The statuses of the QWED protocol v1.0 §6.2.
const (
	Verified    Status = "VERIFIED"
	Failed      Status = "FAILED"
	Corrected   Status = "CORRECTED"
	Blocked     Status = "BLOCKED"
	Error       Status = "ERROR"
	Timeout     Status = "TIMEOUT"
	Unsupported Status = "UNSUPPORTED"
)

// HTTPStatus is the HTTP code QWED protocol v1.0 §6.2 gives the status (500 for a
// status it does not know).
func (s Status) HTTPStatus() int {
	switch s {
	case Verified, Failed, Corrected:
		return 200
	case Blocked:
		return 403
	case Timeout:
		return 504
	case Unsupported:
		return 400
	default:
		return 500
	}
}

// Request is one verification request (QWED protocol v1.0 §5.1) as an engine sees
// it: the transport has validated the envelope against the JSON Schema.
type Request struct {
	// Query is the content to verify (1..MaxQueryBytes bytes).
	Query string
	// Type is the engine id the request was routed to.
	Type string
	// Params are the engine-specific parameters (§5.2), undecoded; an
	// engine decodes them strictly and answers QWED-REQ-001 on a field of
	// the wrong type.
	Params json.RawMessage
	// IncludeProof asks for Outcome.Proof.
	IncludeProof bool
}

// MaxQueryBytes is the query length limit of the QWED protocol v1.0 §5.1 and §10.1
// (QWED-REQ-004 beyond it).
const MaxQueryBytes = 100000

// Problem is an error of the QWED protocol v1.0 §8.4: a code of §8.3, a message and
// details (position, expected and found for syntax errors).
type Problem struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// Finding is one security or validity finding of an analysing engine (code,
// sql): a rule id, a severity, where it is and what it found.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"` // "critical", "high", "medium", "low", "info"
	Message  string `json:"message"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Snippet  string `json:"snippet,omitempty"`
}

// Outcome is what an engine answers: the status, the engine-specific
// result object (§6.1 "result"), and for CORRECTED the corrected query.
type Outcome struct {
	Status Status
	// Result is the engine-specific result; it must encode to a JSON
	// object deterministically (structs, or maps whose keys
	// encoding/json sorts; no floats where exactness matters: exact
	// numbers travel as strings or json.Number).
	Result any
	// Proof is the derivation, set only when Request.IncludeProof.
	Proof any
	// Corrected is the corrected query (Status Corrected).
	Corrected string
	// Findings are the security findings (code, sql); a finding with
	// severity "critical" or "high" makes a BLOCKED outcome and, inside
	// the gate, a security violation.
	Findings []Finding
	// Err is set for ERROR, TIMEOUT, UNSUPPORTED and BLOCKED outcomes that
	// carry a §8 code.
	Err *Problem
}

// Capabilities is an engine's capabilities document (QWED protocol v1.0 §4.2),
// served by GET /engines.
type Capabilities struct {
	EngineID     string          `json:"engine_id"`
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Capabilities map[string]any  `json:"capabilities"`
	InputTypes   []string        `json:"input_types"`
	OutputTypes  []string        `json:"output_types"`
	Limits       map[string]int  `json:"limits,omitempty"`
	Params       json.RawMessage `json:"params_schema,omitempty"`
}

// Engine is one verification engine.
type Engine interface {
	// Capabilities describes the engine (constant for a build).
	Capabilities() Capabilities
	// Verify decides req. It never panics on any input; ctx only bounds
	// an engine that waits on its Solver (pure engines bound their work
	// by input size and step budgets, not by the clock, so that the
	// answer does not depend on the machine's speed).
	Verify(ctx context.Context, req Request) Outcome
}
