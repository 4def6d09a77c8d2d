package domain

import (
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/policy"
)

// EventType names an event; events are named in the past tense.
type EventType string

// The events of the gate. Every command produces at most one event.
const (
	EvAgentRegistered         EventType = "agent.registered"
	EvActionDecided           EventType = "action.decided"
	EvExecutionLogged         EventType = "execution.logged"
	EvTrustElevationRequested EventType = "trust.elevation_requested"
	EvApprovalResolved        EventType = "approval.resolved"
	EvTrustChanged            EventType = "trust.changed"
	EvAgentStatusChanged      EventType = "agent.status_changed"
	EvToolRegistrySet         EventType = "principal.tools_set"
	EvPrincipalKeyIssued      EventType = "principal.key_issued"
	EvPrincipalKeyRevoked     EventType = "principal.key_revoked"
	EvAgentTokenRotated       EventType = "agent.token_rotated"
	EvAgentTokenRevoked       EventType = "agent.token_revoked"
	EvConfigured              EventType = "gate.configured"
	EvApprovalsExpired        EventType = "approvals.expired"
	// EvCommandRejected records a command refused before it changed
	// anything (unknown agent, wrong token, wrong principal, bad input):
	// the audit record of the rejection.
	EvCommandRejected EventType = "command.rejected"
	// EvLogCheckpointed is a signed checkpoint of the log chain (issue 5):
	// not a decision, it changes no state (see LogCheckpoint).
	EvLogCheckpointed EventType = "log.checkpointed"
)

// Event is one entry of the log: a tagged union whose Type says which payload is
// set. Seq and Prev chain the log (invariant 3, docs/ARCHITECTURE.md): Seq is
// the per-partition position (gap-free, from 1) and Prev the hex SHA-256 of the
// previous event's encoded bytes ("" for seq 1). Decide sets every field but
// Prev; the log writer sets Prev.
type Event struct {
	Seq       uint64    `json:"seq"`
	Prev      string    `json:"prev"`
	Partition int32     `json:"partition"`
	Time      time.Time `json:"time"`
	Type      EventType `json:"type"`
	// Command is the command that produced the event, as decided (no
	// secrets). Replay --verify re-decides it and compares.
	Command *Command `json:"command,omitempty"`
	AgentID string   `json:"agent_id,omitempty"`
	// Error is set when the command was refused (EvCommandRejected), and on
	// denied decisions (mirrors Decided.Error).
	Error *Error `json:"error,omitempty"`

	Registered   *AgentRegistered         `json:"registered,omitempty"`
	Decided      *ActionDecided           `json:"decided,omitempty"`
	Executed     *ExecutionLogged         `json:"executed,omitempty"`
	Elevation    *TrustElevationRequested `json:"elevation,omitempty"`
	Resolved     *ApprovalResolved        `json:"resolved,omitempty"`
	TrustChanged *TrustChange             `json:"trust_changed,omitempty"`
	Status       *AgentStatusChange       `json:"status,omitempty"`
	ToolRegistry *PutToolRegistry         `json:"tool_registry,omitempty"`
	KeyIssued    *IssuePrincipalKey       `json:"key_issued,omitempty"`
	Configured   *Config                  `json:"configured,omitempty"`
	Expired      *ApprovalsExpired        `json:"expired,omitempty"`
	QWEDVerified *QWEDVerified            `json:"qwed_verified,omitempty"`
	Checkpoint   *LogCheckpoint           `json:"checkpoint,omitempty"`
	// KeyRevoked is the principal API key a revocation removed (with its
	// hash); TokenChanged the agent's new token hash (empty: revoked).
	KeyRevoked   *IssuePrincipalKey `json:"key_revoked,omitempty"`
	TokenChanged *AgentTokenChange  `json:"token_changed,omitempty"`
	// A2AVerdict is the verdict of an a2a.verdict event; A2ABoundary the
	// change of an a2a.boundary_changed event (whose boundary is
	// Command.Principal's).
	A2AVerdict  *A2AVerdict        `json:"a2a_verdict,omitempty"`
	A2ABoundary *A2ABoundaryChange `json:"a2a_boundary,omitempty"`

	// The consumer policy engine (execute_types.go): Business is the
	// business after a business.changed event (its ID only on a delete);
	// Prepared the token of an execute.prepared event; Transaction the
	// transaction of an execute.decided or execute.completed event, and
	// of an approval.resolved event of an execute approval; Timers the
	// payload of an execute.timers event; Webhook the webhook after a
	// webhook.changed event; Delivery the attempt of a
	// webhook.delivery_recorded event.
	Business    *Business        `json:"business,omitempty"`
	Prepared    *ExecutePrepared `json:"prepared,omitempty"`
	Transaction *Transaction     `json:"transaction,omitempty"`
	Timers      *ExecuteTimers   `json:"timers,omitempty"`
	// Policy is the policy after a policy.changed event, with the version
	// the change gave it (the policy deleted, on a delete: policies.go).
	Policy   *policy.Policy  `json:"policy,omitempty"`
	Webhook  *Webhook        `json:"webhook,omitempty"`
	Delivery *DeliveryResult `json:"delivery,omitempty"`
	// PrincipalPermissions is the policy of a principal.permissions_set
	// event (principalperms.go).
	PrincipalPermissions *PrincipalPermissions `json:"principal_permissions,omitempty"`
}

