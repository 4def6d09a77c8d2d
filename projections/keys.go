package projections

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Key layout. Every key starts with a one-byte table prefix; string
// components are length-prefixed (uint16 big-endian) so that any string,
// including one holding NUL bytes, is one component and prefix scans by a
// leading component are exact.
const (
	tMeta        = 'm' // m + "ckpt" | "gate" | "a2a"
	tAgent       = 'a' // a + agent
	tConv        = 'c' // c + agent + conversation -> binary (codec.go)
	tPrincipal   = 'p' // p + principal
	tKey         = 'k' // k + key hash -> principal
	tKeyID       = 'i' // i + key id -> key hash
	tApproval    = 'o' // o + approval id
	tPrincipalAp = 'q' // q + principal + approval id -> ""
	tActivity    = 'v' // v + agent + time(8) + seq(8) -> binary (codec.go)
	tActionIdx   = 'x' // x + action id -> activity key (none in a store without activities)
	tSummary     = 's' // s + agent + day(8)
	tRequest     = 'r' // r + source + id [+ scope] -> seq(8) (requestKey)
	tOpen        = 'n' // n + agent + seq(8) of the deciding event (domain.OpenAction.Seq) -> binary (codec.go)
	tRetired     = 'e' // e + agent + conversation -> last committed step(8) of a conversation evicted from the state
	tA2ACount    = 'w' // w + boundary -> A2ACounts (JSON); the gate's are m + "a2a"
	tA2ABound    = 'b' // b + boundary + kind + entry -> "" (a2astate.go)
	tA2ABucket   = 'u' // u + boundary + sender 0x00 receiver -> domain.A2ABucket (JSON)
	tA2APair     = 'y' // y + boundary + sender 0x00 receiver -> StatusCounts (JSON), at most MaxA2APairsPerPrincipal per boundary
)

// requestKey is the request index key of r: an unscoped request (logs
// written before request scopes) keeps the key it had.
func requestKey(r domain.RequestID) []byte {
	if r.Scope == "" {
		return key(tRequest, r.Source, r.ID)
	}
	return key(tRequest, r.Source, r.ID, r.Scope)
}

func appendStr(b []byte, s string) []byte {
	if len(s) > maxKeyPart {
		// A component too long for its length prefix is replaced by its
		// digest: still one deterministic, collision-resistant component.
		h := sha256.Sum256([]byte(s))
		s = "sha256:" + hex.EncodeToString(h[:])
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func key(table byte, parts ...string) []byte {
	n := 1
	for _, p := range parts {
		n += 2 + len(p)
	}
	b := make([]byte, 0, n+16)
	b = append(b, table)
	for _, p := range parts {
		b = appendStr(b, p)
	}
	return b
}

func activityKey(agent string, at time.Time, seq uint64) []byte {
	b := key(tActivity, agent)
	b = binary.BigEndian.AppendUint64(b, uint64(at.UnixNano()))
	return binary.BigEndian.AppendUint64(b, seq)
}

// openKey is the key of an open action, decided by the event at seq: an
// agent's open actions sort in the order they were opened (its OpenOrder).
func openKey(agent string, seq uint64) []byte {
	return appendOpenKey(make([]byte, 0, 11+len(agent)), agent, seq)
}

// appendOpenKey appends openKey(agent, seq) to b.
func appendOpenKey(b []byte, agent string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(appendStr(append(b, tOpen), agent), seq)
}

func summaryKey(agent string, day int64) []byte {
	return binary.BigEndian.AppendUint64(key(tSummary, agent), uint64(day))
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// dayOf returns the UTC day number of t (days since the Unix epoch).
func dayOf(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return d
}

// maxKeyPart bounds a key component (uint16 length prefix).
const maxKeyPart = 1<<16 - 1
