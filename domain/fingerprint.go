package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/agentgate/agentgate/domain/jcs"
)

// Fingerprints and request digests (QWED-Agent spec v1.1 §9.3;
// docs/ARCHITECTURE.md, "Where the specifications disagree").
//
// The raw JSON of the hashed objects is written here and canonicalized by
// jcs (RFC 8785); only the canonical bytes are hashed, so the digests do not
// depend on how the raw text was written.
//
// The action fingerprint is the hex SHA-256 of the RFC 8785 form of
//
//	{"action_type":T,"code":C,"parameters":P,"query":Q,"target":G}
//
// with every member always present: a missing or empty string and missing
// parameters are null. A tool call with a context is fingerprinted with the
// same object: action_type "tool_call", target the tool name, query and
// code null.
//
// The LOOP-004 state fingerprint is the hex SHA-256 of the canonical bytes
// of the action fingerprint object immediately followed by the 64 hex digits
// of pre_action_state_hash (the object ends in '}', so the concatenation is
// unambiguous).

// digests is the result of hashing one request.
type digests struct {
	fingerprint      string
	stateFingerprint string
	request          string
}

// scratch holds the buffers of one hashing: the raw fingerprint object, the
// raw request body and the canonical form. They are pooled: jcs keeps its
// arguments reachable from its own pool, so stack buffers would escape.
type scratch struct {
	fp, body, canon []byte
}

// maxScratch caps the buffer capacity kept in the pool.
const maxScratch = 64 << 10

var scratchPool = sync.Pool{New: func() any {
	return &scratch{fp: make([]byte, 0, 512), body: make([]byte, 0, 1024), canon: make([]byte, 0, 1024)}
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	if cap(sc.fp) > maxScratch || cap(sc.body) > maxScratch || cap(sc.canon) > maxScratch {
		return
	}
	scratchPool.Put(sc)
}

// computeDigests is the general path: it canonicalizes the raw
// fingerprint object and the raw request body held in sc with jcs, then
// hashes them (finishDigests). An error names the JSON fault (it comes from
// jcs).
func computeDigests(sc *scratch, stateHash string, req RequestID) (digests, string, error) {
	canon, err := jcs.AppendTransform(sc.canon[:0], sc.fp)
	if err != nil {
		return digests{}, "", err
	}
	fpEnd := len(canon)
	canon, err = jcs.AppendTransform(canon, sc.body)
	if err != nil {
		sc.canon = canon[:0]
		return digests{}, "", err
	}
	sc.canon = canon[:0]
	d, id := finishDigests(canon[:fpEnd], stateHash, canon[fpEnd:], req)
	return d, id, nil
}

// finishDigests hashes the canonical fingerprint object fp (and, with a
// state hash, the state fingerprint: fp followed by stateHash, hashed by
// continuing fp's SHA-256 state) and the canonical request body, and derives
// the action ID of req. The hex digests and the ID share one allocation.
func finishDigests(fp []byte, stateHash string, body []byte, req RequestID) (digests, string) {
	var d digests
	var hexes [3*2*sha256.Size + len("act_") + actionIDHexLen]byte
	var sum [sha256.Size]byte
	n := 0
	h := sha256.New()
	h.Write(fp)
	h.Sum(sum[:0])
	hex.Encode(hexes[n:], sum[:])
	n += 2 * sha256.Size
	hasState := stateHash != ""
	if hasState {
		var sh [2 * sha256.Size]byte
		if len(stateHash) <= len(sh) {
			h.Write(sh[:copy(sh[:], stateHash)])
		} else {
			h.Write([]byte(stateHash))
		}
		h.Sum(sum[:0])
		hex.Encode(hexes[n:], sum[:])
		n += 2 * sha256.Size
	}
	sum = sha256.Sum256(body)
	hex.Encode(hexes[n:], sum[:])
	n += 2 * sha256.Size
	idStart := n
	n += copy(hexes[n:], "act_")
	id := requestDigest(idKindAction, req)
	hex.Encode(hexes[n:], id[:actionIDHexLen/2])
	n += actionIDHexLen
	all := string(hexes[:n])
	const w = 2 * sha256.Size
	d.fingerprint = all[:w]
	if hasState {
		d.stateFingerprint = all[w : 2*w]
		d.request = all[2*w : 3*w]
	} else {
		d.request = all[w : 2*w]
	}
	return d, all[idStart:]
}

// actionDigests hashes a verify_action: by the fast path when it applies,
// else by the general path, which gives the same digests or names the fault.
func actionDigests(v *VerifyAction, req RequestID) (digests, string, error) {
	if d, id, ok := actionDigestsFast(v, req); ok {
		return d, id, nil
	}
	return actionDigestsGeneral(v, req)
}

// actionDigestsGeneral writes the raw fingerprint object and request body
// and canonicalizes them with jcs.
func actionDigestsGeneral(v *VerifyAction, req RequestID) (digests, string, error) {
	sc := getScratch()
	sc.fp = appendFingerprintObject(sc.fp[:0], v.Action.Type, v.Action.Query, v.Action.Code, v.Action.Target, v.Action.Parameters)
	sc.body = appendVerifyBody(sc.body[:0], v)
	d, id, err := computeDigests(sc, v.Context.PreActionStateHash, req)
	putScratch(sc)
	return d, id, err
}

// toolDigests hashes a tool call like actionDigests.
func toolDigests(v *VerifyToolCall, req RequestID) (digests, string, error) {
	if d, id, ok := toolDigestsFast(v, req); ok {
		return d, id, nil
	}
	return toolDigestsGeneral(v, req)
}

func toolDigestsGeneral(v *VerifyToolCall, req RequestID) (digests, string, error) {
	sc := getScratch()
	sc.fp = appendFingerprintObject(sc.fp[:0], string(KindTool), "", "", v.ToolCall.ToolName, v.ToolCall.Parameters)
	sc.body = appendToolBody(sc.body[:0], v)
	d, id, err := computeDigests(sc, toolStateHash(v), req)
	putScratch(sc)
	return d, id, err
}

func toolStateHash(v *VerifyToolCall) string {
	if v.Context == nil {
		return ""
	}
	return v.Context.PreActionStateHash
}

// appendFingerprintObject writes the raw fingerprint object.
func appendFingerprintObject(dst []byte, typ, query, code, target string, params json.RawMessage) []byte {
	dst = append(dst, `{"action_type":`...)
	dst = appendNullableString(dst, typ)
	dst = append(dst, `,"code":`...)
	dst = appendNullableString(dst, code)
	dst = append(dst, `,"parameters":`...)
	if len(params) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, params...)
	}
	dst = append(dst, `,"query":`...)
	dst = appendNullableString(dst, query)
	dst = append(dst, `,"target":`...)
	dst = appendNullableString(dst, target)
	return append(dst, '}')
}

