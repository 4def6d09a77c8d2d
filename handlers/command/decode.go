package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/strictjson"
)

// decodeOptions tune decodeJSON for one body type.
type decodeOptions struct {
	// emptyOK makes an empty body decode as {}.
	emptyOK bool
	// numberCode is the code of an invalid value of a json.Number member
	// (context.step_number is QWED-AGENT-CTX-002); REQ-001 when empty.
	numberCode domain.Code
	// numberField is the member numberCode applies to.
	numberField string
}

// strict refuses a body that another reader could take differently
// (domain/strictjson: a repeated member, a member in another case than
// the shape's, an unknown member of a closed shape), with QWED-REQ-001
// naming the member. Malformed JSON is left to the decoder, which
// reports it in its own words.
func strict(body []byte, s *strictjson.Shape) *Rejection {
	err := strictjson.Check(body, s)
	if err == nil {
		return nil
	}
	var e *strictjson.Error // declared here: it escapes, and costs an allocation
	if !errors.As(err, &e) || e.Kind == strictjson.KindSyntax {
		return nil
	}
	return Reject(domain.CodeInvalidRequest, e.Details(), "%s", e.Error())
}

// decodeJSON decodes body (exactly one JSON value, nothing after it) into
// v, refusing what strict refuses and unknown members, and maps every failure to QWED-REQ-001 with
// details naming the member ({field, expected}) or the position ({offset}).
func decodeJSON(body []byte, v any, opt decodeOptions) *Rejection {
	if len(bytes.TrimSpace(body)) == 0 {
		if opt.emptyOK {
			return nil
		}
		return Reject(domain.CodeInvalidRequest, nil, "request body is empty: a JSON object is required")
	}
	if e := strict(body, strictjson.ShapeOf(reflect.TypeOf(v).Elem(), true)); e != nil {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, int64(len(body)), opt)
	}
	// Exactly one value: anything but white space after it is an error.
	if rest := bytes.TrimSpace(body[dec.InputOffset():]); len(rest) > 0 {
		at := int64(len(body) - len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")))
		return Reject(domain.CodeInvalidRequest, map[string]any{"offset": at},
			"unexpected data after the JSON value at offset %d", at)
	}
	return nil
}

// decodeError maps an encoding/json error to a rejection.
func decodeError(err error, size int64, opt decodeOptions) *Rejection {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		at := max(syn.Offset-1, 0)
		return Reject(domain.CodeInvalidRequest, map[string]any{"offset": at},
			"malformed JSON at offset %d: %v", at, syn)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Reject(domain.CodeInvalidRequest, map[string]any{"offset": size},
			"malformed JSON at offset %d: unexpected end of input", size)
	case errors.As(err, &typ):
		field := jsonPath(typ.Field)
		if field == "" {
			field = "(body)"
		}
		expected := jsonKind(typ.Type)
		code := domain.CodeInvalidRequest
		if opt.numberCode != "" && field == opt.numberField {
			code = opt.numberCode
		}
		return Reject(code, map[string]any{"field": field, "expected": expected},
			"%s must be %s, not %s", field, article(expected), typ.Value)
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
		name = Clip(strings.TrimSuffix(name, `"`))
		return Reject(domain.CodeInvalidRequest, map[string]any{"field": name},
			"unknown member %q", name)
	}
	if strings.Contains(msg, "invalid number literal") && opt.numberCode != "" {
		return Reject(opt.numberCode, map[string]any{"field": opt.numberField, "expected": "integer"},
			"%s must be an integer", opt.numberField)
	}
	// Errors of the domain's own decoders (money, trust levels, risks,
	// budgets) describe the value and, where they can, the member.
	msg = strings.TrimPrefix(msg, "json: ")
	return Reject(domain.CodeInvalidRequest, nil, "invalid request: %s", Clip(msg))
}

// jsonPath drops the Go names of embedded structs from an
// UnmarshalTypeError field path ("VerifyAction.action.type" is
// "action.type"): every JSON member name of the API is lower case.
func jsonPath(p string) string {
	parts := strings.Split(p, ".")
	out := parts[:0]
	for _, s := range parts {
		if s != "" && (s[0] < 'A' || s[0] > 'Z') {
			out = append(out, s)
		}
	}
	return strings.Join(out, ".")
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	numberType     = reflect.TypeFor[json.Number]()
)

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t {
	case rawMessageType:
		return "JSON value"
	case numberType:
		return "number"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "value"
}

func article(kind string) string {
	switch kind {
	case "integer", "array", "object":
		return "an " + kind
	}
	return "a " + kind
}

// maxQuoteBytes bounds the text of the body an error message may quote.
const maxQuoteBytes = 128

// Clip shortens s to maxQuoteBytes (on a rune boundary), marking the cut.
func Clip(s string) string {
	if len(s) <= maxQuoteBytes {
		return s
	}
	n := maxQuoteBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
