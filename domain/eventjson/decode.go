package eventjson

import (
	"encoding/json"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"

	"github.com/agentgate/agentgate/domain"
)

// API is json-iterator configured as the standard library (the same
// field matching, the domain types' own UnmarshalJSON), with the exact
// integer path for plain money amounts (fastUSD). The backtest decodes
// the slim part of the events it re-decides with it. It is not exact
// on unusual input (it accepts a quoted non-number into a json.Number,
// for one), which is why DecodeEvent falls back to encoding/json.
var API = func() jsoniter.API {
	api := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	api.RegisterExtension(&usdExtension{})
	return api
}()

// DecodeEvent decodes one log payload exactly as handlers.DecodeEvent
// (encoding/json) does: the same event, or an error when encoding/json
// fails. The frequent event shapes take the fast path (DecodeFast); any
// other input, and anything the fast path is not certain to decode as
// encoding/json does, is decoded by encoding/json itself.
func DecodeEvent(p []byte) (*domain.Event, error) {
	if ev, ok := DecodeFast(p); ok {
		return ev, nil
	}
	return decodeGeneral(p)
}

// DecodeFoldEvent decodes what folding an event into a domain.State
// (domain.Apply) and projecting it into a store without activities read:
// DecodeEvent's event without the members neither reads — the request
// bodies of verify_action and verify_tool_call commands and the command's
// token hash, the errors, the verification block, the digests and budget
// snapshots of decisions and executions. They are skipped as JSON (their
// syntax is checked, not their types), so a payload DecodeEvent refuses
// for a wrong type in one of them decodes here; every other payload
// decodes to DecodeEvent's event with those members zero. Input the fast
// path does not decode is decoded whole by encoding/json, as DecodeEvent.
// TestFoldEventIsTheEventWithoutWhatAFoldSkips pins both.
func DecodeFoldEvent(p []byte) (*domain.Event, error) {
	if ev, ok := decodeFast(p, true); ok {
		return ev, nil
	}
	return decodeGeneral(p)
}

// decodeGeneral decodes p with encoding/json.
func decodeGeneral(p []byte) (*domain.Event, error) {
	ev := new(domain.Event)
	if err := json.Unmarshal(p, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

var usdType = reflect2.TypeOf(domain.USD(0))

// usdExtension decodes domain.USD with fastUSD.
type usdExtension struct{ jsoniter.DummyExtension }

func (*usdExtension) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	if typ == usdType {
		return usdDecoder{}
	}
	return nil
}

type usdDecoder struct{}

func (usdDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	raw := iter.SkipAndReturnBytes()
	if iter.Error != nil {
		return
	}
	u := (*domain.USD)(ptr)
	if v, ok := fastUSD(raw); ok {
		*u = v
		return
	}
	if err := u.UnmarshalJSON(raw); err != nil {
		iter.ReportError("decoding USD", err.Error())
	}
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
