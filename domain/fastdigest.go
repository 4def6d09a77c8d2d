package domain

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/jcs"
)

// The fast path of the request digests.
//
// The general path writes the raw JSON of the fingerprint object and of the
// request body and has jcs parse, sort and re-emit it. Every member of those
// objects but the parameters is a typed field, so the fast path writes their
// RFC 8785 form directly: members in canonical order, strings with the
// canonical escapes, numbers as ECMAScript prints them. Only the raw
// parameters go through jcs, once, and the same canonical bytes serve the
// fingerprint and the request body (RFC 8785 canonicalizes a document
// member by member, so an object written in canonical order around
// canonical values is canonical).
//
// The fast path gives up (ok false) on anything it does not write itself:
// invalid UTF-8, parameters jcs rejects, a step number or an amount outside
// the forms below. The caller then takes the general path, which yields
// the same digests or the same error as before the fast path existed.
// TestFastDigestsMatchGeneralPath and FuzzFastDigests pin the two paths
// against each other.

// fastDigestBuf is the stack space for the canonical fingerprint object and
// request body of a typical request; larger ones grow onto the heap.
const fastDigestBuf = 1024

// paramsOuter is how many containers enclose the parameters in the request
// body ({"action":{"parameters":...}}, {"tool_call":{"parameters":...}});
// the fingerprint object encloses them in one, so a depth the body accepts
// the fingerprint accepts too.
const paramsOuter = 2

// actionDigestsFast computes the digests of a verify_action without
// parsing anything but its parameters; ok is false when the general path
// must decide.
func actionDigestsFast(v *VerifyAction, req RequestID) (digests, string, bool) {
	if len(v.Action.Parameters) == 0 {
		return actionDigestsCanon(v, nil, req)
	}
	sc := getScratch()
	params, err := jcs.AppendTransformNested(sc.canon[:0], v.Action.Parameters, paramsOuter)
	if err != nil {
		putScratch(sc)
		return digests{}, "", false
	}
	d, id, ok := actionDigestsCanon(v, params, req)
	sc.canon = params[:0]
	putScratch(sc)
	return d, id, ok
}

// actionDigestsCanon writes the canonical fingerprint object and body of v
// around the canonical parameters params (nil when absent) and hashes them.
func actionDigestsCanon(v *VerifyAction, params []byte, req RequestID) (digests, string, bool) {
	var buf [fastDigestBuf]byte
	b, ok := buf[:0], true
	a := &v.Action
	b, ok = appendCanonFingerprint(b, a.Type, a.Code, params, a.Query, a.Target, ok)
	fpEnd := len(b)
	// {"action":{code, estimated_cost_usd, estimated_tokens, output,
	// parameters, query, target, type}, "context":{...}, "options":{...}}: every
	// optional action member precedes the mandatory "type".
	b = append(b, `{"action":{`...)
	if a.Code != "" {
		b = append(b, `"code":`...)
		b, ok = appendCanonString(b, a.Code, ok)
		b = append(b, ","...)
	}
	if a.EstimatedCost != 0 {
		b = append(b, `"estimated_cost_usd":`...)
		b, ok = appendCanonUSD(b, a.EstimatedCost, ok)
		b = append(b, ","...)
	}
	if a.EstimatedTokens != 0 {
		b = append(b, `"estimated_tokens":`...)
		b = appendCanonInt(b, a.EstimatedTokens)
		b = append(b, ","...)
	}
	if a.Output != "" {
		b = append(b, `"output":`...)
		b, ok = appendCanonString(b, a.Output, ok)
		b = append(b, ","...)
	}
	if len(params) > 0 {
		b = append(b, `"parameters":`...)
		b = append(b, params...)
		b = append(b, ","...)
	}
	if a.Query != "" {
		b = append(b, `"query":`...)
		b, ok = appendCanonString(b, a.Query, ok)
		b = append(b, ","...)
	}
	if a.Target != "" {
		b = append(b, `"target":`...)
		b, ok = appendCanonString(b, a.Target, ok)
		b = append(b, ","...)
	}
	b = append(b, `"type":`...)
	b, ok = appendCanonString(b, a.Type, ok)
	b = append(b, `},"context":`...)
	b, ok = appendCanonContext(b, &v.Context, ok)
	b = append(b, `,"options":`...)
	b, ok = appendCanonOptions(b, &v.Options, ok)
	b = append(b, "}"...)
	if !ok {
		return digests{}, "", false
	}
	d, id := finishDigests(b[:fpEnd], v.Context.PreActionStateHash, b[fpEnd:], req)
	return d, id, true
}

