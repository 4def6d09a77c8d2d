package domain

import (
	"encoding/json"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
)

// Reply renders the reply to the command that produced ev: the HTTP status
// and the JSON body, which is also the data of the CloudEvent reply. Field
// names are the seeds'. The transport adds what the domain never sees (the
// plaintext agent_token of a registration).
//
//	agent.registered      201 RegistrationReply
//	action.decided        APPROVED/CORRECTED 200, PENDING 202, BUDGET_EXCEEDED 429,
//	                      DENIED the error code's status; DecisionReply
//	command.rejected      the error code's status; ErrorReply
//	a2a.verdict           rate_limited 429, every other status 200; A2AReply
//	business.changed      create 201, update 200: the Business; delete 200 BusinessDeletedReply
//	execute.prepared      200 PrepareReply (the transport adds confirmationToken)
//	execute.decided       executing, pending_approval, queued 202 ExecuteReply;
//	                      blocked the error code's status (403); ErrorReply
//	execute.completed     completed, pending_confirmation 200 ExecuteReply;
//	                      failed 502 ErrorReply (QWED-EXEC-008)
//	everything else       200 with the body named below
func Reply(ev *Event) (status int, body any) {
	if ev == nil {
		return 204, nil
	}
	switch ev.Type {
	case EvAgentRegistered:
		if r := ev.Registered; r != nil {
			return 201, RegistrationReply{
				AgentID: r.AgentID, DID: r.DID, Status: StatusActive, CreatedAt: ev.Time,
				Permissions: r.Permissions, Budget: r.Budget, TrustLevel: r.TrustLevel,
				Type: r.Info.Type, Name: r.Info.Name, PrincipalID: r.Info.PrincipalID,
			}
		}
	case EvActionDecided:
		if d := ev.Decided; d != nil {
			r := DecisionReply{
				ActionID: d.ActionID, Decision: d.Decision, Verification: d.Verification,
				BudgetRemaining: d.Budget, Attestation: d.Attestation, Approval: d.Approval, Error: (*ReplyError)(d.Error),
				ConversationID: d.ConversationID, StepNumber: d.Step, Tool: d.Tool, TrustChange: d.Trust,
				CorrectedAction: d.CorrectedAction, CorrectedDigest: d.CorrectedDigest,
			}
			decisionExtras(&r, d)
			return decisionStatus(d), r
		}
	case EvCommandRejected:
		if ev.Error != nil {
			return ev.Error.Code.HTTPStatus(), ErrorReply{Error: (*ReplyError)(ev.Error)}
		}
	case EvExecutionLogged:
		if x := ev.Executed; x != nil {
			return 200, ExecutionReply{
				ActionID: x.ActionID, Logged: true, Success: x.Success, CostUSD: x.CostUSD, Tokens: x.Tokens,
				CostDelta: x.CostDelta, TokensDelta: x.TokensDelta, BudgetRemaining: x.Budget,
				SandboxViolation: x.SandboxViolation, ResultHash: x.ResultHash,
				OutputFindings: x.OutputFindings, PIIViolation: x.PIIViolation,
			}
		}
	case EvTrustElevationRequested:
		if el := ev.Elevation; el != nil {
			return 200, TrustRequestReply{
				RequestID: el.RequestID, Accepted: el.Accepted, Reasons: el.Reasons,
				Computed: el.Computed, Approval: el.Approval,
			}
		}
	case EvApprovalResolved:
		if r := ev.Resolved; r != nil {
			return 200, ApprovalReply{Approval: r.Approval, TrustChange: r.Trust,
				ReleasedCost: r.ReleasedCost, ReleasedTokens: r.ReleasedTokens, Transaction: ev.Transaction}
		}
	case EvTrustChanged:
		if t := ev.TrustChanged; t != nil {
			return 200, TrustChangedReply{AgentID: ev.AgentID, TrustLevel: t.To, Previous: t.From, Reason: t.Reason}
		}
	case EvAgentStatusChanged:
		if st := ev.Status; st != nil {
			return 200, StatusReply{AgentID: ev.AgentID, Status: st.Status, Reason: st.Reason}
		}
	case EvToolRegistrySet:
		if r := ev.ToolRegistry; r != nil {
			return 200, r
		}
	case EvPrincipalPermissionsSet:
		if r := ev.PrincipalPermissions; r != nil {
			return 200, r
		}
	case EvPrincipalKeyIssued:
		if k := ev.KeyIssued; k != nil {
			return 200, KeyReply{PrincipalID: k.PrincipalID, KeyID: k.KeyID, Replaces: k.Replaces}
		}
	case EvPrincipalKeyRevoked:
		if k := ev.KeyRevoked; k != nil {
			return 200, KeyReply{PrincipalID: k.PrincipalID, KeyID: k.KeyID, Revoked: true}
		}
	case EvAgentTokenRotated, EvAgentTokenRevoked:
		if ev.TokenChanged != nil {
			return 200, TokenReply{AgentID: ev.AgentID, Revoked: ev.Type == EvAgentTokenRevoked}
		}
	case EvConfigured:
		if c := ev.Configured; c != nil {
			return 200, c
		}
	case EvQWEDVerified:
		if q := ev.QWEDVerified; q != nil {
			return 200, QWEDVerifiedReply{VerificationID: q.VerificationID, Seq: ev.Seq, Attestations: q.Attestations}
		}
	case EvA2AVerdict:
		if v := ev.A2AVerdict; v != nil {
			return a2aStatus(v), A2AReplyOf(ev)
		}
	case EvA2ABoundaryChanged:
		if c := ev.A2ABoundary; c != nil && ev.Command != nil {
			return 200, A2ABoundaryReply{Boundary: ev.Command.Principal, Op: c.Op, Agent: c.Agent, Sender: c.Sender, Receiver: c.Receiver}
		}
	case EvBusinessChanged, EvExecutePrepared, EvExecuteDecided, EvExecuteCompleted, EvExecuteTimers:
		if status, body, ok := execReply(ev); ok {
			return status, body
		}
	case EvWebhookChanged, EvDeliveryRecorded:
		if st, body := webhookReply(ev); body != nil {
			return st, body
		}
	case EvPolicyChanged:
		if p := ev.Policy; p != nil && ev.Command != nil && ev.Command.Policy != nil {
			status := 200
			if ev.Command.Policy.Op == OpCreate {
				status = 201
			}
			return status, PolicyReply{Consumer: policyConsumer(ev.Command), Op: ev.Command.Policy.Op, Policy: *p, Seq: ev.Seq}
		}
	case EvAgentBlockRelayed:
		if n, ok := AgentNoticeOf(ev); ok {
			return 200, n // the relayed notice (agentnotice.go)
		}
	case EvApprovalsExpired:
		if x := ev.Expired; x != nil {
			ids := make([]string, 0, len(x.Approvals))
			for _, a := range x.Approvals {
				ids = append(ids, a.Approval.ID)
			}
			return 200, ExpiredReply{Expired: ids}
		}
	}
	err := Errorf(CodeInternal, "event %s has no reply", ev.Type)
	return err.Code.HTTPStatus(), ErrorReply{Error: (*ReplyError)(err)}
}

