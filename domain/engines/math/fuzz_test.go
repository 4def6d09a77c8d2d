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

// FuzzCalculus drives the integrate, limit and solve operations with
// arbitrary queries and param values: no panic, no internal fault, and a
// deterministic answer.
func FuzzCalculus(f *testing.F) {
	f.Add("(x**2-1)/(x-1)", "limit", "1", "+")
	f.Add("1/x**3", "limit", "-oo", "")
	f.Add("x**2 - 2*x - 1 = 0", "solve", "1 + sqrt(2)", "")
	f.Add("2*x**3 - 3*x**2 - 11*x + 6", "solve", "1/2", "")
	f.Add("3*x**2 = x**3 + 1", "integrate", "0", "")
	f.Add("x**2/y", "integrate", "pi", "")
	f.Add("-2*x/(x**2-2)**2", "integrate", "0", "3")
	f.Fuzz(func(t *testing.T, q, op, value, dir string) {
		params := map[string]any{"operation": op}
		switch op {
		case "limit":
			params["point"], params["direction"] = value, dir
		case "solve":
			params["solutions"] = []string{value, dir}
		case "integrate":
			params["lower"], params["upper"] = value, dir
		}
		raw, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		req := engines.Request{Query: q, Params: raw}
		o := New().Verify(context.Background(), req)
		if o.Err != nil && o.Err.Code == CodeInternal {
			t.Fatalf("%q %s: internal fault %+v", q, raw, o.Err)
		}
		if (o.Err == nil) != (o.Status == engines.Verified || o.Status == engines.Failed || o.Status == engines.Corrected) {
			t.Fatalf("%q %s: status %s with error %+v", q, raw, o.Status, o.Err)
		}
		a, _ := json.Marshal(o)
		b, _ := json.Marshal(New().Verify(context.Background(), req))
		if string(a) != string(b) {
			t.Fatalf("%q %s: not deterministic:\n%s\n%s", q, raw, a, b)
		}
	})
}
