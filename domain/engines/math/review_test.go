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
// [-1, 0] is -1/2" were wrong answers; a cancelled factor in functions
// (abs(x) - x, zero on [0, oo); exp(2*x) - exp(x)**2, zero everywhere,
// which the engine does not know) hid where a quotient is undefined.
// Removable points (x**2/x) still answer: a limit or an integral does not
// see a point.
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
		{name: "a cancelled abs hides an interval", query: "(abs(x) - x)/(abs(x) - x)", params: `{"operation":"limit","point":1,"variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "a cancelled exp hides the whole line", query: "(exp(2*x) - exp(x)**2)/(exp(2*x) - exp(x)**2)", params: `{"operation":"integrate","lower":1,"upper":2,"variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "any function of x", query: "sin(x)**2 + cos(x)**2 + x", params: `{"operation":"limit","point":0}`, status: U, code: CodeUnsupported},
		{name: "removable point still answers", query: "x**2/x", params: `{"operation":"integrate","lower":-1,"upper":1}`, status: V,
			fields: map[string]string{"value": "0"}},
		{name: "functions of constants still answer", query: "sqrt(4)*x", params: `{"operation":"limit","point":-1}`, status: V,
			fields: map[string]string{"value": "-2"}},
		{name: "indefinite integral keeps the generic answer", query: "sqrt(x)**2", params: `{"operation":"integrate"}`, status: V,
			fields: map[string]string{"value": "1/2*x**2"}},
	})
}

// TestQWEDProtocol_Math_Limit_Parameters pins limits of expressions with
// parameters (variables other than the limit's): the answer must hold for
// every value of the parameters, so a denominator whose value at the point
// (or whose leading coefficient at infinity) is a non-constant polynomial
// in them, zero for some value, is UNSUPPORTED. (a + x)/(a + 2*x) at 0 was
// answered 1, but for a = 0 the limit is 1/2; a*x/(a*x + 1) at oo was 1,
// but for a = 0 it is 0.
func TestQWEDProtocol_Math_Limit_Parameters(t *testing.T) {
	V, F, U := engines.Verified, engines.Failed, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "denominator vanishing for a = 0", query: "(a + x)/(a + 2*x)", params: `{"operation":"limit","point":0,"variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "false claim for a = 0", query: "(a + x)/(a + 2*x) = 1", params: `{"operation":"limit","point":0,"variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "leading coefficient vanishing for a = 0", query: "a*x/(a*x + 1)", params: `{"operation":"limit","point":"oo","variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "degree dropping for a = 0", query: "x/(a*x + 1)", params: `{"operation":"limit","point":"-oo","variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "value of a parametric pole", query: "1/(x - a)", params: `{"operation":"limit","point":1,"variable":"x"}`, status: U, code: CodeUnsupported},
		{name: "pole whose rest depends on a", query: "1/((x - 1)*(x - a))", params: `{"operation":"limit","point":1,"variable":"x","direction":"+"}`, status: U, code: CodeUnsupported},
		{name: "constant denominator at the point", query: "(x + 1)/(a*x + 1)", params: `{"operation":"limit","point":0,"variable":"x"}`, status: V, fields: map[string]string{"value": "1"}},
		{name: "parametric numerator at infinity", query: "(a*x + 1)/(x + 1)", params: `{"operation":"limit","point":"oo","variable":"x"}`, status: V, fields: map[string]string{"value": "a"}},
		{name: "0/0 cancelled for every a", query: "(a*x**2 - a)/(x - 1)", params: `{"operation":"limit","point":1,"variable":"x"}`, status: V, fields: map[string]string{"value": "2*a"}},
		{name: "claim for every a", query: "(a*x**2 - a)/(x - 1) = a + a", params: `{"operation":"limit","point":1,"variable":"x"}`, status: V},
		{name: "false claim for every a", query: "(a*x**2 - a)/(x - 1) = a", params: `{"operation":"limit","point":1,"variable":"x"}`, status: F},
		{name: "transcendental non-zero denominator", query: "1/(x - pi)", params: `{"operation":"limit","point":1}`, status: V, fields: map[string]string{"value": "-1/(pi - 1)"}},
	})
}

// TestQWEDProtocol_Math_Solve_ApproximateRoots pins that a claimed root
// given as a decimal approximation of an irrational root is FAILED, not
// UNSUPPORTED: q - r*sqrt(m) with q, r rational, r != 0 and m not a square
// is non-zero (sqrt(m) is irrational), whatever the precision asked. The
// engine could not decide it and answered UNSUPPORTED for any claimed set
// holding a rational non-root beside irrational roots.
func TestQWEDProtocol_Math_Solve_ApproximateRoots(t *testing.T) {
	F, U := engines.Failed, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "decimals of sqrt(2)", query: "x**2 = 2", params: `{"operation":"solve","solutions":["1.41421356","-1.41421356"]}`, status: F,
			fields: map[string]string{"message": "the solutions are {-sqrt(2), sqrt(2)}; not solutions: 35355339/25000000, -35355339/25000000; missing: -sqrt(2), sqrt(2)"}},
		{name: "decimals with precision", query: "x**2 = 2", params: `{"operation":"solve","precision":6,"solutions":["1.414214","-1.414214"]}`, status: F},
		{name: "a rational non-root beside the radicals", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(2)","-sqrt(2)","1/1000"]}`, status: F},
		{name: "approximate quadratic root", query: "x**2 - 2*x - 1 = 0", params: `{"operation":"solve","solutions":["2.41421356","1-sqrt(2)"]}`, status: F},
		{name: "fraction of radicals", query: "x**2 - 2*x - 1 = 0", params: `{"operation":"solve","solutions":["1/(sqrt(2)-1)","3/2"]}`, status: F},
		{name: "another radical stays undecided", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(3)","-sqrt(2)"]}`, status: U, code: CodeUnsupported},
	})
}

