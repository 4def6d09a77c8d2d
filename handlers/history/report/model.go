package report

import (
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// FormatVersion names the report layout (the JSON "format" member).
const FormatVersion = "agentgate.compliance-report.v1"

// Report is the compliance report of one agent over a period (QWED-Agent spec v1.1
// §7.3). Every slice is in log order (or date order) and never nil, so
// that its encodings are byte-identical for the same log.
type Report struct {
	Format string `json:"format"`
	Agent  Agent  `json:"agent"`
	Period Period `json:"period"`
	// ProducedAt is the log position the report was produced at: every
	// figure counts the events up to and including it.
	ProducedAt Position `json:"produced_at"`
	Summary    Summary  `json:"summary"`
	// Days has one entry per UTC day from the day of the agent's first
	// action in the period to the day of its last (quiet days included).
	Days []Day `json:"days"`
	// TrustAtStart is the trust level when the period began (or at
	// registration, for an agent registered during it); Trust lists every
	// change inside the period.
	TrustAtStart domain.TrustLevel `json:"trust_level_at_start"`
	Trust        []TrustChange     `json:"trust_history"`
	// Limits are the agent's budget limits (QWED-Agent spec v1.1 §6.1) at the end.
	Limits domain.Limits `json:"budget_limits"`
	// Exceptions are the period's DENIED, BUDGET_EXCEEDED and PENDING
	// decisions with their codes and, for PENDING, the approval's outcome.
	Exceptions []Exception `json:"exceptions"`
	// Attestations are the attestations issued in the period.
	Attestations []Attestation `json:"attestations"`
	// SandboxViolations are the executions logged in the period of
	// actions decided with sandbox_required whose log did not attest
	// sandboxed: true (ExecutionLogged.SandboxViolation); nil when none.
	SandboxViolations []SandboxViolation `json:"sandbox_violations,omitempty"`
	// PIIViolations are the executions logged in the period whose log
	// carried an output holding a card number, an IBAN, an SSN, a
	// credential or a private key (ExecutionLogged.PIIViolation); nil
	// when none.
	PIIViolations []PIIViolation `json:"pii_violations,omitempty"`
	// A2A counts the verdicts on the agent's A2A messages in the period;
	// nil when it sent none.
	A2A *A2A `json:"a2a,omitempty"`
	// Transactions are the agent's executes decided in the period (the
	// Agent Policy Engine spec §3.3); nil when it made none.
	Transactions *Transactions `json:"transactions,omitempty"`
}

// MaxReportTransactions bounds the transactions a report lists one by
// one (the first decided); the totals count them all.
const MaxReportTransactions = 10_000

// Transactions are an agent's executes decided in the period, each as the
// agent's own events left it at the report's position (projections.TxTally,
// the read side's rules): decided, completed by the business, an execute
// approval resolved. A queued transaction released or expired by the
// gate's timers, and an execute approval expired by its tick, are named
// by events of no agent (execute.timers, approvals.expired): the report
// shows them as last decided (queued, pending_approval).
type Transactions struct {
	Totals projections.TxTotals `json:"totals"`
	// List holds at most MaxReportTransactions, in the order decided;
	// Truncated says whether more were.
	List      []projections.Transaction `json:"list"`
	Truncated bool                      `json:"truncated"`
}

// Agent identifies the agent and its principal.
type Agent struct {
	AgentID      string    `json:"agent_id"`
	DID          string    `json:"did"`
	Name         string    `json:"name"`
	Type         string    `json:"type"`
	PrincipalID  string    `json:"principal_id"`
	Status       string    `json:"status"`
	RegisteredAt time.Time `json:"registered_at"`
}

// Period is the reported period, [From, To).
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Position is a log position: the last event the report counts, the hex
// SHA-256 of its bytes, and the signed checkpoint. When a checkpoint
// covers the whole period, Seq and Hash are what it signs and Time is its
// time; otherwise they are the log head's (and its time), and Checkpoint
// is the latest checkpoint before the head (nil: none), whose CoversSeq
// then says how much of the report is signed.
type Position struct {
	Partition  int32       `json:"partition"`
	Seq        uint64      `json:"seq"`
	Hash       string      `json:"hash"`
	Time       time.Time   `json:"time"`
	Checkpoint *Checkpoint `json:"checkpoint"`
}

// Checkpoint is a signed log checkpoint (a log.checkpointed event).
type Checkpoint struct {
	// EventSeq is the checkpoint event's own position; it covers the
	// chain up to CoversSeq (= EventSeq-1), whose hash is Head.
	EventSeq  uint64    `json:"event_seq"`
	CoversSeq uint64    `json:"covers_seq"`
	Head      string    `json:"head"`
	Time      time.Time `json:"time"`
	KeyID     string    `json:"kid"`
}

// Summary sums up the period's decisions: the projections' activity
// summary (QWED-Agent spec v1.1 §7.2's summary plus pending and
// budget-exceeded counts and tokens), counted by the same code, with the
// denial rate. Cost and tokens are the reserved figures, replaced by the
// actual ones once the execution is logged, and zero for a PENDING action
// whose approval was denied or expired.
type Summary struct {
	projections.Summary
	// DenialRate is (denied + budget_exceeded) / total_actions, four
	// decimals ("0.0000" without actions).
	DenialRate string `json:"denial_rate"`
}

// Day is one UTC day of the period: its decisions and, at the end of the
// day, the budget used against the limits then in force.
type Day struct {
	Date string `json:"date"`
	Summary
	Budget BudgetDay `json:"budget"`
}

// BudgetDay is the daily budget usage at the end of a day (after the last
// event of the agent that day) and the daily limits (0: no limit).
type BudgetDay struct {
	CostUSD         domain.USD `json:"cost_usd"`
	MaxDailyCostUSD domain.USD `json:"max_daily_cost_usd"`
	Requests        int64      `json:"requests"`
	MaxRequests     int64      `json:"max_requests_per_day"`
	Tokens          int64      `json:"tokens"`
	MaxTokens       int64      `json:"max_daily_tokens"`
	HighRiskCalls   int64      `json:"high_risk_calls"`
	MaxHighRisk     int64      `json:"max_high_risk_calls_per_day"`
}

// TrustChange is one change of the agent's trust level.
type TrustChange struct {
	Seq    uint64            `json:"seq"`
	Time   time.Time         `json:"time"`
	From   domain.TrustLevel `json:"from"`
	To     domain.TrustLevel `json:"to"`
	Reason string            `json:"reason"`
}

// Exception is a DENIED, BUDGET_EXCEEDED or PENDING decision.
type Exception struct {
	Seq      uint64          `json:"seq"`
	Time     time.Time       `json:"time"`
	ActionID string          `json:"action_id"`
	Action   string          `json:"action"`
	Risk     domain.Risk     `json:"risk_level"`
	Decision domain.Decision `json:"decision"`
	Code     domain.Code     `json:"code"`
	Message  string          `json:"message"`
	// Approval is the approval's status at ProducedAt (PENDING only).
	Approval domain.ApprovalStatus `json:"approval_status"`
}

// SandboxViolation is an execution logged without the sandbox attestation
// its decision required.
type SandboxViolation struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	ActionID string    `json:"action_id"`
}

