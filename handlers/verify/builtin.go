package verify

import (
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/code"
	"github.com/agentgate/agentgate/domain/engines/fact"
	"github.com/agentgate/agentgate/domain/engines/image"
	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/domain/engines/math"
	"github.com/agentgate/agentgate/domain/engines/reasoning"
	"github.com/agentgate/agentgate/domain/engines/sql"
	"github.com/agentgate/agentgate/domain/engines/stats"
)

// BuiltinOptions are what the built-in engines need from the process.
type BuiltinOptions struct {
	// Solver answers the logic engine's SMT-LIB2 queries (a
	// *z3pool.Pool). Nil leaves the logic engine listed but failing
	// closed: every query that parses answers ERROR with QWED-ENG-004,
	// and the reasoning engine's logic steps with it.
	Solver logic.Solver
	// Isolate, when set, wraps each engine of CParserEngines: the gate as
	// served runs them in worker processes (enginehost.Host.Isolate), so
	// that a fault in their C parsers ends a worker, not the gate. Nil
	// runs them in this process (tests of the engines' logic).
	Isolate func(engines.Engine) engines.Engine
}

// CParserEngines returns, in process, the built-in engines whose parsers
// are C code: sql (pg_query) and code (tree-sitter). They are what an
// engine worker serves.
func CParserEngines() []engines.Engine {
	return []engines.Engine{sql.New(), code.New()}
}

// Builtin returns the eight engines of the QWED protocol v1.0 §4.1 built into this
// binary, math first. The engines are safe for concurrent use as long as
// opts.Solver is.
func Builtin(opts BuiltinOptions) []engines.Engine {
	lg := logic.New(opts.Solver)
	cp := CParserEngines()
	if opts.Isolate != nil {
		for i, e := range cp {
			cp[i] = opts.Isolate(e)
		}
	}
	return []engines.Engine{
		math.New(),
		lg,
		stats.New(),
		fact.New(),
		cp[0], // sql
		cp[1], // code
		image.New(),
		reasoning.New(lg),
	}
}
