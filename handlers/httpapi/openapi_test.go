package httpapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/history/timetravel"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/schemas"
	"github.com/agentgate/agentgate/schemas/openapi"
)

// The OpenAPI document of this API (schemas/openapi.v1.json) is generated
// here: the operations table below (every route, its parameters, bodies,
// statuses and credentials), the read views reflected from their Go types
// (readViews), and package schemas' command, reply and protocol schemas
// bundled into its components (openapi.Components). TestOpenAPIDocument
// holds the committed file to it; `go test ./handlers/httpapi -run
// TestOpenAPIDocument -update` rewrites it. Every HTTP test server of the
// package checks its exchanges against the committed file (openapi.Hook,
// newTestGate), and TestMain checks that the suite exercised every
// documented operation.

var updateOpenAPI = flag.Bool("update", false, "rewrite schemas/openapi.v1.json from the operations table")

// Security requirements of the operations.
var (
	// secKey: a principal's API key or the admin key (X-API-Key).
	secKey = []string{"ApiKey"}
	// secAgent: the agent token (Authorization: Bearer, or agent_token in
	// the body) or a principal's API key.
	secAgent = []string{"AgentToken", "ApiKey"}
	// secRead: a principal's or the admin key, or the agent's own token.
	secRead = []string{"ApiKey", "AgentToken"}
	// secPublic: no credentials.
	secPublic = []string{}
)

// Error statuses of the classes of operations (each answered with the
// error body, ErrorReply). Every endpoint may be refused 429 by the edge's
// refusal limit (Config.RefusalLimit) and 503 when the gate is unavailable.
var (
	writeErrors = []int{400, 401, 403, 404, 409, 413, 429, 500, 503, 504}
	readErrors  = []int{400, 401, 403, 404, 429, 503}
	publicErrs  = []int{429, 503}
)

// apiOp is one documented operation.
type apiOp struct {
	method, path string
	// id is the operationId (camelCase); tag groups it.
	id, tag, summary string
	// sec lists the security schemes, any one of which grants access
	// (nil: public).
	sec []string
	// tokenInBody: the agent token may come as the body's agent_token.
	tokenInBody bool
	// params names components.parameters (query and header); the path's
	// parameters are added from the template.
	params []string
	// body is the component of the JSON request body ("" for none);
	// bodyRequired says the body may not be empty.
	body         string
	bodyRequired bool
	// bodyContent replaces body: the request's media types.
	bodyContent map[string]any
	// ok are the answers besides the error body's.
	ok []resp
	// errs are the statuses answered with the error body (ErrorReply)
	// where ok has no answer of that status.
	errs []int
	// proxy: served by handlers/a2aproxy (agentgate serve
	// --a2a-upstream), not by this package's routes.
	proxy bool
	// rpc: a JSON-RPC endpoint, whose 200 answer may be an error (a
	// response with an error member): the request is not checked then.
	rpc bool
}

// resp is one documented answer.
type resp struct {
	status int
	desc   string
	// schema is the JSON body's component ("" with content set, or for
	// no body); anyOf lists alternatives.
	schema string
	anyOf  []string
	// content replaces the JSON body (other media types).
	content map[string]any
	// headers are the response header components, by header name.
	headers []string
}

func js(status int, schema, desc string) resp {
	return resp{status: status, schema: schema, desc: desc}
}

func either(status int, desc string, schemas ...string) resp {
	return resp{status: status, anyOf: schemas, desc: desc}
}

// decisionAnswers are the answers of a decision endpoint: every decision
// is a DecisionReply with its status (QWED-Agent spec v1.1 §4.2: PENDING
// 202, BUDGET_EXCEEDED 429, DENIED its code's status); a refusal before
// any decision is the error body.
func decisionAnswers() []resp {
	out := []resp{js(200, "DecisionReply", "APPROVED or CORRECTED"), js(202, "DecisionReply", "PENDING: the action waits for an approval")}
	for _, st := range []int{400, 403, 404, 409, 429} {
		out = append(out, either(st, "DENIED or BUDGET_EXCEEDED (a DecisionReply with its error), or the request refused (ErrorReply)",
			"DecisionReply", "ErrorReply"))
	}
	return out
}

// idem is the Idempotency-Key parameter of every write.
const idem = "IdempotencyKey"

