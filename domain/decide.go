package domain

import "time"

// Signer signs attestation claims. Implementations must be deterministic
// (RFC 6979): the same claims and key give the same token, so that a
// re-decided command reproduces its attestation byte for byte.
type Signer interface {
	Sign(claims AttestationClaims) (string, error)
}

// AttestationClaims bind a decision to its request (invariant 1 of
// docs/ARCHITECTURE.md: a replayed attestation is byte-identical).
type AttestationClaims struct {
	// Subject is the agent DID; Decision, ActionID, RequestDigest,
	// ConversationID, Step, Seq and Partition bind the decision to the
	// request and to its log position.
	Subject        string    `json:"sub"`
	ActionID       string    `json:"jti"`
	IssuedAt       time.Time `json:"-"`
	Decision       Decision  `json:"decision"`
	RequestDigest  string    `json:"request_digest"`
	AgentID        string    `json:"agent_id"`
	ConversationID string    `json:"conversation_id,omitempty"`
	Step           int64     `json:"step,omitempty"`
	Seq            uint64    `json:"seq"`
	Partition      int32     `json:"partition"`
	Risk           Risk      `json:"risk_level"`
	// Kind, Engine, Status, OutcomeDigest and CorrectedDigest bind an
	// engine's verdict (issue 4): Kind is "" for a gate decision and
	// "qwed.verify" for a POST /verify answer; OutcomeDigest is the hex
	// SHA-256 of the RFC 8785 form of the engine's outcome, CorrectedDigest
	// that of a CORRECTED decision's corrected action. They are empty when
	// no engine verdict was involved.
	Kind            string `json:"kind,omitempty"`
	Engine          string `json:"engine,omitempty"`
	Status          string `json:"status,omitempty"`
	OutcomeDigest   string `json:"outcome_digest,omitempty"`
	CorrectedDigest string `json:"corrected_digest,omitempty"`
}

// Env is what Decide receives from the outside world.
type Env struct {
	// Now is the decision time, chosen by the worker (never earlier than
	// State.LastTime).
	Now time.Time
	// Seq and Partition are the log position the event will take.
	Seq       uint64
	Partition int32
	// Signer signs attestations; nil means attestations cannot be issued
	// (a decision that needs one is then denied: fail closed).
	Signer Signer
	// RetiredStep returns the last step committed in a conversation that
	// an earlier decision evicted from the state (ActionDecided.
	// ConversationEvicted, at MaxConversations), so that a step replayed
	// in it is still refused (LOOP-002) though the state forgot it. Its
	// answers must be a function of the log before the event being
	// decided (the worker reads them from the projections and the batches
	// not yet committed; replay from its own fold). A lookup that fails
	// must answer a step no request can exceed (fail closed). Nil: no
	// conversation was ever evicted.
	RetiredStep func(agentID, conversationID string) (lastStep int64, ok bool)
}