// toolDigestsFast is actionDigestsFast for a tool call.
func toolDigestsFast(v *VerifyToolCall, req RequestID) (digests, string, bool) {
	if len(v.ToolCall.Parameters) == 0 {
		return toolDigestsCanon(v, nil, req)
	}
	sc := getScratch()
	params, err := jcs.AppendTransformNested(sc.canon[:0], v.ToolCall.Parameters, paramsOuter)
	if err != nil {
		putScratch(sc)
		return digests{}, "", false
	}
	d, id, ok := toolDigestsCanon(v, params, req)
	sc.canon = params[:0]
	putScratch(sc)
	return d, id, ok
}

// toolDigestsCanon is actionDigestsCanon for a tool call.
func toolDigestsCanon(v *VerifyToolCall, params []byte, req RequestID) (digests, string, bool) {
	var buf [fastDigestBuf]byte
	b, ok := buf[:0], true
	t := &v.ToolCall
	b, ok = appendCanonFingerprint(b, string(KindTool), "", params, "", t.ToolName, ok)
	fpEnd := len(b)
	// {"context":{...}, "justification":..., "options":{...},
	// "tool_call":{estimated_cost_usd, estimated_tokens, parameters,
	// tool_name}}: the optional members precede the mandatory ones.
	b = append(b, "{"...)
	if v.Context != nil {
		b = append(b, `"context":`...)
		b, ok = appendCanonContext(b, v.Context, ok)
		b = append(b, ","...)
	}
	if v.Justification != "" {
		b = append(b, `"justification":`...)
		b, ok = appendCanonString(b, v.Justification, ok)
		b = append(b, ","...)
	}
	b = append(b, `"options":`...)
	b, ok = appendCanonOptions(b, &v.Options, ok)
	b = append(b, `,"tool_call":{`...)
	if t.EstimatedCost != 0 {
		b = append(b, `"estimated_cost_usd":`...)
		b, ok = appendCanonUSD(b, t.EstimatedCost, ok)
		b = append(b, ","...)
	}
	if t.EstimatedTokens != 0 {
		b = append(b, `"estimated_tokens":`...)
		b = appendCanonInt(b, t.EstimatedTokens)
		b = append(b, ","...)
	}
	if len(params) > 0 {
		b = append(b, `"parameters":`...)
		b = append(b, params...)
		b = append(b, ","...)
	}
	b = append(b, `"tool_name":`...)
	b, ok = appendCanonString(b, t.ToolName, ok)
	b = append(b, "}}"...)
	if !ok {
		return digests{}, "", false
	}
	d, id := finishDigests(b[:fpEnd], toolStateHash(v), b[fpEnd:], req)
	return d, id, true
}

// The appendCanon functions append RFC 8785 text to b. Those that take ok
// return it false when a value is not in a form they write (the fast path
// then gives up), and pass a false ok through.

// appendCanonFingerprint writes the fingerprint object (its members are
// already in canonical order; empty strings and absent parameters are null).
func appendCanonFingerprint(b []byte, typ, code string, params []byte, query, target string, ok bool) ([]byte, bool) {
	b = append(b, `{"action_type":`...)
	b, ok = appendCanonNullable(b, typ, ok)
	b = append(b, `,"code":`...)
	b, ok = appendCanonNullable(b, code, ok)
	b = append(b, `,"parameters":`...)
	if len(params) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, params...)
	}
	b = append(b, `,"query":`...)
	b, ok = appendCanonNullable(b, query, ok)
	b = append(b, `,"target":`...)
	b, ok = appendCanonNullable(b, target, ok)
	return append(b, '}'), ok
}

