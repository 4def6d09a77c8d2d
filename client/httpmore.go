package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentgate/agentgate/domain"
)

// PrincipalKey is the answer to IssuePrincipalKey and RotatePrincipalKey:
// the key's id and the key itself, answered this once.
type PrincipalKey struct {
	domain.KeyReply
	APIKey Secret `json:"api_key"`
}

// ApprovalsQuery selects a page of GET /approvals: Status (pending,
// approved, denied, expired; "" all), at most Limit (0: the gate's default)
// after the cursor After (the previous page's NextAfter).
type ApprovalsQuery struct {
	Status domain.ApprovalStatus
	Limit  int
	After  string
}

// ApprovalsPage is the answer of GET /approvals.
type ApprovalsPage struct {
	Approvals []domain.Approval `json:"approvals"`
	// NextAfter is the After of the next page, nil on the last.
	NextAfter *string `json:"next_after"`
}

// Health is the answer of GET /healthz.
type Health struct {
	Status string `json:"status"`
	Seq    uint64 `json:"seq"`
}

// Prepared is the answer to PrepareExecute (the Agent Policy Engine spec
// §2.2): the confirmation token, answered this once, for Execute.
type Prepared struct {
	domain.PrepareReply
	ConfirmationToken Secret `json:"confirmationToken"`
}

func principalPath(id, rest string) string { return "/principals/" + seg(id) + rest }

// PutTools replaces a principal's tool registry (PUT /principals/{id}/tools,
// QWED-Agent spec v1.1 §5.3).
func (c *HTTPClient) PutTools(ctx context.Context, principalID string, tools []domain.ToolSpec) (*domain.PutToolRegistry, error) {
	body := domain.PutToolRegistry{PrincipalID: principalID, Tools: tools}
	return callFor[domain.PutToolRegistry](ctx, c, request{method: http.MethodPut, path: principalPath(principalID, "/tools"), route: "PUT /principals/{id}/tools", body: body})
}

// PutPrincipalPermissions sets a principal's default path and egress
// policy for all its agents (PUT /principals/{id}/permissions, QWED-Agent
// spec v1.1 §2.2): an agent's own lists only narrow it. p.PrincipalID is
// set from principalID; the answer is the policy as recorded (hosts as
// A-labels).
func (c *HTTPClient) PutPrincipalPermissions(ctx context.Context, principalID string, p domain.PrincipalPermissions) (*domain.PrincipalPermissions, error) {
	p.PrincipalID = principalID
	return callFor[domain.PrincipalPermissions](ctx, c, request{method: http.MethodPut, path: principalPath(principalID, "/permissions"), route: "PUT /principals/{id}/permissions", body: p})
}

// IssuePrincipalKey mints an API key for a principal (POST
// /principals/{id}/keys; the admin key, or a key of the principal).
func (c *HTTPClient) IssuePrincipalKey(ctx context.Context, principalID string) (*PrincipalKey, error) {
	return callFor[PrincipalKey](ctx, c, request{method: http.MethodPost, path: principalPath(principalID, "/keys"), route: "POST /principals/{id}/keys"})
}

// RotatePrincipalKey mints a key that replaces keyID, which stops working
// (POST /principals/{id}/keys/{key_id}/rotate).
func (c *HTTPClient) RotatePrincipalKey(ctx context.Context, principalID, keyID string) (*PrincipalKey, error) {
	return callFor[PrincipalKey](ctx, c, request{method: http.MethodPost, path: principalPath(principalID, "/keys/"+seg(keyID)+"/rotate"), route: "POST /principals/{id}/keys/{key_id}/rotate"})
}

// RevokePrincipalKey revokes a principal's key (DELETE
// /principals/{id}/keys/{key_id}).
func (c *HTTPClient) RevokePrincipalKey(ctx context.Context, principalID, keyID string) (*domain.KeyReply, error) {
	return callFor[domain.KeyReply](ctx, c, request{method: http.MethodDelete, path: principalPath(principalID, "/keys/"+seg(keyID)), route: "DELETE /principals/{id}/keys/{key_id}"})
}