// operations is the HTTP API, route by route (routes() and the files it
// calls). Keep it in the order of the routes.
var operations = []apiOp{
	{method: "POST", path: "/agents/register", id: "registerAgent", tag: "agents", sec: secKey, params: []string{idem},
		summary: "Register an agent (QWED-Agent spec v1.1 §3.1); the answer carries its token once", body: "RegisterBody",
		ok: []resp{js(201, "RegistrationResponse", "The agent, with its DID and its token (shown once)")}, errs: writeErrors},
	{method: "GET", path: "/agents/{id}", id: "getAgent", tag: "agents", sec: secRead, summary: "Read an agent's public record",
		ok: []resp{js(200, "Agent", "The agent")}, errs: readErrors},
	{method: "GET", path: "/agents/{id}/budget", id: "getAgentBudget", tag: "agents", sec: secRead,
		summary: "Read an agent's budget and what is used of it (QWED-Agent spec v1.1 §6.1)",
		ok:      []resp{js(200, "Budget", "The budget")}, errs: readErrors},
	{method: "GET", path: "/agents/{id}/activity", id: "getAgentActivity", tag: "agents", sec: secRead,
		params:  []string{"From", "To", "Limit", "AfterSeq"},
		summary: "Read a page of an agent's activity in a period (QWED-Agent spec v1.1 §7.2)",
		ok:      []resp{js(200, "Activity", "The period's summary and a page of activities")}, errs: readErrors},
	{method: "GET", path: "/agents/{id}/state", id: "getAgentState", tag: "agents", sec: secRead,
		params:  []string{"AtSeq", "AtTime"},
		summary: "Read an agent as it was after a past event (exactly one of at_seq, at_time)",
		ok:      []resp{js(200, "AgentState", "The agent's past state")}, errs: readErrors},
	{method: "GET", path: "/agents/{id}/compliance-report", id: "exportComplianceReport", tag: "agents", sec: secRead,
		params:  []string{"From", "To", "ReportFormat"},
		summary: "Export an agent's compliance report (QWED-Agent spec v1.1 §7.3): a verifiable JSON bundle, CSV or PDF",
		ok: []resp{{status: 200, desc: "The report in the format asked for (attachment)", content: map[string]any{
			"application/json": map[string]any{"schema": ref("ComplianceBundle")},
			"text/csv":         map[string]any{"schema": map[string]any{"type": "string"}},
			"application/pdf":  map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/pdf"}},
		}, headers: []string{"Content-Disposition"}},
			{status: 503, desc: "Unavailable: no event log, every report slot taken (Retry-After), or the report could not be produced",
				schema: "ErrorReply", headers: []string{"Retry-After"}}},
		errs: readErrors},
	{method: "POST", path: "/agents/{id}/verify", id: "verifyAction", tag: "agents", sec: secAgent, tokenInBody: true, params: []string{idem},
		summary: "Verify an action before it runs (QWED-Agent spec v1.1 §4)", body: "ActionVerifyBody", bodyRequired: true,
		ok: decisionAnswers(), errs: writeErrors},
	{method: "POST", path: "/agents/{id}/tools/{tool}", id: "verifyToolCall", tag: "agents", sec: secAgent, tokenInBody: true, params: []string{idem},
		summary: "Verify a tool call before it runs (QWED-Agent spec v1.1 §5)", body: "ToolVerifyBody", bodyRequired: true,
		ok: decisionAnswers(), errs: writeErrors},
	{method: "POST", path: "/agents/{id}/executions", id: "logExecution", tag: "agents", sec: secAgent, tokenInBody: true, params: []string{idem},
		summary: "Log the outcome of an approved action", body: "ExecutionLogBody", bodyRequired: true,
		ok: []resp{js(200, "ExecutionReply", "The execution, logged")}, errs: writeErrors},
	{method: "POST", path: "/agents/{id}/trust", id: "requestTrust", tag: "agents", sec: secAgent, tokenInBody: true, params: []string{idem},
		summary: "Request a higher trust level", body: "TrustRequestBody",
		ok: []resp{js(200, "TrustRequestReply", "The request: accepted, refused with reasons, or waiting for an approval")}, errs: writeErrors},
	{method: "POST", path: "/agents/{id}/trust-level", id: "setTrustLevel", tag: "agents", sec: secKey, params: []string{idem},
		summary: "Set an agent's trust level (its principal)", body: "TrustSetBody", bodyRequired: true,
		ok: []resp{js(200, "TrustChangedReply", "The new level")}, errs: writeErrors},
	{method: "POST", path: "/agents/{id}/suspend", id: "suspendAgent", tag: "agents", sec: secKey, params: []string{idem},
		summary: "Suspend an agent", body: "SuspendBody",
		ok: []resp{js(200, "StatusReply", "The agent's status")}, errs: writeErrors},
	{method: "POST", path: "/agents/{id}/complaints", id: "fileComplaint", tag: "agents", sec: secKey, params: []string{idem},
		summary: "File a complaint against an agent", body: "ComplaintBody", bodyRequired: true,
		ok: []resp{js(200, "StatusReply", "The agent's status")}, errs: writeErrors},
	{method: "PUT", path: "/principals/{id}/tools", id: "putTools", tag: "principals", sec: secKey, params: []string{idem},
		summary: "Set a principal's tool registry", body: "ToolsPutBody", bodyRequired: true,
		ok: []resp{js(200, "PutToolRegistry", "The registry")}, errs: writeErrors},
	{method: "PUT", path: "/principals/{id}/permissions", id: "putPrincipalPermissions", tag: "principals", sec: secKey, params: []string{idem},
		summary: "Set a principal's default path and egress policy for all its agents (QWED-Agent spec v1.1 §2.2); an agent's own lists only narrow it",
		body:    "PermissionsPutBody", bodyRequired: true,
		ok: []resp{js(200, "PrincipalPermissions", "The policy")}, errs: writeErrors},
	{method: "POST", path: "/principals/{id}/keys", id: "issuePrincipalKey", tag: "principals", sec: secKey, params: []string{idem},
		summary: "Issue an API key to a principal (the admin key); the answer carries it once", body: "EmptyBody",
		ok: []resp{js(201, "KeyIssuedResponse", "The key (shown once)")}, errs: writeErrors},
	{method: "POST", path: "/principals/{id}/keys/{key_id}/rotate", id: "rotatePrincipalKey", tag: "principals", sec: secKey, params: []string{idem},
		summary: "Replace a principal's API key by a new one", body: "EmptyBody",
		ok: []resp{js(201, "KeyIssuedResponse", "The new key (shown once)")}, errs: writeErrors},
	{method: "DELETE", path: "/principals/{id}/keys/{key_id}", id: "revokePrincipalKey", tag: "principals", sec: secKey, params: []string{idem},
		summary: "Revoke a principal's API key", body: "EmptyBody",
		ok: []resp{js(200, "KeyReply", "The key, revoked")}, errs: writeErrors},
	{method: "POST", path: "/agents/{id}/token/rotate", id: "rotateToken", tag: "agents", sec: secAgent, tokenInBody: true, params: []string{idem},
		summary: "Replace an agent's token by a new one", body: "TokenRotateBody",
		ok: []resp{js(200, "TokenResponse", "The new token (shown once)")}, errs: writeErrors},
	{method: "DELETE", path: "/agents/{id}/token", id: "revokeToken", tag: "agents", sec: secKey, params: []string{idem},
		summary: "Revoke an agent's token", body: "EmptyBody",
		ok: []resp{js(200, "TokenResponse", "The token, revoked")}, errs: writeErrors},
	{method: "GET", path: "/approvals", id: "listApprovals", tag: "approvals", sec: secKey, params: []string{"ApprovalStatus", "Limit", "After"},
		summary: "List the principal's approvals",
		ok:      []resp{js(200, "ApprovalList", "A page of approvals")}, errs: readErrors},
	{method: "GET", path: "/approvals/{id}", id: "getApproval", tag: "approvals", sec: secRead,
		summary: "Read an approval (its principal, or the token of the agent it concerns)",
		ok:      []resp{js(200, "Approval", "The approval")}, errs: readErrors},
	{method: "POST", path: "/approvals/{id}/approve", id: "approve", tag: "approvals", sec: secKey, params: []string{idem},
		summary: "Approve a pending approval", body: "ApprovalDecisionBody",
		ok: []resp{js(200, "ApprovalReply", "The approval, resolved")}, errs: writeErrors},
	{method: "POST", path: "/approvals/{id}/deny", id: "deny", tag: "approvals", sec: secKey, params: []string{idem},
		summary: "Deny a pending approval", body: "ApprovalDecisionBody",
		ok: []resp{js(200, "ApprovalReply", "The approval, resolved")}, errs: writeErrors},
	{method: "POST", path: "/events", id: "postEvent", tag: "events", sec: secAgent, tokenInBody: true,
		summary: "Send one command as a CloudEvent (binary or structured mode); the answer is the reply CloudEvent in the same mode",
		bodyContent: map[string]any{
			"application/cloudevents+json": map[string]any{"schema": ref("CloudEvent")},
			"application/json": map[string]any{"schema": map[string]any{"type": "object",
				"description": "Binary mode (ce-* headers): the event's data, the body of the command's endpoint"}},
		}, bodyRequired: true,
		ok: func() []resp {
			var out []resp
			for _, st := range []int{200, 201, 202, 400, 401, 403, 404, 409, 413, 429, 500, 502, 503, 504} {
				out = append(out, resp{status: st, desc: "The reply CloudEvent (its data the endpoint's body, with the endpoint's status), or the error body of a request that is not a CloudEvent",
					content: map[string]any{
						"application/cloudevents+json": map[string]any{"schema": ref("CloudEvent")},
						"application/json":             map[string]any{"schema": map[string]any{"type": "object"}},
					}})
			}
			return out
		}()},
	{method: "POST", path: "/verify", id: "verify", tag: "verify", sec: secKey, params: []string{idem, "ProtocolVersion"},
		summary: "Verify a query with the QWED engines (QWED protocol v1.0 §5, §6): one request or a batch",
		body:    "VerifyOrBatchRequest", bodyRequired: true,
		ok: func() []resp {
			out := []resp{{status: 200, anyOf: []string{"VerifyResponse", "BatchVerifyResponse"}, desc: "The verdict (§6.1) or the batch's (§6.4)", headers: []string{"QWED-Protocol-Version"}}}
			for _, st := range []int{400, 401, 403, 404, 409, 413, 422, 429, 500, 503, 504} {
				out = append(out, resp{status: st, schema: "VerifyResponse", desc: "Refused (§8.4 error body)", headers: []string{"QWED-Protocol-Version", "Retry-After"}})
			}
			return out
		}()},
	{method: "GET", path: "/engines", id: "listEngines", tag: "verify", sec: secPublic,
		summary: "List the verification engines and their capabilities (QWED protocol v1.0 §4.2)",
		ok:      []resp{{status: 200, schema: "Engines", desc: "The engines", headers: []string{"QWED-Protocol-Version"}}}, errs: publicErrs},

	{method: "POST", path: "/a2a/intercept", id: "a2aIntercept", tag: "a2a", sec: secAgent, tokenInBody: true, params: []string{idem},
		summary: "Intercept an agent-to-agent message (QWED A2A): verify it and forward or block it", body: "A2AMessageBody", bodyRequired: true,
		ok: []resp{js(200, "A2AReply", "The verdict (forwarded, blocked or error)"),
			either(429, "rate_limited (the pair's token bucket, an A2AReply) or the edge's limit (ErrorReply, Retry-After)", "A2AReply", "ErrorReply")},
		errs: writeErrors},
	{method: "POST", path: "/a2a/boundary/trust/{agent}", id: "a2aTrust", tag: "a2a", sec: secKey, params: []string{idem, "Principal"},
		summary: "Trust an agent in the caller's boundary", body: "EmptyBody",
		ok: []resp{js(200, "A2ABoundaryReply", "The change")}, errs: writeErrors},
	{method: "DELETE", path: "/a2a/boundary/trust/{agent}", id: "a2aUntrust", tag: "a2a", sec: secKey, params: []string{idem, "Principal"},
		summary: "Stop trusting an agent", body: "EmptyBody",
		ok: []resp{js(200, "A2ABoundaryReply", "The change")}, errs: writeErrors},
	{method: "POST", path: "/a2a/boundary/block/{agent}", id: "a2aBlock", tag: "a2a", sec: secKey, params: []string{idem, "Principal"},
		summary: "Block an agent", body: "EmptyBody",
		ok: []resp{js(200, "A2ABoundaryReply", "The change")}, errs: writeErrors},
	{method: "DELETE", path: "/a2a/boundary/block/{agent}", id: "a2aUnblock", tag: "a2a", sec: secKey, params: []string{idem, "Principal"},
		summary: "Unblock an agent", body: "EmptyBody",
		ok: []resp{js(200, "A2ABoundaryReply", "The change")}, errs: writeErrors},
	{method: "POST", path: "/a2a/boundary/block-pair", id: "a2aBlockPair", tag: "a2a", sec: secKey, params: []string{idem, "Principal"},
		summary: "Block a sender-receiver pair", body: "A2APairBody", bodyRequired: true,
		ok: []resp{js(200, "A2ABoundaryReply", "The change")}, errs: writeErrors},
	{method: "DELETE", path: "/a2a/boundary/block-pair", id: "a2aUnblockPair", tag: "a2a", sec: secKey, params: []string{idem, "Principal"},
		summary: "Unblock a sender-receiver pair", body: "A2APairBody", bodyRequired: true,
		ok: []resp{js(200, "A2ABoundaryReply", "The change")}, errs: writeErrors},

	{method: "GET", path: "/transactions", id: "listTransactions", tag: "transactions", sec: secKey,
		params:  []string{"Consumer", "TxAgent", "TxBusiness", "TxCategory", "TxStatus", "From", "To", "Limit", "After"},
		summary: "List the consumer's transactions, newest first",
		ok:      []resp{js(200, "TransactionList", "A page of transactions")}, errs: readErrors},
	{method: "GET", path: "/transactions/summary", id: "getTransactionSummary", tag: "transactions", sec: secKey,
		params:  []string{"Consumer", "TxAgent", "TxBusiness", "TxCategory", "TxStatus", "From", "To", "Period"},
		summary: "Summarize the consumer's transactions per day, week or month",
		ok:      []resp{js(200, "TransactionSummary", "The summary")}, errs: readErrors},
	{method: "GET", path: "/transactions/analytics", id: "getTransactionAnalytics", tag: "transactions", sec: secKey,
		params:  []string{"Consumer", "TxAgent", "TxBusiness", "TxCategory", "From", "To", "Currency", "TimeZone"},
		summary: "Spending trends, anomalies and recommended spending limits",
		ok:      []resp{js(200, "TransactionAnalytics", "The analysis")}, errs: readErrors},
	{method: "GET", path: "/transactions/{id}", id: "getTransaction", tag: "transactions", sec: secKey,
		params:  []string{"Consumer", "AtSeq", "AtTime"},
		summary: "Read one transaction, now or as it stood after a past event",
		ok:      []resp{either(200, "The transaction (with at_seq and at_time when read in the past)", "TransactionRecord", "TransactionAt")}, errs: readErrors},

	{method: "POST", path: "/webhooks", id: "createWebhook", tag: "webhooks", sec: secKey, params: []string{idem, "Consumer"},
		summary: "Create a webhook; the answer carries its signing secret once", body: "WebhookBody", bodyRequired: true,
		ok: []resp{js(201, "WebhookResponse", "The webhook")}, errs: writeErrors},
	{method: "GET", path: "/webhooks", id: "listWebhooks", tag: "webhooks", sec: secKey, params: []string{"Consumer"},
		summary: "List the consumer's webhooks",
		ok:      []resp{js(200, "WebhookList", "The webhooks")}, errs: readErrors},
	{method: "GET", path: "/webhooks/deliveries", id: "listDeliveries", tag: "webhooks", sec: secKey,
		params:  []string{"Consumer", "WebhookID", "DeliveryStatus", "DeliveryKind", "Limit", "After"},
		summary: "List the consumer's webhook deliveries",
		ok:      []resp{js(200, "DeliveryList", "A page of deliveries")}, errs: readErrors},
	{method: "GET", path: "/webhooks/{id}", id: "getWebhook", tag: "webhooks", sec: secKey, params: []string{"Consumer"},
		summary: "Read a webhook",
		ok:      []resp{js(200, "Webhook", "The webhook")}, errs: readErrors},
	{method: "PUT", path: "/webhooks/{id}", id: "updateWebhook", tag: "webhooks", sec: secKey, params: []string{idem, "Consumer"},
		summary: "Change a webhook", body: "WebhookBody", bodyRequired: true,
		ok: []resp{js(200, "WebhookResponse", "The webhook")}, errs: writeErrors},
	{method: "DELETE", path: "/webhooks/{id}", id: "deleteWebhook", tag: "webhooks", sec: secKey, params: []string{idem, "Consumer"},
		summary: "Delete a webhook", body: "EmptyBody",
		ok: []resp{js(200, "WebhookResponse", "The webhook, deleted")}, errs: writeErrors},
	{method: "GET", path: "/webhooks/{id}/deliveries", id: "listWebhookDeliveries", tag: "webhooks", sec: secKey,
		params:  []string{"Consumer", "DeliveryStatus", "DeliveryKind", "Limit", "After"},
		summary: "List a webhook's deliveries",
		ok:      []resp{js(200, "DeliveryList", "A page of deliveries")}, errs: readErrors},

	{method: "POST", path: "/agp/execute/prepare", id: "prepareExecute", tag: "execute", sec: secAgent, tokenInBody: true,
		params:  []string{idem, "AgentIDHeader"},
		summary: "Prepare an execute (Agent Policy Engine spec §2.2): the confirmation token of confirm and strict modes",
		body:    "ExecuteBody", bodyRequired: true,
		ok: []resp{js(200, "PrepareResponse", "The confirmation token and the decision it would get")}, errs: writeErrors},
	{method: "POST", path: "/agp/execute", id: "execute", tag: "execute", sec: secAgent, tokenInBody: true,
		params:  []string{idem, "AgentIDHeader", "ConfirmationToken"},
		summary: "Execute a purchase at a business through the consumer policy engine", body: "ExecuteBody", bodyRequired: true,
		ok: []resp{js(200, "ExecuteReply", "Completed (or pending confirmation)"),
			js(202, "ExecuteReply", "Executing, pending approval or queued"),
			js(502, "ErrorReply", "The business call failed (QWED-EXEC-008)")},
		errs: writeErrors},
	{method: "POST", path: "/businesses", id: "createBusiness", tag: "execute", sec: secKey, params: []string{idem},
		summary: "Register a business", body: "BusinessBody", bodyRequired: true,
		ok: []resp{js(201, "Business", "The business")}, errs: writeErrors},
	{method: "GET", path: "/businesses", id: "listBusinesses", tag: "execute", sec: secKey, params: []string{"Limit", "After"},
		summary: "List the business registry (endpoint and owner shown to the owner and the admin only)",
		ok:      []resp{js(200, "BusinessList", "A page of businesses")}, errs: readErrors},
	{method: "GET", path: "/businesses/{id}", id: "getBusiness", tag: "execute", sec: secKey,
		summary: "Read a business",
		ok:      []resp{js(200, "BusinessInfo", "The business")}, errs: readErrors},
	{method: "PUT", path: "/businesses/{id}", id: "updateBusiness", tag: "execute", sec: secKey, params: []string{idem},
		summary: "Change a business (its owner)", body: "BusinessBody", bodyRequired: true,
		ok: []resp{js(200, "Business", "The business")}, errs: writeErrors},
	{method: "DELETE", path: "/businesses/{id}", id: "deleteBusiness", tag: "execute", sec: secKey, params: []string{idem},
		summary: "Delete a business (its owner)", body: "EmptyBody",
		ok: []resp{js(200, "BusinessDeletedReply", "The business, deleted")}, errs: writeErrors},
	{method: "POST", path: "/policies", id: "createPolicy", tag: "policies", sec: secKey, params: []string{idem, "Consumer"},
		summary: "Create a consumer policy", body: "PolicyBody", bodyRequired: true,
		ok: []resp{js(201, "PolicyReply", "The policy")}, errs: writeErrors},
	{method: "GET", path: "/policies", id: "listPolicies", tag: "policies", sec: secKey, params: []string{"Consumer"},
		summary: "List the consumer's policies",
		ok:      []resp{js(200, "PolicyList", "The policies")}, errs: readErrors},
	{method: "GET", path: "/policies/{id}", id: "getPolicy", tag: "policies", sec: secKey, params: []string{"Consumer", "AtSeq"},
		summary: "Read a policy, now or as it was after a past event",
		ok:      []resp{either(200, "The policy (with at_seq and seq when read in the past)", "PolicyView", "PolicyAt")}, errs: readErrors},
	{method: "PUT", path: "/policies/{id}", id: "updatePolicy", tag: "policies", sec: secKey, params: []string{idem, "Consumer"},
		summary: "Replace a policy", body: "PolicyBody", bodyRequired: true,
		ok: []resp{js(200, "PolicyReply", "The policy")}, errs: writeErrors},
	{method: "DELETE", path: "/policies/{id}", id: "deletePolicy", tag: "policies", sec: secKey, params: []string{idem, "Consumer"},
		summary: "Delete a policy", body: "EmptyBody",
		ok: []resp{js(200, "PolicyReply", "The policy, deleted")}, errs: writeErrors},

	{method: "GET", path: "/.well-known/jwks.json", id: "getJWKS", tag: "operations", sec: secPublic,
		summary: "The attestation keys (ES256 JWKS) to verify attestations offline",
		ok:      []resp{{status: 200, schema: "JWKS", desc: "The key set", headers: []string{"Cache-Control"}}}, errs: publicErrs},
	{method: "GET", path: "/healthz", id: "healthz", tag: "operations", sec: secPublic,
		summary: "Liveness and the projections' position",
		ok:      []resp{js(200, "Health", "Serving")}, errs: publicErrs},
	{method: "GET", path: "/metrics", id: "metrics", tag: "operations", sec: secPublic,
		summary: "Prometheus metrics (text exposition format)",
		ok: []resp{{status: 200, desc: "The metrics", content: map[string]any{
			"text/plain":                   map[string]any{"schema": map[string]any{"type": "string"}},
			"application/openmetrics-text": map[string]any{"schema": map[string]any{"type": "string"}},
		}}}, errs: []int{429}},
	{method: "GET", path: "/a2a/boundary", id: "getA2ABoundary", tag: "a2a", sec: secKey,
		params:  []string{"Principal", "A2AList", "A2AAfter", "Limit", "AtSeq", "AtTime", "Sender"},
		summary: "Read a trust boundary (QWED A2A), now or as of a past event",
		ok:      []resp{js(200, "A2ABoundary", "The boundary")}, errs: readErrors},
	{method: "GET", path: "/a2a/metrics", id: "getA2AMetrics", tag: "a2a", sec: secKey,
		params:  []string{"Principal", "A2AAfter", "Limit", "AtSeq", "AtTime", "Sender"},
		summary: "Read the verdicts counted under a boundary (or the whole gate's, admin)",
		ok:      []resp{js(200, "A2AMetrics", "The counters")}, errs: readErrors},
	{method: "GET", path: "/a2a/health", id: "getA2AHealth", tag: "a2a", sec: secPublic,
		summary: "The A2A gateway's configuration in force (no tenant data)",
		ok:      []resp{js(200, "A2AHealth", "Serving")}, errs: publicErrs},
	{method: "GET", path: "/openapi.json", id: "getOpenAPI", tag: "operations", sec: secPublic,
		summary: "This document", params: []string{"IfNoneMatch"},
		ok: []resp{{status: 200, desc: "The OpenAPI 3.1 document", content: map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}, headers: []string{"ETag", "Cache-Control"}},
			{status: 304, desc: "Not modified (If-None-Match matched the ETag)", headers: []string{"ETag"}}},
		errs: []int{429}},

	// Proxy mode (handlers/a2aproxy, agentgate serve --a2a-upstream
	// NAME=URL): served on the same listener, before the API's routes.
	{method: "POST", path: "/a2a/proxy/{name}", id: "a2aProxySend", tag: "a2a", sec: secAgent, proxy: true, rpc: true,
		summary: "Send an A2A JSON-RPC request to a proxied agent: each message part is intercepted as POST /a2a/intercept decides it",
		body:    "JSONRPCRequest", bodyRequired: true,
		ok: []resp{{status: 200, desc: "The upstream's answer when every part is forwarded (a JSON-RPC response, or an SSE stream for streaming), or a JSON-RPC error (not forwarded, refused)",
			content: map[string]any{
				"application/json":  map[string]any{"schema": ref("JSONRPCResponse")},
				"text/event-stream": map[string]any{"schema": map[string]any{"type": "string"}},
			}},
			rpcError(400), rpcError(401), rpcError(403), rpcError(404), rpcError(409), rpcError(413), rpcError(429),
			rpcError(500), rpcError(502), rpcError(503), rpcError(504),
			{status: 0, desc: "Any other answer of the upstream, returned as is", content: map[string]any{"*/*": map[string]any{}}},
		}},
	{method: "GET", path: "/a2a/proxy/{name}/.well-known/agent-card.json", id: "a2aProxyAgentCard", tag: "a2a", sec: secPublic, proxy: true,
		summary: "The proxied agent's Agent Card, rewritten so that its JSON-RPC interface is the gate's proxy path",
		ok:      proxyCard()},
	{method: "GET", path: "/a2a/proxy/{name}/.well-known/agent.json", id: "a2aProxyAgentCardLegacy", tag: "a2a", sec: secPublic, proxy: true,
		summary: "The proxied agent's Agent Card at its older path (A2A 0.3)",
		ok:      proxyCard()},
}

