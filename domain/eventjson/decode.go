package eventjson

import (
	"fmt"

	"github.com/agentgate/agentgate/domain"
)

// DecodeError reports a payload that is not an event in the v1 format:
// invalid JSON, a member of the wrong type, a number out of its field's
// range, a repeated member, or a member whose name differs from a field's
// only in case. Offset is the byte of p where the decoder stopped.
type DecodeError struct {
	Offset int
}

// Error implements the error interface.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("eventjson: not an event in the v1 format (at byte %d)", e.Offset)
}

// DecodeEvent decodes one log payload: the event, or a *DecodeError when
// p is not an event in the v1 format (schemas/testdata/events/v1/README.md).
// Every payload the encoder writes decodes to the event it encoded, with
// error details in their decoded form (see DecodeFast).
func DecodeEvent(p []byte) (*domain.Event, error) {
	return decodeEvent(p, false)
}

// DecodeFoldEvent decodes what folding an event into a domain.State
// (domain.Apply) and projecting it into a store without activities read:
// DecodeEvent's event without the members neither reads — the request
// bodies of verify_action and verify_tool_call commands and the command's
// token hash, the errors, the verification block, the digests and budget
// snapshots of decisions and executions. They are skipped as JSON (their
// syntax is checked, not their types), so a payload DecodeEvent refuses
// for a wrong type in one of them decodes here; every other payload
// decodes to DecodeEvent's event with those members zero.
// TestFoldEventIsTheEventWithoutWhatAFoldSkips pins it.
func DecodeFoldEvent(p []byte) (*domain.Event, error) {
	return decodeEvent(p, true)
}

func decodeEvent(p []byte, fold bool) (*domain.Event, error) {
	d := decoder{p: p, fold: fold}
	ev := d.event()
	d.end()
	if d.failed {
		return nil, &DecodeError{Offset: d.failedAt}
	}
	return ev, nil
}

// maxFastUSD bounds the amounts fastUSD decodes (the domain's own bound is
// larger; anything above goes through domain.USD's decoder).
const maxFastUSD = 1_000_000 * domain.MicrosPerUSD

// fastUSD decodes a plain JSON number of dollars -?D+(.D{1,6})? below
// maxFastUSD into micro-dollars, exactly (no rounding is needed with at
// most six decimals); ok is false for any other text.
func fastUSD(b []byte) (domain.USD, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var whole, frac int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i >= 7 {
			return 0, false
		}
		whole = whole*10 + int64(b[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	digits := 0
	if i < len(b) {
		if b[i] != '.' {
			return 0, false
		}
		for i++; i < len(b); i++ {
			if b[i] < '0' || b[i] > '9' || digits == 6 {
				return 0, false
			}
			frac = frac*10 + int64(b[i]-'0')
			digits++
		}
		if digits == 0 {
			return 0, false
		}
	}
	for ; digits < 6; digits++ {
		frac *= 10
	}
	v := whole*domain.MicrosPerUSD + frac
	if v >= maxFastUSD {
		return 0, false
	}
	if neg {
		v = -v
	}
	return domain.USD(v), true
}
