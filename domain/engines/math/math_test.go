package math

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// verify runs the engine on one query with raw params.
func verify(t testing.TB, query, params string) engines.Outcome {
	t.Helper()
	req := engines.Request{Query: query, Type: "math"}
	if params != "" {
		req.Params = json.RawMessage(params)
	}
	return New().Verify(context.Background(), req)
}

// resultFields is the outcome's result as a JSON object.
func resultFields(t testing.TB, o engines.Outcome) map[string]any {
	t.Helper()
	if o.Result == nil {
		return nil
	}
	b, err := json.Marshal(o.Result)
	if err != nil {
		t.Fatalf("encoding result: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decoding result: %v", err)
	}
	return m
}

type mathCase struct {
	name   string
	query  string
	params string
	status engines.Status
	code   string            // the §8 code of Outcome.Err ("" = no error)
	fields map[string]string // result fields that must hold these strings
	fix    string            // Outcome.Corrected
	pos    int               // details.position of the error (0 = not checked)
}

// TestSeed002_5_2_1_MathClaims is the table of the math engine: the seed's
// examples (§5.2.1, §6.3.1, §6.3.2) and the hard cases of each rule of the
// package documentation.
func TestSeed002_5_2_1_MathClaims(t *testing.T) {
	V, F, C, E, U := engines.Verified, engines.Failed, engines.Corrected, engines.Error, engines.Unsupported
	cases := []mathCase{
		// Seed examples.
		{name: "seed 5.2.1 identity", query: "x**2 + 2*x + 1 = (x+1)**2", params: `{"domain":"real","precision":10}`, status: V,
			fields: map[string]string{"left_side": "x**2 + 2*x + 1", "right_side": "(x + 1)**2", "simplified_difference": "0", "message": "Algebraic identity confirmed"}},
		{name: "seed 5.3 batch item 2+2=4", query: "2+2=4", status: V, fields: map[string]string{"simplified_difference": "0"}},
		{name: "seed 5.3 batch item 3*3=9", query: "3*3=9", status: V},
		{name: "seed 6.3.2 wrong sum is corrected", query: "2+2=5", status: C, fix: "2 + 2 = 4",
			fields: map[string]string{"expected": "4", "actual": "5"}},
		{name: "seed 6.3.2 wrong sum FAILED when corrections are off", query: "2+2=5", params: `{"correct":false}`, status: F,
			fields: map[string]string{"expected": "4", "actual": "5", "message": "2 + 2 = 4, not 5"}},
		{name: "seed 001 calculate 2+2", query: "2+2", status: V, fields: map[string]string{"value": "4", "kind": "evaluation"}},
		// Arithmetic.
		{name: "precedence", query: "2+3*4 = 14", status: V},
		{name: "left associative minus", query: "10-4-3 = 3", status: V},
		{name: "left associative division", query: "8/4/2 = 1", status: V},
		{name: "power is right associative", query: "2^3^2 = 512", status: V},
		{name: "double star power", query: "2**10 = 1024", status: V},
		{name: "sign binds looser than power", query: "-2**2 = -4", status: V},
		{name: "signed exponent", query: "2^-2 = 1/4", status: V},
		{name: "parenthesised negative base", query: "(-2)**3 = -8", status: V},
		{name: "exact decimals", query: "0.1 + 0.2 = 0.3", status: V},
		{name: "scientific notation", query: "1.5e3 = 1500", status: V},
		{name: "negative scientific exponent", query: "2e-3 = 0.002", status: V},
		{name: "fractions", query: "1/3 + 1/6", status: V, fields: map[string]string{"value": "1/2"}},
		{name: "big integers exactly", query: "2^100 = 1267650600228229401496703205376", status: V},
		{name: "big wrong product corrected", query: "123456789*987654321 = 121932631112635260", status: C, fix: "123456789*987654321 = 121932631112635269"},
		{name: "unicode operators", query: "6 × 7 ÷ 2 − 1 = 20", status: V},
		{name: "double equals", query: "7*6 == 42", status: V},
		{name: "wrong claim with expression on the right is FAILED", query: "2+2 = 3+3", status: F, fields: map[string]string{"expected": "4", "actual": "6"}},
		{name: "negative literal right side is corrected", query: "3-5 = -3", status: C, fix: "3 - 5 = -2"},
		{name: "precision renders a decimal", query: "1/3", params: `{"precision":5}`, status: V, fields: map[string]string{"value": "1/3", "decimal": "0.33333"}},
		{name: "rational corrected exactly", query: "1/3 = 0.33", status: C, fix: "1/3 = 1/3"},
		// Comparisons.
		{name: "greater than", query: "3 > 2", status: V},
		{name: "false greater or equal", query: "2^10 >= 1025", status: F},
		{name: "not equal", query: "1/2 != 0.5", status: F},
		{name: "less or equal unicode", query: "1 ≤ 1", status: V},
		{name: "comparison with variables unsupported", query: "x > 0", status: U, code: CodeUnsupported},
		// Algebra.
		{name: "implicit products accepted", query: "x^2+2x+1=(x+1)^2", status: V},
		{name: "difference of squares", query: "(x+y)*(x-y) = x^2 - y^2", status: V},
		{name: "binomial cube", query: "(a+b)^3 = a^3 + 3a^2*b + 3a*b^2 + b^3", status: V},
		{name: "false identity gives the difference", query: "(x+1)^2 = x^2 + 1", status: F, fields: map[string]string{"simplified_difference": "2*x"}},
		{name: "equation is not an identity", query: "2*x = 4", status: F, fields: map[string]string{"simplified_difference": "2*x - 4"}},
		{name: "rational function cancels (univariate gcd)", query: "(x^2-1)/(x-1) = x+1", status: V},
		{name: "rational function cancels (multivariate exact division)", query: "(x^2-y^2)/(x-y) = x+y", status: V},
		{name: "x/x is 1 where defined", query: "x/x = 1", status: V},
		{name: "partial fractions", query: "1/(x-1) - 1/(x+1) = 2/(x^2-1)", status: V},
		{name: "rational coefficients", query: "x/2 + x/3 = 5x/6", status: V},
		{name: "false rational identity", query: "1/x + 1/y = 1/(x+y)", status: F},
		{name: "simplify a bare expression", query: "(x+1)^2 - x^2", status: V, fields: map[string]string{"value": "2*x + 1"}},
		{name: "many variables", query: "(a+b+c)^2 = a^2+b^2+c^2+2*a*b+2*a*c+2*b*c", status: V},
		// Functions.
		{name: "sqrt exact", query: "sqrt(16) = 4", status: V},
		{name: "sqrt of a fraction", query: "sqrt(9/4) = 1.5", status: V},
		{name: "sqrt squared", query: "sqrt(2)*sqrt(2) = 2", status: V},
		{name: "sqrt(2) alone has no exact value", query: "sqrt(2)", status: U, code: CodeUnsupported},
		{name: "rational power of a perfect power", query: "8^(2/3) = 4", status: V},
		{name: "sin(0)", query: "sin(0) = 0", status: V},
		{name: "cos(pi)", query: "cos(pi) = -1", status: V},
		{name: "sin(pi/6)", query: "sin(pi/6) = 1/2", status: V},
		{name: "sin of a multiple of pi", query: "sin(7*pi)", status: V, fields: map[string]string{"value": "0"}},
		{name: "tan(pi/4)", query: "tan(pi/4) = 1", status: V},
		{name: "odd symmetry of sin", query: "sin(-x) = -sin(x)", status: V},
		{name: "pythagorean identity", query: "sin(x)^2 + cos(x)^2 = 1", status: V},
		{name: "exp and log", query: "exp(0) + log(1) = 1", status: V},
		{name: "log of a power of e", query: "ln(e^3) = 3", status: V},
		{name: "exp(log(x))", query: "exp(log(x)) = x", status: V},
		{name: "sin(1) is not decided", query: "sin(1) = 0.8414709848", status: U, code: CodeUnsupported},
		{name: "unknown trig identity is not guessed", query: "sin(2x) = 2sin(x)cos(x)", status: U, code: CodeUnsupported},
		{name: "pi is not a rational", query: "pi = 3.14", status: F, fields: map[string]string{"expected": "pi", "actual": "3.14"}},
		{name: "abs of a constant", query: "abs(-3/2) = 1.5", status: V},
		{name: "symbolic exponent unsupported", query: "2^x = 4", status: U, code: CodeUnsupported},
		{name: "fractional power of a negative unsupported", query: "(-8)^(1/3)", status: U, code: CodeUnsupported},
		// Derivatives.
		{name: "derivative of a polynomial", query: "d/dx (x**3 + 2*x) = 3*x**2 + 2", status: V, fields: map[string]string{"left_side": "d/dx (x**3 + 2*x)"}},
		{name: "wrong derivative", query: "d/dx (x^3) = 3x", status: F, fields: map[string]string{"simplified_difference": "3*x**2 - 3*x"}},
		{name: "derivative operation", query: "x**3 + 2*x", params: `{"operation":"derivative","variable":"x"}`, status: V,
			fields: map[string]string{"value": "3*x**2 + 2", "kind": "derivative", "variable": "x"}},
		{name: "derivative operation infers the variable", query: "x^2 = 2x", params: `{"operation":"derivative"}`, status: V},
		{name: "derivative operation needs a variable among several", query: "x*y", params: `{"operation":"derivative"}`, status: E, code: CodeInvalid},
		{name: "product rule", query: "diff(x*sin(x), x) = sin(x) + x*cos(x)", status: V},
		{name: "chain rule", query: "d/dx (sin(x^2)) = 2x cos(x^2)", status: V},
		{name: "quotient rule", query: "d/dx (1/x) = -1/x^2", status: V},
		{name: "exp chain", query: "d/dx (exp(3x)) = 3exp(3x)", status: V},
		{name: "log derivative", query: "d/dx (log(x^2+1)) = 2x/(x^2+1)", status: V},
		{name: "sqrt derivative", query: "d/dx (sqrt(x)) = 1/(2*sqrt(x))", status: V},
		{name: "tan derivative", query: "d/dx (tan(x)) = 1/cos(x)^2", status: V},
		{name: "partial derivative", query: "d/dy (x^2*y^3) = 3x^2*y^2", status: V},
		{name: "second derivative", query: "d/dx (d/dx (x^4)) = 12x^2", status: V},
		{name: "abs derivative unsupported", query: "d/dx (abs(x))", status: U, code: CodeUnsupported},
		// Refusals.
		{name: "1/2(3+1) is ambiguous", query: "1/2(3+1)", status: E, code: CodeSyntax, pos: 3},
		{name: "1/2x is ambiguous", query: "1/2x", status: E, code: CodeSyntax, pos: 3},
		{name: "x^2y is ambiguous", query: "x^2y = 1", status: E, code: CodeSyntax, pos: 3},
		{name: "unknown function call is ambiguous", query: "f(x) = 1", status: E, code: CodeSyntax, pos: 1},
		{name: "run-together variables are ambiguous", query: "(x+y)^2 = x^2+2xy+y^2", status: E, code: CodeSyntax, pos: 15},
		{name: "number after a factor", query: "(x+1)2", status: E, code: CodeSyntax, pos: 5},
		{name: "missing closing parenthesis", query: "(1+2", status: E, code: CodeSyntax, pos: 4},
		{name: "two relations", query: "1 = 1 = 1", status: E, code: CodeSyntax, pos: 6},
		{name: "empty query", query: "   ", status: E, code: CodeSyntax},
		{name: "natural language", query: "what is two plus two?", status: E, code: CodeSyntax},
		{name: "derivative needs parentheses", query: "d/dx x^2", status: E, code: CodeSyntax, pos: 5},
		{name: "division by zero", query: "1/0", status: E, code: CodeInvalid, pos: 1},
		{name: "symbolic division by zero", query: "x/(x-x)", status: E, code: CodeInvalid, pos: 1},
		{name: "zero to the zero", query: "0^0", status: E, code: CodeInvalid},
		{name: "log of zero", query: "log(0)", status: E, code: CodeInvalid},
		{name: "sqrt of a negative in the reals", query: "sqrt(-4)", status: E, code: CodeInvalid},
		{name: "sqrt of a negative in the complex domain is unsupported", query: "sqrt(-4)", params: `{"domain":"complex"}`, status: U, code: CodeUnsupported},
		{name: "tan(pi/2) undefined", query: "tan(pi/2)", status: E, code: CodeInvalid},
		// Params.
		{name: "integer domain", query: "7*6 = 42", params: `{"domain":"integer"}`, status: V},
		{name: "integer domain refuses decimals", query: "0.5 + 0.5 = 1", params: `{"domain":"integer"}`, status: E, code: CodeInvalid},
		{name: "integer domain has no exact division", query: "7/2 = 3", params: `{"domain":"integer"}`, status: U, code: CodeUnsupported},
		{name: "integer domain identities", query: "(n+1)^2 = n^2+2n+1", params: `{"domain":"integer"}`, status: V},
		{name: "complex domain arithmetic", query: "(x+1)^2 = x^2+2x+1", params: `{"domain":"complex"}`, status: V},
		{name: "unknown domain", query: "1=1", params: `{"domain":"p-adic"}`, status: E, code: CodeInvalid},
		{name: "precision of the wrong type", query: "1=1", params: `{"precision":"10"}`, status: E, code: CodeInvalid},
		{name: "fractional precision", query: "1=1", params: `{"precision":10.5}`, status: E, code: CodeInvalid},
		{name: "precision out of range", query: "1=1", params: `{"precision":1001}`, status: E, code: CodeInvalid},
		{name: "unknown params field", query: "1=1", params: `{"tolerance":0.1}`, status: E, code: CodeInvalid},
		{name: "verify operation needs a claim", query: "1+1", params: `{"operation":"verify"}`, status: E, code: CodeInvalid},
		{name: "evaluate operation refuses a claim", query: "1+1=2", params: `{"operation":"evaluate"}`, status: E, code: CodeInvalid},
		{name: "variable names a function", query: "x", params: `{"operation":"derivative","variable":"sin"}`, status: E, code: CodeInvalid},
	}
	runMathCases(t, cases)
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
}

