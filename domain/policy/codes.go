package policy

import "strconv"

// The catalogue codes this package's problems and outcomes carry, as plain
// strings (the domain package's catalogue, domain/errors.go and
// docs/errors.md, defines each with its HTTP status; this package cannot
// import it).
const (
	// CodeInvalidRequest (QWED-REQ-001): malformed JSON, a member of the
	// wrong type or with an invalid value, an unknown or repeated member.
	CodeInvalidRequest = "QWED-REQ-001"
	// CodeMissingField (QWED-REQ-002): a required member is absent.
	CodeMissingField = "QWED-REQ-002"
	// CodeTooLong (QWED-REQ-004): the policy, or a member, is over its
	// bound (bytes, characters or items).
	CodeTooLong = "QWED-REQ-004"
	// CodeUnsupportedType (QWED-REQ-005): the policy's type is none of
	// the four.
	CodeUnsupportedType = "QWED-REQ-005"

	// CodeSpendingLimit (QWED-POLICY-001): a spending limit blocked the
	// execute.
	CodeSpendingLimit = "QWED-POLICY-001"
	// CodeCategory (QWED-POLICY-002): a category restriction blocked the
	// execute.
	CodeCategory = "QWED-POLICY-002"
	// CodeTimeWindow (QWED-POLICY-003): a time window blocked the
	// execute.
	CodeTimeWindow = "QWED-POLICY-003"
	// CodeConfirmation (QWED-POLICY-004): a required confirmation was
	// denied or expired (the domain package records it; Evaluate only
	// asks for the confirmation).
	CodeConfirmation = "QWED-POLICY-004"
)

// Problem is why a policy is refused: one of the QWED-REQ codes above, the
// member at fault and a message naming it. Problems are values of their
// arguments only, so a refusal re-decides to the same bytes.
type Problem struct {
	// Code is a catalogue code: QWED-REQ-001, -002, -004 or -005.
	Code string
	// Field is the member at fault from the top of the policy
	// ("spending.daily_cents", "time_window.windows[2].start"); "" for the
	// policy as a whole.
	Field string
	// Message says what is wrong, naming the member.
	Message string
}

// Error returns the problem's message, so that a *Problem is an error.
func (p *Problem) Error() string { return p.Message }

// Details are the problem's details in the gate's error bodies
// ({"code","message","details"}): "field" when a member is at fault, else
// nil.
func (p *Problem) Details() map[string]any {
	if p.Field == "" {
		return nil
	}
	return map[string]any{"field": p.Field}
}

func problem(code, field, msg string) *Problem {
	return &Problem{Code: code, Field: field, Message: msg}
}

func invalid(field, msg string) *Problem {
	return problem(CodeInvalidRequest, field, field+" "+msg)
}

func tooMany(field string, n, limit int, unit string) *Problem {
	return problem(CodeTooLong, field, field+" has "+strconv.Itoa(n)+" "+unit+": the limit is "+strconv.Itoa(limit))
}
