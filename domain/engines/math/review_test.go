package math

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// The attacks of the calculus review (docs/ARCHITECTURE.md, "Review of the
// math engine's calculus"): each test pins a defect found and fixed.

// TestQWEDProtocol_Math_Integrate_LinearSystemBounded pins that the
// Horowitz–Ostrogradsky linear system is charged by the size of its
// rational entries: a 900-byte integrand whose denominator has degree 64
// and 20-digit coefficients took about 20 s of Gaussian elimination over
// big.Rat for an UNSUPPORTED answer; it is now QWED-REQ-004 naming a limit.
func TestQWEDProtocol_Math_Integrate_LinearSystemBounded(t *testing.T) {
	terms := make([]string, 33)
	for i := range terms {
		terms[i] = fmt.Sprintf("1%019d*x**%d", i*i*982451653+7*i, i)
	}
	q := "(x**32+1)/(" + strings.Join(terms, "+") + ")**2"
	o := verify(t, q, `{"operation":"integrate"}`)
	if o.Status != engines.Error || o.Err.Code != CodeTooLarge {
		t.Fatalf("status %s, err %+v; want ERROR %s", o.Status, o.Err, CodeTooLarge)
	}
	if l := o.Err.Details["limit"]; l != "max_work" && l != "max_digits" {
		t.Errorf("limit %v, want max_work or max_digits", l)
	}
}

// TestQWEDProtocol_Math_Limit_HiddenDomain pins that a limit or a definite
// integral is not computed from a normal form that dropped where the
// expression is undefined: sqrt(x)**2, x**(1/2)*x**(3/2) and exp(log(x))
// normalise to x, x**2 and x, but in the real domain they are undefined
// for every x < 0, so "the limit at -1 is -1" and "the integral over
// [-1, 0] is -1/2" were wrong answers. Functions defined on the whole line
// (exp, sin, cos, tan, abs) and removable points (x**2/x) still answer.
func TestQWEDProtocol_Math_Limit_HiddenDomain(t *testing.T) {
	V, U := engines.Verified, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "sqrt squared left of its domain", query: "sqrt(x)**2", params: `{"operation":"limit","point":-1}`, status: U, code: CodeUnsupported},
		{name: "sqrt squared from the left of 0", query: "sqrt(x)**2", params: `{"operation":"limit","point":0,"direction":"-"}`, status: U, code: CodeUnsupported},
		{name: "half powers", query: "x**(3/2)*x**(1/2)", params: `{"operation":"limit","point":-1}`, status: U, code: CodeUnsupported},
		{name: "exp of log", query: "exp(log(x)) = -1", params: `{"operation":"limit","point":-1}`, status: U, code: CodeUnsupported},
		{name: "inside a derivative", query: "x*diff(sqrt(x)**2, x)", params: `{"operation":"limit","point":-1}`, status: U, code: CodeUnsupported},
		{name: "definite integral of sqrt squared", query: "sqrt(x)**2", params: `{"operation":"integrate","lower":-1,"upper":0}`, status: U, code: CodeUnsupported},
		{name: "definite integral claim of sqrt squared", query: "sqrt(x)*sqrt(x) = -3/2", params: `{"operation":"integrate","lower":-2,"upper":-1}`, status: U, code: CodeUnsupported},
		{name: "total functions still answer", query: "sin(x)**2 + cos(x)**2 + exp(x)/exp(x)", params: `{"operation":"limit","point":0,"variable":"x"}`, status: V,
			fields: map[string]string{"value": "2"}},
		{name: "removable point still answers", query: "x**2/x", params: `{"operation":"integrate","lower":-1,"upper":1}`, status: V,
			fields: map[string]string{"value": "0"}},
		{name: "functions of constants still answer", query: "sqrt(4)*x", params: `{"operation":"limit","point":-1}`, status: V,
			fields: map[string]string{"value": "-2"}},
		{name: "indefinite integral keeps the generic answer", query: "sqrt(x)**2", params: `{"operation":"integrate"}`, status: V,
			fields: map[string]string{"value": "1/2*x**2"}},
	})
}
