package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// ID derivation. Every identifier the gate mints is derived from the
// request that caused it (RequestID), so that re-deciding a recorded command
// mints the same identifier and a retried request maps onto the record of
// the first attempt.
//
// The digest is SHA-256 over a kind byte (none for agents), the request
// source, a NUL byte and the request id, prefixed by the request's scope
// when it has one. The kind byte keeps the identifier spaces of agents,
// actions and trust requests apart.
const (
	idKindAgent  = 0
	idKindAction = 1
	idKindTrust  = 2
)

// Lengths, in hex digits, of the derived identifiers.
const (
	agentIDHexLen  = 16
	actionIDHexLen = 20
	trustIDHexLen  = 20
)

// requestDigest returns SHA-256 over kind (omitted for agents), source, NUL,
// id; for a scoped request, over 0xFF, kind, the scope's length in decimal,
// ':', the scope, source, NUL, id, so that a scoped request never mints
// another scope's identifiers.
func requestDigest(kind byte, r RequestID) [sha256.Size]byte {
	var buf [256]byte
	b := buf[:0]
	if r.Scope != "" {
		b = append(b, 0xff, kind)
		b = strconv.AppendInt(b, int64(len(r.Scope)), 10)
		b = append(b, ':')
		b = append(b, r.Scope...)
	} else if kind != idKindAgent {
		b = append(b, kind)
	}
	b = append(b, r.Source...)
	b = append(b, 0)
	b = append(b, r.ID...)
	return sha256.Sum256(b)
}

// scopeTokenHexLen is how much of an agent token's hash names its scope
// (128 bits).
const scopeTokenHexLen = 32

// RequestScope returns the scope of a request authenticated with a
// principal's API key ("principal:" + the principal, the admin's "*"
// included) or, without one, with an agent token whose SHA-256 hex is
// tokenHash ("token:" + its first 32 hex digits); "" with neither.
func RequestScope(principal, tokenHash string) string {
	switch {
	case principal != "":
		return "principal:" + principal
	case len(tokenHash) >= scopeTokenHexLen:
		return "token:" + tokenHash[:scopeTokenHexLen]
	case tokenHash != "":
		return "token:" + tokenHash
	}
	return ""
}

func derivedID(prefix string, kind byte, hexLen int, r RequestID) string {
	d := requestDigest(kind, r)
	var buf [40]byte
	n := copy(buf[:], prefix)
	hex.Encode(buf[n:n+hexLen], d[:hexLen/2])
	return string(buf[:n+hexLen])
}

// AgentIDFor returns the agent ID a registration request mints:
// "agent_" + the first 16 hex digits of its digest (requestDigest:
// SHA-256(source NUL id) for an unscoped request).
func AgentIDFor(r RequestID) string {
	return derivedID("agent_", idKindAgent, agentIDHexLen, r)
}

// ActionIDFor returns the action ID a verify request mints: "act_" + the
// first 20 hex digits of its digest (SHA-256(0x01 source NUL id) for an
// unscoped request).
func ActionIDFor(r RequestID) string {
	return derivedID("act_", idKindAction, actionIDHexLen, r)
}

// TrustRequestIDFor returns the ID of a trust elevation request: "trust_" +
// the first 20 hex digits of SHA-256(0x02 source NUL id).
func TrustRequestIDFor(r RequestID) string {
	return derivedID("trust_", idKindTrust, trustIDHexLen, r)
}

// DIDFor returns the DID of an agent (QWED-Agent spec v1.1 §3.4).
func DIDFor(agentID string) string { return "did:qwed:agent:" + agentID }

// isSHA256Hex reports whether s is exactly 64 lowercase hex digits.
func isSHA256Hex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
