package a2a

import "github.com/agentgate/agentgate/domain/jcs"

// The limits of an AgentMessage (stage 0). Each is named in README.md's
// "Limits" table.
const (
	// DefaultMaxPayloadBytes bounds the JSON text of a message's payload
	// when the configuration names no max_payload_size_bytes (QWED A2A's
	// default, 1 MiB).
	DefaultMaxPayloadBytes = 1 << 20
	// MaxEnvelopeBytes is how much longer than its payload bound a whole
	// AgentMessage may be: room for the other members, escaped.
	MaxEnvelopeBytes = 16 << 10
	// MaxAgentIDChars bounds sender_agent_id and receiver_agent_id (QWED
	// A2A: 1 to 256 characters).
	MaxAgentIDChars = 256
	// MaxTraceIDBytes bounds trace_id (printable ASCII, no space).
	MaxTraceIDBytes = 128
	// MaxTimestampBytes bounds timestamp (an RFC 3339 time).
	MaxTimestampBytes = 64
	// MaxPayloadDepth bounds the nesting of arrays and objects in a
	// payload, the payload object itself counted: its digest is the
	// SHA-256 of its RFC 8785 form, which nests at most this deep.
	MaxPayloadDepth = jcs.MaxDepth
)

// The limits of the guards' payloads. A payload over one of them is an
// input problem (QWED-REQ-004), refused before any arithmetic or scan.
const (
	// MaxLineItems bounds data.line_items of a financial payload.
	MaxLineItems = 10_000
	// MaxNumberBytes bounds the text of one amount, quantity or
	// claimed_total.
	MaxNumberBytes = 64
	// MaxAmountDigits bounds the integer digits of an amount and of
	// claimed_total: |x| < 10^15.
	MaxAmountDigits = 15
	// MaxQuantityDigits bounds the integer digits of a quantity: 0 <= q <
	// 10^9.
	MaxQuantityDigits = 9
	// MaxScale bounds the decimal places of an amount, a quantity or
	// claimed_total (trailing zeros not counted).
	MaxScale = 18
	// MaxAssertions bounds assertions of a logic payload.
	MaxAssertions = 10_000
	// MaxClaimBytes bounds one assertion's claim.
	MaxClaimBytes = 4 << 10
	// MaxCodeBytes bounds a code payload's code (the query limit of QWED
	// protocol v1.0 §5.1).
	MaxCodeBytes = 100_000
	// MaxDSLBytes bounds a logic payload's dsl.
	MaxDSLBytes = 100_000
)
