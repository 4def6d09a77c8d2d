// Package gatetest runs an embedded gate for the tests of the packages
// built on it (the gate itself, replay, time travel, the log readers): a
// manual clock, a gate with its worker running, and the commands the
// tests submit. It is imported by tests only.
package gatetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/streams"
)

// Clock is a manual clock (the worker reads it once a batch). It is safe
// for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Gate is an embedded gate with its worker running.
type Gate struct {
	*embedded.Gate
	// Cancel stops the worker; Done then yields what Run returned.
	Cancel context.CancelFunc
	Done   chan error
}

// Start opens the gate in dir (admin key "admin") with clock and runs its
// worker.
func Start(t testing.TB, dir string, clock func() time.Time) *Gate {
	t.Helper()
	return StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock})
}

// StartWith opens the gate with opts and runs its worker.
func StartWith(t testing.TB, opts embedded.Options) *Gate {
	t.Helper()
	g, err := embedded.OpenGate(opts)
	if err != nil {
		t.Fatalf("opening gate: %v", err)
	}
	return Run(g)
}

// Run runs the worker of an opened gate.
func Run(g *embedded.Gate) *Gate {
	ctx, cancel := context.WithCancel(context.Background())
	rg := &Gate{Gate: g, Cancel: cancel, Done: make(chan error, 1)}
	go func() { rg.Done <- g.Worker.Run(ctx) }()
	return rg
}

// Stop stops the worker and closes the gate, failing t on an error.
func (g *Gate) Stop(t testing.TB) {
	t.Helper()
	g.Cancel()
	if err := <-g.Done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("closing gate: %v", err)
	}
}

// Submit decides cmd, failing t when it is not recorded.
func (g *Gate) Submit(t testing.TB, cmd *domain.Command) *domain.Event {
	t.Helper()
	ev, err := g.Worker.Submit(context.Background(), cmd)
	if err != nil {
		t.Fatalf("submitting %s: %v", cmd.Type, err)
	}
	return ev
}

// Token is the agent token the commands of Register and Verify carry.
const Token = "qwed_agent_test-token"

// Register is the admin's registration of an agent of principal org_1
// at trust level trust, request id id, token Token.
func Register(id string, trust int) *domain.Command {
	tl := domain.TrustLevel(trust)
	return &domain.Command{
		Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "test", ID: id},
		Register: &domain.RegisterAgent{
			Agent:      domain.AgentInfo{Name: "bot-" + id, Type: "autonomous", PrincipalID: "org_1"},
			Budget:     domain.Limits{MaxDailyCost: 100 * domain.MicrosPerUSD, MaxRequestsPerHour: 5000},
			TrustLevel: &tl,
			TokenHash:  command.HashSecret(Token),
		},
	}
}

// Verify is agent's verify_action of a calculation costing $0.01, request
// id reqID, at step step of conversation conv.
func Verify(agentID, reqID, conv string, step int, query string) *domain.Command {
	return &domain.Command{
		Type: domain.CmdVerifyAction, AgentID: agentID, TokenHash: command.HashSecret(Token),
		Request: domain.RequestID{Source: "test", ID: reqID},
		Verify: &domain.VerifyAction{
			Action:  domain.Action{Type: "calculate", Query: query, EstimatedCost: 10_000},
			Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(fmt.Sprint(step))},
		},
	}
}

// LogEvents decodes the whole log.
func LogEvents(t testing.TB, l streams.Log) []*domain.Event {
	t.Helper()
	var out []*domain.Event
	err := l.Read(context.Background(), 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		out = append(out, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
