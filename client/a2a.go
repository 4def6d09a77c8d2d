package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// Wire names of the forwarded topic (agentgate.a2a.forwarded), for the
// receivers' consumers.
const (
	// DefaultForwardedTopic is the topic of forwarded A2A messages.
	DefaultForwardedTopic = "agentgate.a2a.forwarded"
	// ForwardedType is the CloudEvent type of a forwarded message.
	ForwardedType = kafkaout.ForwardedType
	// HeaderA2AStatus, HeaderA2AEngine, HeaderA2ATraceID,
	// HeaderA2AAttestation and HeaderA2ASender carry the verdict of a
	// forwarded message (HeaderA2AShadow "true" in shadow mode); HeaderEventsPartition and HeaderEventsSeq the
	// verdict's place in the log (drop repeats by them).
	HeaderA2AStatus       = kafkaout.HeaderA2AStatus
	HeaderA2AEngine       = kafkaout.HeaderA2AEngine
	HeaderA2ATraceID      = kafkaout.HeaderA2ATraceID
	HeaderA2AAttestation  = kafkaout.HeaderA2AAttestation
	HeaderA2ASender       = kafkaout.HeaderA2ASender
	HeaderA2AShadow       = kafkaout.HeaderA2AShadow
	HeaderEventsPartition = kafkaout.HeaderEventsPartition
	HeaderEventsSeq       = kafkaout.HeaderEventsSeq
	// HeaderAgentToken carries an agent token ("Bearer <token>").
	HeaderAgentToken = kafkaout.HeaderAgentToken
)

// A2A is one AgentMessage (QWED A2A) to send through the gate, with its
// credentials: a principal's API key (checked against that principal's
// trust boundary; the admin key: the gate-wide one) or the sender agent's
// token (then Message.SenderAgentID must be that agent).
type A2A struct {
	Message    a2a.Message
	APIKey     string
	AgentToken string
	// ID is the CloudEvent id; "" draws a random one. A resend with the
	// same ID and credentials gets the recorded verdict again.
	ID string
}

// A2AMessage returns the qwed.a2a.message command of m, keyed by its
// sender (for Publish, PublishBatch or Request).
func A2AMessage(m A2A) Command {
	var data any = m.Message
	if b, err := kafkaout.MarshalA2A(m.Message); err == nil {
		data = b // unescaped: "<" stays one byte (encoding/json's default makes it six)
	}
	return Command{Type: domain.CmdA2AMessage, ID: m.ID, AgentID: m.Message.SenderAgentID, Data: data,
		APIKey: m.APIKey, AgentToken: m.AgentToken}
}

// A2ABoundary returns the qwed.a2a.boundary command changing the trust
// boundary of apiKey's principal (the admin key: the gate-wide boundary).
// The gate records it on every partition.
func A2ABoundary(apiKey string, change domain.A2ABoundaryChange) Command {
	return Command{Type: domain.CmdA2ABoundary, APIKey: apiKey, Data: change}
}

// Verdict is the gate's verdict on an AgentMessage (QWED A2A "Verdict + JWT"),
// as POST /a2a/intercept answers it.
type Verdict struct {
	// Status is forwarded, blocked, rate_limited or error.
	Status a2a.Status `json:"status"`
	Reason string     `json:"reason"`
	// Engine is the engine that gave the verdict (finance_guard,
	// logic_guard, code_guard, passthrough, bypass, trust_boundary).
	Engine string `json:"engine_used"`
	// Attestation is the verdict's ES256 JWT (verifiable offline against
	// the gate's JWKS).
	Attestation string    `json:"attestation_jwt"`
	TraceID     string    `json:"trace_id"`
	VerifiedAt  time.Time `json:"verified_at"`
	// Details are the guard's findings (claimed and computed totals,
	// contradictions, patterns, ...), as a JSON object.
	Details json.RawMessage `json:"details"`
	// RetryAfter is, on a rate-limited verdict, when the sender may
	// retry.
	RetryAfter time.Duration `json:"-"`
}

// Forwarded reports whether the message was forwarded to its receiver.
func (v *Verdict) Forwarded() bool { return v.Status == a2a.StatusForwarded }

// Error is a refusal of the gate: the request was not decided (malformed
// message, bad credentials, the gate unavailable). Code is the catalogue's
// (docs/errors.md), Status the HTTP status the same refusal has on HTTP.
type Error struct {
	Status  int
	Code    domain.Code
	Message string
	Details domain.Details
}

func (e *Error) Error() string {
	return fmt.Sprintf("agentgate refused the request (%d %s): %s", e.Status, e.Code, e.Message)
}

// Intercept sends m for a verdict and waits for it. A verdict of any
// status (forwarded, blocked, rate_limited, error) is returned with a nil
// error; a refused request returns an *Error carrying its code; no reply
// in time returns ErrTimeout (resend with the same ID).
func (c *Client) Intercept(ctx context.Context, m A2A) (*Verdict, error) {
	rep, err := c.Request(ctx, A2AMessage(m))
	if err != nil {
		return nil, err
	}
	return ParseVerdict(rep)
}

// PublishA2A sends m without waiting (async): its verdict appears on the
// decisions topic, and, forwarded, the message on the forwarded topic.
func (c *Client) PublishA2A(ctx context.Context, m A2A) (domain.RequestID, error) {
	return c.Publish(ctx, A2AMessage(m))
}

// ParseVerdict decodes the reply to a qwed.a2a.message: the verdict, or
// the *Error of a refusal.
func ParseVerdict(rep *Reply) (*Verdict, error) {
	var probe struct {
		Status json.RawMessage `json:"status"`
		Error  *domain.Error   `json:"error"`
	}
	if err := json.Unmarshal(rep.Data, &probe); err != nil {
		return nil, fmt.Errorf("decoding the verdict: %w", err)
	}
	if probe.Error != nil || probe.Status == nil {
		e := &Error{Status: rep.Status, Code: domain.CodeInternal, Message: "the gate answered neither a verdict nor an error"}
		if probe.Error != nil {
			e.Code, e.Message, e.Details = probe.Error.Code, probe.Error.Message, probe.Error.Details
		}
		return nil, e
	}
	v := new(Verdict)
	if err := json.Unmarshal(rep.Data, v); err != nil {
		return nil, fmt.Errorf("decoding the verdict: %w", err)
	}
	v.RetryAfter = rep.RetryAfter
	return v, nil
}

// ErrorCode returns the code of a refusal (*Error) in err's chain, "" for
// none.
func ErrorCode(err error) domain.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