// TestQWEDProtocol_Math_Limit_InfinitySpellings pins the spellings of an
// infinite limit in a claim: the ones params.point accepts (oo, inf,
// infinity, signed) mean infinity there too — "1/x = inf" at 0+ was
// FAILED ("is oo, not inf") — and infinity inside an expression (2*oo,
// oo - oo, 1/oo, or in the limit's expression) is refused, not compared as
// a variable named oo ("oo = oo" was FAILED, "oo" alone had the limit oo).
func TestQWEDProtocol_Math_Limit_InfinitySpellings(t *testing.T) {
	V, F, E := engines.Verified, engines.Failed, engines.Error
	runMathCases(t, []mathCase{
		{name: "inf", query: "1/x = inf", params: `{"operation":"limit","point":0,"direction":"+"}`, status: V, fields: map[string]string{"expected": "oo"}},
		{name: "infinity", query: "x**2 = infinity", params: `{"operation":"limit","point":"-oo"}`, status: V},
		{name: "minus inf", query: "1/x = -inf", params: `{"operation":"limit","point":0,"direction":"-"}`, status: V},
		{name: "plus infinity", query: "x = +infinity", params: `{"operation":"limit","point":"oo"}`, status: V},
		{name: "wrong sign still fails", query: "1/x = -infinity", params: `{"operation":"limit","point":0,"direction":"+"}`, status: F},
		{name: "does not exist is not inf", query: "1/x = inf", params: `{"operation":"limit","point":0}`, status: F, fields: map[string]string{"expected": "does not exist"}},
		{name: "a multiple of oo", query: "1/x = 2*oo", params: `{"operation":"limit","point":0,"direction":"+"}`, status: E, code: CodeInvalid},
		{name: "one over oo", query: "1/x = 1/oo", params: `{"operation":"limit","point":"oo"}`, status: E, code: CodeInvalid},
		{name: "oo minus oo", query: "x = oo - oo", params: `{"operation":"limit","point":"oo"}`, status: E, code: CodeInvalid},
		{name: "double negation", query: "x = --oo", params: `{"operation":"limit","point":"oo"}`, status: E, code: CodeInvalid},
		{name: "oo in the expression", query: "oo", params: `{"operation":"limit","point":0,"variable":"x"}`, status: E, code: CodeInvalid},
		{name: "oo on both sides", query: "oo = oo", params: `{"operation":"limit","point":0,"variable":"x"}`, status: E, code: CodeInvalid},
	})
}

// TestQWEDProtocol_Math_Calculus_IntegerDomain pins the integer domain of
// the new operations as the evaluation keeps it: a numeric value that is
// not an integer is UNSUPPORTED ("the integer domain has no exact
// division"); the integral of x over [0, 1] was VERIFIED 1/2 there.
func TestQWEDProtocol_Math_Calculus_IntegerDomain(t *testing.T) {
	V, U := engines.Verified, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "non-integer definite integral", query: "x", params: `{"operation":"integrate","lower":0,"upper":1,"domain":"integer"}`, status: U, code: CodeUnsupported},
		{name: "non-integer claimed integral", query: "x = 1/2", params: `{"operation":"integrate","lower":0,"upper":1,"domain":"integer"}`, status: U, code: CodeUnsupported},
		{name: "non-integer limit", query: "x/2", params: `{"operation":"limit","point":1,"domain":"integer"}`, status: U, code: CodeUnsupported},
		{name: "integer definite integral", query: "2*x", params: `{"operation":"integrate","lower":0,"upper":3,"domain":"integer"}`, status: V, fields: map[string]string{"value": "9"}},
		{name: "integer limit", query: "(x**2 - 4)/(x - 2)", params: `{"operation":"limit","point":2,"domain":"integer"}`, status: V, fields: map[string]string{"value": "4"}},
		{name: "infinite limit", query: "1/(x-1)**2", params: `{"operation":"limit","point":1,"domain":"integer"}`, status: V, fields: map[string]string{"value": "oo"}},
	})
}

