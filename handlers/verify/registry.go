package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// EngineIDs are the engine ids of seed 002 §4.1, in the order GET /engines
// lists them.
var EngineIDs = []string{"math", "logic", "stats", "fact", "code", "sql", "image", "reasoning"}

// Registry holds the engines of a service by id. It is immutable once
// built and safe for concurrent use.
type Registry struct {
	byID map[string]engines.Engine
}

// NewRegistry returns a registry of es. Every engine must name one of
// EngineIDs in its capabilities document, at most once.
func NewRegistry(es ...engines.Engine) (*Registry, error) {
	r := &Registry{byID: make(map[string]engines.Engine, len(es))}
	for _, e := range es {
		if e == nil {
			return nil, fmt.Errorf("registering engines: nil engine")
		}
		id := e.Capabilities().EngineID
		if !slices.Contains(EngineIDs, id) {
			return nil, fmt.Errorf("registering engines: %q is not an engine id of seed 002 §4.1 (%s)", id, strings.Join(EngineIDs, ", "))
		}
		if _, dup := r.byID[id]; dup {
			return nil, fmt.Errorf("registering engines: engine %q registered twice", id)
		}
		r.byID[id] = e
	}
	return r, nil
}

// Get returns the engine with id.
func (r *Registry) Get(id string) (engines.Engine, bool) {
	e, ok := r.byID[id]
	return e, ok
}

// Capabilities returns the capabilities documents of the registered
// engines, in EngineIDs order.
func (r *Registry) Capabilities() []engines.Capabilities {
	out := make([]engines.Capabilities, 0, len(r.byID))
	for _, id := range EngineIDs {
		if e, ok := r.byID[id]; ok {
			out = append(out, e.Capabilities())
		}
	}
	return out
}

// Missing returns the engine ids of seed 002 §4.1 that are not registered,
// in EngineIDs order.
func (r *Registry) Missing() []string {
	var out []string
	for _, id := range EngineIDs {
		if _, ok := r.byID[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}
