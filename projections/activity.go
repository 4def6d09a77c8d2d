package projections

import (
	"encoding/json"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Activity is one entry of the activity log (QWED-Agent spec v1.1 §7.1).
type Activity struct {
	ActivityID string    `json:"activity_id"`
	AgentID    string    `json:"agent_id"`
	Timestamp  time.Time `json:"timestamp"`
	Seq        uint64    `json:"seq"`
	// ActionType is Action.Type at the top level, where the QWED-Agent
	// user guide reads it (entry['action_type']): "tool_call" for a tool
	// call, whose tool is Action.Tool. Derived when the entry is read,
	// never stored.
	ActionType     string             `json:"action_type"`
	Action         ActivityAction     `json:"action"`
	Verification   ActivityVerify     `json:"verification"`
	Decision       domain.Decision    `json:"decision"`
	Error          *domain.Error      `json:"error,omitempty"`
	ConversationID string             `json:"conversation_id,omitempty"`
	StepNumber     int64              `json:"step_number,omitempty"`
	Approval       *ActivityApproval  `json:"approval,omitempty"`
	Execution      *ActivityExecution `json:"execution,omitempty"`
	Cost           ActivityCost       `json:"cost"`
	AttestationID  string             `json:"attestation_id,omitempty"`
}

// ActivityAction is the action block of an activity entry.
type ActivityAction struct {
	Type       string          `json:"type"`
	Tool       string          `json:"tool,omitempty"`
	Query      string          `json:"query,omitempty"`
	Target     string          `json:"target,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ActivityVerify is the verification block of an activity entry. Latency
// is not recorded: the gate decides in memory and a wall-clock latency
// would make replays differ.
type ActivityVerify struct {
	Status    string      `json:"status"`
	Engine    string      `json:"engine,omitempty"`
	RiskLevel domain.Risk `json:"risk_level"`
}

// ActivityApproval is the outcome of a PENDING action's approval.
type ActivityApproval struct {
	ApprovalID string                `json:"approval_id"`
	Status     domain.ApprovalStatus `json:"status"`
	ResolvedAt *time.Time            `json:"resolved_at,omitempty"`
}

// ActivityExecution is the logged execution of an approved action.
type ActivityExecution struct {
	Success    bool      `json:"success"`
	ResultHash string    `json:"result_hash,omitempty"`
	LoggedAt   time.Time `json:"logged_at"`
	// Sandboxed and Sandbox are the log's sandbox attestation.
	Sandboxed bool   `json:"sandboxed,omitempty"`
	Sandbox   string `json:"sandbox,omitempty"`
	// SandboxViolation flags an action decided with sandbox_required whose
	// execution log did not attest sandboxed: true.
	SandboxViolation bool `json:"sandbox_violation,omitempty"`
	// OutputFindings are the PII findings of the output the execution log
	// carried (kinds and offsets, never the text), and PIIViolation flags
	// one that would have denied the output before it ran.
	OutputFindings []domain.PIIFinding `json:"output_findings,omitempty"`
	PIIViolation   bool                `json:"pii_violation,omitempty"`
}

// ActivityCost is what the action cost: the reservation until its
// execution is logged, the actual figures afterwards.
type ActivityCost struct {
	USD    domain.USD `json:"usd"`
	Tokens int64      `json:"tokens"`
	Actual bool       `json:"actual"`
}

// Summary is the summary block of the audit query API (QWED-Agent spec v1.1
// §7.2): the one way decisions and their costs are summed up, by the
// activity projection and by the compliance report
// (handlers/history/report) alike. An action counts at its decision with
// the figures it reserved; a logged execution replaces them with the
// actual ones, and a refused or expired approval releases them (Recost).
// The activity query counts a PENDING action as pending while its
// approval is open, then as approved or denied (Resolve, applied when the
// query is read: the stored daily summaries and the compliance report, a
// record of decisions as they were made, keep it PENDING).
type Summary struct {
	TotalActions   int64      `json:"total_actions"`
	Approved       int64      `json:"approved"`
	Denied         int64      `json:"denied"`
	Corrected      int64      `json:"corrected"`
	Pending        int64      `json:"pending"`
	BudgetExceeded int64      `json:"budget_exceeded"`
	TotalCostUSD   domain.USD `json:"total_cost_usd"`
	TotalTokens    int64      `json:"total_tokens"`
}

// Add adds o's counts and costs to s.
func (s *Summary) Add(o Summary) {
	s.TotalActions += o.TotalActions
	s.Approved += o.Approved
	s.Denied += o.Denied
	s.Corrected += o.Corrected
	s.Pending += o.Pending
	s.BudgetExceeded += o.BudgetExceeded
	s.TotalCostUSD += o.TotalCostUSD
	s.TotalTokens += o.TotalTokens
}

// Count counts one decision d with the cost it reserved.
func (s *Summary) Count(d domain.Decision, c ActivityCost) {
	s.TotalActions++
	switch d {
	case domain.Approved:
		s.Approved++
	case domain.Denied:
		s.Denied++
	case domain.Corrected:
		s.Corrected++
	case domain.Pending:
		s.Pending++
	case domain.BudgetExceeded:
		s.BudgetExceeded++
	}
	s.TotalCostUSD += c.USD
	s.TotalTokens += c.Tokens
}

// Resolve moves a counted PENDING action to the outcome of its approval:
// approved, or denied once the approval is denied or expires; an open
// approval leaves it pending. (An approved PENDING action read as pending
// forever.)
func (s *Summary) Resolve(status domain.ApprovalStatus) {
	switch status {
	case domain.ApprovalApproved:
		s.Pending--
		s.Approved++
	case domain.ApprovalDenied, domain.ApprovalExpired:
		s.Pending--
		s.Denied++
	}
}

// Recost replaces the cost from that a counted action contributes with
// to: its actual figures once its execution is logged, zero once its
// approval is refused or expires.
func (s *Summary) Recost(from, to ActivityCost) {
	s.TotalCostUSD += to.USD - from.USD
	s.TotalTokens += to.Tokens - from.Tokens
}
