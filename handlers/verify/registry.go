package verify

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/handlers/fair"
)

// EngineIDs are the engine ids of the QWED protocol v1.0 §4.1, in the order GET /engines
// lists them.
var EngineIDs = []string{"math", "logic", "stats", "fact", "code", "sql", "image", "reasoning"}

// DefaultEngineQueue is how many runs of one principal may wait for an
// engine (fair.Config.PrincipalQueue of each engine's queue).
const DefaultEngineQueue = 64

// DefaultEngineSlots is how many runs of one engine run at once: twice the
// CPUs, at least 8 (fair.Config.Slots of each engine's queue).
func DefaultEngineSlots() int { return max(8, 2*runtime.GOMAXPROCS(0)) }

// unqueued are the engines without a queue of their own: the logic
// engine's work is its solver's, and the z3 pool queues fairly itself.
var unqueued = map[string]bool{"logic": true}

// Registry holds the engines of a service by id, each (but logic) behind
// its own fair queue (package fair): every engine call of the service and
// of the ActionVerifier waits there in its tenant's turn. It is immutable
// once built and safe for concurrent use; share one registry between the
// service and the verifier so that they share the queues.
type Registry struct {
	byID       map[string]engines.Engine
	queues     map[string]*fair.Scheduler
	retryAfter time.Duration
}

// NewRegistry returns a registry of es with the default queues
// (NewRegistryWith's zero fair.Config).
func NewRegistry(es ...engines.Engine) (*Registry, error) {
	return NewRegistryWith(fair.Config{}, es...)
}

// NewRegistryWith returns a registry of es whose engines (but logic) each
// get a fair queue of q; q's zero fields are DefaultEngineSlots,
// DefaultEngineQueue and fair's defaults. Every engine must name one of
// EngineIDs in its capabilities document, at most once.
func NewRegistryWith(q fair.Config, es ...engines.Engine) (*Registry, error) {
	if q.Slots <= 0 {
		q.Slots = DefaultEngineSlots()
	}
	if q.PrincipalQueue <= 0 {
		q.PrincipalQueue = DefaultEngineQueue
	}
	r := &Registry{byID: make(map[string]engines.Engine, len(es)), queues: map[string]*fair.Scheduler{}}
	for _, e := range es {
		if e == nil {
			return nil, fmt.Errorf("registering engines: nil engine")
		}
		id := e.Capabilities().EngineID
		if !slices.Contains(EngineIDs, id) {
			return nil, fmt.Errorf("registering engines: %q is not an engine id of the QWED protocol v1.0 §4.1 (%s)", id, strings.Join(EngineIDs, ", "))
		}
		if _, dup := r.byID[id]; dup {
			return nil, fmt.Errorf("registering engines: engine %q registered twice", id)
		}
		r.byID[id] = e
		if !unqueued[id] {
			r.queues[id] = fair.New(q)
		}
	}
	r.retryAfter = q.WithDefaults().RetryAfter
	return r, nil
}

// Queue returns the fair queue of engine id: nil for the logic engine and
// for an engine not registered.
func (r *Registry) Queue(id string) *fair.Scheduler { return r.queues[id] }

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

// Missing returns the engine ids of the QWED protocol v1.0 §4.1 that are not registered,
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
