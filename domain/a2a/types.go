package a2a

import (
	"encoding/json"
	"time"
)

// PayloadType is what an AgentMessage carries; it routes the message to a
// guard (QWED A2A "Engine" stage).
type PayloadType string

// The payload types of QWED A2A.
const (
	PayloadFinancial PayloadType = "financial_transaction"
	PayloadLogic     PayloadType = "logic_assertion"
	PayloadCode      PayloadType = "code_execution"
	PayloadDataQuery PayloadType = "data_query"
	PayloadGeneral   PayloadType = "general"
)

// Message is the AgentMessage of QWED A2A: one payload from a sender agent
// to a receiver agent. It is recorded in the command that carries it, so
// Payload is kept as the JSON object it arrived as (validated, never
// re-encoded: its digest is that of its RFC 8785 canonical form).
type Message struct {
	SenderAgentID   string      `json:"sender_agent_id"`
	ReceiverAgentID string      `json:"receiver_agent_id"`
	PayloadType     PayloadType `json:"payload_type"`
	// Payload is a JSON object.
	Payload json.RawMessage `json:"payload"`
	// Timestamp is an RFC 3339 time set by the sender, "" when absent. It
	// is recorded, never used as the decision time.
	Timestamp string `json:"timestamp,omitempty"`
	// TraceID names the verdict (the attestation's jti); "" when absent,
	// then the gate derives one from the request id.
	TraceID string `json:"trace_id,omitempty"`
}

// Status is a verdict's outcome.
type Status string

// The verdict statuses of QWED A2A.
const (
	StatusForwarded   Status = "forwarded"
	StatusBlocked     Status = "blocked"
	StatusRateLimited Status = "rate_limited"
	StatusError       Status = "error"
)

// The engine names a verdict reports in engine_used.
const (
	EngineBypass      = "bypass"
	EnginePassthrough = "passthrough"
	EngineFinance     = "finance_guard"
	EngineLogic       = "logic_guard"
	EngineCode        = "code_guard"
	// EngineTrust is the engine of a verdict the trust boundary gave
	// (blocked or rate limited before any guard ran).
	EngineTrust = "trust_boundary"
)

// Claims are what a verdict's attestation binds (QWED A2A "Attestations"):
// the signer adds the issuer (a DID of the gate), iat, exp and the typ
// header. Equal claims sign to equal tokens (deterministic ES256).
type Claims struct {
	// Subject is "sha256:" + the hex SHA-256 of the RFC 8785 form of the
	// message's payload.
	Subject string
	// TraceID is the jti.
	TraceID string
	// IssuedAt is the decision time (the event's time).
	IssuedAt time.Time
	Verdict  Status
	Engine   string
	Sender   string
	Receiver string
}

// Signer signs a verdict's attestation. An error means no attestation can
// be issued, and the verdict is then an error (fail closed: no verdict is
// ever returned unsigned).
type Signer interface {
	SignA2A(c Claims) (string, error)
}
