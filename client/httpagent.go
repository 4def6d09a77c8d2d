package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// AgentClient is an HTTPClient bound to one agent and its token (the
// QWED-Agent spec v1.1 §9.1 agent client): the agent endpoints without the
// agent id argument. It is safe for concurrent use.
//
// A verify call without a context gets a generated one: this client's
// conversation id ("conv_" and 16 random hex digits) and the next step
// number (1, 2, …), so that the one-argument calls of the spec's examples
// pass the gate's loop controls. Steps are taken in call order; concurrent
// calls may reach the gate out of that order (a step lower than one already
// decided is QWED-AGENT-LOOP-002), so concurrent callers pass their own
// contexts.
type AgentClient struct {
	c  *HTTPClient
	id string

	mu    sync.Mutex
	token Secret
	conv  string
	step  int64
}

// RegisterAgentClient registers an agent with c's API key
// (RegisterAgent) and returns the client bound to it, with the
// registration (its AgentToken is the agent's token, answered once).
func (c *HTTPClient) RegisterAgentClient(ctx context.Context, req RegisterRequest) (*AgentClient, *Registration, error) {
	reg, err := c.RegisterAgent(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return c.Agent(reg.AgentID, reg.AgentToken), reg, nil
}

// Agent returns the client of the agent agentID with its token.
func (c *HTTPClient) Agent(agentID string, token Secret) *AgentClient {
	return &AgentClient{c: c.WithAgent(string(token)), id: agentID, token: token, conv: newConversationID()}
}

// newConversationID returns "conv_" and 16 random hex digits.
func newConversationID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "conv_" + hex.EncodeToString(b[:])
}

// ID returns the agent's id.
func (a *AgentClient) ID() string { return a.id }

// Token returns the agent's current token (RotateToken replaces it).
func (a *AgentClient) Token() Secret {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.token
}

// ConversationID returns the conversation id of the generated contexts.
func (a *AgentClient) ConversationID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conv
}

