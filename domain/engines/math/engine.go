package math

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/agentgate/agentgate/domain/engines"
)

// Version is the math engine's version (QWED protocol v1.0 §4.2, §6.1
// metadata.engine_version).
const Version = "1.0.0"

// Params are the math engine's params (QWED protocol v1.0 §5.2.1), decoded strictly:
// an unknown field or a field of the wrong type is QWED-REQ-001.
type Params struct {
	// Domain is "real" (the default), "integer" (integer literals only;
	// a numeric value that is not an integer is UNSUPPORTED), "rational"
	// (rational functions over the rationals only: pi, e and a function
	// application without a rational value are UNSUPPORTED; solve answers
	// the rational solutions) or "complex"
	// (as real, but sqrt and log of negative numbers are UNSUPPORTED rather
	// than undefined, and log(exp(u)) is not simplified).
	Domain string `json:"domain,omitempty"`
	// Precision, when set (0..MaxPrecision), adds the decimal rendering of
	// a numeric value with that many digits after the point (rounded half
	// away from zero). Verification itself is always exact.
	Precision *int `json:"precision,omitempty"`
	// Operation is "" (a claim when the query has a relation, else an
	// evaluation), "verify" (a relation is required), "evaluate" (no
	// relation allowed), "derivative" (the query's left side is
	// differentiated in Variable first), "integrate" (f: an antiderivative;
	// f = F: F is verified by differentiation; with Lower and Upper the
	// definite integral), "limit" (the limit of the left side at Point) or
	// "solve" (the solutions of the equation in Variable).
	Operation string `json:"operation,omitempty"`
	// Variable is the variable of the derivative, integrate, limit and
	// solve operations; it may be left out when the expression has exactly
	// one variable.
	Variable string `json:"variable,omitempty"`
	// Correct (default true) answers a wrong numeric claim whose right side
	// is a single number with CORRECTED and the corrected claim; false
	// answers FAILED as in the QWED protocol v1.0 §6.3.2.
	Correct *bool `json:"correct,omitempty"`
	// Lower and Upper are the bounds of a definite "integrate" (both or
	// neither): expressions without variables, as strings or JSON numbers.
	Lower *Value `json:"lower,omitempty"`
	Upper *Value `json:"upper,omitempty"`
	// Point is where the "limit" operation takes the limit: an expression
	// without variables whose value is rational, or oo, +oo, -oo (also
	// inf, infinity).
	Point *Value `json:"point,omitempty"`
	// Direction is "+" (from the right), "-" (from the left) or "" (both
	// sides) for a "limit" at a finite point.
	Direction string `json:"direction,omitempty"`
	// Solutions are the claimed solutions of a "solve" operation (at most
	// MaxSolutions): VERIFIED when they are exactly the solution set.
	Solutions []Value `json:"solutions,omitempty"`
}

// Value is a param holding a value: a JSON string in the engine's syntax
// or a JSON number (read exactly, as its decimal text).
type Value string

// UnmarshalJSON accepts a string or a number.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("decoding a value: %w", err)
		}
		*v = Value(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("decoding a value (a string or a number): %w", err)
	}
	*v = Value(n.String())
	return nil
}

// Result is the math engine's result object (QWED protocol v1.0 §6.3.1, §6.3.2).
// Exact values are strings in the engine's syntax ("4", "1/3",
// "x**2 + 2*x + 1").
type Result struct {
	IsValid bool `json:"is_valid"`
	// Kind is "evaluation", "derivative", "numeric" (a claim without
	// variables), "identity" (a claim with variables), "comparison"
	// (!=, <, <=, >, >=), "integral", "antiderivative" (a claimed one),
	// "definite_integral", "limit" or "solve".
	Kind string `json:"kind"`
	// Expression and Value are the evaluated expression and its exact
	// value (evaluation and derivative).
	Expression string `json:"expression,omitempty"`
	Value      string `json:"value,omitempty"`
	// Decimal is Value (or Expected) rendered with params.precision digits.
	Decimal              string   `json:"decimal,omitempty"`
	LeftSide             string   `json:"left_side,omitempty"`
	RightSide            string   `json:"right_side,omitempty"`
	Relation             string   `json:"relation,omitempty"`
	SimplifiedDifference string   `json:"simplified_difference,omitempty"`
	Expected             string   `json:"expected,omitempty"`
	Actual               string   `json:"actual,omitempty"`
	Variable             string   `json:"variable,omitempty"`
	Variables            []string `json:"variables,omitempty"`
	// Lower, Upper (definite integral), Point and Direction (limit) echo
	// the params in the engine's spelling.
	Lower     string `json:"lower,omitempty"`
	Upper     string `json:"upper,omitempty"`
	Point     string `json:"point,omitempty"`
	Direction string `json:"direction,omitempty"`
	// Solutions are the solutions of a solve operation, rational ones
	// ascending first; present (possibly empty) for solve only.
	Solutions *[]string `json:"solutions,omitempty"`
	Domain    string    `json:"domain"`
	Message   string    `json:"message"`
}