// appendCanonContext writes an action context: conversation_id, then the
// optional pre_action_state_hash, state_source, step_number and
// user_intent.
func appendCanonContext(b []byte, c *ActionContext, ok bool) ([]byte, bool) {
	b = append(b, `{"conversation_id":`...)
	b, ok = appendCanonString(b, c.ConversationID, ok)
	if c.PreActionStateHash != "" {
		b = append(b, `,"pre_action_state_hash":`...)
		b, ok = appendCanonString(b, c.PreActionStateHash, ok)
	}
	if c.StateSource != "" {
		b = append(b, `,"state_source":`...)
		b, ok = appendCanonString(b, c.StateSource, ok)
	}
	if c.StepNumber != "" {
		b = append(b, `,"step_number":`...)
		ok = ok && canonicalStep(c.StepNumber)
		b = append(b, c.StepNumber...)
	}
	if c.UserIntent != "" {
		b = append(b, `,"user_intent":`...)
		b, ok = appendCanonString(b, c.UserIntent, ok)
	}
	return append(b, '}'), ok
}

func appendCanonOptions(b []byte, o *Options, ok bool) ([]byte, bool) {
	b = append(b, '{')
	if o.RequireAttestation {
		b = append(b, `"require_attestation":true`...)
		if o.RiskThreshold != "" {
			b = append(b, ',')
		}
	}
	if o.RiskThreshold != "" {
		b = append(b, `"risk_threshold":`...)
		b, ok = appendCanonString(b, o.RiskThreshold, ok)
	}
	return append(b, '}'), ok
}

func appendCanonNullable(b []byte, s string, ok bool) ([]byte, bool) {
	if s == "" {
		return append(b, "null"...), ok
	}
	return appendCanonString(b, s, ok)
}

// canonPlain marks the bytes a canonical string holds as they are without
// a closer look: printable ASCII other than '"' and '\\'.
var canonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendCanonString writes s as an RFC 8785 §3.2.2.2 string: UTF-8 as is,
// except \" \\, \b \f \n \r \t and \u00xx (lowercase hex) for the other
// control characters. Invalid UTF-8 returns ok false (jcs rejects it, and
// the general path reports it).
func appendCanonString(b []byte, s string, ok bool) ([]byte, bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if canonPlain[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				ok = false
			}
			i += n
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), ok
}

// appendCanonInt writes v as jcs writes the decimal text of an int64: the
// digits themselves when exact in a double (up to 2^53 in magnitude), else
// the double nearest to v (Go's int64 to float64 conversion rounds to
// nearest even, as parsing does).
func appendCanonInt(b []byte, v int64) []byte {
	if -maxSafeInteger <= v && v <= maxSafeInteger {
		return strconv.AppendInt(b, v, 10)
	}
	return jcs.AppendNumber(b, float64(v))
}

// appendCanonUSD writes a positive amount of at most maxUSD as jcs writes
// the text of USD.String: that decimal has at most 15 significant digits
// (maxUSD is 10^15 micro-dollars), so the nearest double prints back as the
// same digits, in plain notation since 10^-6 <= u <= 10^9. Other amounts
// return ok false.
func appendCanonUSD(b []byte, u USD, ok bool) ([]byte, bool) {
	if u <= 0 || u > maxUSD {
		return b, false
	}
	v := int64(u)
	b = strconv.AppendInt(b, v/MicrosPerUSD, 10)
	frac := v % MicrosPerUSD
	if frac == 0 {
		return b, ok
	}
	var f [7]byte
	f[0] = '.'
	for i := 6; i >= 1; i-- {
		f[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := len(f)
	for f[n-1] == '0' {
		n--
	}
	return append(b, f[:n]...), ok
}

// canonicalStep reports whether a step number's text is its own RFC 8785
// form: "0", or digits without a leading zero whose value is at most 2^53.
func canonicalStep(n json.Number) bool {
	s := string(n)
	if s == "" || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if s[0] == '0' {
		return len(s) == 1
	}
	if len(s) == 16 {
		v, err := strconv.ParseInt(s, 10, 64)
		return err == nil && v <= maxSafeInteger
	}
	return true
}
