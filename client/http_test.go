package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// usd is a dollar amount.
func usd(t testing.TB, s string) domain.USD {
	t.Helper()
	u, err := domain.ParseUSD(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// wantCode fails t unless err is an *APIError with status and code.
func wantCode(t *testing.T, what string, err error, status int, code domain.Code) *client.APIError {
	t.Helper()
	var e *client.APIError
	if !errors.As(err, &e) || e.Status != status || e.Code != code {
		t.Fatalf("%s: got %v (%T), want %d %s", what, err, err, status, code)
	}
	if !client.HasCode(err, code) || client.ErrorCode(err) != code {
		t.Fatalf("%s: HasCode/ErrorCode do not see %s in %v", what, code, err)
	}
	return e
}

// TestHTTPClientAgentSurface drives every agent, principal and approval
// call of the client against a real gate: the decisions are results
// whatever their status, the typed results carry what the gate answered,
// and the agent's attestation verifies offline.
func TestHTTPClientAgentSurface(t *testing.T) {
	ctx := context.Background()
	g := startGate(t, nil)
	acme := g.principal(t, "org_acme")
	if pol, err := acme.PutPrincipalPermissions(ctx, "org_acme", domain.PrincipalPermissions{AllowedHosts: []string{"Bücher.example"}}); err != nil ||
		len(pol.AllowedHosts) != 1 || pol.AllowedHosts[0] != "xn--bcher-kva.example" || pol.PrincipalID != "org_acme" {
		t.Fatalf("PutPrincipalPermissions: %+v %v", pol, err)
	}
	if _, err := acme.PutPrincipalPermissions(ctx, "org_acme", domain.PrincipalPermissions{}); err != nil {
		t.Fatalf("clearing the principal's permissions: %v", err)
	}
	if _, err := acme.PutTools(ctx, "org_acme", []domain.ToolSpec{{Name: "send_email", RiskLevel: "medium", RequiresApproval: true}}); err != nil {
		t.Fatalf("PutTools: %v", err)
	}
	agent, reg := register(t, acme, "org_acme", "analyst",
		domain.Permissions{AllowedEngines: []string{"math", "sql"}, BlockedTools: []string{"execute_code"}},
		domain.Limits{MaxDailyCost: usd(t, "1.00"), MaxRequestsPerHour: 100})
	if reg.AgentID == "" || !strings.HasPrefix(string(reg.AgentToken), "qwed_agent_") || reg.PrincipalID != "org_acme" || reg.Status != "active" {
		t.Fatalf("registration: %+v", reg)
	}

	// APPROVED, with a generated context (conversation, step 1).
	d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2", EstimatedCost: usd(t, "0.10")}, nil)
	if err != nil || d.Decision != domain.Approved || d.ActionID == "" || d.ConversationID != agent.ConversationID() || d.StepNumber != 1 {
		t.Fatalf("VerifyAction: %+v %v", d, err)
	}
	// Step 2 follows; the attestation verifies offline against the JWKS.
	d2, err := agent.VerifyRequest(ctx, domain.VerifyAction{Action: domain.Action{Type: "calculate", Query: "3+3"},
		Options: domain.Options{RequireAttestation: true}})
	if err != nil || d2.Decision != domain.Approved || d2.StepNumber != 2 {
		t.Fatalf("second VerifyAction: %+v %v", d2, err)
	}
	jwks, err := acme.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Attestation == "" {
		t.Fatal("the approved decision carries no attestation")
	}
	claims, err := client.VerifyAttestation(d2.Attestation, jwks, time.Now())
	if err != nil || claims.ActionID != d2.ActionID || claims.AgentID != reg.AgentID || claims.Decision != domain.Approved || claims.Subject != reg.DID || claims.Step != 2 {
		t.Fatalf("VerifyAttestation: %+v %v", claims, err)
	}
	if online, err := acme.VerifyAttestation(ctx, d2.Attestation); err != nil || online.ActionID != d2.ActionID {
		t.Fatalf("HTTPClient.VerifyAttestation: %+v %v", online, err)
	}

	// PENDING: the tool requires approval; the agent reads its approval,
	// the principal lists and approves it.
	pending, err := agent.VerifyToolCall(ctx, "send_email", map[string]string{"to": "cfo@example.com"})
	if err != nil || pending.Decision != domain.Pending || pending.Approval == nil {
		t.Fatalf("tool needing approval: %+v %+v %v", pending, pending.Error, err)
	}
	if ap, err := agent.Approval(ctx, pending.Approval.ID); err != nil || ap.Status != domain.ApprovalPending {
		t.Fatalf("agent reads its approval: %+v %v", ap, err)
	}
	page, err := acme.ListApprovals(ctx, client.ApprovalsQuery{Status: domain.ApprovalPending})
	if err != nil || len(page.Approvals) != 1 || page.Approvals[0].ID != pending.Approval.ID || page.NextAfter != nil {
		t.Fatalf("ListApprovals: %+v %v", page, err)
	}
	res, err := acme.Approve(ctx, pending.Approval.ID, "looks fine")
	if err != nil || res.Approval.Status != domain.ApprovalApproved {
		t.Fatalf("Approve: %+v %v", res, err)
	}
	if ap, err := acme.GetApproval(ctx, pending.Approval.ID); err != nil || ap.Status != domain.ApprovalApproved || ap.Reason != "looks fine" {
		t.Fatalf("GetApproval: %+v %v", ap, err)
	}

	// DENIED is a result (a 403 on the wire), with its reason (and the
	// agent's trust drops for it).
	denied, err := agent.VerifyToolCall(ctx, "execute_code", map[string]string{"code": "rm -rf /"})
	if err != nil || denied.Decision != domain.Denied || denied.Error == nil || denied.Error.Code == "" {
		t.Fatalf("blocked tool: %+v %v", denied, err)
	}
	// LogExecution corrects the budget to the actual cost.
	ex, err := agent.LogExecution(ctx, domain.LogExecution{ActionID: d.ActionID, Success: true, CostUSD: usd(t, "0.05"), Tokens: 10})
	if err != nil || !ex.Logged || ex.ActionID != d.ActionID || ex.CostUSD != usd(t, "0.05") {
		t.Fatalf("LogExecution: %+v %v", ex, err)
	}
	// BUDGET_EXCEEDED is a result (a 429 on the wire, not retried).
	over, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "4+4", EstimatedCost: usd(t, "5")}, nil)
	if err != nil || over.Decision != domain.BudgetExceeded || over.Error == nil {
		t.Fatalf("over budget: %+v %v", over, err)
	}

	// The reads, by the agent's token and by its principal's key.
	for _, c := range []struct {
		name string
		get  func() (*client.AgentView, error)
	}{{"token", func() (*client.AgentView, error) { return agent.Get(ctx) }}, {"key", func() (*client.AgentView, error) { return acme.GetAgent(ctx, reg.AgentID) }}} {
		v, err := c.get()
		if err != nil || v.AgentID != reg.AgentID || v.Name != "analyst" || v.TotalActions < 4 || v.DeniedActions < 1 {
			t.Fatalf("GetAgent by %s: %+v %v", c.name, v, err)
		}
	}
	b, err := agent.Budget(ctx)
	if err != nil || b.AgentID != reg.AgentID || b.Budget.Cost.MaxDailyUSD != usd(t, "1") {
		t.Fatalf("Budget: %+v %v", b, err)
	}
	act, err := agent.Activity(ctx, client.ActivityQuery{Limit: 2})
	if err != nil || act.Summary.TotalActions < 5 || len(act.Activities) != 2 || act.NextAfterSeq == nil {
		t.Fatalf("Activity page 1: %+v %v", act, err)
	}
	act2, err := agent.Activity(ctx, client.ActivityQuery{Limit: 100, AfterSeq: *act.NextAfterSeq})
	if err != nil || len(act2.Activities) < 3 || act2.NextAfterSeq != nil {
		t.Fatalf("Activity page 2: %+v %v", act2, err)
	}
	var first struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(act.Activities[0], &first); err != nil || first.Seq == 0 {
		t.Fatalf("activity entry %s: %v", act.Activities[0], err)
	}
	st, err := agent.State(ctx, first.Seq, time.Time{})
	if err != nil || !bytes.Contains(st, []byte(reg.AgentID)) {
		t.Fatalf("State at %d: %s %v", first.Seq, st, err)
	}
	csv, err := acme.ExportComplianceReport(ctx, reg.AgentID, "csv", nil)
	if err != nil || !bytes.Contains(csv, []byte(reg.AgentID)) || !bytes.Contains(csv, []byte("APPROVED")) {
		t.Fatalf("compliance report (csv): %.200s %v", csv, err)
	}
	bundle, err := acme.ExportComplianceReport(ctx, reg.AgentID, "json", nil)
	if err != nil || !json.Valid(bundle) {
		t.Fatalf("compliance report (json): %.200s %v", bundle, err)
	}

	// Trust: a request the evidence does not support is answered, not
	// refused; the principal sets the level directly.
	tr, err := agent.RequestTrust(ctx, domain.RequestTrustElevation{Request: "trust_elevation", FromLevel: 0, ToLevel: 1})
	if err != nil || tr.RequestID == "" {
		t.Fatalf("RequestTrust: %+v %v", tr, err)
	}
	lv, err := acme.SetTrustLevel(ctx, reg.AgentID, 2, "reviewed")
	if err != nil || lv.TrustLevel != 2 || lv.AgentID != reg.AgentID {
		t.Fatalf("SetTrustLevel: %+v %v", lv, err)
	}
	// Suspension refuses the agent (403), reinstatement lets it back.
	if s, err := acme.SuspendAgent(ctx, reg.AgentID, true, "audit"); err != nil || s.Status != "suspended" {
		t.Fatalf("SuspendAgent: %+v %v", s, err)
	}
	_, err = agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "5+5"}, nil)
	if !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("a suspended agent's verify: %v, want a 403 refusal", err)
	}
	if s, err := acme.SuspendAgent(ctx, reg.AgentID, false, "done"); err != nil || s.Status != "active" {
		t.Fatalf("reinstating: %+v %v", s, err)
	}

	// A new conversation starts again at step 1.
	if id := agent.NewConversation("conv_side"); id != "conv_side" || agent.ConversationID() != "conv_side" {
		t.Fatalf("NewConversation: %s", id)
	}
	side, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "7*6"}, nil)
	if err != nil || side.ConversationID != "conv_side" || side.StepNumber != 1 {
		t.Fatalf("a new conversation's first step: %+v %v", side, err)
	}

	// Token rotation: the client takes the new token, the old one is
	// refused (401 QWED-AGENT-002).
	old := agent.Token()
	rot, err := agent.RotateToken(ctx)
	if err != nil || rot.AgentToken == "" || rot.AgentToken == old || agent.Token() != rot.AgentToken {
		t.Fatalf("RotateToken: %+v %v", rot, err)
	}
	if _, err := agent.Get(ctx); err != nil {
		t.Fatalf("reading with the rotated token: %v", err)
	}
	_, err = acme.Agent(reg.AgentID, old).Get(ctx)
	wantCode(t, "the old token", err, 401, domain.CodeInvalidAgentToken)
	if !errors.Is(err, client.ErrUnauthorized) || strings.Contains(err.Error(), string(old)) {
		t.Fatalf("old token refusal: %v", err)
	}
	if r, err := acme.RevokeToken(ctx, reg.AgentID); err != nil || !r.Revoked {
		t.Fatalf("RevokeToken: %+v %v", r, err)
	}
	_, err = agent.Get(ctx)
	wantCode(t, "a revoked token", err, 401, domain.CodeInvalidAgentToken)
	if c, err := acme.FileComplaint(ctx, reg.AgentID, "misbehaved"); err != nil || c.Status != "suspended" {
		t.Fatalf("FileComplaint: %+v %v", c, err)
	}

	// Principal keys: rotation replaces the key, revocation ends it.
	admin := g.client(t, client.WithAPIKey(adminKey))
	k, err := admin.IssuePrincipalKey(ctx, "org_keys")
	if err != nil {
		t.Fatal(err)
	}
	k2, err := admin.RotatePrincipalKey(ctx, "org_keys", k.KeyID)
	if err != nil || k2.Replaces != k.KeyID || k2.APIKey == k.APIKey {
		t.Fatalf("RotatePrincipalKey: %+v %v", k2, err)
	}
	_, err = g.client(t, client.WithAPIKey(string(k.APIKey))).ListApprovals(ctx, client.ApprovalsQuery{})
	wantCode(t, "a rotated key", err, 401, domain.CodeInvalidAPIKey)
	if r, err := admin.RevokePrincipalKey(ctx, "org_keys", k2.KeyID); err != nil || !r.Revoked {
		t.Fatalf("RevokePrincipalKey: %+v %v", r, err)
	}
	_, err = g.client(t, client.WithAPIKey(string(k2.APIKey))).ListApprovals(ctx, client.ApprovalsQuery{})
	wantCode(t, "a revoked key", err, 401, domain.CodeInvalidAPIKey)
}

