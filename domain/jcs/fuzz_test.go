package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// FuzzTransform checks, on arbitrary input, that Transform never panics,
// that every error is one of the sentinels, and that accepted input yields
// valid JSON that is its own canonical form and means the same thing.
func FuzzTransform(f *testing.F) {
	seeds := []string{
		benchDoc, `{}`, `[]`, `0`, `-0`, `1e21`, `1e-7`, `"\ud83d\ude00"`, `{"a":1,"a":2}`,
		`{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
		`[1e400]`, `"\ud800"`, "\"\xff\"", `[[[[[]]]]]`, `{"a":{"b":[1,2,{"c":null}]}}`,
		`333333333.33333329`, `5e-324`, `1.7976931348623157e308`, `"\u0000\u001f\u007f"`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := Transform(raw)
		if err != nil {
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("error %v is not an *Error", err)
			}
			known := false
			for _, s := range []error{ErrInvalidJSON, ErrInvalidUTF8, ErrDuplicateKey, ErrInvalidNumber, ErrTooDeep, ErrTrailingData} {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if out != nil {
				t.Fatalf("output %q returned with error", out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Transform(%q) = %q, not valid JSON", raw, out)
		}
		again, err := Transform(out)
		if err != nil {
			t.Fatalf("Transform of canonical %q: %v", out, err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("not idempotent: %q -> %q -> %q", raw, out, again)
		}
		// encoding/json accepts what we accept, except that it tolerates
		// duplicates and invalid UTF-8, which we reject; so meaning can be
		// compared whenever we accepted.
		if json.Valid(raw) {
			assertSameMeaning(t, raw, out)
		}
	})
}

// FuzzAppendNumber checks that every finite double serializes to text that
// parses back to the same double and is its own canonical form.
func FuzzAppendNumber(f *testing.F) {
	for _, v := range []float64{0, 1, -1, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 333333333.3333333} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		s := AppendNumber(nil, v)
		if v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308 {
			if string(s) != "null" {
				t.Fatalf("AppendNumber(%v) = %s, want null", v, s)
			}
			return
		}
		back, err := strconv.ParseFloat(string(s), 64)
		if err != nil || back != v {
			t.Fatalf("AppendNumber(%v) = %s parses back as %v (%v)", v, s, back, err)
		}
		again, err := Transform(s)
		if err != nil || !bytes.Equal(again, s) {
			t.Fatalf("Transform(%s) = %s, %v", s, again, err)
		}
	})
}

// FuzzFastPaths checks that the fast paths of the canonical form (short
// decimals, small objects) change nothing: on every input Transform
// returns the same bytes, or the same error, with them as without them.
func FuzzFastPaths(f *testing.F) {
	seeds := []string{
		benchDoc, `{"b":1,"a":2}`, `{"a":1,"a":2,"b":3,"b":4}`, `{"b":1,"b":2,"a":3,"a":4}`, `[12.50,-0.0,0.000001,0.0000001]`,
		`{"data":{"claimed_total":687.50,"line_items":[{"description":"Widget 0","amount":12.50,"quantity":1}]}}`,
		`123456789012345.6`, `1234567890123456.7`, `0.0000123456789012345`, `{"\u20ac":1,"\ufb33":2,"\ud83d\ude00":3}`,
		`{"z":1,"y":2,"x":3,"w":4,"v":5,"u":6,"t":7,"s":8,"r":9,"q":10,"p":11,"o":12,"n":13,"m":14}`, `-0.0e1`, `1.`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gerr := Transform(raw)
		want, werr := general(raw)
		if !bytes.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("Transform(%q) = %q, %v; general path %q, %v", raw, got, gerr, want, werr)
		}
	})
}
