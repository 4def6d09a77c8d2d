package a2a

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
)

// DigestPrefix starts every payload digest.
const DigestPrefix = "sha256:"

// digestLen is the length of a payload digest.
const digestLen = len(DigestPrefix) + 2*sha256.Size

// canonBufs holds scratch buffers for canonical forms, so that a digest
// allocates only its result.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledCanon bounds the buffers kept in canonBufs.
const maxPooledCanon = 64 << 10

// PayloadDigest returns "sha256:" and the lowercase hex SHA-256 of the RFC
// 8785 canonical form of payload: the attestation's sub and the verdict's
// payload_digest (QWED A2A "Attestations"), equal for payloads that differ
// only in white space, member order or number spelling. It fails, with
// the problem Validate reports, on what Validate refuses in a payload
// (not a JSON object, no canonical form, nesting too deep), except the
// size bound, which is the configuration's: the digest is a function of
// the payload alone.
func PayloadDigest(payload json.RawMessage) (string, error) {
	d, p := digest(payload, len(payload))
	if p != nil {
		return "", p
	}
	return d, nil
}

// ValidateDigest is Validate followed by PayloadDigest, with the payload
// canonicalized once: the digest when the message is valid, else the
// first problem.
func ValidateDigest(m *Message, maxPayload int) (string, *Problem) {
	if p := checkAgentID("sender_agent_id", m.SenderAgentID); p != nil {
		return "", p
	}
	if p := checkAgentID("receiver_agent_id", m.ReceiverAgentID); p != nil {
		return "", p
	}
	if p := checkPayloadType(m.PayloadType); p != nil {
		return "", p
	}
	d, p := digest(m.Payload, maxPayload)
	if p != nil {
		return "", p
	}
	if p := checkTimestamp(m.Timestamp); p != nil {
		return "", p
	}
	if p := checkTraceID(m.TraceID); p != nil {
		return "", p
	}
	return d, nil
}

// IsDigest reports whether s has the shape of a payload digest: "sha256:"
// and 64 lowercase hex digits.
func IsDigest(s string) bool {
	if len(s) != digestLen || s[:len(DigestPrefix)] != DigestPrefix {
		return false
	}
	for i := len(DigestPrefix); i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidateDigested is ValidateDigest of a message whose digest the
// gate's transport already computed (DecodeDigest): every rule of
// Validate but the payload's canonical form (RFC 8785: its syntax,
// numbers, UTF-8, repeated names, depth), which that digest witnesses, as
// a digest exists only for a payload whose canonical form was built. The
// payload's size bound, the configuration's, is checked again. It returns
// the first problem in Validate's order. The caller checks the digest's
// shape (IsDigest).
func ValidateDigested(m *Message, maxPayload int) *Problem {
	if p := checkAgentID("sender_agent_id", m.SenderAgentID); p != nil {
		return p
	}
	if p := checkAgentID("receiver_agent_id", m.ReceiverAgentID); p != nil {
		return p
	}
	if p := checkPayloadType(m.PayloadType); p != nil {
		return p
	}
	if p := checkPayloadBounds(m.Payload, maxPayload); p != nil {
		return p
	}
	if p := checkTimestamp(m.Timestamp); p != nil {
		return p
	}
	return checkTraceID(m.TraceID)
}

func digest(payload json.RawMessage, maxPayload int) (string, *Problem) {
	bp := canonBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	p := checkPayload(payload, maxPayload, &buf)
	var out [digestLen]byte
	if p == nil {
		sum := sha256.Sum256(buf)
		copy(out[:], DigestPrefix)
		hex.Encode(out[len(DigestPrefix):], sum[:])
	}
	if cap(buf) <= maxPooledCanon {
		*bp = buf[:0]
		canonBufs.Put(bp)
	}
	if p != nil {
		return "", p
	}
	return string(out[:]), nil
}
