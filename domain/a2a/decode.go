package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/jcs"
	"github.com/agentgate/agentgate/domain/strictjson"
)

// wireMessage is an AgentMessage as sent: every member kept raw, so that
// each is checked for its type and value with a message that names it.
type wireMessage struct {
	SenderAgentID   json.RawMessage `json:"sender_agent_id"`
	ReceiverAgentID json.RawMessage `json:"receiver_agent_id"`
	PayloadType     json.RawMessage `json:"payload_type"`
	Payload         json.RawMessage `json:"payload"`
	Timestamp       json.RawMessage `json:"timestamp"`
	TraceID         json.RawMessage `json:"trace_id"`
}

// messageShape is the closed shape of an AgentMessage: strictjson refuses
// unknown members, a member in another case, and a repeated member name
// at any depth (the payload's included).
var messageShape = strictjson.ShapeOf(reflect.TypeFor[wireMessage](), true)

// Decode reads an AgentMessage from its JSON text and validates it (stage
// 0 of QWED A2A): data must be exactly one JSON object with the members of
// Message and no other, none repeated (in any case, at any depth);
// payload_type defaults to general when absent; then Validate's checks
// apply. maxPayload bounds the payload's JSON text in bytes (the
// configuration's max_payload_size_bytes); 0 or less means
// DefaultMaxPayloadBytes. The whole text may be at most MaxEnvelopeBytes
// longer than that.
//
// Decode returns the message (Payload a copy of the payload's text, as
// sent) or the first problem found, never both. Malformed JSON, a member
// of the wrong type or with an invalid value, and an unknown or repeated
// member are QWED-REQ-001; an absent sender, receiver or payload is
// QWED-REQ-002; a message, payload or member over its bound is
// QWED-REQ-004; an unknown payload_type is QWED-REQ-005.
func Decode(data []byte, maxPayload int) (*Message, *Problem) {
	m, _, p := DecodeDigest(data, maxPayload)
	return m, p
}

// DecodeDigest is Decode that also returns the payload's digest
// (PayloadDigest), computed from the canonical form Decode's validation
// builds anyway: the transports record it in the command, so that Decide,
// on the partition's single writer, need not canonicalize the payload
// again. It returns the message and its digest, or the problem.
func DecodeDigest(data []byte, maxPayload int) (*Message, string, *Problem) {
	m, p := decode(data, maxPayload)
	if p != nil {
		return nil, "", p
	}
	d, p := ValidateDigest(m, maxPayload)
	if p != nil {
		return nil, "", p
	}
	return m, d, nil
}

// decode is Decode without Validate.
func decode(data []byte, maxPayload int) (*Message, *Problem) {
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayloadBytes
	}
	if limit := maxPayload + MaxEnvelopeBytes; len(data) > limit {
		return nil, tooLong("", len(data), limit, "bytes")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, problem(CodeInvalidRequest, "", "the message is empty: a JSON object is required")
	}
	if err := strictjson.Check(data, messageShape); err != nil {
		var e *strictjson.Error
		if errors.As(err, &e) && e.Kind != strictjson.KindSyntax {
			return nil, problem(CodeInvalidRequest, e.Path, e.Error())
		}
		return nil, syntaxProblem(data)
	}
	if trimmed[0] != '{' {
		return nil, problem(CodeInvalidRequest, "", "the message must be a JSON object, not "+kindOf(trimmed))
	}
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, syntaxProblem(data)
	}
	m := &Message{PayloadType: PayloadGeneral}
	var p *Problem
	if m.SenderAgentID, p = requiredString("sender_agent_id", w.SenderAgentID); p != nil {
		return nil, p
	}
	if m.ReceiverAgentID, p = requiredString("receiver_agent_id", w.ReceiverAgentID); p != nil {
		return nil, p
	}
	if w.PayloadType != nil {
		var s string
		if s, p = stringValue("payload_type", w.PayloadType); p != nil {
			return nil, p
		}
		m.PayloadType = PayloadType(s)
	}
	if w.Payload == nil {
		return nil, problem(CodeMissingField, "payload", "missing required member payload")
	}
	m.Payload = w.Payload // json.RawMessage's UnmarshalJSON copies
	if optional(w.Timestamp) {
		if m.Timestamp, p = stringValue("timestamp", w.Timestamp); p != nil {
			return nil, p
		}
		if m.Timestamp == "" {
			return nil, problem(CodeInvalidRequest, "timestamp", "timestamp must be an RFC 3339 time, not an empty string")
		}
	}
	if optional(w.TraceID) {
		if m.TraceID, p = stringValue("trace_id", w.TraceID); p != nil {
			return nil, p
		}
	}
	return m, nil
}