// TestSeed002_6_3_1_VerifiedResultShape pins the result of §6.3.1 field by
// field, encoded.
func TestSeed002_6_3_1_VerifiedResultShape(t *testing.T) {
	o := verify(t, "x**2 + 2*x + 1 = (x+1)**2", `{"domain":"real","precision":10}`)
	b, err := json.Marshal(o.Result)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"is_valid":true,"kind":"identity","left_side":"x**2 + 2*x + 1","right_side":"(x + 1)**2","relation":"=",` +
		`"simplified_difference":"0","variables":["x"],"domain":"real","message":"Algebraic identity confirmed"}`
	if string(b) != want {
		t.Fatalf("result\n got %s\nwant %s", b, want)
	}
}

// TestSeed002_8_4_SyntaxErrorDetails pins the §8.4 details of a syntax
// error: position, expected and found.
func TestSeed002_8_4_SyntaxErrorDetails(t *testing.T) {
	o := verify(t, "(AND (GT x 5)", "")
	if o.Status != engines.Error || o.Err.Code != CodeSyntax {
		t.Fatalf("outcome %+v", o)
	}
	d := o.Err.Details
	if d["position"] != 5 || d["expected"] == "" || d["found"] != "'('" {
		t.Fatalf("details %v", d)
	}
	o = verify(t, "(1+2", "")
	if d := o.Err.Details; d["position"] != 4 || d["expected"] != "')'" || d["found"] != "end of input" {
		t.Fatalf("details %v", d)
	}
}

// TestSeed002_6_1_Determinism pins that the same request gives the same
// outcome byte for byte, whatever was asked before (map order, atom
// registries and work budgets never leak between requests).
func TestSeed002_6_1_Determinism(t *testing.T) {
	queries := []string{
		"x**2 + 2*x + 1 = (x+1)**2", "2+2=5", "d/dx (sin(x)*exp(x)) = exp(x)*(sin(x)+cos(x))",
		"(a+b+c)^4", "1/2(3+1)", "sin(2x) = 2sin(x)cos(x)", "1/(x-1) + 1/(y+1)",
	}
	enc := func(o engines.Outcome) string {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := map[string]string{}
	for _, q := range queries {
		first[q] = enc(New().Verify(context.Background(), engines.Request{Query: q, IncludeProof: true}))
	}
	for i := len(queries) - 1; i >= 0; i-- {
		q := queries[i]
		if got := enc(New().Verify(context.Background(), engines.Request{Query: q, IncludeProof: true})); got != first[q] {
			t.Fatalf("%q differs:\n%s\n%s", q, first[q], got)
		}
	}
}

// TestNormalFormRoundTrip pins that a printed normal form parses back to
// the same normal form (the values the engine reports can be checked
// again by the engine).
func TestNormalFormRoundTrip(t *testing.T) {
	for _, q := range []string{
		"(x+1)^3", "(x-1)/(x+1)", "x/(2y)", "-x/(x^2+1)", "3/(x*y)", "sin(x)^3 + cos(2x)/3",
		"d/dx (tan(x))", "1/2*x - 5/7", "exp(-x)*sqrt(x+1)", "pi^2/6", "e^3 - e", "abs(-x+1)",
	} {
		o := verify(t, q, "")
		if o.Status != engines.Verified {
			t.Fatalf("%q: %s %+v", q, o.Status, o.Err)
		}
		v := o.Result.(Result).Value
		o2 := verify(t, v+" = "+q, "")
		if o2.Status != engines.Verified {
			t.Errorf("%q printed as %q does not read back: %s %+v %+v", q, v, o2.Status, o2.Err, o2.Result)
		}
		if v2 := verify(t, v, "").Result.(Result).Value; v2 != v {
			t.Errorf("%q: normal form %q prints again as %q", q, v, v2)
		}
	}
}

// TestSeed002_4_2_Capabilities pins the capabilities document.
func TestSeed002_4_2_Capabilities(t *testing.T) {
	c := New().Capabilities()
	if c.EngineID != "math" || c.Name != "Math Verifier" || c.Version != Version {
		t.Fatalf("capabilities %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"precision":"arbitrary"`, `"calculus":true`, `"max_exponent":10000`, `"params_schema":{`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("capabilities lack %s: %s", want, b)
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Params, &schema); err != nil {
		t.Fatalf("params schema: %v", err)
	}
}

