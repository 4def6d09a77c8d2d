package seedlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
)

// Token is the agent token of every agent the command builders register.
const Token = "seedlog-agent-token"

// AdminKey is the admin API key of a started gate.
const AdminKey = "seedlog-admin-key"

// Gate is an embedded gate with its worker running on a settable clock.
type Gate struct {
	*embedded.Gate
	mu     sync.Mutex
	now    time.Time
	cancel context.CancelFunc
	done   chan error
}

// Start opens (or reopens) the gate in dir with its clock at now and runs
// its worker.
func Start(dir string, now time.Time) (*Gate, error) {
	g := &Gate{now: now.UTC(), done: make(chan error, 1)}
	hg, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: AdminKey, Clock: g.Now})
	if err != nil {
		return nil, fmt.Errorf("opening gate: %w", err)
	}
	g.Gate = hg
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go func() { g.done <- hg.Worker.Run(ctx) }()
	return g, nil
}

// Now is the gate's clock.
func (g *Gate) Now() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now
}

// At sets the clock.
func (g *Gate) At(t time.Time) {
	g.mu.Lock()
	g.now = t.UTC()
	g.mu.Unlock()
}

// Submit decides cmd and returns its recorded event.
func (g *Gate) Submit(cmd *domain.Command) (*domain.Event, error) {
	ev, err := g.Worker.Submit(context.Background(), cmd)
	if err != nil {
		return nil, fmt.Errorf("submitting %s: %w", cmd.Type, err)
	}
	if ev == nil {
		return nil, fmt.Errorf("submitting %s: no event recorded", cmd.Type)
	}
	return ev, nil
}

// Stop stops the worker and closes the gate.
func (g *Gate) Stop() error {
	g.cancel()
	return errors.Join(<-g.done, g.Close())
}

// Register is a registration by the admin of an agent of principal at
// trust level trust with limits.
func Register(reqID, principal string, trust domain.TrustLevel, limits domain.Limits) *domain.Command {
	return &domain.Command{
		Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "seedlog", ID: reqID},
		Register: &domain.RegisterAgent{
			Agent:      domain.AgentInfo{Name: "bot-" + reqID, Type: "autonomous", PrincipalID: principal},
			Budget:     limits,
			TrustLevel: &trust,
			TokenHash:  command.HashSecret(Token),
		},
	}
}

// Verify is a verify_action of actionType with a declared cost, at a step
// of a conversation.
func Verify(agentID, reqID, conv string, step int, actionType string, cost domain.USD) *domain.Command {
	return &domain.Command{
		Type: domain.CmdVerifyAction, AgentID: agentID, TokenHash: command.HashSecret(Token),
		Request: domain.RequestID{Source: "seedlog", ID: reqID},
		Verify: &domain.VerifyAction{
			Action:  domain.Action{Type: actionType, Query: reqID, EstimatedCost: cost, EstimatedTokens: 100},
			Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(strconv.Itoa(step))},
		},
	}
}

// Execution logs the actual cost of an approved action.
func Execution(agentID, reqID, actionID string, cost domain.USD, tokens int64) *domain.Command {
	return &domain.Command{
		Type: domain.CmdLogExecution, AgentID: agentID, TokenHash: command.HashSecret(Token),
		Request:   domain.RequestID{Source: "seedlog", ID: reqID},
		Execution: &domain.LogExecution{ActionID: actionID, Success: true, CostUSD: cost, Tokens: tokens},
	}
}

// Resolve approves or denies an approval as the admin.
func Resolve(reqID, approvalID string, approve bool) *domain.Command {
	return &domain.Command{
		Type: domain.CmdResolveApproval, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "seedlog", ID: reqID},
		Resolve: &domain.ResolveApproval{ApprovalID: approvalID, Approve: approve, Reason: "seedlog"},
	}
}

// SetTrust sets an agent's trust level as the admin.
func SetTrust(agentID, reqID string, level domain.TrustLevel) *domain.Command {
	return &domain.Command{
		Type: domain.CmdSetTrustLevel, Principal: domain.AdminPrincipal, AgentID: agentID,
		Request:  domain.RequestID{Source: "seedlog", ID: reqID},
		SetTrust: &domain.SetTrustLevel{Level: level, Reason: "seedlog"},
	}
}

// USD returns d dollars.
func USD(d float64) domain.USD { return domain.USD(d * domain.MicrosPerUSD) }