// TestQWEDProtocol_Math_Integrate_ImproperBounds pins infinite bounds:
// an improper integral (∫ from 1 to oo of 1/x**2 is 1) is a fair question
// the engine does not compute, so it is UNSUPPORTED naming why, not an
// invalid request "without variables" as before; and infinity is spelled
// with the unicode minus as params.point's other values are.
func TestQWEDProtocol_Math_Integrate_ImproperBounds(t *testing.T) {
	V, U := engines.Verified, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "upper oo", query: "1/x**2", params: `{"operation":"integrate","lower":1,"upper":"oo"}`, status: U, code: CodeUnsupported},
		{name: "lower -inf", query: "x**2 = 1", params: `{"operation":"integrate","lower":"-inf","upper":0}`, status: U, code: CodeUnsupported},
		{name: "limit at unicode minus infinity", query: "1/x", params: `{"operation":"limit","point":"−oo"}`, status: V, fields: map[string]string{"point": "-oo", "value": "0"}},
	})
}

// TestQWEDProtocol_Math_Solve_IrrationalRootOutsideDomain pins that an
// irrational root is checked against the domain of the equation as
// written, as a rational one is: sqrt(x)**2 = 2 - x**2 + x normalises to
// x**2 = 2, but sqrt(-sqrt(2)) is not real, so -sqrt(2) is no solution
// (it was answered). The sign of a + b*sqrt(m) is decided exactly.
func TestQWEDProtocol_Math_Solve_IrrationalRootOutsideDomain(t *testing.T) {
	F, U := engines.Failed, engines.Unsupported
	solveSets(t, [][2]string{
		{"sqrt(x)**2 = 2 - x**2 + x", "{sqrt(2)}"},
		{"log(x) - log(x) + x**2 = 2", "{sqrt(2)}"},
		{"sqrt(-x)**2 + x**2 = 2 - x", "{-sqrt(2)}"},
		{"sqrt(-x) - sqrt(-x) = x**2 - 2", "{-sqrt(2)}"},
		{"x**(1/2)*x**(1/2) = x**2 + x - 2", "{sqrt(2)}"},
		{"sqrt(x - 1)**2 = x**2 - 3 + x", "{sqrt(2)}"},
		{"sqrt(x - 7/5)**2 = x**2 + x - 17/5", "{sqrt(2)}"},
		{"sqrt(x - 3/2)**2 = x**2 + x - 7/2", "{}"},
		{"log(x) - log(x) + x**2 = 2*x + 1", "{sqrt(2) + 1}"},
		{"log(x**2 - 2*x) - log(x**2 - 2*x) + x**2 = 2*x + 1", "{-sqrt(2) + 1, sqrt(2) + 1}"},
	})
	runMathCases(t, []mathCase{
		{name: "the excluded root claimed", query: "sqrt(x)**2 = 2 - x**2 + x", params: `{"operation":"solve","solutions":["sqrt(2)","-sqrt(2)"]}`, status: F},
		{name: "complex domain", query: "sqrt(x)**2 = 2 - x**2 + x", params: `{"operation":"solve","domain":"complex"}`, status: U, code: CodeUnsupported},
		{name: "undecidable sign", query: "0*sqrt(x + pi) + x**2 = 2", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
	})
}

// TestQWEDProtocol_Math_Solve_UndecidableDefinedness pins that solve keeps
// a root only when the equation as written is decidably defined there:
// every denominator involving x decidably non-zero and every argument of
// sqrt, log, ln decidably in its domain. The normal form cancelled factors
// the engine could not see were zero: 0/(sqrt(2*x) - sqrt(2)*sqrt(x)) +
// x = 3 answered {3} (sqrt(6) - sqrt(2)*sqrt(3) is 0), and
// (exp(2*x) - exp(x)**2)/(exp(2*x) - exp(x)**2) + x**2 = 3 answered
// {-sqrt(2), sqrt(2)} for an equation defined nowhere.
func TestQWEDProtocol_Math_Solve_UndecidableDefinedness(t *testing.T) {
	U := engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "product of radicals", query: "0/(sqrt(2*x) - sqrt(2)*sqrt(x)) + x = 3", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
		{name: "exp identity unknown to the engine", query: "(exp(2*x) - exp(x)**2)/(exp(2*x) - exp(x)**2) + x**2 = 3", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
		{name: "log of a sign the engine cannot decide", query: "log(sin(x)) - log(sin(x)) + x = 4", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
		{name: "negative power of a cancelled factor", query: "(abs(x)**2 - x**2)**(-1)*0 + x**2 = 2", params: `{"operation":"solve"}`, status: U, code: CodeUnsupported},
	})
	solveSets(t, [][2]string{
		{"exp(x)/exp(x) = x", "{1}"},
		{"(abs(x) - x)/(abs(x) - x) + x**2 = 2", "{-1}"},
		{"sqrt(x)/sqrt(x) = x**2", "{1}"},
		{"0/(x - pi) + x = 1", "{1}"},
	})
}

// solveSets checks the solution set solve answers for each {query, set}.
func solveSets(t *testing.T, cases [][2]string) {
	t.Helper()
	for _, tc := range cases {
		o := verify(t, tc[0], `{"operation":"solve"}`)
		got := "<nil>"
		if r, _ := o.Result.(Result); r.Solutions != nil {
			got = "{" + strings.Join(*r.Solutions, ", ") + "}"
		}
		if o.Status != engines.Verified || got != tc[1] {
			t.Errorf("%s: %s %s (err %+v), want VERIFIED %s", tc[0], o.Status, got, o.Err, tc[1])
		}
	}
}

// TestQWEDProtocol_Math_Solve_RadicandTrialBounded pins the charge of the
// square factors taken out of a radicand (trial division up to
// MaxSquareTrial): it was charged about a hundredth of its cost, so 1000
// claimed roots sqrt(<a 1000-digit number>) took 45 s before max_work
// fired, and 20 of them 2 s for an UNSUPPORTED answer. Now 20 are past
// max_work and one still answers.
func TestQWEDProtocol_Math_Solve_RadicandTrialBounded(t *testing.T) {
	root := `"sqrt(` + strings.Repeat("7", 999) + `3)"`
	o := verify(t, "x**2 = 2", `{"operation":"solve","solutions":[`+strings.TrimSuffix(strings.Repeat(root+",", 20), ",")+`]}`)
	if o.Status != engines.Error || o.Err.Code != CodeTooLarge || o.Err.Details["limit"] != "max_work" {
		t.Errorf("20 large radicands: %s %+v, want ERROR %s max_work", o.Status, o.Err, CodeTooLarge)
	}
	if o := verify(t, "x**2 = 2", `{"operation":"solve","solutions":[`+root+`]}`); o.Status != engines.Unsupported {
		t.Errorf("one large radicand: %s %+v, want UNSUPPORTED", o.Status, o.Err)
	}
}

// TestQWEDProtocol_Math_Calculus_UndefinedValues pins that a value written
// without variables (a claimed limit, integral or solution, a bound, a
// point) is refused when a sqrt, log or ln in it has an argument out of
// the real domain that eval kept as a symbol: sqrt(1 - sqrt(2))**2 + sqrt(2)
// normalises to 1, so "the limit of 1/x at oo is sqrt(1 - sqrt(2))**2 +
// sqrt(2) - 1" and a solution set holding such a value were VERIFIED.
func TestQWEDProtocol_Math_Calculus_UndefinedValues(t *testing.T) {
	V, E, U := engines.Verified, engines.Error, engines.Unsupported
	runMathCases(t, []mathCase{
		{name: "claimed solution", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(1 - sqrt(2))**2 + 2*sqrt(2) - 1","-sqrt(2)"]}`, status: E, code: CodeInvalid},
		{name: "claimed limit", query: "1/x = sqrt(1 - sqrt(2))**2 + sqrt(2) - 1", params: `{"operation":"limit","point":"oo"}`, status: E, code: CodeInvalid},
		{name: "claimed integral", query: "x = log(1 - sqrt(2)) - log(1 - sqrt(2)) + 1/2", params: `{"operation":"integrate","lower":0,"upper":1}`, status: E, code: CodeInvalid},
		{name: "bound", query: "x", params: `{"operation":"integrate","lower":0,"upper":"sqrt(1 - sqrt(2))**2 + sqrt(2)"}`, status: E, code: CodeInvalid},
		{name: "point", query: "x", params: `{"operation":"limit","point":"sqrt(1 - sqrt(2))**2 + sqrt(2)"}`, status: E, code: CodeInvalid},
		{name: "undecidable sign", query: "x", params: `{"operation":"integrate","lower":0,"upper":"sqrt(3 - pi)**2 + pi"}`, status: U, code: CodeUnsupported},
		{name: "positive irrational argument", query: "x**2 = 2", params: `{"operation":"solve","solutions":["sqrt(3 - 2*sqrt(2))**2 + 2*sqrt(2) - 3 + sqrt(2)","-sqrt(2)"]}`, status: V},
		{name: "positive transcendental argument", query: "x", params: `{"operation":"integrate","lower":0,"upper":"sqrt(pi + 1)"}`, status: V, fields: map[string]string{"value": "1/2*pi + 1/2"}},
	})
}
