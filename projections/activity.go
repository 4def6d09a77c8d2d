package projections

import (
	"encoding/json"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Activity is one entry of the activity log (QWED-Agent spec v1.1 §7.1).
type Activity struct {
	ActivityID     string             `json:"activity_id"`
	AgentID        string             `json:"agent_id"`
	Timestamp      time.Time          `json:"timestamp"`
	Seq            uint64             `json:"seq"`
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
}

// ActivityCost is what the action cost: the reservation until its
// execution is logged, the actual figures afterwards.
type ActivityCost struct {
	USD    domain.USD `json:"usd"`
	Tokens int64      `json:"tokens"`
	Actual bool       `json:"actual"`
}

// Summary is the summary block of the audit query API (QWED-Agent spec v1.1 §7.2).
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

func (s *Summary) add(o Summary) {
	s.TotalActions += o.TotalActions
	s.Approved += o.Approved
	s.Denied += o.Denied
	s.Corrected += o.Corrected
	s.Pending += o.Pending
	s.BudgetExceeded += o.BudgetExceeded
	s.TotalCostUSD += o.TotalCostUSD
	s.TotalTokens += o.TotalTokens
}

func (s *Summary) count(a *Activity, sign int64) {
	s.TotalActions += sign
	switch a.Decision {
	case domain.Approved:
		s.Approved += sign
	case domain.Denied:
		s.Denied += sign
	case domain.Corrected:
		s.Corrected += sign
	case domain.Pending:
		s.Pending += sign
	case domain.BudgetExceeded:
		s.BudgetExceeded += sign
	}
	s.TotalCostUSD += domain.USD(sign) * a.Cost.USD
	s.TotalTokens += sign * a.Cost.Tokens
}
