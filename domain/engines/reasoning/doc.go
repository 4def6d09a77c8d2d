// Package reasoning is the reasoning engine of the QWED protocol (QWED protocol v1.0
// §4.1): it checks a chain of steps, each by the math engine or by the
// logic engine, and reports the first wrong step.
//
// # Steps
//
// The steps come from params (decoded strictly; QWED-REQ-001 otherwise):
//
//	{"steps": [{"claim": "3*4 = 12", "engine": "math"},
//	           {"claim": "12 + 5 = 17"},
//	           {"claim": "(AND (GT x 5) (LT x 10))", "engine": "logic", "params": {"format": "dsl"}}]}
//
// where engine is "math" (the default) or "logic" and params are handed to
// that engine unchanged; the query is then only a description. Without
// params.steps, each non-blank line of the query is a step: a line
// "logic: <DSL>" goes to the logic engine, "math: <claim>" or any other
// line to the math engine, and a leading "Step N:", "N." or "N)" label is
// dropped. At most MaxSteps steps.
//
// # Decision
//
// Every step is checked, independently and in order (a step does not see
// the values of the steps before it). A step counts as right only when
// its engine answers VERIFIED; the chain is VERIFIED only when every step
// is. Otherwise:
//
//   - some step is FAILED or CORRECTED: the chain is FAILED, and
//     result.first_wrong_step is the first such step (index from 0, claim,
//     engine, and the engine's status, result, corrected claim and error);
//   - else the first step that is not decided (UNSUPPORTED, ERROR, TIMEOUT,
//     BLOCKED) gives the chain its status, result.first_undecided_step, and
//     an error with that step's code, its message prefixed with the step,
//     and details.step.
//
// The math engine is built in; the logic engine is the engines.Engine
// handed to New (so that this package does not depend on the solver): with
// none, logic steps are UNSUPPORTED. A cancelled context stops the chain:
// the steps not yet checked are TIMEOUT (QWED-ENG-003).
package reasoning