// TestSeed002_6_3_Proof pins include_proof: the normal forms compared.
func TestSeed002_6_3_Proof(t *testing.T) {
	o := New().Verify(context.Background(), engines.Request{Query: "(x+1)^2 = x^2+2x+1", IncludeProof: true})
	p, ok := o.Proof.(*Proof)
	if !ok || p.LeftNormalForm != "x**2 + 2*x + 1" || p.RightNormalForm != "x**2 + 2*x + 1" || p.Difference != "0" {
		t.Fatalf("proof %+v", o.Proof)
	}
	if o := verify(t, "1=1", ""); o.Proof != nil {
		t.Fatalf("proof without include_proof: %+v", o.Proof)
	}
}

// runMathCases runs a table of math cases, each as a subtest.
func runMathCases(t *testing.T, cases []mathCase) {
	t.Helper()
	V, F, C := engines.Verified, engines.Failed, engines.Corrected
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := verify(t, tc.query, tc.params)
			if o.Status != tc.status {
				t.Fatalf("%q: status %s, want %s (err %+v, result %+v)", tc.query, o.Status, tc.status, o.Err, o.Result)
			}
			switch {
			case tc.code == "" && o.Err != nil:
				t.Fatalf("%q: unexpected error %+v", tc.query, o.Err)
			case tc.code != "" && (o.Err == nil || o.Err.Code != tc.code):
				t.Fatalf("%q: error %+v, want code %s", tc.query, o.Err, tc.code)
			}
			if tc.pos != 0 {
				if got := o.Err.Details["position"]; got != tc.pos {
					t.Errorf("%q: position %v, want %d", tc.query, got, tc.pos)
				}
			}
			if o.Corrected != tc.fix {
				t.Errorf("%q: corrected %q, want %q", tc.query, o.Corrected, tc.fix)
			}
			if tc.status == V || tc.status == F || tc.status == C {
				r := resultFields(t, o)
				if valid := r["is_valid"] == true; valid != (tc.status == V) {
					t.Errorf("%q: is_valid %v with status %s", tc.query, r["is_valid"], o.Status)
				}
				for k, want := range tc.fields {
					if got := r[k]; got != want {
						t.Errorf("%q: result %s = %v, want %q", tc.query, k, got, want)
					}
				}
			} else if o.Result != nil {
				t.Errorf("%q: %s outcome carries a result", tc.query, o.Status)
			}
		})
	}
}