// TestHTTPClientProtocolAndA2A covers the QWED protocol, A2A and the
// operational calls: /verify and /engines, the trust boundary, a
// verdict (a result even when blocked) whose attestation verifies
// offline, health and Do.
func TestHTTPClientProtocolAndA2A(t *testing.T) {
	ctx := context.Background()
	g := startGate(t, nil)
	acme := g.principal(t, "org_acme")
	if h, err := acme.Health(ctx); err != nil || h.Status != "ok" {
		t.Fatalf("Health: %+v %v", h, err)
	}
	eng, err := acme.ListEngines(ctx)
	if err != nil || !bytes.Contains(eng, []byte(`"math"`)) {
		t.Fatalf("ListEngines: %.200s %v", eng, err)
	}
	out, err := acme.Verify(ctx, map[string]any{"query": "2+2=4", "type": "math"})
	if err != nil || !bytes.Contains(out, []byte("VERIFIED")) {
		t.Fatalf("Verify: %s %v", out, err)
	}
	// A BLOCKED outcome (403) is a result, as every outcome; so is a batch.
	blockedSQL, err := acme.Verify(ctx, map[string]any{"query": "DROP TABLE users", "type": "sql"})
	if err != nil || !bytes.Contains(blockedSQL, []byte(`"BLOCKED"`)) {
		t.Fatalf("Verify of a destructive statement: %s %v", blockedSQL, err)
	}
	batch, err := acme.VerifyBatch(ctx, []any{map[string]any{"type": "math", "query": "2+2=4"}, map[string]any{"type": "math", "query": "1+1=3"}})
	if err != nil || !bytes.Contains(batch, []byte(`"total":2`)) {
		t.Fatalf("VerifyBatch: %s %v", batch, err)
	}
	_, err = acme.Verify(ctx, map[string]any{"nonsense": true})
	if var400 := errors.Is(err, client.ErrBadRequest); !var400 {
		t.Fatalf("Verify of a bad body: %v, want a 400 refusal", err)
	}

	for _, ag := range []string{"agent_sender", "agent_receiver"} {
		if r, err := acme.A2ABoundary(ctx, domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: ag}); err != nil || r.Op != "trust" || r.Agent != ag {
			t.Fatalf("A2ABoundary trust %s: %+v %v", ag, r, err)
		}
	}
	msg := func(claimed string) map[string]any {
		return map[string]any{
			"sender_agent_id": "agent_sender", "receiver_agent_id": "agent_receiver", "trace_id": "trace_" + claimed,
			"payload_type": "financial_transaction",
			"payload": json.RawMessage(`{"data":{"claimed_total":` + claimed + `,"line_items":[` +
				`{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`),
		}
	}
	v, err := acme.A2AIntercept(ctx, msg("150.00"))
	if err != nil || v.Status != "forwarded" || v.Attestation == "" {
		t.Fatalf("A2AIntercept forwarded: %+v %v", v, err)
	}
	jwks, err := acme.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := client.VerifyA2AAttestation(v.Attestation, jwks, time.Now())
	if err != nil || ac.TraceID != "trace_150.00" || ac.A2A.Verdict != "forwarded" || ac.A2A.Sender != "agent_sender" {
		t.Fatalf("VerifyA2AAttestation: %+v %v", ac, err)
	}
	if _, err := client.VerifyAttestation(v.Attestation, jwks, time.Now()); !errors.Is(err, client.ErrAttestationType) {
		t.Fatalf("an A2A attestation passed for a decision's: %v", err)
	}
	blocked, err := acme.A2AIntercept(ctx, msg("999.99"))
	if err != nil || blocked.Status != "blocked" {
		t.Fatalf("A2AIntercept blocked: %+v %v", blocked, err)
	}
	for _, op := range []string{domain.A2AOpBlock, domain.A2AOpUnblock, domain.A2AOpUntrust} {
		if r, err := acme.A2ABoundary(ctx, domain.A2ABoundaryChange{Op: op, Agent: "agent_third"}); err != nil || r.Op != op || r.Agent != "agent_third" {
			t.Fatalf("A2ABoundary %s: %+v %v", op, r, err)
		}
	}
	if _, err := acme.A2ABoundary(ctx, domain.A2ABoundaryChange{Op: "befriend", Agent: "x"}); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("an unknown boundary op: %v", err)
	}
	if r, err := acme.A2ABoundary(ctx, domain.A2ABoundaryChange{Op: domain.A2AOpBlockPair, Sender: "agent_sender", Receiver: "agent_receiver"}); err != nil || r.Op != "block_pair" {
		t.Fatalf("A2ABoundary block_pair: %+v %v", r, err)
	}
	if r, err := acme.A2ABoundary(ctx, domain.A2ABoundaryChange{Op: domain.A2AOpUnblockPair, Sender: "agent_sender", Receiver: "agent_receiver"}); err != nil || r.Op != "unblock_pair" {
		t.Fatalf("A2ABoundary unblock_pair: %+v %v", r, err)
	}
	var boundary json.RawMessage
	if err := acme.Do(ctx, http.MethodGet, "/a2a/boundary", nil, &boundary); err != nil || !bytes.Contains(boundary, []byte("agent_sender")) {
		t.Fatalf("Do GET /a2a/boundary: %s %v", boundary, err)
	}
	var businesses struct {
		Businesses []json.RawMessage `json:"businesses"`
	}
	if err := acme.Do(ctx, http.MethodGet, "/businesses?limit=5", nil, &businesses); err != nil || businesses.Businesses == nil {
		t.Fatalf("Do GET /businesses: %+v %v", businesses, err)
	}
	err = acme.Do(ctx, http.MethodGet, "/businesses/biz_none", nil, nil)
	if !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Do GET an unknown business: %v", err)
	}
}

