// Package engines holds the contract shared by the verification engines of
// the QWED protocol (QWED protocol v1.0 §4): math, logic, stats, fact, code, sql,
// image and reasoning, each in its own sub-package domain/engines/<id>.
//
// An engine is a pure, deterministic and bounded function of its Request:
// the same request gives the same Outcome, byte for byte once encoded; it
// reads no clock, draws no randomness and does no IO of its own (the logic
// engine reaches its SMT solver through the Solver interface it is given,
// which is the only outside dependency an engine may have). Every engine
// fails closed: input it cannot decide is UNSUPPORTED or an error with a
// QWED protocol v1.0 §8 code, never VERIFIED by default.
package engines