// ListApprovals lists the approvals of the key's principal (GET
// /approvals; the admin key: every principal's).
func (c *HTTPClient) ListApprovals(ctx context.Context, q ApprovalsQuery) (*ApprovalsPage, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", string(q.Status))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.After != "" {
		v.Set("after", q.After)
	}
	return callFor[ApprovalsPage](ctx, c, request{method: http.MethodGet, path: "/approvals", route: "GET /approvals", query: v})
}

// GetApproval reads an approval (GET /approvals/{id}): its principal's
// key, the admin key, or the token of the agent it concerns.
func (c *HTTPClient) GetApproval(ctx context.Context, approvalID string) (*domain.Approval, error) {
	return callFor[domain.Approval](ctx, c, request{method: http.MethodGet, path: "/approvals/" + seg(approvalID), route: "GET /approvals/{id}", auth: authAgent})
}

// Approve approves a pending approval (POST /approvals/{id}/approve).
func (c *HTTPClient) Approve(ctx context.Context, approvalID, reason string) (*domain.ApprovalReply, error) {
	return c.resolve(ctx, approvalID, "approve", reason)
}

// Deny denies a pending approval (POST /approvals/{id}/deny).
func (c *HTTPClient) Deny(ctx context.Context, approvalID, reason string) (*domain.ApprovalReply, error) {
	return c.resolve(ctx, approvalID, "deny", reason)
}

func (c *HTTPClient) resolve(ctx context.Context, approvalID, op, reason string) (*domain.ApprovalReply, error) {
	body := map[string]string{"reason": reason}
	return callFor[domain.ApprovalReply](ctx, c, request{method: http.MethodPost, path: "/approvals/" + seg(approvalID) + "/" + op, route: "POST /approvals/{id}/" + op, body: body})
}

// Verify calls the QWED protocol's POST /verify (QWED protocol v1.0 §5.1)
// with one request (type, query, params, options, metadata) and returns
// the answer as the gate sent it. Every verification outcome (VERIFIED,
// FAILED, CORRECTED, BLOCKED at 403, TIMEOUT, …) is a result; a protocol
// error (§8.4, status ERROR) is an *APIError.
func (c *HTTPClient) Verify(ctx context.Context, body any) (json.RawMessage, error) {
	return c.qwed(ctx, body)
}

// VerifyBatch verifies up to 100 claims in one POST /verify (QWED protocol
// v1.0 §5.3: {"batch": true, "items": items}): the batch answer, its
// items' outcomes included, as Verify's.
func (c *HTTPClient) VerifyBatch(ctx context.Context, items []any) (json.RawMessage, error) {
	return c.qwed(ctx, map[string]any{"batch": true, "items": items})
}

// qwed sends a QWED protocol request: an outcome is a result whatever
// its status (Python's and TypeScript's rule: a body with verified or
// batch whose status is not ERROR).
func (c *HTTPClient) qwed(ctx context.Context, body any) (json.RawMessage, error) {
	resp, err := c.send(ctx, request{method: http.MethodPost, path: "/verify", route: "POST /verify", body: body})
	if err != nil {
		return nil, err
	}
	if resp.status >= 400 {
		var probe map[string]json.RawMessage
		_ = json.Unmarshal(resp.body, &probe)
		_, verified := probe["verified"]
		_, batch := probe["batch"]
		var status string
		_ = json.Unmarshal(probe["status"], &status)
		if !(verified || batch) || status == "ERROR" {
			return nil, resp.apiError()
		}
	}
	return resp.body, nil
}

// ListEngines reads the engines of POST /verify (GET /engines).
func (c *HTTPClient) ListEngines(ctx context.Context) (json.RawMessage, error) {
	return rawFor(ctx, c, request{method: http.MethodGet, path: "/engines", route: "GET /engines", auth: authNone})
}