// AgentRegistered records a new agent with everything Apply needs.
type AgentRegistered struct {
	AgentID     string      `json:"agent_id"`
	DID         string      `json:"did"`
	Info        AgentInfo   `json:"agent"`
	Permissions Permissions `json:"permissions"`
	Budget      Limits      `json:"budget"`
	TrustLevel  TrustLevel  `json:"trust_level"`
	TokenHash   string      `json:"token_hash"`
}

// Decision is the gate's answer (QWED-Agent spec v1.1 §4.3).
type Decision string

// The decisions.
const (
	Approved       Decision = "APPROVED"
	Denied         Decision = "DENIED"
	Corrected      Decision = "CORRECTED"
	Pending        Decision = "PENDING"
	BudgetExceeded Decision = "BUDGET_EXCEEDED"
)

// ActionKind tells a verify_action decision from a tool-call decision.
type ActionKind string

// The action kinds.
const (
	KindAction ActionKind = "action"
	KindTool   ActionKind = "tool_call"
)

// ActionDecided records the decision on a VerifyAction or VerifyToolCall.
type ActionDecided struct {
	ActionID string     `json:"action_id"`
	Kind     ActionKind `json:"kind"`
	// ActionType is action.type, or "tool_call" for tool calls.
	ActionType   string       `json:"action_type"`
	Tool         string       `json:"tool,omitempty"`
	Decision     Decision     `json:"decision"`
	Verification Verification `json:"verification"`
	Error        *Error       `json:"error,omitempty"`

	// RequestDigest is the hex SHA-256 of the RFC 8785 form of the request
	// body (action, context, options); Fingerprint the hex SHA-256 of the
	// RFC 8785 form of the QWED-Agent spec v1.1 §9.3's fields; StateFingerprint the LOOP-004
	// fingerprint (action + pre_action_state_hash), "" without a state hash.
	RequestDigest    string `json:"request_digest"`
	Fingerprint      string `json:"fingerprint,omitempty"`
	StateFingerprint string `json:"state_fingerprint,omitempty"`

	ConversationID string `json:"conversation_id,omitempty"`
	Step           int64  `json:"step,omitempty"`
	// StepConsumed is true for APPROVED and PENDING: the step is committed.
	StepConsumed bool `json:"step_consumed"`

	// Reserved is what the decision reserved against the budget.
	ReservedCost   USD   `json:"reserved_cost_usd,omitempty"`
	ReservedTokens int64 `json:"reserved_tokens,omitempty"`
	HighRisk       bool  `json:"high_risk,omitempty"`

	// Approval is set for PENDING decisions.
	Approval *Approval `json:"approval,omitempty"`
	// Attestation is the ES256 JWT, when one was issued.
	Attestation string `json:"attestation,omitempty"`
	// Trust is the trust change this decision triggered (degradation).
	Trust *TrustChange `json:"trust,omitempty"`
	// SecurityViolation marks decisions that count as security violations.
	SecurityViolation bool `json:"security_violation,omitempty"`
	// ResetRecent and ResetBudgetDenials are set when this decision
	// triggered the denial-rate or the budget-abuse degradation rule: the
	// fold clears that rule's window (even when trust is already 0).
	ResetRecent        bool `json:"reset_recent,omitempty"`
	ResetBudgetDenials bool `json:"reset_budget_denials,omitempty"`
	// ConversationEvicted names the conversation this decision's new
	// conversation displaces when the agent already holds MaxConversations
	// (the least recently updated): the fold and the projections forget it.
	ConversationEvicted string `json:"conversation_evicted,omitempty"`
	// Budget is the budget left after the decision (QWED-Agent spec v1.1 §4.2).
	Budget BudgetRemaining `json:"budget_remaining"`
	// OutcomeDigest is the engine verdict's outcome digest, when a
	// verdict was applied (issue 4).
	OutcomeDigest string `json:"outcome_digest,omitempty"`
	// CorrectedAction and CorrectedDigest are set on CORRECTED decisions:
	// the action to execute instead (the engine's correction in place of
	// the query or code) and the hex SHA-256 of its RFC 8785 form; the
	// original's digest stays in RequestDigest.
	CorrectedAction *Action `json:"corrected_action,omitempty"`
	CorrectedDigest string  `json:"corrected_digest,omitempty"`
	// Notify names the principal notified of this blocked decision and
	// why (QWED-Agent spec v1.1 §2.3; Config.AgentNotices,
	// agentnotice.go); nil for every other decision.
	Notify *DecisionNotice `json:"notify,omitempty"`
}