// rpcError is a JSON-RPC error answer of the proxy with its status.
func rpcError(status int) resp {
	return resp{status: status, anyOf: []string{"JSONRPCResponse", "ErrorReply"}, headers: []string{"Retry-After"},
		desc: "A JSON-RPC error (its data the verdict or the gate's error, its status the refusal's), or the error body (no proxied agent of that name)"}
}

// proxyCard are the answers of the proxy's Agent Card paths.
func proxyCard() []resp {
	return []resp{js(200, "AgentCard", "The Agent Card"),
		js(404, "ErrorReply", "No proxied agent of that name, or the upstream has no card"),
		js(405, "ErrorReply", "Not a GET"),
		js(500, "ErrorReply", "The card cannot be rewritten"),
		js(502, "ErrorReply", "The card cannot be fetched")}
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// str is a string schema bounded to max bytes (by characters: the
// schema's unit).
func str(maxLen int) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": maxLen}
}

func enum(vals ...string) map[string]any {
	return map[string]any{"type": "string", "enum": vals}
}

func query(name, desc string, schema map[string]any) map[string]any {
	return map[string]any{"name": name, "in": "query", "description": desc, "schema": schema}
}

func header(name, desc string, schema map[string]any) map[string]any {
	return map[string]any{"name": name, "in": "header", "description": desc, "schema": schema}
}