// TestHTTPClientResources covers the consumer policy engine's resources,
// the A2A reads, CloudEvents and the operational reads: each write's typed
// answer, each read's JSON, and a refusal where the gate answers one.
func TestHTTPClientResources(t *testing.T) {
	ctx := context.Background()
	g := startGate(t, nil)
	home := g.principal(t, "org_home")
	admin := g.client(t, client.WithAPIKey(adminKey))

	biz, err := home.CreateBusiness(ctx, client.BusinessRequest{ID: "coffee", Name: "Coffee Shop", Categories: []string{"food"},
		Endpoint: "https://coffee.example.com/orders", Currency: "USD"})
	if err != nil || biz.ID != "coffee" || biz.Owner != "org_home" {
		t.Fatalf("CreateBusiness: %+v %v", biz, err)
	}
	if biz, err = home.UpdateBusiness(ctx, "coffee", client.BusinessRequest{Name: "Coffee Bar", Categories: []string{"food"},
		Endpoint: "https://coffee.example.com/orders", Currency: "EUR"}); err != nil || biz.Currency != "EUR" || biz.Name != "Coffee Bar" {
		t.Fatalf("UpdateBusiness: %+v %v", biz, err)
	}
	if raw, err := home.ListBusinesses(ctx, url.Values{"limit": {"10"}}); err != nil || !bytes.Contains(raw, []byte(`"coffee"`)) {
		t.Fatalf("ListBusinesses: %s %v", raw, err)
	}
	if raw, err := home.GetBusiness(ctx, "coffee"); err != nil || !bytes.Contains(raw, []byte("Coffee Bar")) {
		t.Fatalf("GetBusiness: %s %v", raw, err)
	}

	pol, err := home.CreatePolicy(ctx, "", policy.Policy{ID: "daily-10", Type: "spending", Spending: &policy.Spending{DailyCents: 1000}})
	if err != nil || pol.Op != domain.OpCreate || pol.Policy.ID != "daily-10" || pol.Policy.Version != 1 || pol.Consumer != "org_home" {
		t.Fatalf("CreatePolicy: %+v %v", pol, err)
	}
	if pol, err = home.UpdatePolicy(ctx, "", "daily-10", policy.Policy{ID: "daily-10", Type: "spending", Spending: &policy.Spending{DailyCents: 2000}}); err != nil || pol.Policy.Version != 2 {
		t.Fatalf("UpdatePolicy: %+v %v", pol, err)
	}
	if raw, err := home.ListPolicies(ctx, ""); err != nil || !bytes.Contains(raw, []byte("daily-10")) {
		t.Fatalf("ListPolicies: %s %v", raw, err)
	}
	if raw, err := admin.GetPolicy(ctx, "org_home", "daily-10", 0); err != nil || !bytes.Contains(raw, []byte("2000")) {
		t.Fatalf("GetPolicy by the admin: %s %v", raw, err)
	}
	if _, err := admin.ListPolicies(ctx, ""); !client.HasCode(err, domain.CodeMissingField) {
		t.Fatalf("the admin's policies without a consumer: %v", err)
	}
	if pol, err = home.DeletePolicy(ctx, "", "daily-10"); err != nil || pol.Op != domain.OpDelete {
		t.Fatalf("DeletePolicy: %+v %v", pol, err)
	}
	if del, err := home.DeleteBusiness(ctx, "coffee"); err != nil || !del.Deleted || del.ID != "coffee" {
		t.Fatalf("DeleteBusiness: %+v %v", del, err)
	}

	for name, read := range map[string]func() (json.RawMessage, error){
		"transactions": func() (json.RawMessage, error) { return home.ListTransactions(ctx, nil) },
		"summary":      func() (json.RawMessage, error) { return home.GetTransactionSummary(ctx, url.Values{"period": {"day"}}) },
		"analytics":    func() (json.RawMessage, error) { return home.GetTransactionAnalytics(ctx, nil) },
		"deliveries":   func() (json.RawMessage, error) { return home.ListWebhookDeliveries(ctx, "", nil) },
		"a2a boundary": func() (json.RawMessage, error) { return home.GetA2ABoundary(ctx, nil) },
		"a2a metrics":  func() (json.RawMessage, error) { return home.GetA2AMetrics(ctx, nil) },
		"a2a health":   func() (json.RawMessage, error) { return home.A2AHealth(ctx) },
		"openapi":      func() (json.RawMessage, error) { return home.OpenAPI(ctx) },
	} {
		if raw, err := read(); err != nil || !json.Valid(raw) {
			t.Fatalf("%s: %.200s %v", name, raw, err)
		}
	}
	if _, err := home.GetTransaction(ctx, "tx_none", nil); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("an unknown transaction: %v", err)
	}

	wh, err := home.CreateWebhook(ctx, client.WebhookRequest{URL: "https://hooks.example.com/agentgate", Events: []string{"blocked"}})
	if err != nil || wh.ID == "" || wh.Consumer != "org_home" {
		t.Fatalf("CreateWebhook: %+v %v", wh, err)
	}
	if wh2, err := home.UpdateWebhook(ctx, wh.ID, client.WebhookRequest{URL: "https://hooks.example.com/v2"}); err != nil || wh2.URL != "https://hooks.example.com/v2" {
		t.Fatalf("UpdateWebhook: %+v %v", wh2, err)
	}
	if raw, err := home.ListWebhooks(ctx, nil); err != nil || !bytes.Contains(raw, []byte(wh.ID)) {
		t.Fatalf("ListWebhooks: %s %v", raw, err)
	}
	if raw, err := home.GetWebhook(ctx, wh.ID, nil); err != nil || !bytes.Contains(raw, []byte("/v2")) {
		t.Fatalf("GetWebhook: %s %v", raw, err)
	}
	if raw, err := home.ListWebhookDeliveries(ctx, wh.ID, nil); err != nil || !json.Valid(raw) {
		t.Fatalf("ListWebhookDeliveries of one: %s %v", raw, err)
	}
	if del, err := home.DeleteWebhook(ctx, wh.ID, ""); err != nil || !del.Deleted {
		t.Fatalf("DeleteWebhook: %+v %v", del, err)
	}

	// A command as a structured CloudEvent: the reply event, a refusal's
	// included.
	ev := func(id, name string) map[string]any {
		return map[string]any{"specversion": "1.0", "type": "qwed.agent.register", "source": "sdk-test", "id": id,
			"datacontenttype": "application/json",
			"data":            map[string]any{"agent": map[string]any{"name": name, "type": "supervised", "principal_id": "org_home"}}}
	}
	reply, err := home.SendEvent(ctx, ev("reg-1", "evented"))
	if err != nil || !bytes.Contains(reply, []byte(`"agent_id"`)) || !bytes.Contains(reply, []byte(`"specversion"`)) {
		t.Fatalf("SendEvent: %s %v", reply, err)
	}
	refused, err := home.SendEvent(ctx, ev("reg-2", ""))
	if err != nil || !bytes.Contains(refused, []byte(`"error"`)) {
		t.Fatalf("SendEvent of a refused registration: %s %v", refused, err)
	}
	if m, err := home.Metrics(ctx); err != nil || !strings.Contains(m, "# TYPE") {
		t.Fatalf("Metrics: %.200s %v", m, err)
	}
}

