package a2a

import "strconv"

// The catalogue codes this package's problems and results carry, as plain
// strings (the domain package's catalogue, domain/errors.go and
// docs/errors.md, defines each of them with its HTTP status; this package
// cannot import it).
const (
	// CodeInvalidRequest (QWED-REQ-001): malformed JSON, a member of the
	// wrong type or an invalid value, an unknown or repeated member.
	CodeInvalidRequest = "QWED-REQ-001"
	// CodeMissingField (QWED-REQ-002): a required member is absent.
	CodeMissingField = "QWED-REQ-002"
	// CodeTooLong (QWED-REQ-004): a member, the payload or the message is
	// over its limit (bytes, characters, items or nesting).
	CodeTooLong = "QWED-REQ-004"
	// CodeUnsupportedType (QWED-REQ-005): payload_type is none of the five.
	CodeUnsupportedType = "QWED-REQ-005"

	// CodeFinanceMismatch (QWED-A2A-001): finance_guard's recomputed total
	// differs from the claimed one (a mathematical hallucination).
	CodeFinanceMismatch = "QWED-A2A-001"
	// CodeLogicContradiction (QWED-A2A-002): logic_guard found a claim
	// both asserted and negated.
	CodeLogicContradiction = "QWED-A2A-002"
	// CodeDangerousCode (QWED-A2A-003): code_guard found a dangerous
	// pattern.
	CodeDangerousCode = "QWED-A2A-003"
	// CodeTrustBlocked (QWED-A2A-004): the trust boundary blocked the
	// message (a blocked agent or pair, or not allowlisted).
	CodeTrustBlocked = "QWED-A2A-004"
	// CodeRateLimited (QWED-A2A-005): the pair's token bucket is empty.
	CodeRateLimited = "QWED-A2A-005"
	// CodeEngineError (QWED-A2A-006): a verification engine failed.
	CodeEngineError = "QWED-A2A-006"
)

// Problem is why a message, or a payload a guard reads, is refused: one
// of the codes above, the member at fault and a message that names it.
// Problems are values of their arguments only (no clock, no map order), so
// a refusal re-decides to the same bytes.
type Problem struct {
	// Code is a catalogue code: QWED-REQ-001, -002, -004 or -005.
	Code string
	// Field is the member at fault from the top of the message
	// ("sender_agent_id", "payload.data.line_items[3].amount"); "" for
	// the message as a whole.
	Field string
	// Message says what is wrong, naming the member.
	Message string
	// Limit is the bound that was exceeded (bytes, characters, items or
	// levels, as Message says); 0 when no bound applies.
	Limit int
	// Size is the measured size the bound refused; 0 when no bound
	// applies.
	Size int
	// Offset is the byte offset of a JSON syntax fault in the decoded
	// text; -1 when the problem is not a syntax fault.
	Offset int
}

// Error returns the problem's message, so that a *Problem is an error.
func (p *Problem) Error() string { return p.Message }

// Details are the problem's details in the gate's error bodies
// ({"code","message","details"}): "field" when a member is at fault,
// "limit" and "size" for a bound, "offset" for a syntax fault.
func (p *Problem) Details() map[string]any {
	d := make(map[string]any, 3)
	if p.Field != "" {
		d["field"] = p.Field
	}
	if p.Limit > 0 {
		d["limit"] = p.Limit
		d["size"] = p.Size
	}
	if p.Offset >= 0 {
		d["offset"] = p.Offset
	}
	return d
}

func problem(code, field, msg string) *Problem {
	return &Problem{Code: code, Field: field, Message: msg, Offset: -1}
}

// tooLong is a problem of a member over its bound; unit names what limit
// and size count ("bytes", "characters", "items", "levels").
func tooLong(field string, size, limit int, unit string) *Problem {
	what := field
	if what == "" {
		what = "the message"
	}
	return &Problem{Code: CodeTooLong, Field: field, Limit: limit, Size: size, Offset: -1,
		Message: what + " is " + strconv.Itoa(size) + " " + unit + " long: the limit is " + strconv.Itoa(limit) + " " + unit}
}