// A2AIntercept asks for the verdict on an agent-to-agent message (POST
// /a2a/intercept, QWED A2A): message is the AgentMessage. Every verdict
// (forwarded, blocked, rate_limited, error) is a result; a refused
// request is an *APIError. The agent token is sent when the client has
// one, else the API key.
func (c *HTTPClient) A2AIntercept(ctx context.Context, message any) (*domain.A2AReply, error) {
	return resultFor[domain.A2AReply](ctx, c, request{method: http.MethodPost, path: "/a2a/intercept", route: "POST /a2a/intercept", body: message, auth: authAgent}, "status")
}

// A2ABoundary changes the key's trust boundary (QWED A2A): op is
// "trust", "untrust", "block" or "unblock" of agent, or "block_pair",
// "unblock_pair" of sender and receiver (POST and DELETE
// /a2a/boundary/…).
func (c *HTTPClient) A2ABoundary(ctx context.Context, change domain.A2ABoundaryChange) (*domain.A2ABoundaryReply, error) {
	var r request
	switch change.Op {
	case domain.A2AOpTrust, domain.A2AOpUntrust:
		r = request{path: "/a2a/boundary/trust/" + seg(change.Agent), route: "/a2a/boundary/trust/{agent}"}
	case domain.A2AOpBlock, domain.A2AOpUnblock:
		r = request{path: "/a2a/boundary/block/" + seg(change.Agent), route: "/a2a/boundary/block/{agent}"}
	case domain.A2AOpBlockPair, domain.A2AOpUnblockPair:
		r = request{path: "/a2a/boundary/block-pair", route: "/a2a/boundary/block-pair",
			body: map[string]string{"sender": change.Sender, "receiver": change.Receiver}}
	default:
		return nil, &APIError{Status: 400, Code: domain.CodeInvalidRequest, Message: "unknown boundary op " + strconv.Quote(change.Op)}
	}
	r.method = http.MethodPost
	switch change.Op {
	case domain.A2AOpUntrust, domain.A2AOpUnblock, domain.A2AOpUnblockPair:
		r.method = http.MethodDelete
	}
	r.route = r.method + " " + r.route
	return callFor[domain.A2ABoundaryReply](ctx, c, r)
}

// ExecuteRequest is the body of POST /agp/execute/prepare and POST
// /agp/execute (the Agent Policy Engine spec §2.2): the business, the
// request it receives (a JSON object), and the agent (its token alone does
// not name it).
type ExecuteRequest struct {
	BusinessID string `json:"businessId"`
	Request    any    `json:"request"`
	AgentID    string `json:"agent_id,omitempty"`
}

// PrepareExecute prepares a consumer policy execute (POST
// /agp/execute/prepare, the Agent Policy Engine spec §2.2): the
// confirmation token for Execute. body is an ExecuteRequest (or its JSON).
func (c *HTTPClient) PrepareExecute(ctx context.Context, body any) (*Prepared, error) {
	return callFor[Prepared](ctx, c, request{method: http.MethodPost, path: "/agp/execute/prepare", route: "POST /agp/execute/prepare", body: body, auth: authAgent})
}

// Execute runs a consumer policy execute (POST /agp/execute):
// confirmationToken is PrepareExecute's ("" for none). A blocked execute
// is an *APIError carrying its QWED-EXEC code.
func (c *HTTPClient) Execute(ctx context.Context, body any, confirmationToken string) (*domain.ExecuteReply, error) {
	r := request{method: http.MethodPost, path: "/agp/execute", route: "POST /agp/execute", body: body, auth: authAgent}
	if confirmationToken != "" {
		r.header = http.Header{"X-Confirmation-Token": {confirmationToken}}
	}
	return callFor[domain.ExecuteReply](ctx, c, r)
}

// JWKS reads the gate's attestation keys (GET /.well-known/jwks.json), for
// VerifyAttestation.
func (c *HTTPClient) JWKS(ctx context.Context) ([]byte, error) {
	return rawFor(ctx, c, request{method: http.MethodGet, path: "/.well-known/jwks.json", route: "GET /.well-known/jwks.json", auth: authNone})
}

// Health reads GET /healthz.
func (c *HTTPClient) Health(ctx context.Context) (*Health, error) {
	return callFor[Health](ctx, c, request{method: http.MethodGet, path: "/healthz", route: "GET /healthz", auth: authNone})
}