// parameters are components.parameters.
func parameters() map[string]any {
	timeOrDate := map[string]any{"type": "string", "description": "An RFC 3339 time or a YYYY-MM-DD date (UTC midnight)"}
	return map[string]any{
		"IdempotencyKey": header("Idempotency-Key", "The request's id: a repeated request with the same key gets the recorded answer "+
			"(a different request with it is QWED-REQ-409); without it a fresh id is used", str(MaxIdempotencyKeyBytes)),
		"ProtocolVersion":   header("QWED-Protocol-Version", "The QWED protocol version the client speaks (QWED protocol v1.0 §3)", map[string]any{"type": "string"}),
		"AgentIDHeader":     header("X-Agent-ID", "The agent, when the body's agent_id does not name it", str(MaxPathIDBytes)),
		"ConfirmationToken": header("X-Confirmation-Token", "The confirmation token of POST /agp/execute/prepare (Agent Policy Engine spec §2.2)", str(MaxConfirmationTokenBytes)),
		"IfNoneMatch":       header("If-None-Match", "The ETag of a copy held", map[string]any{"type": "string"}),
		"From":              query("from", "The period's start (inclusive); default: 30 days before to", timeOrDate),
		"To":                query("to", "The period's end (exclusive); default: now", timeOrDate),
		"Limit": query("limit", "The page size", map[string]any{"type": "integer", "minimum": 1, "maximum": MaxListLimit,
			"default": DefaultListLimit}),
		"After":    query("after", "The next_after of the previous page", map[string]any{"type": "string", "maxLength": MaxPathIDBytes}),
		"AfterSeq": query("after_seq", "The next_after_seq of the previous page", map[string]any{"type": "integer", "minimum": 0}),
		"AtSeq":    query("at_seq", "A past position of the log: the state right after the event with this seq", map[string]any{"type": "integer", "minimum": 1}),
		"AtTime":   query("at_time", "A past time: the state after the last event at or before it", timeOrDate),
		"ReportFormat": query("format", "The report's format", map[string]any{"type": "string", "enum": []string{"json", "csv", "pdf"},
			"default": "json"}),
		"ApprovalStatus": query("status", "Only approvals in this status", enum("pending", "approved", "denied", "expired")),
		"Consumer":       query("consumer", "The consumer (principal) whose resources are read or changed: the admin key names one; a principal's key is its own", str(MaxPathIDBytes)),
		"TxAgent":        query("agent", "Only this agent's transactions", str(MaxPathIDBytes)),
		"TxBusiness":     query("business", "Only this business's transactions", str(MaxPathIDBytes)),
		"TxCategory":     query("category", "Only this category's transactions", str(MaxPathIDBytes)),
		"TxStatus":       query("status", "Only transactions in this status", map[string]any{"type": "string"}),
		"Period":         query("period", "The summary's buckets", enum("day", "week", "month")),
		"Currency":       query("currency", "The currency analysed (required when the period holds several)", map[string]any{"type": "string"}),
		"TimeZone":       query("time_zone", "The IANA time zone of the days and weeks", map[string]any{"type": "string"}),
		"WebhookID":      query("webhook_id", "Only this webhook's deliveries", str(MaxPathIDBytes)),
		"DeliveryStatus": query("status", "Only deliveries in this status", enum(domain.DeliveryPending, domain.DeliveryDelivered, domain.DeliveryRetrying, domain.DeliveryFailed)),
		"DeliveryKind":   query("kind", "Only deliveries of this kind", map[string]any{"type": "string"}),
		"Principal":      query("principal", "The boundary (a principal, or * for the gate-wide one: the admin key)", str(MaxPathIDBytes)),
		"A2AList":        query("list", "Only this list, paged", enum(listTrusted, listBlocked, listPairs, listConfigured)),
		"A2AAfter":       query("after", "The next_after of the previous page", map[string]any{"type": "string"}),
		"Sender":         query("sender", "The sender whose log is read for a past state (Kafka mode: its events partition)", str(MaxPathIDBytes)),
	}
}