// Denied reports whether the action was refused (DENIED or
// BUDGET_EXCEEDED): a refused action consumes no step and no budget, opens
// no action and no approval (Apply).
func (d *ActionDecided) Denied() bool { return d.Decision == Denied || d.Decision == BudgetExceeded }

// Verification is the verification block of the QWED-Agent spec v1.1 §4.2.
type Verification struct {
	Status       string   `json:"status"`
	Engine       string   `json:"engine,omitempty"`
	RiskLevel    Risk     `json:"risk_level"`
	RiskScore    string   `json:"risk_score,omitempty"`
	ChecksPassed []string `json:"checks_passed"`
	ChecksFailed []string `json:"checks_failed,omitempty"`
	Sandbox      bool     `json:"sandbox_required,omitempty"`
	// Findings are the engine verdict's security findings (issue 4).
	Findings []engines.Finding `json:"findings,omitempty"`
	// PII are the findings of the PII scan of what the proposal sends
	// (kinds and locations, never values), blocking or not: recorded
	// under Config.OutputScan; the risk factor pii_in_content.
	PII []PIIFinding `json:"pii,omitempty"`
}

// BudgetRemaining is the budget_remaining block; a field is omitted when
// the agent has no limit on that dimension.
type BudgetRemaining struct {
	DailyCost      *USD   `json:"daily_cost_usd,omitempty"`
	HourlyRequests *int64 `json:"hourly_requests,omitempty"`
	DailyRequests  *int64 `json:"daily_requests,omitempty"`
	DailyTokens    *int64 `json:"daily_tokens,omitempty"`
	HourlyTools    *int64 `json:"hourly_tool_calls,omitempty"`
	HighRiskCalls  *int64 `json:"high_risk_calls,omitempty"`
}

// ApprovalStatus is the state of an approval.
type ApprovalStatus string