func decisionStatus(d *ActionDecided) int {
	switch d.Decision {
	case Approved, Corrected:
		return 200
	case Pending:
		return 202
	case BudgetExceeded:
		return 429
	}
	if d.Error != nil {
		return d.Error.Code.HTTPStatus()
	}
	return 403
}

// RegistrationReply is the reply to POST /agents/register (QWED-Agent spec v1.1 §3.2),
// without agent_token, which the transport adds.
type RegistrationReply struct {
	AgentID     string      `json:"agent_id"`
	DID         string      `json:"did"`
	Name        string      `json:"name"`
	Type        string      `json:"type"`
	PrincipalID string      `json:"principal_id"`
	Status      string      `json:"status"`
	CreatedAt   time.Time   `json:"created_at"`
	Permissions Permissions `json:"permissions"`
	Budget      Limits      `json:"budget"`
	TrustLevel  TrustLevel  `json:"trust_level"`
}

// DecisionReply is the reply to a verify_action or tool call (QWED-Agent spec v1.1 §4.2).
type DecisionReply struct {
	ActionID        string          `json:"action_id"`
	Decision        Decision        `json:"decision"`
	Verification    Verification    `json:"verification"`
	BudgetRemaining BudgetRemaining `json:"budget_remaining"`
	Attestation     string          `json:"attestation,omitempty"`
	Approval        *Approval       `json:"approval,omitempty"`
	Error           *ReplyError     `json:"error,omitempty"`
	ConversationID  string          `json:"conversation_id,omitempty"`
	StepNumber      int64           `json:"step_number,omitempty"`
	Tool            string          `json:"tool_name,omitempty"`
	TrustChange     *TrustChange    `json:"trust_change,omitempty"`
	// CorrectedAction is the action to execute instead, on a CORRECTED
	// decision, and CorrectedDigest its digest (QWED-Agent spec v1.1 §2.3, §4.3).
	CorrectedAction *Action `json:"corrected_action,omitempty"`
	CorrectedDigest string  `json:"corrected_digest,omitempty"`
	// Approved and BlockedReason are the ToolApprovalSystem's answer of
	// the QWED-Agent user guide, on tool calls only: approved is true for
	// APPROVED and CORRECTED; otherwise blocked_reason says why (the
	// error's message, or what the approval waits for).
	Approved      *bool  `json:"approved,omitempty"`
	BlockedReason string `json:"blocked_reason,omitempty"`
	// RiskAssessment and PolicyChecks are QWED-Agent spec v1.1 §5.2's,
	// derived from the decision (AssessDecision).
	RiskAssessment *RiskAssessment `json:"risk_assessment,omitempty"`
	PolicyChecks   []PolicyCheck   `json:"policy_checks,omitempty"`
}

