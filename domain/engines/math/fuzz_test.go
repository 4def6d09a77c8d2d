package math

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// FuzzParseAndVerify pins that no query and no params make the engine
// panic or reach its internal-fault answer (QWED-ENG-002), that every
// outcome encodes deterministically, and that a syntax error always
// carries position, expected and found (QWED protocol v1.0 §8.4).
func FuzzParseAndVerify(f *testing.F) {
	for _, s := range []string{
		"x**2 + 2*x + 1 = (x+1)**2", "2+2=5", "1/2(3+1)", "d/dx (x**3 + 2*x) = 3*x**2 + 2", "sin(pi/6)",
		"sqrt(-4)", "1/0", "0^0", "2^-1", "(x+1)(x-1) != x^2", "diff(sin(x)^2, x)", "1.5e3 ≥ 2e-3", "tan(pi/2)",
		"log(e^3) - ln(exp(x))", "abs(-x)", "((((1))))", "x^(1/2)", "8^(2/3)", "1/(x-1) - 1/(x+1)", "2xy",
	} {
		f.Add(s, "")
	}
	f.Add("x^3", `{"operation":"derivative"}`)
	f.Add("7/2", `{"domain":"integer","precision":3}`)
	f.Fuzz(func(t *testing.T, q, params string) {
		req := engines.Request{Query: q, IncludeProof: true}
		if params != "" {
			req.Params = json.RawMessage(params)
		}
		o := New().Verify(context.Background(), req)
		if o.Err != nil && o.Err.Code == CodeInternal {
			t.Fatalf("%q %q: internal fault %+v", q, params, o.Err)
		}
		if o.Err != nil && o.Err.Code == CodeSyntax {
			d := o.Err.Details
			if _, ok := d["position"]; !ok || d["expected"] == nil || d["found"] == nil {
				t.Fatalf("%q: syntax error without details: %+v", q, o.Err)
			}
		}
		switch o.Status {
		case engines.Verified, engines.Failed, engines.Corrected:
			if o.Err != nil || o.Result == nil {
				t.Fatalf("%q: decided outcome %+v", q, o)
			}
		case engines.Error, engines.Unsupported:
			if o.Err == nil {
				t.Fatalf("%q: %s without error", q, o.Status)
			}
		default:
			t.Fatalf("%q: status %s", q, o.Status)
		}
		a, err := json.Marshal(o)
		if err != nil {
			t.Fatalf("%q: encoding: %v", q, err)
		}
		b, _ := json.Marshal(New().Verify(context.Background(), req))
		if string(a) != string(b) {
			t.Fatalf("%q: not deterministic:\n%s\n%s", q, a, b)
		}
	})
}
