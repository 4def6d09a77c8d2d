package verify

import (
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/code"
	"github.com/agentgate/agentgate/domain/engines/image"
	"github.com/agentgate/agentgate/domain/engines/math"
	"github.com/agentgate/agentgate/domain/engines/sql"
	"github.com/agentgate/agentgate/domain/engines/stats"
)

// BuiltinOptions are what the built-in engines need from the process.
type BuiltinOptions struct{}

// Builtin returns the engines built into this binary, one line each. An
// engine that lands later plugs in here with its constructor; until then
// its requests answer QWED-ENG-004 and GET /engines does not list it.
func Builtin(BuiltinOptions) []engines.Engine {
	return []engines.Engine{
		math.New(),
		stats.New(),
		sql.New(),
		code.New(),
		image.New(),
	}
}