// appendVerifyBody writes the JSON of a VerifyAction body exactly as
// encoding/json would (same members, same omitempty rules), without its
// reflection cost. A test pins the equivalence.
func appendVerifyBody(dst []byte, v *VerifyAction) []byte {
	dst = append(dst, `{"action":`...)
	dst = appendAction(dst, &v.Action)
	dst = append(dst, `,"context":`...)
	dst = appendContext(dst, &v.Context)
	dst = append(dst, `,"options":`...)
	dst = appendOptions(dst, &v.Options)
	return append(dst, '}')
}

// appendToolBody writes the JSON of a VerifyToolCall body as encoding/json would.
func appendToolBody(dst []byte, v *VerifyToolCall) []byte {
	dst = append(dst, `{"tool_call":{"tool_name":`...)
	dst = appendString(dst, v.ToolCall.ToolName)
	if len(v.ToolCall.Parameters) > 0 {
		dst = append(dst, `,"parameters":`...)
		dst = append(dst, v.ToolCall.Parameters...)
	}
	if v.ToolCall.EstimatedCost != 0 {
		dst = append(dst, `,"estimated_cost_usd":`...)
		dst = append(dst, v.ToolCall.EstimatedCost.String()...)
	}
	if v.ToolCall.EstimatedTokens != 0 {
		dst = append(dst, `,"estimated_tokens":`...)
		dst = strconv.AppendInt(dst, v.ToolCall.EstimatedTokens, 10)
	}
	dst = append(dst, '}')
	if v.Justification != "" {
		dst = append(dst, `,"justification":`...)
		dst = appendString(dst, v.Justification)
	}
	if v.Context != nil {
		dst = append(dst, `,"context":`...)
		dst = appendContext(dst, v.Context)
	}
	dst = append(dst, `,"options":`...)
	dst = appendOptions(dst, &v.Options)
	return append(dst, '}')
}

func appendAction(dst []byte, a *Action) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, a.Type)
	dst = appendOptString(dst, `,"query":`, a.Query)
	dst = appendOptString(dst, `,"code":`, a.Code)
	dst = appendOptString(dst, `,"target":`, a.Target)
	dst = appendOptString(dst, `,"output":`, a.Output)
	if len(a.Parameters) > 0 {
		dst = append(dst, `,"parameters":`...)
		dst = append(dst, a.Parameters...)
	}
	if a.EstimatedCost != 0 {
		dst = append(dst, `,"estimated_cost_usd":`...)
		dst = append(dst, a.EstimatedCost.String()...)
	}
	if a.EstimatedTokens != 0 {
		dst = append(dst, `,"estimated_tokens":`...)
		dst = strconv.AppendInt(dst, a.EstimatedTokens, 10)
	}
	return append(dst, '}')
}

func appendContext(dst []byte, c *ActionContext) []byte {
	dst = append(dst, `{"conversation_id":`...)
	dst = appendString(dst, c.ConversationID)
	if c.StepNumber != "" {
		dst = append(dst, `,"step_number":`...)
		dst = append(dst, c.StepNumber...)
	}
	dst = appendOptString(dst, `,"user_intent":`, c.UserIntent)
	dst = appendOptString(dst, `,"pre_action_state_hash":`, c.PreActionStateHash)
	dst = appendOptString(dst, `,"state_source":`, c.StateSource)
	return append(dst, '}')
}

func appendOptions(dst []byte, o *Options) []byte {
	dst = append(dst, '{')
	if o.RequireAttestation {
		dst = append(dst, `"require_attestation":true`...)
	}
	if o.RiskThreshold != "" {
		if o.RequireAttestation {
			dst = append(dst, ',')
		}
		dst = append(dst, `"risk_threshold":`...)
		dst = appendString(dst, o.RiskThreshold)
	}
	return append(dst, '}')
}

func appendOptString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendString(dst, s)
}

func appendNullableString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Quotes, backslashes and control
// characters are escaped; invalid UTF-8 is written through unchanged so
// that jcs rejects it (the fault is reported, never silently repaired).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