// decisionExtras sets the reply fields derived from the recorded decision
// alone (docs/ARCHITECTURE.md, "Tool parameters, risk assessment and
// policy checks"): the risk assessment and policy checks, a PENDING reply's error is QWED-AGENT-TRUST-002
// (QWED-Agent spec v1.1 §9, "Action requires approval") naming its
// approval, and a tool call's reply says approved / blocked_reason.
func decisionExtras(r *DecisionReply, d *ActionDecided) {
	r.RiskAssessment, r.PolicyChecks = AssessDecision(d)
	if d.Decision == Pending && r.Error == nil {
		e := &ReplyError{Code: CodeRequiresApproval, Message: "action requires approval"}
		if ap := d.Approval; ap != nil {
			e.Message = "action requires approval: " + ap.Summary
			e.Details = Details{"approval_id": ap.ID, "expires_at": ap.ExpiresAt.UTC().Format(time.RFC3339)}
		}
		r.Error = e
	}
	if d.Kind != KindTool {
		return
	}
	ok := d.Decision == Approved || d.Decision == Corrected
	r.Approved = &ok
	if !ok && r.Error != nil {
		r.BlockedReason = r.Error.Message
	}
}

// ErrorReply is the body of a refused command: {"error": {code, message, details}}.
type ErrorReply struct {
	Error *ReplyError `json:"error"`
}

// ReplyError is an Error as an answer carries it: {"code","message",
// "details"} with details always present ({} when there are none), as
// every error body promises. Events keep Error's own encoding (details
// omitted when empty): their bytes do not change.
type ReplyError Error