// responseHeaders are components.headers.
func responseHeaders() map[string]any {
	h := func(desc string, required bool, schema map[string]any) map[string]any {
		return map[string]any{"description": desc, "required": required, "schema": schema}
	}
	return map[string]any{
		"Retry-After":           h("Seconds to wait before retrying", false, map[string]any{"type": "string", "pattern": "^[0-9]+$"}),
		"RetryAfterRequired":    h("Seconds to wait before retrying", true, map[string]any{"type": "string", "pattern": "^[0-9]+$"}),
		"QWED-Protocol-Version": h("The QWED protocol version of the answer", true, map[string]any{"type": "string"}),
		"Content-Disposition":   h("attachment; filename=\"compliance-<agent>-<from>-<to>.<format>\"", true, map[string]any{"type": "string"}),
		"Cache-Control":         h("How long the answer may be cached", true, map[string]any{"type": "string"}),
		"ETag":                  h("The document's entity tag", true, map[string]any{"type": "string"}),
	}
}

// enginesDoc is the answer of GET /engines (verify.Service.EnginesDocument).
type enginesDoc struct {
	ProtocolVersion   string                 `json:"protocol_version"`
	SupportedVersions []string               `json:"supported_versions"`
	Engines           []engines.Capabilities `json:"engines"`
}

