package math

import (
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestQWEDProtocol_Math_Integrate pins the integrate operation (QWED
// protocol v1.0 §4.1 calculus, §5.2.1 params): a polynomial integrand is
// answered with its antiderivative, a claimed antiderivative is verified
// by differentiating it (the constant of integration is free), a definite
// integral is exact, and an integrand outside the class is UNSUPPORTED.
func TestQWEDProtocol_Math_Integrate(t *testing.T) {
	V, F, E, U := engines.Verified, engines.Failed, engines.Error, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "indefinite polynomial", query: "3*x**2 + 2*x", params: `{"operation":"integrate"}`, status: V,
			fields: map[string]string{"kind": "integral", "value": "x**3 + x**2", "variable": "x", "message": "integral of 3*x**2 + 2*x dx = x**3 + x**2 + C"}},
		{name: "indefinite rational coefficients", query: "x/3 + 1/2", params: `{"operation":"integrate"}`, status: V,
			fields: map[string]string{"value": "1/6*x**2 + 1/2*x"}},
		{name: "indefinite with a parameter", query: "a*t**2", params: `{"operation":"integrate","variable":"t"}`, status: V,
			fields: map[string]string{"value": "1/3*a*t**3"}},
		{name: "indefinite over pi", query: "pi*x", params: `{"operation":"integrate"}`, status: V, fields: map[string]string{"value": "1/2*pi*x**2"}},
		{name: "claimed antiderivative with a constant", query: "3*x**2 + 2*x = x**3 + x**2 + 7", params: `{"operation":"integrate"}`, status: V,
			fields: map[string]string{"kind": "antiderivative", "simplified_difference": "0"}},
		{name: "claimed antiderivative of a rational function", query: "1/x**2 = -1/x", params: `{"operation":"integrate"}`, status: V},
		{name: "claimed antiderivative with log", query: "1/x = log(x)", params: `{"operation":"integrate"}`, status: V},
		{name: "claimed antiderivative with sin", query: "cos(x) = sin(x) + 1", params: `{"operation":"integrate"}`, status: V},
		{name: "wrong antiderivative", query: "2*x = x**2 + x", params: `{"operation":"integrate"}`, status: F,
			fields: map[string]string{"simplified_difference": "1", "expected": "2*x + 1", "actual": "2*x"}},
		{name: "wrong antiderivative undecidable", query: "cos(x) = -sin(x)*cos(x)", params: `{"operation":"integrate"}`, status: U, code: CodeUnsupported},
		{name: "definite", query: "x**2", params: `{"operation":"integrate","lower":0,"upper":"3"}`, status: V,
			fields: map[string]string{"kind": "definite_integral", "value": "9", "lower": "0", "upper": "3"}},
		{name: "definite reversed bounds", query: "x**2", params: `{"operation":"integrate","lower":3,"upper":0}`, status: V, fields: map[string]string{"value": "-9"}},
		{name: "definite rational bounds", query: "2*x + 1", params: `{"operation":"integrate","lower":"1/2","upper":1.5}`, status: V, fields: map[string]string{"value": "3"}},
		{name: "definite to pi", query: "x", params: `{"operation":"integrate","lower":0,"upper":"pi"}`, status: V, fields: map[string]string{"value": "1/2*pi**2"}},
		{name: "definite claim true", query: "x**3 = 1/4", params: `{"operation":"integrate","lower":0,"upper":1}`, status: V, fields: map[string]string{"expected": "1/4"}},
		{name: "definite claim false", query: "x**3 = 0.3", params: `{"operation":"integrate","lower":0,"upper":1}`, status: F,
			fields: map[string]string{"expected": "1/4", "actual": "3/10"}},
		{name: "rational integrand with a rational antiderivative", query: "1/x**2", params: `{"operation":"integrate"}`, status: V, fields: map[string]string{"value": "-1/x"}},
		{name: "rational integrand with a polynomial part", query: "(x**2+1)/x**2", params: `{"operation":"integrate"}`, status: V, fields: map[string]string{"value": "(x**2 - 1)/x"}},
		{name: "rational integrand, repeated irreducible factor", query: "-2*x/(x**2+1)**2", params: `{"operation":"integrate"}`, status: V, fields: map[string]string{"value": "1/(x**2 + 1)"}},
		{name: "rational integrand, two poles", query: "1/(x-1)**2 - 1/(x+1)**2", params: `{"operation":"integrate"}`, status: V, fields: map[string]string{"value": "-2/(x**2 - 1)"}},
		{name: "rational integrand with a log part", query: "(x**4 + 3)/(x-1)**3", params: `{"operation":"integrate"}`, status: U, code: CodeUnsupported},
		{name: "rational integrand with a parameter", query: "a/x**2", params: `{"operation":"integrate","variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "definite rational", query: "-2*x/(x**2+1)**2", params: `{"operation":"integrate","lower":-5,"upper":3}`, status: V, fields: map[string]string{"value": "4/65"}},
		{name: "definite rational away from the poles", query: "-2*x/(x**2-2)**2", params: `{"operation":"integrate","lower":2,"upper":3}`, status: V, fields: map[string]string{"value": "-5/14"}},
		{name: "definite rational over an irrational pole", query: "-2*x/(x**2-2)**2", params: `{"operation":"integrate","lower":0,"upper":3}`, status: E, code: CodeInvalid},
		{name: "definite rational over a pole at a bound", query: "1/x**2", params: `{"operation":"integrate","lower":0,"upper":1}`, status: E, code: CodeInvalid},
		{name: "definite rational over a pole, bounds reversed", query: "1/x**2", params: `{"operation":"integrate","lower":2,"upper":-1}`, status: E, code: CodeInvalid},
		{name: "definite rational to pi", query: "1/x**2", params: `{"operation":"integrate","lower":1,"upper":"pi"}`, status: U, code: CodeUnsupported},
		{name: "log integrand unsupported", query: "1/x", params: `{"operation":"integrate"}`, status: U, code: CodeUnsupported},
		{name: "atan integrand unsupported", query: "1/(x**2+1)", params: `{"operation":"integrate","lower":0,"upper":1}`, status: U, code: CodeUnsupported},
		{name: "function integrand unsupported", query: "sin(x)", params: `{"operation":"integrate"}`, status: U, code: CodeUnsupported},
		{name: "one bound only", query: "x", params: `{"operation":"integrate","lower":0}`, status: E, code: CodeInvalid},
		{name: "bound with a variable", query: "x", params: `{"operation":"integrate","lower":0,"upper":"y"}`, status: E, code: CodeInvalid},
		{name: "bounds on another operation", query: "x", params: `{"operation":"derivative","lower":0,"upper":1}`, status: E, code: CodeInvalid},
		{name: "several variables", query: "x*y", params: `{"operation":"integrate"}`, status: E, code: CodeInvalid},
		{name: "inequality", query: "x < 2", params: `{"operation":"integrate"}`, status: E, code: CodeInvalid},
	})
}

// TestQWEDProtocol_Math_Limit pins the limit operation: rational functions
// at a rational point (two-sided or one-sided, 0/0 cancelled exactly, poles
// to ±oo) and at ±infinity.
func TestQWEDProtocol_Math_Limit(t *testing.T) {
	V, F, E, U := engines.Verified, engines.Failed, engines.Error, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "continuous point", query: "x**2 + 1", params: `{"operation":"limit","point":2}`, status: V, fields: map[string]string{"value": "5", "point": "2"}},
		{name: "0/0 cancelled", query: "(x**2-1)/(x-1)", params: `{"operation":"limit","point":1}`, status: V, fields: map[string]string{"value": "2"}},
		{name: "0/0 with a parameter", query: "(x**2-a**2)/(x-a)", params: `{"operation":"limit","point":0,"variable":"x"}`, status: V, fields: map[string]string{"value": "a"}},
		{name: "0/0 multiple root", query: "(x**3 - 3*x + 2)/(x**2 - 2*x + 1)", params: `{"operation":"limit","point":1}`, status: V, fields: map[string]string{"value": "3"}},
		{name: "rational point", query: "(2*x-1)/(4*x**2-1)", params: `{"operation":"limit","point":"1/2","precision":3}`, status: V,
			fields: map[string]string{"value": "1/2", "decimal": "0.500"}},
		{name: "pole from the right", query: "1/x", params: `{"operation":"limit","point":0,"direction":"+"}`, status: V, fields: map[string]string{"value": "oo", "direction": "+"}},
		{name: "pole from the left", query: "1/x", params: `{"operation":"limit","point":0,"direction":"-"}`, status: V, fields: map[string]string{"value": "-oo"}},
		{name: "pole two-sided does not exist", query: "1/x", params: `{"operation":"limit","point":0}`, status: E, code: CodeInvalid},
		{name: "even pole two-sided", query: "-1/(x-3)**2", params: `{"operation":"limit","point":3}`, status: V, fields: map[string]string{"value": "-oo"}},
		{name: "at +oo equal degrees", query: "(2*x**2+1)/(x**2-3)", params: `{"operation":"limit","point":"oo"}`, status: V, fields: map[string]string{"value": "2", "point": "oo"}},
		{name: "at +oo lower degree", query: "x/(x**2+1)", params: `{"operation":"limit","point":"inf"}`, status: V, fields: map[string]string{"value": "0"}},
		{name: "at -oo odd excess", query: "x**3/(x+1)", params: `{"operation":"limit","point":"-oo"}`, status: V, fields: map[string]string{"value": "oo"}},
		{name: "at -oo even excess", query: "x**3/(1-x**2)", params: `{"operation":"limit","point":"-infinity"}`, status: V, fields: map[string]string{"value": "oo"}},
		{name: "claim true", query: "sin(0) + (x**2-4)/(x-2) = 4", params: `{"operation":"limit","point":2}`, status: V},
		{name: "claim false", query: "(x**2-4)/(x-2) = 5", params: `{"operation":"limit","point":2}`, status: F, fields: map[string]string{"expected": "4", "actual": "5"}},
		{name: "claim infinity", query: "1/x**2 = oo", params: `{"operation":"limit","point":0}`, status: V},
		{name: "claim infinity wrong sign", query: "1/x**2 = -oo", params: `{"operation":"limit","point":0}`, status: F, fields: map[string]string{"expected": "oo"}},
		{name: "claim a finite limit of a pole", query: "1/x = 0", params: `{"operation":"limit","point":0}`, status: F, fields: map[string]string{"expected": "does not exist"}},
		{name: "sign depends on a parameter", query: "a/x**2", params: `{"operation":"limit","point":0,"variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "irrational point", query: "x", params: `{"operation":"limit","point":"pi"}`, status: U, code: CodeUnsupported},
		{name: "function of x", query: "sin(x)/x", params: `{"operation":"limit","point":0}`, status: U, code: CodeUnsupported},
		{name: "no point", query: "x", params: `{"operation":"limit"}`, status: E, code: CodeInvalid},
		{name: "direction at infinity", query: "x", params: `{"operation":"limit","point":"oo","direction":"+"}`, status: E, code: CodeInvalid},
		{name: "bad direction", query: "x", params: `{"operation":"limit","point":0,"direction":"left"}`, status: E, code: CodeInvalid},
		{name: "point on another operation", query: "x", params: `{"point":0}`, status: E, code: CodeInvalid},
	})
}

// TestQWEDProtocol_Math_Solve pins the solve operation: every rational
// root (rational root test), a remaining quadratic factor with sqrt, the
// solution set of the domain, roots where the equation is undefined
// dropped, claimed solution sets compared, and UNSUPPORTED past degree 2.
func TestQWEDProtocol_Math_Solve(t *testing.T) {
	V, F, E, U := engines.Verified, engines.Failed, engines.Error, engines.Unsupported
	sols := func(o engines.Outcome) string {
		r, _ := o.Result.(Result)
		if r.Solutions == nil {
			return "<nil>"
		}
		return "{" + strings.Join(*r.Solutions, ", ") + "}"
	}
	for _, tc := range []struct{ query, params, want string }{
		{"x**2 - 5*x + 6 = 0", `{"operation":"solve"}`, "{2, 3}"},
		{"2*x**3 - 3*x**2 - 11*x + 6 = 0", `{"operation":"solve"}`, "{-2, 1/2, 3}"},
		{"x**3 = 0", `{"operation":"solve"}`, "{0}"},
		{"(x-1)**4*(x+2)", `{"operation":"solve"}`, "{-2, 1}"},
		{"x**2 = 2", `{"operation":"solve"}`, "{-sqrt(2), sqrt(2)}"},
		{"x**2 = 8", `{"operation":"solve"}`, "{-2*sqrt(2), 2*sqrt(2)}"},
		{"x**2 - 2*x - 1 = 0", `{"operation":"solve"}`, "{-sqrt(2) + 1, sqrt(2) + 1}"},
		{"-x**2 + 3 = 0", `{"operation":"solve"}`, "{-sqrt(3), sqrt(3)}"},
		{"(x**2-2)**2*(x-1) = 0", `{"operation":"solve"}`, "{1, -sqrt(2), sqrt(2)}"},
		{"x**2 + 1 = 0", `{"operation":"solve"}`, "{}"},
		{"x**2 = 2", `{"operation":"solve","domain":"rational"}`, "{}"},
		{"x**5 - x - 1 = 0", `{"operation":"solve","domain":"rational"}`, "{}"},
		{"2*x**2 - 3*x + 1 = 0", `{"operation":"solve","domain":"integer"}`, "{1}"},
		{"x**2/x = 0", `{"operation":"solve"}`, "{}"},
		{"1/(x-1) = 1/(x**2-1)", `{"operation":"solve"}`, "{0}"},
		{"x + 1 = x", `{"operation":"solve"}`, "{}"},
		{"y**2 = 4*y", `{"operation":"solve","variable":"y"}`, "{0, 4}"},
	} {
		o := verify(t, tc.query, tc.params)
		if o.Status != V || sols(o) != tc.want {
			t.Errorf("%s %s: %s %s (err %+v), want VERIFIED %s", tc.query, tc.params, o.Status, sols(o), o.Err, tc.want)
		}
	}
	runMathCases(t, []mathCase{
		{name: "claimed set", query: "x**2 - 5*x + 6", params: `{"operation":"solve","solutions":[3,"2"]}`, status: V, fields: map[string]string{"expected": "{2, 3}"}},
		{name: "claimed radicals", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(2)","-sqrt(2)","sqrt(2)"]}`, status: V},
		{name: "claimed radicals spelled otherwise", query: "x**2 = 8", params: `{"operation":"solve","solutions":["sqrt(8)","-2*sqrt(2)"]}`, status: V},
		{name: "radicands kept outside solve (replay)", query: "sqrt(8) = 2*sqrt(2)", status: U, code: CodeUnsupported},
		{name: "claimed radicals of fractions", query: "2*x**2 = 1", params: `{"operation":"solve","solutions":["sqrt(1/2)","-1/sqrt(2)"]}`, status: V},
		{name: "claimed radical out of the engine's reach", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(3 - 2*sqrt(2)) + 1","-sqrt(2)"]}`, status: U, code: CodeUnsupported},
		{name: "claimed wrong root", query: "x**2 - 5*x + 6", params: `{"operation":"solve","solutions":[2,4]}`, status: F,
			fields: map[string]string{"message": "the solutions are {2, 3}; not solutions: 4; missing: 3"}},
		{name: "claimed root missing", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(2)"]}`, status: F},
		{name: "claimed the excluded root", query: "x**2/x = 0", params: `{"operation":"solve","solutions":[0]}`, status: F},
		{name: "claimed empty set", query: "x**2 + 1 = 0", params: `{"operation":"solve","solutions":[]}`, status: V},
		{name: "degree 5 without rational roots", query: "x**5 - x - 1 = 0", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
		{name: "complex roots in the complex domain", query: "x**2 + 1 = 0", params: `{"operation":"solve","domain":"complex"}`, status: U, code: CodeUnsupported},
		{name: "identity", query: "(x+1)**2 = x**2 + 2*x + 1", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
		{name: "parameters", query: "x**2 = a", params: `{"operation":"solve","variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "functions", query: "sin(x) = 0", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
		{name: "several variables", query: "x = y", params: `{"operation":"solve"}`, status: E, code: CodeInvalid},
		{name: "solution with a variable", query: "x = 1", params: `{"operation":"solve","solutions":["y"]}`, status: E, code: CodeInvalid},
		{name: "solutions on another operation", query: "x = 1", params: `{"solutions":[1]}`, status: E, code: CodeInvalid},
		{name: "huge coefficients", query: "x**2 - 100000000000000000000001", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
	})
}

// TestQWEDProtocol_Math_RationalDomainAndPrecision pins what
// schemas/params/math.json promises: domain "rational" keeps to rational
// functions over the rationals (pi, e and irrational function values are
// UNSUPPORTED), and precision renders numeric values, exact or not, with
// that many digits while deciding exactly.
func TestQWEDProtocol_Math_RationalDomainAndPrecision(t *testing.T) {
	V, F, U := engines.Verified, engines.Failed, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "rational evaluation", query: "sqrt(4) + 1/3", params: `{"domain":"rational","precision":5}`, status: V,
			fields: map[string]string{"value": "7/3", "decimal": "2.33333", "domain": "rational"}},
		{name: "rational identity", query: "(x**2-1)/(x-1) = x + 1", params: `{"domain":"rational"}`, status: V},
		{name: "rational claim false", query: "1/3 + 1/6 = 0.5", params: `{"domain":"rational","correct":false}`, status: V},
		{name: "rational pi", query: "pi + 1", params: `{"domain":"rational"}`, status: U, code: CodeUnsupported},
		{name: "rational irrational sqrt", query: "sqrt(2)*sqrt(2) = 2", params: `{"domain":"rational"}`, status: U, code: CodeUnsupported},
		{name: "rational symbolic function", query: "exp(x) = exp(x)", params: `{"domain":"rational"}`, status: U, code: CodeUnsupported},
		{name: "precision of a definite integral", query: "x**2", params: `{"operation":"integrate","lower":0,"upper":1,"precision":4}`, status: V,
			fields: map[string]string{"value": "1/3", "decimal": "0.3333"}},
		{name: "precision zero rounds half away", query: "x", params: `{"operation":"integrate","lower":0,"upper":1,"precision":0}`, status: V,
			fields: map[string]string{"value": "1/2", "decimal": "1"}},
		{name: "precision does not loosen a claim", query: "x**2 = 0.3333", params: `{"operation":"integrate","lower":0,"upper":1,"precision":4}`, status: F,
			fields: map[string]string{"decimal": "0.3333"}},
		{name: "precision of a limit", query: "(x**2-1)/(3*x-3)", params: `{"operation":"limit","point":1,"precision":2}`, status: V,
			fields: map[string]string{"value": "2/3", "decimal": "0.67"}},
	})
}

// TestQWEDProtocol_Math_CalculusBounded pins bounded work on pathological
// inputs: each is answered (a limit or UNSUPPORTED), never hangs.
func TestQWEDProtocol_Math_CalculusBounded(t *testing.T) {
	E, U := engines.Error, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "solve past the degree limit", query: "x**1001 = 1", params: `{"operation":"solve"}`, status: E, code: CodeTooLarge},
		{name: "rational integrand past its degree limit", query: "1/x**65", params: `{"operation":"integrate"}`, status: E, code: CodeTooLarge},
		{name: "integrate past the degree limit", query: "x**1000", params: `{"operation":"integrate"}`, status: E, code: CodeTooLarge},
		{name: "root test on huge coefficients", query: "(x-1)**500*(x+1)**499 = 0", params: `{"operation":"solve"}`, status: E, code: CodeTooLarge},
		{name: "huge bound", query: "x**999", params: `{"operation":"integrate","lower":0,"upper":"10**1000"}`, status: E, code: CodeTooLarge},
	})
	// 735134400 has 1344 divisors and 595973171 (19*23*29*31*37*41) 64:
	// 86016 candidates, past MaxRootCandidates.
	o := verify(t, "735134400*x**3 - 595973171 = 0", `{"operation":"solve"}`)
	if o.Status != U || !strings.Contains(o.Err.Message, "20000 candidates") {
		t.Errorf("many root candidates: %s %+v", o.Status, o.Err)
	}
	many := make([]string, MaxSolutions+1)
	for i := range many {
		many[i] = "1"
	}
	o = verify(t, "x = 1", `{"operation":"solve","solutions":[`+strings.Join(many, ",")+`]}`)
	if o.Status != E || o.Err.Code != CodeTooLarge || o.Err.Details["limit"] != "max_solutions" {
		t.Errorf("too many solutions: %s %+v", o.Status, o.Err)
	}
}

// TestQWEDProtocol_Math_CalculusLimitsBothSides pins the new limits on both
// sides: at the limit the query is decided, one past it is QWED-REQ-004
// naming the limit (or UNSUPPORTED for the rational root test, which is a
// limit of what the engine decides, not of the request).
func TestQWEDProtocol_Math_CalculusLimitsBothSides(t *testing.T) {
	ones := func(n int) string {
		return `{"operation":"solve","solutions":[` + strings.TrimSuffix(strings.Repeat("1,", n), ",") + `]}`
	}
	for _, tc := range []struct{ limit, within, withinParams, past, pastParams string }{
		{"max_solutions", "x = 1", ones(MaxSolutions), "x = 1", ones(MaxSolutions + 1)},
		{"max_rational_integrand_degree", "1/x**64", `{"operation":"integrate"}`, "1/x**65", `{"operation":"integrate"}`},
	} {
		if o := verify(t, tc.within, tc.withinParams); o.Status != engines.Verified {
			t.Errorf("within %s: %s %+v", tc.limit, o.Status, o.Err)
		}
		o := verify(t, tc.past, tc.pastParams)
		if o.Status != engines.Error || o.Err.Code != CodeTooLarge || o.Err.Details["limit"] != tc.limit {
			t.Errorf("past %s: %s %+v", tc.limit, o.Status, o.Err)
		}
	}
	if o := verify(t, "x**3 - 10000000000 = 0", `{"operation":"solve","domain":"rational"}`); o.Status != engines.Verified {
		t.Errorf("within max_root_coefficient: %s %+v", o.Status, o.Err)
	}
	if o := verify(t, "x**3 - 10000000001 = 0", `{"operation":"solve","domain":"rational"}`); o.Status != engines.Unsupported {
		t.Errorf("past max_root_coefficient: %s %+v", o.Status, o.Err)
	}
}
