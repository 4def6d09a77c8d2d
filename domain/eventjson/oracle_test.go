package eventjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// encoding/json v1 is the codec's test oracle, and only that: the event
// format is defined by the frozen fixtures (schemas/testdata/events/v1),
// which encoding/json v1 wrote. Under GOEXPERIMENT=jsonv2 encoding/json's
// v1 API writes each byte of invalid UTF-8 as U+FFFD itself instead of
// the escape \ufffd; oracleEqual accounts for that one difference, so the
// same comparisons hold under both.

// oracleEqual reports whether the codec's encoding got is the oracle's
// encoding want.
func oracleEqual(got, want []byte) bool {
	if oracleIsV2 {
		got = bytes.ReplaceAll(got, []byte(`\ufffd`), []byte("\ufffd"))
	}
	return bytes.Equal(got, want)
}

// oracleDecode decodes p as encoding/json does, numbers in error details
// as json.Number, and returns the event with its details in comparable
// form (see comparable).
func oracleDecode(p []byte) (*domain.Event, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	ev := new(domain.Event)
	if err := dec.Decode(ev); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, &json.SyntaxError{}
	}
	return ev, nil
}

// sameAsOracle checks that the codec decodes p (a payload in the format)
// to the event encoding/json decodes, error details compared by their
// JSON values (the codec keeps arrays and objects as their bytes).
func sameAsOracle(t testing.TB, p []byte) {
	t.Helper()
	want, err := oracleDecode(p)
	if err != nil {
		t.Fatalf("encoding/json refuses %q: %v", p, err)
	}
	got, err := DecodeEvent(p)
	if err != nil {
		t.Fatalf("DecodeEvent(%q): %v", p, err)
	}
	comparable(t, reflect.ValueOf(got))
	comparable(t, reflect.ValueOf(want))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeEvent(%q) =\n%#v\nencoding/json:\n%#v", p, got, want)
	}
}

// comparable rewrites, in place, every domain.Details reachable from v
// into the values encoding/json decodes with UseNumber: a json.RawMessage
// value becomes the []any or map[string]any it holds.
func comparable(t testing.TB, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			comparable(t, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				comparable(t, v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			comparable(t, v.Index(i))
		}
	case reflect.Map:
		if d, ok := v.Interface().(domain.Details); ok {
			for k, x := range d {
				if raw, isRaw := x.(json.RawMessage); isRaw {
					dec := json.NewDecoder(bytes.NewReader(raw))
					dec.UseNumber()
					var y any
					if err := dec.Decode(&y); err != nil {
						t.Fatalf("details[%q] = %q: %v", k, raw, err)
					}
					d[k] = y
				}
			}
		}
	}
}

// The oracle and the recorded payloads, for the tests of package
// eventjson_test.
var (
	OracleEqual  = oracleEqual
	SameAsOracle = sameAsOracle
	BenchEvent   = benchEvent
)

// OracleIsV2 is oracleIsV2, for the tests of package eventjson_test.
const OracleIsV2 = oracleIsV2