// readViews are the answers of the reads, reflected from their Go types
// (reflectSchema), by component name.
var readViews = map[string]reflect.Type{
	"Agent":                reflect.TypeFor[agentView](),
	"Budget":               reflect.TypeFor[budgetView](),
	"Activity":             reflect.TypeFor[activityView](),
	"AgentState":           reflect.TypeFor[timetravel.AgentStateView](),
	"ComplianceBundle":     reflect.TypeFor[report.Bundle](),
	"ApprovalList":         reflect.TypeFor[approvalsView](),
	"Health":               reflect.TypeFor[healthView](),
	"A2ABoundary":          reflect.TypeFor[a2aBoundaryAnswer](),
	"A2AMetrics":           reflect.TypeFor[a2aMetricsView](),
	"A2AHealth":            reflect.TypeFor[a2aHealthView](),
	"TransactionList":      reflect.TypeFor[transactionsView](),
	"TransactionSummary":   reflect.TypeFor[summaryView](),
	"TransactionAnalytics": reflect.TypeFor[analyticsView](),
	"TransactionAt":        reflect.TypeFor[transactionAtView](),
	"WebhookList":          reflect.TypeFor[webhooksView](),
	"DeliveryList":         reflect.TypeFor[deliveriesView](),
	"BusinessList":         reflect.TypeFor[businessesView](),
	"BusinessInfo":         reflect.TypeFor[businessView](),
	"PolicyList":           reflect.TypeFor[policiesView](),
	"PolicyView":           reflect.TypeFor[policyView](),
	"PolicyAt":             reflect.TypeFor[policyAtView](),
	"Engines":              reflect.TypeFor[enginesDoc](),
	"TransactionRecord":    reflect.TypeFor[projections.Transaction](),
	// Types several views share, named so that the SDKs name them too.
	"BudgetStatus":       reflect.TypeFor[domain.BudgetStatus](),
	"ActivityEntry":      reflect.TypeFor[projections.Activity](),
	"ActivitySummary":    reflect.TypeFor[projections.Summary](),
	"Delivery":           reflect.TypeFor[projections.Delivery](),
	"A2AStatusCounts":    reflect.TypeFor[projections.StatusCounts](),
	"A2APairCounts":      reflect.TypeFor[projections.A2APair](),
	"A2AList":            reflect.TypeFor[a2aListView](),
	"EngineCapabilities": reflect.TypeFor[engines.Capabilities](),
	"ComplianceReport":   reflect.TypeFor[report.Report](),
}

// neverNull are the slice and map members of the read views that the
// handlers always set (an empty list is [], never null), by view.
var neverNull = map[reflect.Type][]string{
	reflect.TypeFor[approvalsView]():     {"approvals"},
	reflect.TypeFor[transactionsView]():  {"transactions"},
	reflect.TypeFor[webhooksView]():      {"webhooks"},
	reflect.TypeFor[deliveriesView]():    {"deliveries"},
	reflect.TypeFor[businessesView]():    {"businesses"},
	reflect.TypeFor[businessView]():      {"categories"},
	reflect.TypeFor[policiesView]():      {"policies"},
	reflect.TypeFor[activityView]():      {"activities"},
	reflect.TypeFor[analyticsBacktest](): {"put"},
	reflect.TypeFor[a2aMetricsView]():    {"by_engine"},
	reflect.TypeFor[enginesDoc]():        {"engines", "supported_versions"},
}

// handWritten are the components that have no Go type to reflect.
func handWritten() map[string]any {
	jwk := map[string]any{
		"type": "object", "required": []string{"kty", "kid"},
		"properties": map[string]any{
			"kty": map[string]any{"type": "string"}, "crv": map[string]any{"type": "string"},
			"x": map[string]any{"type": "string"}, "y": map[string]any{"type": "string"},
			"kid": map[string]any{"type": "string"}, "use": map[string]any{"type": "string"},
			"alg": map[string]any{"type": "string"},
		},
	}
	return map[string]any{
		"JWKS": map[string]any{"type": "object", "required": []string{"keys"}, "description": "A JSON Web Key Set (RFC 7517)",
			"properties": map[string]any{"keys": map[string]any{"type": "array", "items": jwk}}},
		"CloudEvent": map[string]any{"type": "object", "description": "A CloudEvent in structured mode (CloudEvents v1.0 JSON format)",
			"required": []string{"specversion", "id", "source", "type"},
			"properties": map[string]any{
				"specversion": map[string]any{"const": "1.0"}, "id": map[string]any{"type": "string"},
				"source": map[string]any{"type": "string"}, "type": map[string]any{"type": "string"},
				"subject": map[string]any{"type": "string"}, "time": map[string]any{"type": "string"},
				"datacontenttype": map[string]any{"type": "string"}, "data": map[string]any{},
			}},
		"JSONRPCRequest": map[string]any{"type": "object", "description": "A JSON-RPC 2.0 request (A2A: SendMessage, SendStreamingMessage; message/send, message/stream of A2A 0.3)",
			"required": []string{"jsonrpc", "method"},
			"properties": map[string]any{"jsonrpc": map[string]any{"const": "2.0"}, "id": map[string]any{"type": []any{"string", "integer", "null"}},
				"method": map[string]any{"type": "string"}, "params": map[string]any{}}},
		"JSONRPCResponse": map[string]any{"type": "object", "description": "A JSON-RPC 2.0 response: a result or an error",
			"required": []string{"jsonrpc", "id"},
			"properties": map[string]any{"jsonrpc": map[string]any{"const": "2.0"}, "id": map[string]any{"type": []any{"string", "integer", "null"}},
				"result": map[string]any{},
				"error": map[string]any{"type": "object", "required": []string{"code", "message"},
					"properties": map[string]any{"code": map[string]any{"type": "integer"}, "message": map[string]any{"type": "string"}, "data": map[string]any{}}}}},
		"AgentCard": map[string]any{"type": "object", "description": "An A2A Agent Card (the upstream's, its interface the gate's proxy path)"},
		"VerifyOrBatchRequest": map[string]any{"description": "One verification request (§5.1) or a batch (§5.3)",
			"anyOf": []any{ref("VerifyRequest"), ref("BatchVerifyRequest")}},
	}
}