// sameJSON fails t unless typed, encoded again, is the JSON the gate sent
// (raw): the client's own read views (the server's are unexported) lose
// and invent no member.
func sameJSON(t *testing.T, what string, raw json.RawMessage, typed any) {
	t.Helper()
	again, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal(again, &b); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the client's type does not hold the gate's answer\ngate:   %s\nclient: %s", what, raw, again)
	}
}

// TestHTTPClientViewsMatchTheGate: each read view the client declares
// holds every member of the gate's answer, and nothing else.
func TestHTTPClientViewsMatchTheGate(t *testing.T) {
	ctx := context.Background()
	g := startGate(t, nil)
	acme := g.principal(t, "org_acme")
	agent, reg := register(t, acme, "org_acme", "views", domain.Permissions{AllowedEngines: []string{"math"}},
		domain.Limits{MaxDailyCost: usd(t, "2"), MaxRequestsPerHour: 50, MaxToolCallsPerHour: 5})
	if _, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2", EstimatedCost: usd(t, "0.25")}, nil); err != nil {
		t.Fatal(err)
	}
	pending, err := agent.VerifyToolCall(ctx, "send_email", map[string]string{"to": "x@example.com"})
	if err != nil || pending.Approval == nil {
		t.Fatalf("tool call: %+v %v", pending, err)
	}
	raw := func(path string) json.RawMessage {
		t.Helper()
		var out json.RawMessage
		if err := acme.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return out
	}
	v, err := acme.GetAgent(ctx, reg.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "GET /agents/{id}", raw("/agents/"+reg.AgentID), v)
	b, err := acme.GetAgentBudget(ctx, reg.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "GET /agents/{id}/budget", raw("/agents/"+reg.AgentID+"/budget"), b)
	a, err := acme.GetAgentActivity(ctx, reg.AgentID, client.ActivityQuery{Limit: 1})
	if err != nil || a.NextAfterSeq == nil {
		t.Fatalf("activity: %+v %v", a, err)
	}
	sameJSON(t, "GET /agents/{id}/activity", raw("/agents/"+reg.AgentID+"/activity?limit=1"), a)
	p, err := acme.ListApprovals(ctx, client.ApprovalsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "GET /approvals", raw("/approvals"), p)
}