// Proof is the derivation returned with include_proof: the normal forms
// the decision compared.
type Proof struct {
	Method          string `json:"method"`
	LeftNormalForm  string `json:"left_normal_form"`
	RightNormalForm string `json:"right_normal_form,omitempty"`
	Difference      string `json:"difference,omitempty"`
}

const proofMethod = "exact rational-function normal form over the rationals (math/big); function applications as symbols, rewritten by sqrt(u)**2 = u and sin(u)**2 = 1 - cos(u)**2"

// paramsSchema is the JSON Schema (2020-12) of Params.
const paramsSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,` +
	`"$defs":{"value":{"type":["string","number"]}},` +
	`"properties":{"domain":{"enum":["real","integer","rational","complex"]},"precision":{"type":"integer","minimum":0,"maximum":1000},` +
	`"operation":{"enum":["verify","evaluate","derivative","integrate","limit","solve"]},"variable":{"type":"string"},"correct":{"type":"boolean"},` +
	`"lower":{"$ref":"#/$defs/value"},"upper":{"$ref":"#/$defs/value"},"point":{"$ref":"#/$defs/value"},"direction":{"enum":["+","-"]},` +
	`"solutions":{"type":"array","maxItems":1000,"items":{"$ref":"#/$defs/value"}}}}`

type engine struct{}

// New is the math engine: pure, deterministic and bounded by the limits of
// limits.go. It is safe for concurrent use.
func New() engines.Engine { return engine{} }

// Capabilities is the math engine's capabilities document (QWED protocol v1.0 §4.2).
func (engine) Capabilities() engines.Capabilities {
	return engines.Capabilities{
		EngineID: "math",
		Name:     "Math Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"arithmetic":  true,
			"algebra":     true,
			"calculus":    true,
			"symbolic":    true,
			"numeric":     true,
			"precision":   "arbitrary",
			"corrections": true,
			"domains":     []string{"real", "integer", "rational", "complex"},
			"operations":  []string{"verify", "evaluate", "derivative", "integrate", "limit", "solve"},
			"functions":   []string{"sqrt", "exp", "log", "ln", "sin", "cos", "tan", "abs", "diff"},
		},
		InputTypes:  []string{"expression", "equation"},
		OutputTypes: []string{"verification_result", "computed_value", "proof"},
		Limits:      limitsDoc(),
		Params:      json.RawMessage(paramsSchema),
	}
}

// Verify decides req.Query (see the package documentation for the syntax
// and the rules). It never panics.
func (engine) Verify(_ context.Context, req engines.Request) (out engines.Outcome) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*failure)
			if !ok {
				f = &failure{engines.Error, engines.Problem{Code: CodeInternal,
					Message: "Verification failed unexpectedly", Details: map[string]any{"reason": fmt.Sprint(r)}}}
			}
			prob := f.problem
			out = engines.Outcome{Status: f.status, Err: &prob}
		}
	}()
	if len(req.Query) > MaxQueryBytes {
		fail(limitProblem("max_query_bytes", MaxQueryBytes, -1))
	}
	return check(req.Query, decodeParams(req.Params), req.IncludeProof)
}

// decodeParams decodes params strictly.
func decodeParams(raw json.RawMessage) Params {
	var p Params
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		p.Domain = "real"
		return p
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		field := "params"
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			field = te.Field
		}
		fail(invalidParams(field, fmt.Sprintf("decoding params: %v", err)))
	}
	if dec.More() {
		fail(invalidParams("params", "params must be one JSON object"))
	}
	switch p.Domain {
	case "":
		p.Domain = "real"
	case "real", "integer", "rational", "complex":
	default:
		fail(invalidParams("domain", "domain must be real, integer, rational or complex"))
	}
	if p.Precision != nil && (*p.Precision < 0 || *p.Precision > MaxPrecision) {
		fail(invalidParams("precision", fmt.Sprintf("precision must be an integer in 0..%d", MaxPrecision)))
	}
	switch p.Operation {
	case "", "verify", "evaluate", "derivative", "integrate", "limit", "solve":
	default:
		fail(invalidParams("operation", "operation must be verify, evaluate, derivative, integrate, limit or solve"))
	}
	checkOperationParams(p)
	if p.Variable != "" {
		if !variableOps[p.Operation] {
			fail(invalidParams("variable", "variable is a parameter of the derivative, integrate, limit and solve operations"))
		}
		if !isName(p.Variable) || constants[p.Variable] || functions[p.Variable] > 0 {
			fail(invalidParams("variable", "variable must be a variable name"))
		}
	}
	return p
}

func isName(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}

// check parses and decides one query.
func check(q string, p Params, includeProof bool) engines.Outcome {
	c := parse(q)
	names := astVariables(c.lhs, nil)
	if c.rhs != nil {
		names = astVariables(c.rhs, names)
	}
	names = compactSorted(names)
	refuseRunTogether(c, names)
	switch {
	case p.Operation == "verify" && c.rhs == nil:
		fail(invalidParams("operation", "the verify operation needs a claim (lhs = rhs)"))
	case p.Operation == "evaluate" && c.rhs != nil:
		fail(invalidParams("operation", "the evaluate operation takes an expression without a relation"))
	}
	a := &alg{domain: p.Domain, atoms: map[string]*atom{}}
	res := Result{Domain: p.Domain}
	var left rfn
	switch p.Operation {
	case "integrate", "limit", "solve":
		out := a.calculus(c, p, &res)
		if includeProof {
			out.Proof = &Proof{Method: proofMethod, LeftNormalForm: a.eval(c.lhs).str()}
		}
		return out
	}
	if p.Operation == "derivative" {
		body := a.eval(c.lhs)
		x := a.pickVariable(body, p)
		c.lhs = &node{kind: nDeriv, text: x, kids: []*node{c.lhs}}
		left = a.deriv(body, x, 0)
		res.Variable = x
	} else {
		left = a.eval(c.lhs)
	}
	res.LeftSide = format(c.lhs)
	proof := &Proof{Method: proofMethod, LeftNormalForm: left.str()}
	var out engines.Outcome
	if c.rhs == nil {
		out = a.evaluation(c, left, p, &res)
	} else {
		right := a.eval(c.rhs)
		res.RightSide = format(c.rhs)
		res.Relation = c.relText
		proof.RightNormalForm = right.str()
		out = a.claim(c, names, left, right, p, &res, proof)
	}
	if includeProof {
		out.Proof = proof
	}
	return out
}

// evaluation answers a bare expression (or a derivative) with its exact
// value: VERIFIED when it is exact (a rational number, a polynomial in pi
// or e, or a symbolic expression in variables), UNSUPPORTED when a
// function of constants has no exact value (sin(1)).
func (a *alg) evaluation(c claim, v rfn, p Params, res *Result) engines.Outcome {
	res.Kind = "evaluation"
	if c.lhs.kind == nDeriv {
		res.Kind = "derivative"
		res.Variable = c.lhs.text
	}
	res.Expression = res.LeftSide
	res.LeftSide = ""
	res.Variables = a.variables(v)
	if len(a.variables(v)) == 0 && len(a.functionsIn(v)) > 0 {
		fail(unsupported(-1, v.str()+" has no exact value the engine can compute"))
	}
	val, numeric := v.constValue()
	if numeric && p.Domain == "integer" && !val.IsInt() {
		fail(unsupported(-1, "the value "+ratStr(val)+" is not an integer (the integer domain has no exact division; use the real domain)"))
	}
	res.IsValid = true
	res.Value = v.str()
	if numeric && p.Precision != nil {
		res.Decimal = val.FloatString(*p.Precision)
	}
	res.Message = res.Expression + " = " + res.Value
	return engines.Outcome{Status: engines.Verified, Result: *res}
}

// decidableNonZero reports whether a non-zero normal form d is non-zero as
// a function: true when it involves no function application and not both
// pi and e (a non-zero polynomial in variables and one transcendental
// constant is not identically zero).
func (a *alg) decidableNonZero(d rfn) bool {
	if len(a.functionsIn(d)) > 0 {
		return false
	}
	pi, e := false, false
	for _, k := range d.keys() {
		pi = pi || k == "pi"
		e = e || k == "e"
	}
	return !(pi && e)
}

// claim decides lhs rel rhs.
func (a *alg) claim(c claim, names []string, l, r rfn, p Params, res *Result, proof *Proof) engines.Outcome {
	d := a.rsub(l, r)
	proof.Difference = d.str()
	res.Variables = names
	numeric := len(names) == 0
	lv, lok := l.constValue()
	rv, rok := r.constValue()
	if numeric && p.Domain == "integer" {
		for _, v := range []*big.Rat{lv, rv} {
			if v != nil && !v.IsInt() {
				fail(unsupported(-1, "the value "+ratStr(v)+" is not an integer (the integer domain has no exact division; use the real domain)"))
			}
		}
	}
	if lok && p.Precision != nil {
		res.Decimal = lv.FloatString(*p.Precision)
	}
	if c.rel != tokEq {
		res.Kind = "comparison"
		return a.comparison(c, d, lv, rv, lok && rok, numeric, res)
	}
	res.Kind = "identity"
	if numeric {
		res.Kind = "numeric"
	}
	if d.isZero() {
		res.IsValid = true
		res.SimplifiedDifference = "0"
		if numeric {
			res.Message = "Arithmetic confirmed: " + res.LeftSide + " = " + l.str()
		} else {
			res.Message = "Algebraic identity confirmed"
		}
		return engines.Outcome{Status: engines.Verified, Result: *res}
	}
	if !a.decidableNonZero(d) {
		fail(unsupported(-1, "the difference of the two sides, "+d.str()+", involves functions ("+joinNames(a.functionsIn(d))+") whose relations the engine cannot decide"))
	}
	if !numeric {
		res.SimplifiedDifference = d.str()
		res.Message = "Not an identity: left side - right side = " + d.str()
		return engines.Outcome{Status: engines.Failed, Result: *res}
	}
	res.Expected = l.str()
	res.Actual = r.str()
	if isLiteral(c.rhs) {
		res.Actual = res.RightSide
	}
	res.SimplifiedDifference = d.str()
	if res.Expected == res.LeftSide {
		res.Message = res.LeftSide + " is not " + res.Actual
	} else {
		res.Message = res.LeftSide + " = " + res.Expected + ", not " + res.Actual
	}
	if lok && isLiteral(c.rhs) && (p.Correct == nil || *p.Correct) {
		corrected := res.LeftSide + " = " + ratStr(lv)
		res.Message += "; corrected to " + corrected
		return engines.Outcome{Status: engines.Corrected, Result: *res, Corrected: corrected}
	}
	return engines.Outcome{Status: engines.Failed, Result: *res}
}

// comparison decides != < <= > >= between numbers; with variables (or
// symbolic constants other than !=) it is UNSUPPORTED.
func (a *alg) comparison(c claim, d rfn, lv, rv *big.Rat, both, numeric bool, res *Result) engines.Outcome {
	var ok bool
	switch {
	case c.rel == tokNe && numeric && (d.isZero() || a.decidableNonZero(d)):
		ok = !d.isZero()
	case both:
		cmp := lv.Cmp(rv)
		switch c.rel {
		case tokNe:
			ok = cmp != 0
		case tokLt:
			ok = cmp < 0
		case tokLe:
			ok = cmp <= 0
		case tokGt:
			ok = cmp > 0
		case tokGe:
			ok = cmp >= 0
		}
		res.Expected = ratStr(lv)
		res.Actual = ratStr(rv)
	default:
		fail(unsupported(-1, "the relation "+c.relText+" is decided only between numbers"))
	}
	res.IsValid = ok
	if ok {
		res.Message = "Comparison confirmed: " + res.LeftSide + " " + c.relText + " " + res.RightSide
		return engines.Outcome{Status: engines.Verified, Result: *res}
	}
	res.Message = "Comparison false: " + res.LeftSide + " " + c.relText + " " + res.RightSide + " does not hold"
	return engines.Outcome{Status: engines.Failed, Result: *res}
}

// isLiteral reports whether n is a single number, possibly signed.
func isLiteral(n *node) bool {
	if n.kind == nNeg {
		n = n.kids[0]
	}
	return n.kind == nNum
}

func joinNames(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// astVariables appends the variables written in n (not the constants, not
// the variable of a derivative unless it is also written).
func astVariables(n *node, out []string) []string {
	if n.kind == nVar && !constants[n.text] {
		out = append(out, n.text)
	}
	for i, k := range n.kids {
		if n.kind == nCall && n.text == "diff" && i == 1 {
			continue
		}
		out = astVariables(k, out)
	}
	return out
}

// refuseRunTogether refuses a variable name of several letters each of
// which is also written as a variable of its own (xy beside x and y): it
// reads as a name or as the product x*y.
func refuseRunTogether(c claim, names []string) {
	single := map[byte]bool{}
	for _, n := range names {
		if len(n) == 1 {
			single[n[0]] = true
		}
	}
	for _, n := range names {
		if len(n) < 2 {
			continue
		}
		all := true
		for i := 0; i < len(n); i++ {
			all = all && single[n[i]]
		}
		if all {
			pos := findVar(c.lhs, n)
			if pos < 0 && c.rhs != nil {
				pos = findVar(c.rhs, n)
			}
			fail(ambiguous(pos, "'"+n+"'", "'"+n+"' is a variable of its own or the product of "+spell(n)+", which the query also uses; write "+spell(n)+" with *"))
		}
	}
}

func spell(n string) string {
	out := make([]byte, 0, 2*len(n))
	for i := 0; i < len(n); i++ {
		if i > 0 {
			out = append(out, '*')
		}
		out = append(out, n[i])
	}
	return string(out)
}

func findVar(n *node, name string) int {
	if n.kind == nVar && n.text == name {
		return n.pos
	}
	for _, k := range n.kids {
		if p := findVar(k, name); p >= 0 {
			return p
		}
	}
	return -1
}