// syntaxProblem locates the first syntax fault of data for a QWED-REQ-001
// problem (strictjson and encoding/json agree that there is one).
func syntaxProblem(data []byte) *Problem {
	off := len(data)
	var e *strictjson.Error
	if err := strictjson.Check(data, nil); errors.As(err, &e) {
		off = e.Offset
	}
	p := problem(CodeInvalidRequest, "", "malformed JSON at offset "+strconv.Itoa(off))
	p.Offset = off
	return p
}

// optional reports whether an optional member is present: absent and null
// both mean absent.
func optional(raw json.RawMessage) bool {
	return raw != nil && !bytes.Equal(raw, []byte("null"))
}

func requiredString(field string, raw json.RawMessage) (string, *Problem) {
	if raw == nil {
		return "", problem(CodeMissingField, field, "missing required member "+field)
	}
	return stringValue(field, raw)
}

// stringValue decodes a member that must be a JSON string.
func stringValue(field string, raw json.RawMessage) (string, *Problem) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", problem(CodeInvalidRequest, field, field+" must be a string, not "+kindOf(raw))
	}
	if !utf8.Valid(raw) {
		return "", problem(CodeInvalidRequest, field, field+" is not valid UTF-8")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", problem(CodeInvalidRequest, field, field+" is not a valid JSON string")
	}
	return s, nil
}