// MarshalJSON implements json.Marshaler.
func (e ReplyError) MarshalJSON() ([]byte, error) {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return json.Marshal(struct {
		Code    Code           `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}{e.Code, e.Message, details})
}

// ExecutionReply is the reply to POST /agents/{id}/executions.
type ExecutionReply struct {
	ActionID        string          `json:"action_id"`
	Logged          bool            `json:"logged"`
	Success         bool            `json:"success"`
	CostUSD         USD             `json:"cost_usd"`
	Tokens          int64           `json:"tokens"`
	CostDelta       USD             `json:"cost_delta_usd"`
	TokensDelta     int64           `json:"tokens_delta"`
	BudgetRemaining BudgetRemaining `json:"budget_remaining"`
	// SandboxViolation: the action was decided with sandbox_required and
	// this log did not attest sandboxed: true; the execution is recorded
	// flagged.
	SandboxViolation bool `json:"sandbox_violation,omitempty"`
	// ResultHash is the result hash recorded: the one reported, else the
	// SHA-256 of the output the log carried ("sha256:" and hex).
	ResultHash string `json:"result_hash,omitempty"`
	// OutputFindings and PIIViolation: what the PII scan of the output
	// the log carried found (ExecutionLogged).
	OutputFindings []PIIFinding `json:"output_findings,omitempty"`
	PIIViolation   bool         `json:"pii_violation,omitempty"`
}

// TrustRequestReply is the reply to POST /agents/{id}/trust: whether the
// claim held against the gate's own evidence, and the approval it opened.
type TrustRequestReply struct {
	RequestID string        `json:"request_id"`
	Accepted  bool          `json:"accepted"`
	Reasons   []string      `json:"reasons,omitempty"`
	Computed  TrustEvidence `json:"evidence"`
	Approval  *Approval     `json:"approval,omitempty"`
}

// ApprovalReply is the reply to POST /approvals/{id}/approve|deny.
type ApprovalReply struct {
	Approval       Approval     `json:"approval"`
	TrustChange    *TrustChange `json:"trust_change,omitempty"`
	ReleasedCost   USD          `json:"released_cost_usd,omitempty"`
	ReleasedTokens int64        `json:"released_tokens,omitempty"`
	// Transaction is the transaction an execute approval moved
	// (executing when approved, denied when denied).
	Transaction *Transaction `json:"transaction,omitempty"`
}

// TrustChangedReply is the reply to a trust level change.
type TrustChangedReply struct {
	AgentID    string     `json:"agent_id"`
	TrustLevel TrustLevel `json:"trust_level"`
	Previous   TrustLevel `json:"previous_trust_level"`
	Reason     string     `json:"reason"`
}

// StatusReply is the reply to a suspension, reinstatement or complaint.
type StatusReply struct {
	AgentID string `json:"agent_id"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
}

// KeyReply is the reply to a principal key issue (never the key or its hash).
type KeyReply struct {
	PrincipalID string `json:"principal_id"`
	KeyID       string `json:"key_id"`
	// Replaces is the key a rotation revoked; Revoked is set on the answer
	// to a revocation.
	Replaces string `json:"replaces,omitempty"`
	Revoked  bool   `json:"revoked,omitempty"`
}

// TokenReply answers a rotation or revocation of an agent's token (the new
// token itself is added by the transport that minted it, once).
type TokenReply struct {
	AgentID string `json:"agent_id"`
	Revoked bool   `json:"token_revoked,omitempty"`
}

// ExpiredReply lists the approvals a Tick expired, in ID order.
type ExpiredReply struct {
	Expired []string `json:"expired"`
}

// A2AReply is the verdict of QWED A2A as an answer carries it (the HTTP
// body of POST /a2a/intercept, the data of the Kafka reply): details is
// always an object ({} when there are none); verified_at is the event's
// time.
type A2AReply struct {
	Status      a2a.Status `json:"status"`
	Reason      string     `json:"reason"`
	Engine      string     `json:"engine_used"`
	Attestation string     `json:"attestation_jwt"`
	TraceID     string     `json:"trace_id"`
	VerifiedAt  time.Time  `json:"verified_at"`
	Details     A2ADetails `json:"details"`
	// RetryAfterMs says when a rate-limited sender may retry; Shadow marks
	// a message forwarded despite an engine error.
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
	Shadow       bool  `json:"shadow,omitempty"`
}

// A2AReplyOf returns the reply of an a2a.verdict event.
func A2AReplyOf(ev *Event) A2AReply {
	v := ev.A2AVerdict
	r := A2AReply{Status: v.Status, Reason: v.Reason, Engine: v.Engine, Attestation: v.Attestation, TraceID: v.TraceID,
		VerifiedAt: ev.Time, RetryAfterMs: v.RetryAfterMs, Shadow: v.Shadow}
	if v.Details != nil {
		r.Details = *v.Details
	}
	return r
}

func a2aStatus(v *A2AVerdict) int {
	if v.Status == a2a.StatusRateLimited {
		return 429
	}
	return 200
}

// A2ABoundaryReply answers a boundary change: whose boundary ("*" the
// gate-wide one) and the change.
type A2ABoundaryReply struct {
	Boundary string `json:"boundary"`
	Op       string `json:"op"`
	Agent    string `json:"agent,omitempty"`
	Sender   string `json:"sender,omitempty"`
	Receiver string `json:"receiver,omitempty"`
}