// builtDocument builds the OpenAPI document.
func builtDocument(t testing.TB) []byte {
	t.Helper()
	comps, err := openapi.Components()
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, s any) {
		if _, dup := comps[name]; dup {
			t.Fatalf("two components are named %s", name)
		}
		comps[name] = s
	}
	rs := &reflector{t: t, comps: comps, named: map[reflect.Type]string{}, byDef: map[reflect.Type]string{}}
	rs.init()
	for name, s := range handWritten() {
		if s != nil {
			add(name, s)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(readViews)) {
		rs.named[readViews[name]] = name
	}
	for _, name := range slices.Sorted(maps.Keys(readViews)) {
		rs.component(readViews[name])
	}
	paths := map[string]any{}
	params := parameters()
	for _, op := range operations {
		item, _ := paths[op.path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.path] = item
		}
		item[strings.ToLower(op.method)] = op.render(t, comps, params)
	}
	doc := map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": map[string]any{
			"title":   "agentgate HTTP API",
			"version": "1.0.0",
			"description": "agentgate, a pre-execution verification gate for AI agents: the QWED-Agent spec v1.1 endpoints, " +
				"QWED protocol v1.0 verification, QWED A2A interception, the Agent Policy Engine, webhooks and the operational reads. " +
				"Every error body is {\"error\": {\"code\", \"message\", \"details\"}} (ErrorReply; codes in docs/errors.md), " +
				"except POST /verify's, which are QWED protocol v1.0 §8.4 bodies. A request to a path no operation matches is " +
				"answered 404 with the error body; a documented path with another method 405 with an Allow header. " +
				"A request body is read as JSON whatever its Content-Type. " +
				"Generated by handlers/httpapi/openapi_test.go; do not edit by hand.",
			"license": map[string]any{"name": "See the repository"},
		},
		"servers": []any{map[string]any{"url": "http://127.0.0.1:8080", "description": "agentgate serve's default address"}},
		"tags": func() []any {
			var out []any
			for _, tg := range []string{"agents", "principals", "approvals", "events", "verify", "a2a", "transactions", "webhooks", "execute", "policies", "operations"} {
				out = append(out, map[string]any{"name": tg})
			}
			return out
		}(),
		"paths": paths,
		"components": map[string]any{
			"schemas":    comps,
			"parameters": params,
			"headers":    responseHeaders(),
			"responses": map[string]any{
				"Error": map[string]any{"description": "Refused: the error body {\"error\": {\"code\", \"message\", \"details\"}} (docs/errors.md)",
					"headers": map[string]any{"Retry-After": map[string]any{"$ref": "#/components/headers/Retry-After"}},
					"content": map[string]any{"application/json": map[string]any{"schema": ref("ErrorReply")}}},
				"RateLimited": map[string]any{"description": "Refused by a rate limit (QWED-AUTH-004): retry after Retry-After seconds",
					"headers": map[string]any{"Retry-After": map[string]any{"$ref": "#/components/headers/RetryAfterRequired"}},
					"content": map[string]any{"application/json": map[string]any{"schema": ref("ErrorReply")}}},
			},
			"securitySchemes": map[string]any{
				"ApiKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-API-Key",
					"description": "A principal's API key (POST /principals/{id}/keys) or the admin key (agentgate serve --api-key)"},
				"AgentToken": map[string]any{"type": "http", "scheme": "bearer",
					"description": "An agent's token (the agent_token of its registration): Authorization: Bearer <token>; the agent endpoints also take it as the body's agent_token"},
			},
		},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// render is the OpenAPI operation object of op.
