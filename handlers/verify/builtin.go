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
}

// Builtin returns the eight engines of seed 002 §4.1 built into this
// binary, math first. The engines are safe for concurrent use as long as
// opts.Solver is.
func Builtin(opts BuiltinOptions) []engines.Engine {
	lg := logic.New(opts.Solver)
	return []engines.Engine{
		math.New(),
		lg,
		stats.New(),
		fact.New(),
		sql.New(),
		code.New(),
		image.New(),
		reasoning.New(lg),
	}
}
