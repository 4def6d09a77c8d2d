package httpapi

import (
	"net/http"
	"testing"
)

// TestQWEDProtocol_5_2_1_MathCalculus_HTTP: POST /verify answers the math
// engine's integrate, limit and solve operations and its rational domain
// (QWED protocol v1.0 §5.2.1) with the §6.1 body the OpenAPI document
// describes (every answer of this server is validated against it).
func TestQWEDProtocol_5_2_1_MathCalculus_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_math")
	for _, tc := range []struct {
		query  string
		params map[string]any
		status string
		http   int
		field  string
		want   any
	}{
		{"3*x**2 + 2*x", map[string]any{"operation": "integrate"}, "VERIFIED", 200, "value", "x**3 + x**2"},
		{"x**2 = 9", map[string]any{"operation": "integrate", "lower": 0, "upper": "3"}, "VERIFIED", 200, "expected", "9"},
		{"2*x = x**2 + x", map[string]any{"operation": "integrate"}, "FAILED", 200, "simplified_difference", "1"},
		{"(x**2-1)/(x-1)", map[string]any{"operation": "limit", "point": 1}, "VERIFIED", 200, "value", "2"},
		{"1/x", map[string]any{"operation": "limit", "point": 0, "direction": "-"}, "VERIFIED", 200, "value", "-oo"},
		{"x**2 = 2", map[string]any{"operation": "solve"}, "VERIFIED", 200, "solutions", []any{"-sqrt(2)", "sqrt(2)"}},
		{"x**2 = 2", map[string]any{"operation": "solve", "domain": "rational"}, "VERIFIED", 200, "solutions", []any{}},
		{"x**2 - 5*x + 6", map[string]any{"operation": "solve", "solutions": []any{2, 4}}, "FAILED", 200, "expected", "{2, 3}"},
		{"1/x", map[string]any{"operation": "integrate"}, "UNSUPPORTED", http.StatusBadRequest, "", nil},
		{"pi", map[string]any{"domain": "rational"}, "UNSUPPORTED", http.StatusBadRequest, "", nil},
	} {
		r := g.do("POST", "/verify", apiKey(key), map[string]any{"query": tc.query, "type": "math", "params": tc.params})
		m := r.json(t)
		if r.status != tc.http || m["status"] != tc.status {
			t.Errorf("%s %v: %d %s, want %d %s", tc.query, tc.params, r.status, r.body, tc.http, tc.status)
			continue
		}
		if tc.field == "" {
			continue
		}
		res, _ := m["result"].(map[string]any)
		if got := res[tc.field]; !equalJSON(got, tc.want) {
			t.Errorf("%s %v: result.%s = %#v, want %#v (%s)", tc.query, tc.params, tc.field, got, tc.want, r.body)
		}
	}
}

// equalJSON compares two decoded JSON values (strings and arrays of them).
func equalJSON(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok || bok {
		if !aok || !bok || len(as) != len(bs) {
			return false
		}
		for i := range as {
			if as[i] != bs[i] {
				return false
			}
		}
		return true
	}
	return a == b
}
