package domain

import (
	"encoding/json"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// The consumer policy engine (issue 14; the Agent Policy Engine spec): the
// commands, events, payloads, configuration and state of executes through
// the gate, businesses, confirmation tokens and transactions, and the
// payloads of webhooks and their deliveries. The rules are in business.go
// and execute*.go.

// The commands of the consumer policy engine (also the CloudEvent types of
// those a client may send: qwed.execute.prepare and qwed.execute).
const (
	// CmdBusiness creates, updates or deletes a business of the registry
	// (the admin key, or the owning principal's key).
	CmdBusiness CommandType = "qwed.business.change"
	// CmdPrepareExecute mints a confirmation token for an execute (agent
	// token; POST /agp/execute/prepare).
	CmdPrepareExecute CommandType = "qwed.execute.prepare"
	// CmdExecute is an agent's execute (POST /agp/execute).
	CmdExecute CommandType = "qwed.execute"
	// CmdExecuteOutcome records the business's answer to an executing
	// transaction. Only the gate (the adapter runner) sends it.
	CmdExecuteOutcome CommandType = "qwed.execute.outcome"
	// CmdExecuteTick tells the gate that time has passed for executes:
	// confirmation tokens expire, queued transactions are released or
	// expire. Only the gate (the worker's clock) sends it.
	CmdExecuteTick CommandType = "qwed.execute.tick"
	// CmdPolicy creates, updates or deletes a consumer's policy.
	CmdPolicy CommandType = "qwed.policy.change"
	// CmdWebhook creates, updates or deletes a consumer's webhook.
	CmdWebhook CommandType = "qwed.webhook.change"
	// CmdDelivery records one webhook delivery attempt's result. Only the
	// gate (the notify runner) sends it.
	CmdDelivery CommandType = "qwed.webhook.delivery"
)

// The events of the consumer policy engine.
const (
	// EvBusinessChanged records a change of the business registry.
	EvBusinessChanged EventType = "business.changed"
	// EvExecutePrepared records a confirmation token (its hash only).
	EvExecutePrepared EventType = "execute.prepared"
	// EvExecuteDecided records the decision on an execute: a transaction
	// of status executing, blocked, pending_approval or queued (Error is
	// set when blocked).
	EvExecuteDecided EventType = "execute.decided"
	// EvExecuteCompleted records the business's outcome of a transaction.
	EvExecuteCompleted EventType = "execute.completed"
	// EvExecuteTimers records confirmation tokens that expired and queued
	// transactions released or expired at an execute tick.
	EvExecuteTimers EventType = "execute.timers"
	// EvPolicyChanged records a change of a consumer's policy.
	EvPolicyChanged EventType = "policy.changed"
	// EvWebhookChanged records a change of a consumer's webhook.
	EvWebhookChanged EventType = "webhook.changed"
	// EvDeliveryRecorded records one webhook delivery attempt.
	EvDeliveryRecorded EventType = "webhook.delivery_recorded"
)

// The operations of a business, policy or webhook change.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// The execute policy modes (Agent Policy Engine spec §2.1).
const (
	ExecuteModeOpen    = "open"
	ExecuteModeConfirm = "confirm"
	ExecuteModeStrict  = "strict"
)

// The statuses of a transaction.
const (
	TxExecuting           = "executing"
	TxBlocked             = "blocked"
	TxPendingApproval     = "pending_approval"
	TxQueued              = "queued"
	TxCompleted           = "completed"
	TxFailed              = "failed"
	TxPendingConfirmation = "pending_confirmation"
	TxDenied              = "denied"
	TxExpired             = "expired"
)

// The kinds of a notice to the consumer.
const (
	NoticeBlocked       = "blocked"
	NoticeConfirmNeeded = "confirm_needed"
	NoticeQueued        = "queued"
	NoticeLimit80       = "limit_80"
)

// ApprovalKindExecute is the kind of an approval that holds a transaction
// (Approval.TransactionID) until the consumer approves or denies it.
const ApprovalKindExecute = "execute"

// HomeKey is the partition key of a consumer's home partition: the one
// partition that decides every consumer-scoped command (policies,
// webhooks, prepares, executes, outcomes, deliveries), so that one writer
// holds the consumer's ledger.
func HomeKey(consumer string) string { return "consumer/" + consumer }

// BusinessChange is the payload of CmdBusiness: Op is create, update or
// delete (delete reads Business.ID only).
type BusinessChange struct {
	Op       string   `json:"op"`
	Business Business `json:"business"`
}

// Business is one business of the registry.
type Business struct {
	// ID is 1 to 128 characters of [A-Za-z0-9._:-].
	ID   string `json:"id"`
	Name string `json:"name"`
	// Categories are lowercase tokens (at most MaxBusinessCategories).
	Categories []string `json:"categories"`
	// Endpoint is the absolute http(s) URL the adapter POSTs to.
	Endpoint string `json:"endpoint"`
	// Currency is an ISO 4217 code (three upper-case letters).
	Currency string `json:"currency"`
	// Owner is the principal that created it ("*": the admin), set by
	// Decide.
	Owner string `json:"owner"`
}

// ExecuteRequest is the payload of CmdPrepareExecute and CmdExecute.
type ExecuteRequest struct {
	BusinessID string `json:"businessId"`
	// Request is the JSON object sent to the business (at most
	// MaxExecuteRequestBytes).
	Request json.RawMessage `json:"request"`
	// RequestHash is "sha256:" + the hex SHA-256 of the RFC 8785 form of
	// Request, computed by the transport; Decide checks its form.
	RequestHash string `json:"request_hash"`
	// TokenHash is, on a prepare, the SHA-256 hex of the confirmation
	// token the edge minted; on an execute, the SHA-256 hex of the
	// X-Confirmation-Token header ("": the header was absent).
	TokenHash string `json:"token_hash,omitempty"`
	// ReplyTo is the CloudEvent replyto of a Kafka execute, so that the
	// outcome is answered there.
	ReplyTo string `json:"reply_to,omitempty"`
}

// ExecutePrepared is a confirmation token as recorded: its hash and what
// it is bound to.
type ExecutePrepared struct {
	TokenHash   string    `json:"token_hash"`
	BusinessID  string    `json:"business_id"`
	RequestHash string    `json:"request_hash"`
	Summary     string    `json:"summary"`
	Consumer    string    `json:"consumer"`
	AgentID     string    `json:"agent_id"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// Transaction is one execute: its identity, amount and status.
type Transaction struct {
	// ID is "tx_" + 24 hex digits of the SHA-256 of the request identity.
	ID          string   `json:"transaction_id"`
	Consumer    string   `json:"consumer"`
	AgentID     string   `json:"agent_id"`
	BusinessID  string   `json:"business_id"`
	Categories  []string `json:"categories,omitempty"`
	AmountCents int64    `json:"amount_cents"`
	Currency    string   `json:"currency"`
	RequestHash string   `json:"request_hash"`
	// Status is one of the Tx* statuses.
	Status string `json:"status"`
	// CreatedAt is when the execute was decided (the time its amount was
	// reserved against the consumer's rolling totals).
	CreatedAt time.Time `json:"created_at"`
	// DecidedSeq is the seq of the execute.decided event that opened the
	// transaction, whose command holds the request the adapter sends the
	// business (the request itself, up to 64 KiB, is not kept in the
	// state). Only the state's open transactions carry it, never an
	// event (eventTransaction).
	DecidedSeq uint64 `json:"decided_seq,omitempty"`
	// BusinessOwner is the owner of the business when the transaction
	// opened: a business deleted and registered again under the same id
	// by another principal is another business, and the transaction is
	// never sent there (SameBusiness). Like DecidedSeq, only the state's
	// open transactions carry it ("" in states folded before it: any
	// owner then).
	BusinessOwner string `json:"business_owner,omitempty"`
	// PolicyID is the policy that blocked, confirmed or queued it; Limit
	// the human text of the limit hit.
	PolicyID string `json:"policy_id,omitempty"`
	Limit    string `json:"limit,omitempty"`
	// Findings are every policy's verdict that is not pass, shadow
	// policies' included ("would have blocked").
	Findings []policy.Finding `json:"findings,omitempty"`
	// Notices are for the consumer's webhooks.
	Notices    []Notice `json:"notices,omitempty"`
	ApprovalID string   `json:"approval_id,omitempty"`
	// ReleaseAt is when a queued transaction's window opens.
	ReleaseAt *time.Time `json:"release_at,omitempty"`
	// BusinessStatus and Data are the business's answer (completed
	// events); ConfirmationToken a business's pending_confirmation token
	// (the Agent Policy Engine spec §2.6: the business's, not the gate's).
	BusinessStatus    string          `json:"business_status,omitempty"`
	Data              json.RawMessage `json:"data,omitempty"`
	ConfirmationToken string          `json:"confirmation_token,omitempty"`
}

// Notice is one notification to the consumer (the notify runner delivers
// it to the consumer's webhooks).
type Notice struct {
	Kind     string `json:"kind"`
	PolicyID string `json:"policy_id,omitempty"`
	Message  string `json:"message"`
}

// ExecuteOutcome is the payload of CmdExecuteOutcome: the business's
// answer to an executing transaction.
type ExecuteOutcome struct {
	TransactionID     string          `json:"transaction_id"`
	HTTPStatus        int             `json:"http_status,omitempty"`
	Status            string          `json:"status"`
	Data              json.RawMessage `json:"data,omitempty"`
	ConfirmationToken string          `json:"confirmation_token,omitempty"`
	// Error is set when the business call failed (no answer, or an
	// answer that is no outcome).
	Error string `json:"error,omitempty"`
}

// ExecuteTimers is the payload of an execute.timers event: the hashes of
// the confirmation tokens that expired, and the IDs of the queued
// transactions released (now executing) or expired.
type ExecuteTimers struct {
	TokensExpired []string `json:"tokens_expired,omitempty"`
	Released      []string `json:"released,omitempty"`
	Expired       []string `json:"expired,omitempty"`
}

// AuthenticatedAgent marks a consumer-scoped command of an agent as
// authenticated by the gate where the agent lives (its partition), then
// forwarded to the consumer's home partition. Only a gate sets it: no
// decoder of a client's body does.
type AuthenticatedAgent struct {
	AgentID   string `json:"agent_id"`
	Principal string `json:"principal"`
	Partition int32  `json:"partition"`
}

// WebhookChange is the payload of CmdWebhook: Op is create, update or
// delete (delete reads Webhook.ID only).
type WebhookChange struct {
	Op      string  `json:"op"`
	Webhook Webhook `json:"webhook"`
}

// Webhook is one of a consumer's webhooks.
type Webhook struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Events filters the notice kinds delivered (none: all of them).
	Events []string `json:"events,omitempty"`
	// Consumer is the principal it belongs to, set by Decide.
	Consumer string `json:"consumer"`
}

// DeliveryResult is the payload of CmdDelivery: one delivery attempt of a
// notice (the Notice-th notice of the event at Seq) to a webhook.
type DeliveryResult struct {
	WebhookID string `json:"webhook_id"`
	Seq       uint64 `json:"seq"`
	Notice    int    `json:"notice"`
	Attempt   int    `json:"attempt"`
	// Status is delivered, retrying or failed.
	Status     string     `json:"status"`
	HTTPStatus int        `json:"http_status,omitempty"`
	Error      string     `json:"error,omitempty"`
	NextAt     *time.Time `json:"next_at,omitempty"`
}

// ExecuteConfig configures executes through the gate (the Agent Policy
// Engine spec §2.1, §2.3). Config.Execute nil stands for
// DefaultExecuteConfig, so that configurations recorded before it encode
// unchanged.
type ExecuteConfig struct {
	// Mode is open, confirm or strict.
	Mode string `json:"mode"`
	// MaxAmountCents is strict mode's amount ceiling.
	MaxAmountCents int64 `json:"max_amount_cents"`
	// TokenTTL is how long a confirmation token is valid.
	TokenTTL Duration `json:"token_ttl"`
	// ExpiredTokenKept is how long the execute tick keeps a token after
	// its expiry, so that using it answers QWED-EXEC-003 ("Confirmation
	// token expired") rather than QWED-EXEC-002 ("Invalid confirmation
	// token"); then the tick drops it. Zero (configurations recorded
	// before it) drops it at the first tick after its expiry.
	ExpiredTokenKept Duration `json:"expired_token_kept,omitempty"`
}

// DefaultExpiredTokenKept is the ExpiredTokenKept agentgate serve
// records: as long as a token's default TTL.
const DefaultExpiredTokenKept = Duration(5 * time.Minute)

// DefaultExecuteConfig is the configuration when Config.Execute is nil:
// open, a ceiling of 100 cents, tokens valid 5 minutes.
func DefaultExecuteConfig() ExecuteConfig {
	return ExecuteConfig{Mode: ExecuteModeOpen, MaxAmountCents: 100, TokenTTL: Duration(5 * time.Minute)}
}

// ExecuteConfig returns the configuration in force for executes.
func (c *Config) ExecuteConfig() ExecuteConfig {
	if c.Execute == nil {
		return DefaultExecuteConfig()
	}
	return *c.Execute
}

// Bounds of the execute configuration.
const (
	MinExecuteTokenTTL = Duration(time.Second)
	MaxExecuteTokenTTL = Duration(24 * time.Hour)
)

// Validate checks the configuration's bounds: a known mode, a ceiling of
// 0 to MaxExecuteAmountCents, a token TTL of 1s to 24h.
func (c *ExecuteConfig) Validate() *Error {
	switch c.Mode {
	case ExecuteModeOpen, ExecuteModeConfirm, ExecuteModeStrict:
	default:
		return fieldError(CodeInvalidRequest, "config.execute.mode", "must be open, confirm or strict")
	}
	if c.MaxAmountCents < 0 || c.MaxAmountCents > MaxExecuteAmountCents {
		return fieldError(CodeInvalidRequest, "config.execute.max_amount_cents", "must be between 0 and %d", int64(MaxExecuteAmountCents))
	}
	if c.TokenTTL < MinExecuteTokenTTL || c.TokenTTL > MaxExecuteTokenTTL {
		return fieldError(CodeInvalidRequest, "config.execute.token_ttl", "must be between 1s and 24h")
	}
	if c.ExpiredTokenKept < 0 || c.ExpiredTokenKept > MaxExecuteTokenTTL {
		return fieldError(CodeInvalidRequest, "config.execute.expired_token_kept", "must be between 0 and 24h")
	}
	return nil
}

func (c *ExecuteConfig) clone() *ExecuteConfig {
	if c == nil {
		return nil
	}
	x := *c
	return &x
}

// SameBusiness reports whether b, the registry's business of tx's id
// now, is the business tx was decided for: registered, and by the owner
// it had then.
func (tx *Transaction) SameBusiness(b *Business) bool {
	return b != nil && (tx.BusinessOwner == "" || tx.BusinessOwner == b.Owner)
}

// ExecState is the state of the consumer policy engine of a partition.
// Maps are never iterated where order could reach an output.
type ExecState struct {
	// Businesses by ID.
	Businesses map[string]*Business `json:"businesses,omitempty"`
	// Tokens are the confirmation tokens not consumed nor expired, by hash.
	Tokens map[string]*ExecutePrepared `json:"tokens,omitempty"`
	// Open are the transactions executing, pending_approval or queued,
	// by ID.
	Open map[string]*Transaction `json:"open,omitempty"`
	// Consumers by principal.
	Consumers map[string]*ConsumerExec `json:"consumers,omitempty"`
}

// ConsumerExec is the state of one consumer.
type ConsumerExec struct {
	// Tokens counts the consumer's confirmation tokens in ExecState.Tokens,
	// Open its transactions in ExecState.Open.
	Tokens int `json:"tokens,omitempty"`
	Open   int `json:"open,omitempty"`
	// Pairs are the "agent\x00business" pairs that have executed (the
	// first-time-business rule), bounded by MaxSeenPairs.
	Pairs map[string]bool `json:"pairs,omitempty"`
	// Webhooks by ID.
	Webhooks map[string]*Webhook `json:"webhooks,omitempty"`
	// Policies are the consumer's current policies (policies.go; nil
	// until the first change).
	Policies *policy.Set `json:"policies,omitempty"`
	// Ledger is the consumer's rolling spend: what its executing, pending
	// and queued transactions reserved and its completed ones spent.
	Ledger *policy.Ledger `json:"ledger,omitempty"`
}

// Named limits of the consumer policy engine (invariant 7,
// docs/ARCHITECTURE.md).
const (
	// MaxExecuteRequestBytes bounds an execute's request object and a
	// business's answer data.
	MaxExecuteRequestBytes = 64 << 10
	// MaxBusinesses bounds the business registry.
	MaxBusinesses = 100_000
	// MaxBusinessesPerOwner bounds the businesses one principal owns, so
	// one tenant cannot fill the registry every tenant shares (the
	// admin's are bounded by MaxBusinesses alone).
	MaxBusinessesPerOwner = 1000
	// MaxBusinessCategories bounds a business's categories.
	MaxBusinessCategories = 32
	// MaxOpenTokens bounds a consumer's unexpired confirmation tokens.
	MaxOpenTokens = 1024
	// MaxOpenTransactions bounds a consumer's open transactions.
	MaxOpenTransactions = 10_000
	// MaxSeenPairs bounds a consumer's remembered (agent, business) pairs.
	MaxSeenPairs = 10_000
)