// NewConversation starts the conversation id ("" draws a fresh one) for
// the generated contexts, from step 1, and returns it: a conversation
// allows a bounded number of steps (QWED-Agent user guide, "Conversation
// controls"), so a long-lived agent starts a new one per task.
func (a *AgentClient) NewConversation(id string) string {
	if id == "" {
		id = newConversationID()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conv, a.step = id, 0
	return id
}

// String describes the client without its token.
func (a *AgentClient) String() string {
	return fmt.Sprintf("client.AgentClient{%s at %s}", a.id, a.c.base)
}

// GoString is String.
func (a *AgentClient) GoString() string { return a.String() }

// http returns the current HTTPClient (its token).
func (a *AgentClient) http() *HTTPClient {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.c
}

// nextContext returns the generated context of the next call.
func (a *AgentClient) nextContext() domain.ActionContext {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.step++
	return domain.ActionContext{ConversationID: a.conv, StepNumber: json.Number(strconv.FormatInt(a.step, 10))}
}

// VerifyAction asks the gate to decide action (HTTPClient.VerifyAction),
// in actx, or, when actx is nil, in the next generated context.
func (a *AgentClient) VerifyAction(ctx context.Context, action domain.Action, actx *domain.ActionContext) (*domain.DecisionReply, error) {
	v := domain.VerifyAction{Action: action}
	if actx != nil {
		v.Context = *actx
	}
	return a.VerifyRequest(ctx, v)
}

// VerifyRequest is VerifyAction with the whole request (options
// included); a context without a conversation id is generated.
func (a *AgentClient) VerifyRequest(ctx context.Context, v domain.VerifyAction) (*domain.DecisionReply, error) {
	if v.Context.ConversationID == "" {
		gen := a.nextContext()
		gen.UserIntent, gen.PreActionStateHash, gen.StateSource = v.Context.UserIntent, v.Context.PreActionStateHash, v.Context.StateSource
		v.Context = gen
	}
	return a.http().VerifyAction(ctx, a.id, v)
}

// VerifyToolCall asks the gate to decide a call of tool with parameters
// (encoded as JSON; nil for none) in the next generated context
// (HTTPClient.VerifyToolCall).
func (a *AgentClient) VerifyToolCall(ctx context.Context, tool string, parameters any) (*domain.DecisionReply, error) {
	call := domain.VerifyToolCall{ToolCall: domain.ToolCall{ToolName: tool}}
	if parameters != nil {
		raw, err := json.Marshal(parameters)
		if err != nil {
			return nil, fmt.Errorf("encoding the parameters of %s: %w", tool, err)
		}
		call.ToolCall.Parameters = raw
	}
	return a.VerifyToolRequest(ctx, call)
}

// VerifyToolRequest is VerifyToolCall with the whole request; a nil
// context is generated.
func (a *AgentClient) VerifyToolRequest(ctx context.Context, call domain.VerifyToolCall) (*domain.DecisionReply, error) {
	if call.Context == nil {
		gen := a.nextContext()
		call.Context = &gen
	}
	return a.http().VerifyToolCall(ctx, a.id, call.ToolCall.ToolName, call)
}

// LogExecution reports the outcome of an approved action
// (HTTPClient.LogExecution).
func (a *AgentClient) LogExecution(ctx context.Context, e domain.LogExecution) (*domain.ExecutionReply, error) {
	return a.http().LogExecution(ctx, a.id, e)
}

// ReportExecution reports the outcome of an approved action with its
// output (HTTPClient.ReportExecution).
func (a *AgentClient) ReportExecution(ctx context.Context, r ExecutionReport) (*domain.ExecutionReply, error) {
	return a.http().ReportExecution(ctx, a.id, r)
}

// Get reads the agent (HTTPClient.GetAgent).
func (a *AgentClient) Get(ctx context.Context) (*AgentView, error) {
	return a.http().GetAgent(ctx, a.id)
}

// Budget reads the agent's budget (HTTPClient.GetAgentBudget).
func (a *AgentClient) Budget(ctx context.Context) (*BudgetView, error) {
	return a.http().GetAgentBudget(ctx, a.id)
}

// Activity reads a page of the agent's activity (HTTPClient.GetAgentActivity).
func (a *AgentClient) Activity(ctx context.Context, q ActivityQuery) (*ActivityPage, error) {
	return a.http().GetAgentActivity(ctx, a.id, q)
}

// State reads the agent at a past position (HTTPClient.GetAgentState).
func (a *AgentClient) State(ctx context.Context, atSeq uint64, at time.Time) (json.RawMessage, error) {
	return a.http().GetAgentState(ctx, a.id, atSeq, at)
}

// RequestTrust asks for a trust elevation (HTTPClient.RequestTrust).
func (a *AgentClient) RequestTrust(ctx context.Context, r domain.RequestTrustElevation) (*domain.TrustRequestReply, error) {
	return a.http().RequestTrust(ctx, a.id, r)
}

// Approval reads an approval that concerns the agent (HTTPClient.GetApproval).
func (a *AgentClient) Approval(ctx context.Context, approvalID string) (*domain.Approval, error) {
	return a.http().GetApproval(ctx, approvalID)
}

// A2AIntercept asks for the verdict on a message the agent sends
// (HTTPClient.A2AIntercept), with the agent's token.
func (a *AgentClient) A2AIntercept(ctx context.Context, message any) (*domain.A2AReply, error) {
	return a.http().A2AIntercept(ctx, message)
}

// PrepareExecute prepares an execute of request at business by the agent
// (HTTPClient.PrepareExecute): the confirmation token for Execute.
func (a *AgentClient) PrepareExecute(ctx context.Context, business string, request any) (*Prepared, error) {
	return a.http().PrepareExecute(ctx, ExecuteRequest{BusinessID: business, Request: request, AgentID: a.id})
}

// Execute runs an execute of request at business by the agent, with the
// confirmation token of PrepareExecute ("" for none) (HTTPClient.Execute).
func (a *AgentClient) Execute(ctx context.Context, business string, request any, confirmationToken string) (*domain.ExecuteReply, error) {
	return a.http().Execute(ctx, ExecuteRequest{BusinessID: business, Request: request, AgentID: a.id}, confirmationToken)
}

// RotateToken mints the agent a new token with its current one
// (HTTPClient.RotateToken); the client uses the new one from then on.
func (a *AgentClient) RotateToken(ctx context.Context) (*TokenRotation, error) {
	out, err := a.http().RotateToken(ctx, a.id)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.token, a.c = out.AgentToken, a.c.WithAgent(string(out.AgentToken))
	a.mu.Unlock()
	return out, nil
}