// kindOf names the JSON kind of a value by its first byte.
func kindOf(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// Validate checks a message built in Go as Decode checks a decoded one:
//
//   - sender_agent_id and receiver_agent_id: 1 to MaxAgentIDChars
//     characters of valid UTF-8, with no control or format character
//     (Unicode Cc and Cf: C0 and C1 controls, DEL, bidirectional
//     overrides, zero-width characters) and no U+FFFD (what a decoder
//     makes of invalid UTF-8 or an unpaired surrogate escape);
//   - payload_type: one of the five payload types;
//   - payload: a JSON object of at most maxPayload bytes (0 or less:
//     DefaultMaxPayloadBytes) that has an RFC 8785 canonical form (valid
//     UTF-8, no unpaired surrogate, no repeated member name, every number
//     a finite IEEE 754 double, at most MaxPayloadDepth levels deep);
//   - timestamp: "" (absent) or an RFC 3339 time of at most
//     MaxTimestampBytes;
//   - trace_id: "" (absent) or 1 to MaxTraceIDBytes bytes of printable
//     ASCII without space (it is the attestation's jti and a Kafka
//     header).
//
// It returns the first problem in that order, nil when there is none.
func Validate(m *Message, maxPayload int) *Problem {
	if p := checkAgentID("sender_agent_id", m.SenderAgentID); p != nil {
		return p
	}
	if p := checkAgentID("receiver_agent_id", m.ReceiverAgentID); p != nil {
		return p
	}
	if p := checkPayloadType(m.PayloadType); p != nil {
		return p
	}
	if p := checkPayload(m.Payload, maxPayload, nil); p != nil {
		return p
	}
	if p := checkTimestamp(m.Timestamp); p != nil {
		return p
	}
	return checkTraceID(m.TraceID)
}

func checkAgentID(field, s string) *Problem {
	if s == "" {
		return problem(CodeInvalidRequest, field, field+" must be 1 to "+strconv.Itoa(MaxAgentIDChars)+" characters, not empty")
	}
	if !utf8.ValidString(s) {
		return problem(CodeInvalidRequest, field, field+" is not valid UTF-8")
	}
	n := 0
	for i, r := range s {
		n++
		switch {
		case r == utf8.RuneError:
			return problem(CodeInvalidRequest, field, field+" holds U+FFFD at byte "+strconv.Itoa(i)+" (invalid UTF-8 or an unpaired surrogate)")
		case isControl(r):
			return problem(CodeInvalidRequest, field, field+" holds the control character "+strconv.QuoteRuneToASCII(r)+" at byte "+strconv.Itoa(i))
		}
	}
	if n > MaxAgentIDChars {
		return tooLong(field, n, MaxAgentIDChars, "characters")
	}
	return nil
}

// isControl reports whether r is a control or format character (Unicode
// categories Cc and Cf); ASCII, the common case of an agent id, is decided
// without the category tables (its only such characters are Cc: U+0000 to
// U+001F and U+007F).
func isControl(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

func checkPayloadType(t PayloadType) *Problem {
	switch t {
	case PayloadFinancial, PayloadLogic, PayloadCode, PayloadDataQuery, PayloadGeneral:
		return nil
	case "":
		return problem(CodeMissingField, "payload_type", "payload_type is empty: one of financial_transaction, logic_assertion, code_execution, data_query, general is required")
	}
	return problem(CodeUnsupportedType, "payload_type", "payload_type "+strconv.Quote(clip(string(t)))+
		" is not one of financial_transaction, logic_assertion, code_execution, data_query, general")
}

// checkPayload checks a payload's text (see Validate) and, when dst is not
// nil, appends its RFC 8785 form to *dst.
func checkPayload(payload json.RawMessage, maxPayload int, dst *[]byte) *Problem {
	if p := checkPayloadBounds(payload, maxPayload); p != nil {
		return p
	}
	var out []byte
	if dst != nil {
		out = *dst
	}
	out, err := jcs.AppendTransform(out, payload)
	if dst != nil {
		*dst = out
	}
	if err == nil {
		return nil
	}
	var je *jcs.Error
	off := 0
	if errors.As(err, &je) {
		off = je.Offset
	}
	at := " at byte " + strconv.Itoa(off) + " of the payload"
	switch {
	case errors.Is(err, jcs.ErrTooDeep):
		return &Problem{Code: CodeTooLong, Field: "payload", Limit: MaxPayloadDepth, Size: MaxPayloadDepth + 1, Offset: -1,
			Message: "payload nests deeper than " + strconv.Itoa(MaxPayloadDepth) + " arrays and objects" + at}
	case errors.Is(err, jcs.ErrInvalidNumber):
		return problem(CodeInvalidRequest, "payload", "payload holds a number that is not a finite IEEE 754 double (NaN, Infinity or out of range, such as 1e400)"+at)
	case errors.Is(err, jcs.ErrInvalidUTF8):
		return problem(CodeInvalidRequest, "payload", "payload holds invalid UTF-8 or an unpaired surrogate escape"+at)
	case errors.Is(err, jcs.ErrDuplicateKey):
		return problem(CodeInvalidRequest, "payload", "payload repeats a member name"+at)
	}
	p := problem(CodeInvalidRequest, "payload", "payload is not valid JSON"+at)
	p.Offset = off
	return p
}

// checkPayloadBounds is the part of checkPayload that needs no canonical
// form: present, within maxPayload bytes, an object's text.
func checkPayloadBounds(payload json.RawMessage, maxPayload int) *Problem {
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayloadBytes
	}
	if len(payload) == 0 {
		return problem(CodeMissingField, "payload", "missing required member payload")
	}
	if len(payload) > maxPayload {
		return tooLong("payload", len(payload), maxPayload, "bytes")
	}
	if t := bytes.TrimLeft(payload, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return problem(CodeInvalidRequest, "payload", "payload must be a JSON object, not "+kindOf(payload))
	}
	return nil
}

func checkTimestamp(s string) *Problem {
	if s == "" {
		return nil
	}
	if len(s) > MaxTimestampBytes {
		return tooLong("timestamp", len(s), MaxTimestampBytes, "bytes")
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return problem(CodeInvalidRequest, "timestamp", "timestamp "+strconv.Quote(s)+" is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)")
	}
	return nil
}

func checkTraceID(s string) *Problem {
	if len(s) > MaxTraceIDBytes {
		return tooLong("trace_id", len(s), MaxTraceIDBytes, "bytes")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' {
			return problem(CodeInvalidRequest, "trace_id", "trace_id may hold only printable ASCII without space: byte "+strconv.Itoa(i)+" is 0x"+strconv.FormatUint(uint64(c), 16))
		}
	}
	return nil
}

// clip cuts s to 64 bytes (on a rune boundary) for quoting in a message.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