// PIIViolation is an execution whose logged output held PII or a secret:
// the kinds found, never the values.
type PIIViolation struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	ActionID string    `json:"action_id"`
	Kinds    []string  `json:"kinds"`
}

// Attestation is an attestation issued with a decision.
type Attestation struct {
	Seq      uint64          `json:"seq"`
	Time     time.Time       `json:"time"`
	ActionID string          `json:"action_id"`
	Decision domain.Decision `json:"decision"`
	KeyID    string          `json:"kid"`
	// Token is the ES256 JWT (verify it against the JWKS).
	Token string `json:"token"`
}

// A2A counts the agent-to-agent verdicts on the messages the agent sent
// in the period under its principal's trust boundary (QWED A2A): those
// the gate forwarded, blocked, rate limited or answered with an error, by
// engine and by (sender, receiver) pair. Messages relayed under another
// boundary (another principal's key, or the admin's) are not the
// principal's and are not counted. Pairs holds at most
// projections.MaxA2APairsPerPrincipal pairs, the first seen; the verdicts
// of the later ones are counted in OtherPairs.
type A2A struct {
	projections.StatusCounts
	Total      int64                    `json:"total"`
	ByEngine   []A2AEngine              `json:"by_engine"`
	Pairs      []projections.A2APair    `json:"pairs"`
	OtherPairs projections.StatusCounts `json:"other_pairs"`
}

// A2AEngine is the verdicts one engine gave.
type A2AEngine struct {
	Engine string `json:"engine"`
	projections.StatusCounts
}