// The approval states.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
	ApprovalExpired  ApprovalStatus = "expired"
)

// Approval is a request for a principal's decision. Its ID is the action ID
// (or the trust request's ID).
type Approval struct {
	ID          string         `json:"approval_id"`
	AgentID     string         `json:"agent_id"`
	PrincipalID string         `json:"principal_id"`
	Kind        string         `json:"kind"` // "action", "tool_call" or "trust_elevation"
	Status      ApprovalStatus `json:"status"`
	Summary     string         `json:"summary"`
	Risk        Risk           `json:"risk_level,omitempty"`
	ToLevel     *TrustLevel    `json:"to_level,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	ExpiresAt   time.Time      `json:"expires_at"`
	ResolvedAt  *time.Time     `json:"resolved_at,omitempty"`
	ResolvedBy  string         `json:"resolved_by,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	// TransactionID is the transaction an execute approval holds (kind
	// ApprovalKindExecute).
	TransactionID string `json:"transaction_id,omitempty"`
}

// ExecutionLogged records the actual outcome of an approved action and the
// budget correction (actual minus reserved).
type ExecutionLogged struct {
	ActionID    string `json:"action_id"`
	Success     bool   `json:"success"`
	CostUSD     USD    `json:"cost_usd"`
	Tokens      int64  `json:"tokens"`
	ResultHash  string `json:"result_hash,omitempty"`
	CostDelta   USD    `json:"cost_delta_usd"`
	TokensDelta int64  `json:"tokens_delta"`
	// SameDay is false when the action was reserved on an earlier UTC day:
	// the correction then does not touch today's counters.
	SameDay bool            `json:"same_day"`
	Budget  BudgetRemaining `json:"budget_remaining"`
	// SandboxViolation flags an execution of an action decided with
	// sandbox_required whose log did not attest sandboxed: true
	// (Config.SandboxAttestation). The execution is recorded all the same:
	// it already ran.
	SandboxViolation bool `json:"sandbox_violation,omitempty"`
	// OutputFindings are the PII findings of the output the log carried
	// (Command.OutputScan: kinds and offsets, never the text), and
	// PIIViolation flags one of a kind that would have denied the output
	// before it ran (a card number, an IBAN, an SSN, a credential, a
	// private key). The execution is recorded all the same: it already
	// ran.
	OutputFindings []PIIFinding `json:"output_findings,omitempty"`
	PIIViolation   bool         `json:"pii_violation,omitempty"`
}

// TrustElevationRequested records a trust elevation request, the evidence
// the gate computed and whether it opened an approval.
type TrustElevationRequested struct {
	RequestID string                `json:"request_id"`
	Claimed   RequestTrustElevation `json:"claimed"`
	Computed  TrustEvidence         `json:"computed"`
	Accepted  bool                  `json:"accepted"`
	Reasons   []string              `json:"reasons,omitempty"`
	Approval  *Approval             `json:"approval,omitempty"`
}

// ApprovalResolved records a principal's answer to an approval.
type ApprovalResolved struct {
	Approval Approval     `json:"approval"`
	Trust    *TrustChange `json:"trust,omitempty"`
	// ReleasedCost and ReleasedTokens are returned to the budget when an
	// action approval is denied.
	ReleasedCost   USD   `json:"released_cost_usd,omitempty"`
	ReleasedTokens int64 `json:"released_tokens,omitempty"`
}

// TrustChange records a change of an agent's trust level, with its reason.
type TrustChange struct {
	From   TrustLevel `json:"from"`
	To     TrustLevel `json:"to"`
	Reason string     `json:"reason"`
}

// AgentStatusChange records a suspension or reinstatement.
type AgentStatusChange struct {
	Status string `json:"status"` // "active" or "suspended"
	Reason string `json:"reason"`
}

// ApprovalsExpired records approvals that expired at a Tick.
type ApprovalsExpired struct {
	Approvals []ApprovalResolved `json:"approvals"`
}
