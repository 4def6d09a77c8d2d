package verify_test

import (
	"testing"

	"github.com/agentgate/agentgate/domain/engines/math"
)

// TestQWEDProtocol_Math_CalculusAttacksOverHTTP sends the attacks of the
// calculus review (docs/ARCHITECTURE.md, "Review of the math engine's
// calculus") through POST /verify of a real embedded gate with the real
// math engine: no false claim is VERIFIED and no wrong value answered,
// each refusal has its status, HTTP code and error code (QWED protocol
// v1.0 §6.2, §8.3), and every reply is a valid §6.1 document.
func TestQWEDProtocol_Math_CalculusAttacksOverHTTP(t *testing.T) {
	s := newServer(t, math.New())
	for _, tc := range []struct {
		name, body   string
		status, code string
		http         int
		field, want  string // a result field and its value
	}{
		{"divergent integral across a pole", `{"query":"1/x**2","type":"math","params":{"operation":"integrate","lower":-1,"upper":1}}`, "ERROR", "QWED-REQ-001", 400, "", ""},
		{"its false value claimed", `{"query":"1/x**2 = -2","type":"math","params":{"operation":"integrate","lower":-1,"upper":1}}`, "ERROR", "QWED-REQ-001", 400, "", ""},
		{"integral over a hidden domain", `{"query":"sqrt(x)**2 = -1/2","type":"math","params":{"operation":"integrate","lower":-1,"upper":0}}`, "UNSUPPORTED", "QWED-REQ-005", 400, "", ""},
		{"antiderivative up to a constant", `{"query":"3*x**2 = 1 + x**3 + 7","type":"math","params":{"operation":"integrate"}}`, "VERIFIED", "", 200, "simplified_difference", "0"},
		{"0/0 cancelled", `{"query":"(x**2-1)/(x-1) = 4/2","type":"math","params":{"operation":"limit","point":1}}`, "VERIFIED", "", 200, "expected", "2"},
		{"two-sided pole", `{"query":"1/x = inf","type":"math","params":{"operation":"limit","point":0}}`, "FAILED", "", 200, "expected", "does not exist"},
		{"even pole", `{"query":"1/x**2","type":"math","params":{"operation":"limit","point":0}}`, "VERIFIED", "", 200, "value", "oo"},
		{"parametric limit", `{"query":"(a + x)/(a + 2*x) = 1","type":"math","params":{"operation":"limit","point":0,"variable":"x"}}`, "UNSUPPORTED", "QWED-REQ-005", 400, "", ""},
		{"limit over a hidden domain", `{"query":"exp(log(x)) = -1","type":"math","params":{"operation":"limit","point":-1}}`, "UNSUPPORTED", "QWED-REQ-005", 400, "", ""},
		{"extraneous root", `{"query":"x/(x-1) = 1/(x-1)","type":"math","params":{"operation":"solve","solutions":[1]}}`, "FAILED", "", 200, "expected", "{}"},
		{"no rational root of x**2 = 2", `{"query":"x**2 = 2","type":"math","params":{"operation":"solve","domain":"rational","solutions":["1.41421356"]}}`, "FAILED", "", 200, "expected", "{}"},
		{"decimals of an irrational root", `{"query":"x**2 = 2","type":"math","params":{"operation":"solve","precision":8,"solutions":["1.41421356","-1.41421356"]}}`, "FAILED", "", 200, "expected", "{-sqrt(2), sqrt(2)}"},
		{"roots with multiplicity", `{"query":"(x-1)**2*(x+2)**3 = 0","type":"math","params":{"operation":"solve","solutions":["-4/2","1","1"]}}`, "VERIFIED", "", 200, "expected", "{-2, 1}"},
		{"identity", `{"query":"0*x = 0","type":"math","params":{"operation":"solve"}}`, "UNSUPPORTED", "QWED-REQ-005", 400, "", ""},
		{"contradiction", `{"query":"x + 1 = x","type":"math","params":{"operation":"solve","solutions":[]}}`, "VERIFIED", "", 200, "", ""},
		{"expansion that blows up", `{"query":"(x+1)**1000","type":"math","params":{"operation":"integrate"}}`, "ERROR", "QWED-REQ-004", 400, "", ""},
		{"integer domain", `{"query":"x","type":"math","params":{"operation":"integrate","lower":0,"upper":1,"domain":"integer"}}`, "UNSUPPORTED", "QWED-REQ-005", 400, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.verify(tc.body)
			validResponse(t, r)
			m := r.json(t)
			if m["status"] != tc.status || r.status != tc.http || r.code(t) != tc.code {
				t.Fatalf("%s: %d %s %s, want %d %s %s (%s)", tc.body, r.status, m["status"], r.code(t), tc.http, tc.status, tc.code, r.body)
			}
			if m["verified"] != (tc.status == "VERIFIED") {
				t.Errorf("%s: verified %v with status %s", tc.body, m["verified"], m["status"])
			}
			if tc.field != "" {
				if res, _ := m["result"].(map[string]any); res[tc.field] != tc.want {
					t.Errorf("%s: result %s = %v, want %q", tc.body, tc.field, res[tc.field], tc.want)
				}
			}
		})
	}
}
