package reasoning

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
	mathengine "github.com/agentgate/agentgate/domain/engines/math"
)

// Version is the reasoning engine's version.
const Version = "1.0.0"

// MaxSteps is the most steps of one chain (QWED-REQ-004 beyond it).
const MaxSteps = 100

// The §8 codes the reasoning engine answers with itself (a step's own
// code is passed through).
const (
	CodeInvalid  = "QWED-REQ-001"
	CodeMissing  = "QWED-REQ-002"
	CodeTooLarge = "QWED-REQ-004"
	CodeTimeout  = "QWED-ENG-003"
)

// Step is one step of params.steps.
type Step struct {
	// Claim is the step's query for its engine (non-empty).
	Claim string `json:"claim"`
	// Engine is "math" (the default) or "logic".
	Engine string `json:"engine,omitempty"`
	// Params are the step engine's params, passed through unchanged.
	Params json.RawMessage `json:"params,omitempty"`
}

// Params are the reasoning engine's params.
type Params struct {
	Steps []Step `json:"steps"`
}

// StepResult is the check of one step.
type StepResult struct {
	Index     int              `json:"index"`
	Claim     string           `json:"claim"`
	Engine    string           `json:"engine"`
	Status    engines.Status   `json:"status"`
	Result    any              `json:"result,omitempty"`
	Corrected string           `json:"corrected,omitempty"`
	Error     *engines.Problem `json:"error,omitempty"`
}

// Result is the reasoning engine's result object.
type Result struct {
	IsValid            bool         `json:"is_valid"`
	StepsTotal         int          `json:"steps_total"`
	StepsVerified      int          `json:"steps_verified"`
	FirstWrongStep     *StepResult  `json:"first_wrong_step,omitempty"`
	FirstUndecidedStep *StepResult  `json:"first_undecided_step,omitempty"`
	Steps              []StepResult `json:"steps"`
	Message            string       `json:"message"`
}

// Proof is the steps' proofs, in order, when include_proof is set.
type Proof struct {
	Steps []any `json:"steps"`
}

const paramsSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,` +
	`"properties":{"steps":{"type":"array","minItems":1,"maxItems":100,"items":{"type":"object","additionalProperties":false,` +
	`"required":["claim"],"properties":{"claim":{"type":"string","minLength":1},"engine":{"enum":["math","logic"]},"params":{"type":"object"}}}}}}`

// Engine is the reasoning engine.
type Engine struct {
	math  engines.Engine
	logic engines.Engine
}

// New is the reasoning engine checking logic steps with logic (nil: logic
// steps are UNSUPPORTED) and math steps with the math engine. It is safe
// for concurrent use when logic is.
func New(logic engines.Engine) *Engine {
	return &Engine{math: mathengine.New(), logic: logic}
}

// Capabilities is the reasoning engine's capabilities document (QWED protocol v1.0
// §4.2).
func (e *Engine) Capabilities() engines.Capabilities {
	stepEngines := []string{"math"}
	if e.logic != nil {
		stepEngines = append(stepEngines, "logic")
	}
	return engines.Capabilities{
		EngineID: "reasoning",
		Name:     "Reasoning Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"chain_of_thought": true,
			"first_wrong_step": true,
			"step_engines":     stepEngines,
		},
		InputTypes:  []string{"steps", "text"},
		OutputTypes: []string{"verification_result", "first_wrong_step", "proof"},
		Limits:      map[string]int{"max_steps": MaxSteps, "max_query_bytes": engines.MaxQueryBytes},
		Params:      json.RawMessage(paramsSchema),
	}
}

// problem is an outcome of the engine's own (not a step's).
func problem(status engines.Status, code, msg string, details map[string]any) engines.Outcome {
	return engines.Outcome{Status: status, Err: &engines.Problem{Code: code, Message: msg, Details: details}}
}

// Verify checks every step of the chain and decides as the package
// documentation says. It never panics on any input.
func (e *Engine) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	if len(req.Query) > engines.MaxQueryBytes {
		return problem(engines.Error, CodeTooLarge, "Query too long", map[string]any{"limit": "max_query_bytes", "max": engines.MaxQueryBytes})
	}
	steps, bad := stepsOf(req)
	if bad != nil {
		return *bad
	}
	res := Result{StepsTotal: len(steps), Steps: make([]StepResult, 0, len(steps))}
	var proof Proof
	wrong, undecided := -1, -1
	for i, s := range steps {
		sr := StepResult{Index: i, Claim: s.Claim, Engine: s.Engine}
		var o engines.Outcome
		switch {
		case ctx.Err() != nil:
			o = problem(engines.Timeout, CodeTimeout, "Verification timeout: the chain was stopped before this step", nil)
		case s.Engine == "logic" && e.logic == nil:
			o = problem(engines.Unsupported, "QWED-ENG-004", "Engine not available: no logic engine", nil)
		case s.Engine == "logic":
			o = e.logic.Verify(ctx, engines.Request{Query: s.Claim, Type: "logic", Params: s.Params, IncludeProof: req.IncludeProof})
		default:
			o = e.math.Verify(ctx, engines.Request{Query: s.Claim, Type: "math", Params: s.Params, IncludeProof: req.IncludeProof})
		}
		sr.Status, sr.Result, sr.Corrected, sr.Error = o.Status, o.Result, o.Corrected, o.Err
		res.Steps = append(res.Steps, sr)
		proof.Steps = append(proof.Steps, o.Proof)
		switch o.Status {
		case engines.Verified:
			res.StepsVerified++
		case engines.Failed, engines.Corrected:
			if wrong < 0 {
				wrong = i
			}
		default:
			if undecided < 0 {
				undecided = i
			}
		}
	}
	var out engines.Outcome
	if req.IncludeProof {
		out.Proof = proof
	}
	if undecided >= 0 {
		u := res.Steps[undecided]
		res.FirstUndecidedStep = &u
	}
	switch {
	case wrong >= 0:
		w := res.Steps[wrong]
		res.FirstWrongStep = &w
		out.Status = engines.Failed
		res.Message = fmt.Sprintf("Step %d is wrong (%s): %s", w.Index, w.Status, w.Claim)
	case undecided >= 0:
		u := res.Steps[undecided]
		out.Status = u.Status
		p := engines.Problem{Code: "QWED-ENG-002", Message: "Verification failed unexpectedly"}
		if u.Error != nil {
			p = *u.Error
		}
		details := map[string]any{"step": u.Index}
		for k, v := range p.Details {
			details[k] = v
		}
		out.Err = &engines.Problem{Code: p.Code, Message: fmt.Sprintf("step %d: %s", u.Index, p.Message), Details: details}
		res.Message = fmt.Sprintf("Step %d could not be decided (%s): %s", u.Index, u.Status, u.Claim)
	default:
		res.IsValid = true
		out.Status = engines.Verified
		res.Message = fmt.Sprintf("All %d steps verified", len(steps))
	}
	out.Result = res
	return out
}

// stepsOf reads the steps from params, or from the query's lines.
func stepsOf(req engines.Request) ([]Step, *engines.Outcome) {
	invalid := func(field, msg string) *engines.Outcome {
		o := problem(engines.Error, CodeInvalid, "Invalid request format: "+msg, map[string]any{"field": field})
		return &o
	}
	var p Params
	if t := bytes.TrimSpace(req.Params); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(req.Params))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			field := "params"
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				field = te.Field
			}
			return nil, invalid(field, fmt.Sprintf("decoding params: %v", err))
		}
		if dec.More() {
			return nil, invalid("params", "params must be one JSON object")
		}
	}
	steps := p.Steps
	if steps == nil {
		for _, line := range strings.Split(req.Query, "\n") {
			if s, ok := stepOfLine(line); ok {
				if len(steps) == MaxSteps {
					o := problem(engines.Error, CodeTooLarge, "Query too long: too many steps", map[string]any{"limit": "max_steps", "max": MaxSteps})
					return nil, &o
				}
				steps = append(steps, s)
			}
		}
	}
	if len(steps) == 0 {
		o := problem(engines.Error, CodeMissing, "Missing required field: no steps (params.steps or one step per line of the query)", map[string]any{"field": "steps"})
		return nil, &o
	}
	if len(steps) > MaxSteps {
		o := problem(engines.Error, CodeTooLarge, "Query too long: too many steps", map[string]any{"limit": "max_steps", "max": MaxSteps})
		return nil, &o
	}
	for i := range steps {
		field := fmt.Sprintf("steps[%d]", i)
		switch steps[i].Engine {
		case "":
			steps[i].Engine = "math"
		case "math", "logic":
		default:
			return nil, invalid(field+".engine", "a step's engine is math or logic")
		}
		if strings.TrimSpace(steps[i].Claim) == "" {
			return nil, invalid(field+".claim", "a step needs a claim")
		}
		if len(steps[i].Claim) > engines.MaxQueryBytes {
			return nil, invalid(field+".claim", "a step's claim is longer than the query limit")
		}
	}
	return steps, nil
}

// stepOfLine reads one line of the query as a step (ok false for a blank
// line).
func stepOfLine(line string) (Step, bool) {
	s := strings.TrimSpace(dropLabel(strings.TrimSpace(line)))
	if s == "" {
		return Step{}, false
	}
	for _, eng := range []string{"logic", "math"} {
		if len(s) > len(eng) && strings.EqualFold(s[:len(eng)], eng) && s[len(eng)] == ':' {
			return Step{Claim: strings.TrimSpace(s[len(eng)+1:]), Engine: eng}, true
		}
	}
	return Step{Claim: s, Engine: "math"}, true
}

// dropLabel removes a leading "Step N:", "N." or "N)" label.
func dropLabel(s string) string {
	rest := s
	if len(rest) >= 4 && strings.EqualFold(rest[:4], "step") {
		rest = strings.TrimLeft(rest[4:], " ")
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) {
		return s
	}
	switch {
	case rest[n] == ':' && len(rest) < len(s):
		return rest[n+1:]
	case (rest[n] == '.' || rest[n] == ')') && n+1 < len(rest) && rest[n+1] == ' ':
		return rest[n+1:]
	}
	return s
}
