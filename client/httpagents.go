package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Secret is a credential the gate mints and answers once (an agent token,
// a principal API key). It prints as "[redacted]" with %v, %s and %#v, so
// that logging a result never leaks it; string(s) is the value. JSON
// encodes the value (to store it where secrets are kept).
type Secret string

// String redacts the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString redacts the secret.
func (s Secret) GoString() string { return s.String() }

// RegisterRequest is the body of POST /agents/register (QWED-Agent spec v1.1 §3.1).
type RegisterRequest struct {
	Agent       domain.AgentInfo   `json:"agent"`
	Permissions domain.Permissions `json:"permissions"`
	Budget      domain.Limits      `json:"budget"`
	TrustLevel  *domain.TrustLevel `json:"trust_level,omitempty"`
}

// Registration is the answer to RegisterAgent (QWED-Agent spec v1.1 §3.2):
// the agent and its token, which the gate answers this once.
type Registration struct {
	domain.RegistrationReply
	AgentToken Secret `json:"agent_token"`
}

// AgentView is the answer of GET /agents/{id}: the agent's public record.
type AgentView struct {
	AgentID       string             `json:"agent_id"`
	DID           string             `json:"did"`
	Name          string             `json:"name"`
	Type          string             `json:"type"`
	Description   string             `json:"description,omitempty"`
	PrincipalID   string             `json:"principal_id"`
	Framework     string             `json:"framework,omitempty"`
	Model         string             `json:"model,omitempty"`
	Status        string             `json:"status"`
	TrustLevel    domain.TrustLevel  `json:"trust_level"`
	CreatedAt     time.Time          `json:"created_at"`
	Permissions   domain.Permissions `json:"permissions"`
	Budget        domain.Limits      `json:"budget"`
	TotalActions  int64              `json:"total_actions"`
	DeniedActions int64              `json:"denied_actions"`
	Attestations  int64              `json:"attestations"`
}

// BudgetView is the answer of GET /agents/{id}/budget (QWED-Agent spec v1.1 §6.1).
type BudgetView struct {
	AgentID string              `json:"agent_id"`
	Budget  domain.BudgetStatus `json:"budget"`
}

// ActivityQuery selects a page of GET /agents/{id}/activity: the period
// [From, To) (zero: the gate's defaults, the 30 days before now), at most
// Limit entries (0: the gate's default, 100) after AfterSeq (the previous
// page's NextAfterSeq).
type ActivityQuery struct {
	From, To time.Time
	Limit    int
	AfterSeq uint64
}

// ActivityPage is the answer of GET /agents/{id}/activity (QWED-Agent spec
// v1.1 §7.2). Each activity is kept as the gate sent it.
type ActivityPage struct {
	AgentID string `json:"agent_id"`
	Period  struct {
		From time.Time `json:"from"`
		To   time.Time `json:"to"`
	} `json:"period"`
	Summary    ActivitySummary   `json:"summary"`
	Activities []json.RawMessage `json:"activities"`
	// NextAfterSeq is the AfterSeq of the next page, nil on the last.
	NextAfterSeq *uint64 `json:"next_after_seq"`
}

// ActivitySummary counts the decisions of an activity period.
type ActivitySummary struct {
	TotalActions   int64      `json:"total_actions"`
	Approved       int64      `json:"approved"`
	Denied         int64      `json:"denied"`
	Corrected      int64      `json:"corrected"`
	Pending        int64      `json:"pending"`
	BudgetExceeded int64      `json:"budget_exceeded"`
	TotalCostUSD   domain.USD `json:"total_cost_usd"`
	TotalTokens    int64      `json:"total_tokens"`
}

// TokenRotation is the answer to RotateToken: the new token, answered
// this once.
type TokenRotation struct {
	domain.TokenReply
	AgentToken Secret `json:"agent_token"`
}

// agentPath is /agents/{id} followed by rest.
func agentPath(id, rest string) string { return "/agents/" + seg(id) + rest }

// RegisterAgent registers an agent (POST /agents/register, an API key):
// the answer holds the agent's id and its token, answered once.
func (c *HTTPClient) RegisterAgent(ctx context.Context, req RegisterRequest) (*Registration, error) {
	return callFor[Registration](ctx, c, request{method: http.MethodPost, path: "/agents/register", route: "POST /agents/register", body: req})
}

// VerifyAction asks the gate to decide an action (POST /agents/{id}/verify,
// QWED-Agent spec v1.1 §4). Every decision is a result, whatever its HTTP
// status: APPROVED, CORRECTED, PENDING (its approval in Approval), DENIED
// and BUDGET_EXCEEDED (the reason in Error). A request the gate refuses
// to decide (bad credentials, malformed body) is an *APIError.
func (c *HTTPClient) VerifyAction(ctx context.Context, agentID string, v domain.VerifyAction) (*domain.DecisionReply, error) {
	return c.decide(ctx, request{method: http.MethodPost, path: agentPath(agentID, "/verify"), route: "POST /agents/{id}/verify", body: v, auth: authAgent})
}

// VerifyToolCall asks the gate to decide a tool call (POST
// /agents/{id}/tools/{tool}, QWED-Agent spec v1.1 §5): the decision as in
// VerifyAction. tool_call.tool_name defaults to tool.
func (c *HTTPClient) VerifyToolCall(ctx context.Context, agentID, tool string, v domain.VerifyToolCall) (*domain.DecisionReply, error) {
	return c.decide(ctx, request{method: http.MethodPost, path: agentPath(agentID, "/tools/"+seg(tool)), route: "POST /agents/{id}/tools/{tool}", body: v, auth: authAgent})
}

// decide sends a verify request and returns its decision (a result
// whatever its status), or the *APIError of a refusal.
func (c *HTTPClient) decide(ctx context.Context, r request) (*domain.DecisionReply, error) {
	return resultFor[domain.DecisionReply](ctx, c, r, "decision")
}

// ExecutionReport is the body of POST /agents/{id}/executions: the
// execution report and the output the action produced. Output (at most
// domain.MaxOutputBytes, else QWED-REQ-004) is a member of the HTTP body
// only: the gate scans it for PII and records the findings and the
// output's hash, never its text; a card number or a key in it flags the
// execution (the reply's pii_violation). Empty sends no output.
type ExecutionReport struct {
	domain.LogExecution
	Output string `json:"output,omitempty"`
}

// LogExecution reports the outcome of an approved action (POST
// /agents/{id}/executions): the budget is corrected to its actual cost.
// ReportExecution sends its output too.
func (c *HTTPClient) LogExecution(ctx context.Context, agentID string, e domain.LogExecution) (*domain.ExecutionReply, error) {
	return c.ReportExecution(ctx, agentID, ExecutionReport{LogExecution: e})
}

// ReportExecution is LogExecution with the action's output (QWED-Agent
// spec v1.1 §7.1), which the gate scans (see ExecutionReport).
func (c *HTTPClient) ReportExecution(ctx context.Context, agentID string, r ExecutionReport) (*domain.ExecutionReply, error) {
	return callFor[domain.ExecutionReply](ctx, c, request{method: http.MethodPost, path: agentPath(agentID, "/executions"), route: "POST /agents/{id}/executions", body: r, auth: authAgent})
}

// GetAgent reads an agent (GET /agents/{id}): its principal's key, the
// admin key or its own token.
func (c *HTTPClient) GetAgent(ctx context.Context, agentID string) (*AgentView, error) {
	return callFor[AgentView](ctx, c, request{method: http.MethodGet, path: agentPath(agentID, ""), route: "GET /agents/{id}", auth: authAgent})
}

// GetAgentBudget reads an agent's budget (GET /agents/{id}/budget).
func (c *HTTPClient) GetAgentBudget(ctx context.Context, agentID string) (*BudgetView, error) {
	return callFor[BudgetView](ctx, c, request{method: http.MethodGet, path: agentPath(agentID, "/budget"), route: "GET /agents/{id}/budget", auth: authAgent})
}

// GetAgentActivity reads a page of an agent's activity (GET
// /agents/{id}/activity).
func (c *HTTPClient) GetAgentActivity(ctx context.Context, agentID string, q ActivityQuery) (*ActivityPage, error) {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.AfterSeq > 0 {
		v.Set("after_seq", strconv.FormatUint(q.AfterSeq, 10))
	}
	return callFor[ActivityPage](ctx, c, request{method: http.MethodGet, path: agentPath(agentID, "/activity"), route: "GET /agents/{id}/activity", query: v, auth: authAgent})
}

// GetAgentState reads the agent as it was right after the event at log
// position atSeq (GET /agents/{id}/state?at_seq=N), or, with atSeq 0, at
// the time at (?at_time=T): the gate's time-travel view, as it sent it.
func (c *HTTPClient) GetAgentState(ctx context.Context, agentID string, atSeq uint64, at time.Time) (json.RawMessage, error) {
	v := url.Values{}
	if atSeq > 0 {
		v.Set("at_seq", strconv.FormatUint(atSeq, 10))
	} else {
		v.Set("at_time", at.UTC().Format(time.RFC3339Nano))
	}
	return rawFor(ctx, c, request{method: http.MethodGet, path: agentPath(agentID, "/state"), route: "GET /agents/{id}/state", query: v, auth: authAgent})
}

// ExportComplianceReport renders an agent's compliance report (GET
// /agents/{id}/compliance-report): format "json" (the signed bundle),
// "csv" or "pdf"; the bytes as the gate sent them. query adds the
// report's other parameters (from, to), nil for none.
func (c *HTTPClient) ExportComplianceReport(ctx context.Context, agentID, format string, query url.Values) ([]byte, error) {
	v := url.Values{}
	for k, vals := range query {
		v[k] = vals
	}
	if format != "" {
		v.Set("format", format)
	}
	return rawFor(ctx, c, request{method: http.MethodGet, path: agentPath(agentID, "/compliance-report"), route: "GET /agents/{id}/compliance-report", query: v, auth: authAgent})
}

// RequestTrust asks for a trust elevation (POST /agents/{id}/trust,
// QWED-Agent spec v1.1 §8.2): the gate checks the claim against its own
// evidence and opens an approval.
func (c *HTTPClient) RequestTrust(ctx context.Context, agentID string, r domain.RequestTrustElevation) (*domain.TrustRequestReply, error) {
	return callFor[domain.TrustRequestReply](ctx, c, request{method: http.MethodPost, path: agentPath(agentID, "/trust"), route: "POST /agents/{id}/trust", body: r, auth: authAgent})
}

// SetTrustLevel sets an agent's trust level (POST /agents/{id}/trust-level,
// its principal's key or the admin key).
func (c *HTTPClient) SetTrustLevel(ctx context.Context, agentID string, level domain.TrustLevel, reason string) (*domain.TrustChangedReply, error) {
	body := map[string]any{"trust_level": level, "reason": reason}
	return callFor[domain.TrustChangedReply](ctx, c, request{method: http.MethodPost, path: agentPath(agentID, "/trust-level"), route: "POST /agents/{id}/trust-level", body: body})
}

// SuspendAgent suspends an agent, or with suspended false reinstates it
// (POST /agents/{id}/suspend).
func (c *HTTPClient) SuspendAgent(ctx context.Context, agentID string, suspended bool, reason string) (*domain.StatusReply, error) {
	body := map[string]any{"suspended": suspended, "reason": reason}
	return callFor[domain.StatusReply](ctx, c, request{method: http.MethodPost, path: agentPath(agentID, "/suspend"), route: "POST /agents/{id}/suspend", body: body})
}

// FileComplaint files a principal's complaint about an agent, which
// suspends it (POST /agents/{id}/complaints, QWED-Agent spec v1.1 §8.3).
func (c *HTTPClient) FileComplaint(ctx context.Context, agentID, reason string) (*domain.StatusReply, error) {
	return callFor[domain.StatusReply](ctx, c, request{method: http.MethodPost, path: agentPath(agentID, "/complaints"), route: "POST /agents/{id}/complaints", body: domain.FileComplaint{Reason: reason}})
}

// RotateToken mints a new token for an agent (POST
// /agents/{id}/token/rotate; the agent's token or its principal's key):
// the old one stops working at once, the new one is in this answer only.
func (c *HTTPClient) RotateToken(ctx context.Context, agentID string) (*TokenRotation, error) {
	return callFor[TokenRotation](ctx, c, request{method: http.MethodPost, path: agentPath(agentID, "/token/rotate"), route: "POST /agents/{id}/token/rotate", auth: authAgent})
}

// RevokeToken revokes an agent's token (DELETE /agents/{id}/token, its
// principal's key): the agent is refused until a token is rotated in.
func (c *HTTPClient) RevokeToken(ctx context.Context, agentID string) (*domain.TokenReply, error) {
	return callFor[domain.TokenReply](ctx, c, request{method: http.MethodDelete, path: agentPath(agentID, "/token"), route: "DELETE /agents/{id}/token"})
}