func (op apiOp) render(t testing.TB, comps, params map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{"operationId": op.id, "summary": op.summary, "tags": []string{op.tag}}
	var ps []any
	for _, seg := range strings.Split(op.path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			ps = append(ps, map[string]any{"name": name, "in": "path", "required": true, "schema": str(MaxPathIDBytes)})
		}
	}
	for _, p := range op.params {
		if _, ok := params[p]; !ok {
			t.Fatalf("%s %s: no parameter %s", op.method, op.path, p)
		}
		ps = append(ps, map[string]any{"$ref": "#/components/parameters/" + p})
	}
	if len(ps) > 0 {
		out["parameters"] = ps
	}
	sec := []any{}
	for _, s := range op.sec {
		sec = append(sec, map[string]any{s: []string{}})
	}
	out["security"] = sec
	if op.tokenInBody {
		out["x-agent-token-in-body"] = true
	}
	if op.rpc {
		out["x-jsonrpc"] = true
	}
	if op.proxy {
		// Served only in proxy mode (serve --a2a-upstream): an SDK may
		// leave it out.
		out["x-proxy-mode"] = true
	}
	switch {
	case op.bodyContent != nil:
		out["requestBody"] = map[string]any{"required": op.bodyRequired, "content": op.bodyContent}
	case op.body != "":
		if _, ok := comps[op.body]; !ok {
			t.Fatalf("%s %s: no component %s", op.method, op.path, op.body)
		}
		out["requestBody"] = map[string]any{"required": op.bodyRequired,
			"content": map[string]any{"application/json": map[string]any{"schema": ref(op.body)}}}
	}
	rs := map[string]any{}
	for _, r := range op.ok {
		o := map[string]any{"description": r.desc}
		switch {
		case r.content != nil:
			o["content"] = r.content
		case len(r.anyOf) > 0:
			var alts []any
			for _, a := range r.anyOf {
				if _, ok := comps[a]; !ok {
					t.Fatalf("%s %s: no component %s", op.method, op.path, a)
				}
				alts = append(alts, ref(a))
			}
			o["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"anyOf": alts}}}
		case r.schema != "":
			if _, ok := comps[r.schema]; !ok {
				t.Fatalf("%s %s: no component %s", op.method, op.path, r.schema)
			}
			o["content"] = map[string]any{"application/json": map[string]any{"schema": ref(r.schema)}}
		}
		if len(r.headers) > 0 {
			hs := map[string]any{}
			for _, h := range r.headers {
				hs[h] = map[string]any{"$ref": "#/components/headers/" + h}
			}
			o["headers"] = hs
		}
		code := strconv.Itoa(r.status)
		if r.status == 0 {
			code = "default"
		}
		rs[code] = o
	}
	for _, st := range op.errs {
		if _, ok := rs[strconv.Itoa(st)]; !ok {
			name := "Error"
			if st == http.StatusTooManyRequests {
				name = "RateLimited"
			}
			rs[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/" + name}
		}
	}
	out["responses"] = rs
	return out
}

// reflector turns Go types into JSON Schemas the way encoding/json
// encodes them.
type reflector struct {
	t     testing.TB
	comps map[string]any
	// named are the types that become components, by name.
	named map[reflect.Type]string
	// byDef are the types a bundled definition describes.
	byDef map[reflect.Type]string
	stack []reflect.Type
}

func (r *reflector) init() {
	for typ, name := range map[reflect.Type]string{
		reflect.TypeFor[time.Time]():          "Time",
		reflect.TypeFor[domain.USD]():         "USD",
		reflect.TypeFor[domain.TrustLevel]():  "TrustLevel",
		reflect.TypeFor[domain.Risk]():        "Risk",
		reflect.TypeFor[domain.Duration]():    "Duration",
		reflect.TypeFor[domain.Limits]():      "Limits",
		reflect.TypeFor[json.Number]():        "Number",
		reflect.TypeFor[domain.Permissions](): "Permissions",
		reflect.TypeFor[domain.Approval]():    "Approval",
		reflect.TypeFor[domain.Webhook]():     "Webhook",
		reflect.TypeFor[domain.Decision]():    "Decision",
		reflect.TypeFor[domain.A2AVerdict]():  "A2AVerdict",
		reflect.TypeFor[policy.Policy]():      "Policy",
		reflect.TypeFor[domain.Business]():    "Business",
	} {
		if _, ok := r.comps[name]; !ok {
			r.t.Fatalf("no bundled definition %s", name)
		}
		r.byDef[typ] = name
	}
}

// component adds the component of a named type and returns its $ref.
func (r *reflector) component(t reflect.Type) map[string]any {
	name := r.named[t]
	if _, done := r.comps[name]; !done {
		r.comps[name] = map[string]any{} // a reference back to it while it is built
		r.comps[name] = r.object(t)
	}
	return ref(name)
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// schema is the schema of the JSON encoding of t.
func (r *reflector) schema(t reflect.Type) map[string]any {
	if name, ok := r.byDef[t]; ok {
		return ref(name)
	}
	if _, ok := r.named[t]; ok {
		return r.component(t)
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return map[string]any{}
	}
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		r.t.Fatalf("%v has its own JSON encoding: map it to a definition (reflector.init)", t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return map[string]any{"anyOf": []any{r.schema(t.Elem()), map[string]any{"type": "null"}}}
	case reflect.Struct:
		if slices.Contains(r.stack, t) {
			r.t.Fatalf("%v is recursive: name it (readViews)", t)
		}
		r.stack = append(r.stack, t)
		defer func() { r.stack = r.stack[:len(r.stack)-1] }()
		return r.object(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": []any{"string", "null"}, "contentEncoding": "base64"}
		}
		return map[string]any{"type": []any{"array", "null"}, "items": r.schema(t.Elem())}
	case reflect.Array:
		return map[string]any{"type": "array", "items": r.schema(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return map[string]any{"type": []any{"object", "null"}, "additionalProperties": r.schema(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	}
	r.t.Fatalf("no schema for %v", t)
	return nil
}

// object is the schema of a struct: its fields by encoding/json's rules
// (embedded structs promoted), the ones without omitempty required, no
// other member.
func (r *reflector) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	r.fields(t, props, &required, false)
	slices.Sort(required)
	out := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func (r *reflector) fields(t reflect.Type, props map[string]any, required *[]string, optional bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				r.fields(et, props, required, optional || ft.Kind() == reflect.Pointer)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		var s map[string]any
		switch {
		case strings.Contains(","+opts+",", ",string,"):
			s = map[string]any{"type": "string"}
		case omit && ft.Kind() == reflect.Pointer:
			// nil is omitted: a present member is the value.
			s = r.schema(ft.Elem())
		case slices.Contains(neverNull[t], name):
			s = r.schema(ft)
			types, ok := s["type"].([]any)
			if !ok {
				r.t.Fatalf("%v.%s: neverNull names a member that is not a slice or a map", t, name)
			}
			s["type"] = types[0]
		default:
			s = r.schema(ft)
		}
		props[name] = s
		if !omit && !optional {
			*required = append(*required, name)
		}
	}
}

// TestOpenAPIDocument holds schemas/openapi.v1.json to what the operations
// table, the read views and package schemas generate (-update rewrites
// it), and the document to OpenAPI 3.1's own rules that a generator
// relies on: every $ref resolves, every operation has an id.
func TestOpenAPIDocument(t *testing.T) {
	got := builtDocument(t)
	path := filepath.Join("..", "..", "schemas", schemas.OpenAPIFile)
	if *updateOpenAPI {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("schemas/openapi.v1.json is not what the operations table generates: "+
			"run `go test ./handlers/httpapi -run TestOpenAPIDocument -update` (%d bytes generated, %d committed)", len(got), len(want))
	}
	if _, err := openapi.New(got); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	var refs []string
	collectRefs(doc, &refs)
	for _, r := range refs {
		if !resolves(doc, r) {
			t.Errorf("$ref %s does not resolve", r)
		}
	}
	ids := map[string]bool{}
	for _, op := range operations {
		if ids[op.id] {
			t.Errorf("operationId %s is used twice", op.id)
		}
		ids[op.id] = true
	}
}

func collectRefs(x any, out *[]string) {
	switch v := x.(type) {
	case map[string]any:
		for k, c := range v {
			if s, ok := c.(string); ok && k == "$ref" {
				*out = append(*out, s)
				continue
			}
			collectRefs(c, out)
		}
	case []any:
		for _, c := range v {
			collectRefs(c, out)
		}
	}
}

func resolves(doc map[string]any, r string) bool {
	ptr, ok := strings.CutPrefix(r, "#/")
	if !ok {
		return false
	}
	var cur any = doc
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[tok]; !ok {
			return false
		}
	}
	return true
}

// TestOpenAPIRoutes holds the document to the routes: every registered
// route is an operation, and every operation a route.
func TestOpenAPIRoutes(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	a := New(Config{Gate: g.gate.Worker, Store: g.gate.Store}).(*api)
	v, err := openapi.Default()
	if err != nil {
		t.Fatal(err)
	}
	routes := slices.Sorted(slices.Values(a.patterns))
	var ops []string
	for _, op := range v.Operations() {
		if !strings.HasPrefix(op, "POST /a2a/proxy/") && !strings.HasPrefix(op, "GET /a2a/proxy/") {
			ops = append(ops, op)
		}
	}
	for _, op := range operations {
		if op.proxy != strings.Contains(op.path, "/a2a/proxy/") {
			t.Errorf("%s %s: the proxy's paths are under /a2a/proxy/, and only they", op.method, op.path)
		}
	}
	for _, r := range routes {
		if !slices.Contains(ops, r) {
			t.Errorf("route %s is not in schemas/openapi.v1.json: add it to the operations table (handlers/httpapi/openapi_test.go) and run with -update", r)
		}
	}
	for _, op := range ops {
		if !slices.Contains(routes, op) {
			t.Errorf("operation %s is documented but no route serves it", op)
		}
	}
}

// exercisedElsewhere are the operations this package's tests do not
// reach, with the tests that do.
var exercisedElsewhere = map[string]string{
	"POST /a2a/proxy/{name}":                            "handlers/a2aproxy (TestProxy…) and cmd/agentgate (TestA2AProxy…)",
	"GET /a2a/proxy/{name}/.well-known/agent-card.json": "handlers/a2aproxy (TestProxyCard…)",
	"GET /a2a/proxy/{name}/.well-known/agent.json":      "handlers/a2aproxy (TestProxyCard…)",
}

// checkOpenAPICoverage fails when the package's whole suite ran and some
// documented operation was not reached by any request of a hooked test
// server (TestMain).
func checkOpenAPICoverage() error {
	v, err := openapi.Default()
	if err != nil {
		return err
	}
	done := openapi.Exercised()
	var missing []string
	for _, op := range v.Operations() {
		if !slices.Contains(done, op) && exercisedElsewhere[op] == "" {
			missing = append(missing, op)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no test request reached these documented operations: %s (add a test, or name the test that covers it in exercisedElsewhere)",
			strings.Join(missing, ", "))
	}
	return nil
}

// TestMain runs the package's tests, then, when the whole suite ran and
// passed, checks that it exercised every documented operation.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		if err := checkOpenAPICoverage(); err != nil {
			fmt.Fprintln(os.Stderr, "openapi:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestOpenAPIServed pins GET /openapi.json: public, the committed
// document byte for byte, with an ETag that a conditional GET is answered
// 304 with; and GET /engines, public, with the protocol version header.
func TestOpenAPIServed(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	r := g.do("GET", "/openapi.json", nil, nil)
	if r.status != http.StatusOK || !bytes.Equal(r.body, schemas.OpenAPI()) {
		t.Fatalf("GET /openapi.json: %d, %d bytes (want the %d of schemas/openapi.v1.json)", r.status, len(r.body), len(schemas.OpenAPI()))
	}
	etag := r.header.Get("ETag")
	if etag == "" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", r.header)
	}
	r = g.do("GET", "/openapi.json", hdr{"If-None-Match": etag}, nil)
	if r.status != http.StatusNotModified || len(r.body) != 0 {
		t.Fatalf("conditional GET: %d %q", r.status, r.body)
	}
	r = g.do("GET", "/openapi.json", hdr{"If-None-Match": `"other"`}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET with another ETag: %d", r.status)
	}
	r = g.do("GET", "/engines", nil, nil)
	var doc enginesDoc
	if r.status != http.StatusOK || json.Unmarshal(r.body, &doc) != nil || len(doc.Engines) == 0 || r.header.Get("QWED-Protocol-Version") == "" {
		t.Fatalf("GET /engines: %d %s", r.status, r.body)
	}
}
