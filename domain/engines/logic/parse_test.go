package logic

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// problemOf runs Translate and returns its §8 problem (nil: it translated).
func problemOf(t *testing.T, q string) (*failure, *Translation) {
	t.Helper()
	tr, err := Translate(q, ModeSatisfiable)
	if err == nil {
		return nil, tr
	}
	var f *failure
	if !errors.As(err, &f) {
		t.Fatalf("%q: error %v is not a *failure", q, err)
	}
	return f, nil
}

func TestSeed002_7_2_GrammarAcceptsEveryAtomAndList(t *testing.T) {
	for _, q := range []string{
		"p", "true", "false", "(NOT p)", "(EQ x 5)", "(EQ x -5)", "(EQ x 0.25)", "(EQ x -0.25)",
		`(EQ s "hello world!")`, `(EQ s "")`, "(EQ x_1 y2)", "(GT aB_9 007)",
		"  \n\t(AND p q) ; a comment\n", "(AND p ; inside\n q)",
		"(AND (GT x 5) (LT x 10))\n; x > 5 AND x < 10",
		"(FORALL x (GT (POW x 2) -1))", "(EXISTS (n Int) (EQ (MOD n 2) 1))",
		"(LET () p)", "(LET ((x Int) (y Real) (p Bool) (s String)) (AND (GT x 0) (NOT p) (EQ y 1) (EQ s \"a\")))",
		`(EQ s "ünïcödé ✓")`,
	} {
		if f, _ := problemOf(t, q); f != nil {
			t.Errorf("%q: %v", q, f)
		}
	}
}

func TestSeed002_8_4_SyntaxErrorsCarryPositionExpectedFound(t *testing.T) {
	cases := []struct {
		q        string
		pos      int
		expected string
		found    string
	}{
		{"", 0, "expression", "end of input"},
		{"   ", 3, "expression", "end of input"},
		{"(AND (GT x 5) (LT y 10)", 23, "closing parenthesis", "end of input"},
		{"(AND p q))", 9, "end of input", `")"`},
		{"(FOO x)", 1, "operator", `"FOO"`},
		{"(and p q)", 1, "operator", `"and"`},
		{"()", 1, "operator", `")"`},
		{"((AND p q))", 1, "operator", `"("`},
		{"(EQ x 5x)", 7, "digit or delimiter", `"x"`},
		{"(EQ x 5.)", 8, "digit after", `")"`},
		{"(EQ x -)", 7, "digit", `")"`},
		{"(EQ x- 1)", 5, "letter, digit", `"-"`},
		{"(EQ x _y)", 6, "variable, number", `"_y"`},
		{`(EQ s "abc)`, 11, "closing quote", "end of input"},
		{"(EQ s \"a\nb\")", 8, "printable character", "U+000A"},
		{`(EQ s "a"b)`, 9, "delimiter after a string", `"b"`},
		{"(EQ AND 1)", 4, "variable, number", `"AND"`},
		{"(NOT p)x", 7, "delimiter", `"x"`},
		{"(LET (x Int) p)", 6, "declaration", `"x"`},
		{"(LET ((x Integer)) p)", 9, "sort Int, Real, Bool or String", `"Integer"`},
		{"(LET ((x Int) (x Real)) p)", 15, "declared once", `"x"`},
		{"(LET ((5 Int)) p)", 7, "variable name", "5"},
		{"(FORALL 5 p)", 8, "variable bound by FORALL", `"5"`},
		{"(EQ x \xff)", 6, "UTF-8", "invalid byte"},
		{")", 0, "expression", `")"`},
		// sort errors
		{"(AND p 5)", 7, "Bool operand of AND", "numeric"},
		{"(PLUS x true)", 8, "numeric operand of PLUS", "Bool"},
		{"(AND (EQ x \"a\") (GT x 1))", 16, "operands of GT of one sort", "String and numeric"},
		{"(AND p (GT p q))", 7, "GT of numbers or strings", "Bool operands"},
		{"(AND (NOT p) (GT p 1))", 13, "operands of GT", "Bool and numeric"},
		{"(MATCH s x)", 9, "regular expression as a string literal", "variable"},
		{"(MATCH 5 \"a\")", 7, "String operand of MATCH", "numeric"},
		{"(LET ((x Int)) (AND (GT x 0) (LET ((x Real)) (GT x 1))))", 36, "sort Int", "sort Real"},
		{"(LET ((p Bool)) (GT p 1))", 16, "operands of GT of one sort", "Bool and numeric"},
		{"(AND (GT p 1) (LET ((p Bool)) p))", 21, "p used as Bool", "numeric"},
		{"(LET ((y Real)) (EQ (MOD y 2) 1))", 25, "Int operand of MOD", "Real"},
		{"(EQ (MOD x 2.5) 1)", 11, "Int operand of MOD", "Real"},
		{"(IF p 1 2)", 0, "Bool expression", "numeric"},
		{"(EQ (IF 1 2 3) 2)", 8, "Bool condition of IF", "numeric"},
		{"(EQ (IF p 2 \"a\") 2)", 4, "operands of IF of one sort", "numeric and String"},
		{"(FORALL x x)\n", 10, "", ""}, // a Bool body: fine; replaced below
	}
	cases = cases[:len(cases)-1]
	for _, c := range cases {
		f, _ := problemOf(t, c.q)
		if f == nil {
			t.Errorf("%q: translated, want a syntax error", c.q)
			continue
		}
		p := f.problem
		if p.Code != CodeSyntax || f.status != engines.Error {
			t.Errorf("%q: %s %s, want ERROR %s", c.q, f.status, p.Code, CodeSyntax)
			continue
		}
		if p.Details["position"] != c.pos || !strings.Contains(fmt.Sprint(p.Details["expected"]), c.expected) || !strings.Contains(fmt.Sprint(p.Details["found"]), c.found) {
			t.Errorf("%q: details %v, want position %d, expected ~%q, found ~%q", c.q, p.Details, c.pos, c.expected, c.found)
		}
		line, col := lineCol(c.q, c.pos)
		if p.Details["line"] != line || p.Details["column"] != col {
			t.Errorf("%q: line/column %v/%v, want %d/%d", c.q, p.Details["line"], p.Details["column"], line, col)
		}
	}
}

func TestSeed002_8_4_PositionsAreLineAndColumnToo(t *testing.T) {
	f, _ := problemOf(t, "(AND\n  (GT x 5)\n  (LT y))")
	if f == nil {
		t.Fatal("translated")
	}
	d := f.problem.Details
	if d["line"] != 3 || d["column"] != 8 || d["position"] != 23 {
		t.Fatalf("details %v, want line 3 column 8 position 23", d)
	}
}

// arities pins the tables of the QWED protocol v1.0 §7.3 (and IF, LET, MATCH).
var arities = map[string][2]int{
	"AND": {2, -1}, "OR": {2, -1}, "NOT": {1, 1}, "IMPLIES": {2, 2}, "IFF": {2, 2}, "XOR": {2, 2},
	"EQ": {2, 2}, "NE": {2, 2}, "GT": {2, 2}, "GE": {2, 2}, "LT": {2, 2}, "LE": {2, 2},
	"PLUS": {2, -1}, "MINUS": {2, 2}, "MULT": {2, -1}, "DIV": {2, 2}, "MOD": {2, 2}, "POW": {2, 2},
	"ABS": {1, 1}, "NEG": {1, 1}, "FORALL": {2, 2}, "EXISTS": {2, 2}, "IF": {3, 3}, "MATCH": {2, 2},
}

// operand is a well-sorted operand for op at index i.
func operand(op string, i int) string {
	switch op {
	case "AND", "OR", "NOT", "IMPLIES", "IFF", "XOR":
		return "p"
	case "FORALL", "EXISTS":
		if i == 0 {
			return "x"
		}
		return "(GT x 0)"
	case "IF":
		if i == 0 {
			return "p"
		}
		return "1"
	case "MATCH":
		if i == 0 {
			return "s"
		}
		return `"a"`
	}
	return "2"
}

// wrap makes a Bool query of an application of op.
func wrap(op, app string) string {
	switch op {
	case "PLUS", "MINUS", "MULT", "DIV", "MOD", "POW", "ABS", "NEG", "IF":
		return "(EQ " + app + " 1)"
	}
	return app
}

func TestSeed002_7_3_OperatorArities(t *testing.T) {
	if len(arities) != len(operators)-1 { // LET has its own form
		t.Fatalf("the test pins %d operators, the engine has %d", len(arities), len(operators))
	}
	for op, ar := range arities {
		app := func(n int) string {
			parts := []string{op}
			for i := 0; i < n; i++ {
				parts = append(parts, operand(op, i))
			}
			return wrap(op, "("+strings.Join(parts, " ")+")")
		}
		if f, _ := problemOf(t, app(ar[0])); f != nil {
			t.Errorf("%s with %d operands: %v", op, ar[0], f)
		}
		if f, _ := problemOf(t, app(ar[0]-1)); f == nil || f.problem.Code != CodeSyntax || !strings.Contains(fmt.Sprint(f.problem.Details["expected"]), "more operand") {
			t.Errorf("%s with %d operands: %v, want an arity error", op, ar[0]-1, f)
		}
		if ar[1] > 0 {
			if f, _ := problemOf(t, app(ar[1]+1)); f == nil || f.problem.Code != CodeSyntax || !strings.Contains(fmt.Sprint(f.problem.Details["expected"]), "closing parenthesis") {
				t.Errorf("%s with %d operands: %v, want an arity error", op, ar[1]+1, f)
			}
		} else if f, _ := problemOf(t, app(7)); f != nil {
			t.Errorf("%s with 7 operands: %v", op, f)
		}
	}
}

// limitCase is a query just at a limit and one just past it.
type limitCase struct {
	name      string
	at, past  string
	wantLimit string
}

func nested(n int) string {
	return strings.Repeat("(NOT ", n-1) + "(NOT p)" + strings.Repeat(")", n-1)
}

func andOf(n int, f func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return "(AND " + strings.Join(parts, " ") + ")"
}

func TestSeed002_7_6_LimitsBothSides(t *testing.T) {
	pad := func(q string, n int) string { return q + strings.Repeat(" ", n-len(q)) }
	cases := []limitCase{
		{"query bytes", pad("p", MaxQueryBytes), pad("p", MaxQueryBytes+1), "query bytes"},
		{"depth", nested(MaxDepth), nested(MaxDepth + 1), "depth"},
		// AND with k operands (NOT p) is 1 + 2k nodes.
		{"nodes", andOf((MaxNodes-1)/2, func(int) string { return "(NOT p)" }), andOf((MaxNodes-1)/2+1, func(int) string { return "(NOT p)" }), "nodes"},
		{"variables", andOf(MaxVariables, func(i int) string { return fmt.Sprintf("p%d", i) }), andOf(MaxVariables+1, func(i int) string { return fmt.Sprintf("p%d", i) }), "variables"},
		{"name bytes", "(NOT p" + strings.Repeat("x", MaxNameBytes-1) + ")", "(NOT p" + strings.Repeat("x", MaxNameBytes) + ")", "variable name bytes"},
		{"number digits", "(EQ x " + strings.Repeat("9", MaxNumberDigits) + ")", "(EQ x " + strings.Repeat("9", MaxNumberDigits+1) + ")", "number digits"},
		{"number digits, float", "(EQ x 1." + strings.Repeat("5", MaxNumberDigits-1) + ")", "(EQ x 1." + strings.Repeat("5", MaxNumberDigits) + ")", "number digits"},
		{"string bytes", `(EQ s "` + strings.Repeat("a", MaxStringBytes) + `")`, `(EQ s "` + strings.Repeat("a", MaxStringBytes+1) + `")`, "string bytes"},
		{"regex bytes", `(MATCH s "` + strings.Repeat("a", MaxRegexBytes) + `")`, `(MATCH s "` + strings.Repeat("a", MaxRegexBytes+1) + `")`, "regular expression bytes"},
		{"regex repeat", fmt.Sprintf(`(MATCH s "a{%d}")`, MaxRegexRepeat), fmt.Sprintf(`(MATCH s "a{%d}")`, MaxRegexRepeat+1), "regular expression repeat bound"},
		{"regex repeat upper", fmt.Sprintf(`(MATCH s "a{1,%d}")`, MaxRegexRepeat), fmt.Sprintf(`(MATCH s "a{1,%d}")`, MaxRegexRepeat+1), "regular expression repeat bound"},
		{"regex depth", `(MATCH s "` + strings.Repeat("(", MaxRegexDepth) + "a" + strings.Repeat(")", MaxRegexDepth) + `")`, `(MATCH s "` + strings.Repeat("(", MaxRegexDepth+1) + "a" + strings.Repeat(")", MaxRegexDepth+1) + `")`, "regular expression depth"},
	}
	for _, c := range cases {
		if f, _ := problemOf(t, c.at); f != nil {
			t.Errorf("%s: at the limit: %v", c.name, f)
		}
		f, _ := problemOf(t, c.past)
		if f == nil || f.problem.Code != CodeTooLarge || f.problem.Details["limit"] != c.wantLimit {
			t.Errorf("%s: past the limit: %v, want %s on %q", c.name, f, CodeTooLarge, c.wantLimit)
		}
	}
	// POW's exponent is UNSUPPORTED (not an error) past its limit.
	if f, _ := problemOf(t, fmt.Sprintf("(GT (POW x %d) 1)", MaxPowExponent)); f != nil {
		t.Errorf("POW at the limit: %v", f)
	}
	if f, _ := problemOf(t, fmt.Sprintf("(GT (POW x %d) 1)", MaxPowExponent+1)); f == nil || f.status != engines.Unsupported {
		t.Errorf("POW past the limit: %v, want UNSUPPORTED", f)
	}
}

func TestSeed002_7_5_SortInference(t *testing.T) {
	cases := []struct {
		q     string
		sorts string // name:Sort, sorted by name
	}{
		{"(AND (GT x 5) (LT y 10))", "x:Real y:Real"},
		{"(LET ((x Int) (y Real) (p Bool)) (AND (GT x 0) (NOT p)))", "p:Bool x:Int y:Real"},
		{`(IMPLIES (EQ category "electronics") (GE tax_rate 0.18))`, "category:String tax_rate:Real"},
		{`(GT invoice_date "2024-01-01")`, "invoice_date:String"},
		{`(AND (EQ a b) (EQ b c) (MATCH c "x"))`, "a:String b:String c:String"},
		{`(AND (EQ a b) (NOT b))`, "a:Bool b:Bool"},
		{`(EQ (MOD n 2) 1)`, "n:Int"},
		{`(EQ (MOD (PLUS n (ABS m)) 2) (DIV k 2))`, "k:Real m:Int n:Int"},
		{`(EQ (IF p x y) z)`, "p:Bool x:Real y:Real z:Real"},
		{`(EQ (IF p s "a") t)`, "p:Bool s:String t:String"},
		{`(FORALL x (GT x y))`, "y:Real"},
		{`(AND (FORALL x (NOT x)) (GT x 1))`, "x:Real"},
		{`(FORALL x (LET ((x Int)) (GE x 0)))`, ""},
		{`(LET ((x Int)) (FORALL x (GE x 0)))`, "x:Int"}, // LET declares the free x
	}
	for _, c := range cases {
		f, tr := problemOf(t, c.q)
		if f != nil {
			t.Errorf("%q: %v", c.q, f)
			continue
		}
		var got []string
		for i, n := range tr.Names {
			got = append(got, n+":"+string(tr.Sorts[i]))
		}
		if strings.Join(got, " ") != c.sorts {
			t.Errorf("%q: sorts %q, want %q", c.q, strings.Join(got, " "), c.sorts)
		}
	}
}

func TestSeed002_7_3_Translation(t *testing.T) {
	cases := []struct{ q, want string }{
		{"(AND p q r)", "(and v_p v_q v_r)"},
		{"(OR p q)", "(or v_p v_q)"},
		{"(NOT p)", "(not v_p)"},
		{"(IMPLIES p q)", "(=> v_p v_q)"},
		{"(IFF p q)", "(= v_p v_q)"},
		{"(XOR p q)", "(xor v_p v_q)"},
		{"(EQ x 5)", "(= v_x 5.0)"},
		{"(NE x 0)", "(not (= v_x 0.0))"},
		{"(GT x 5)", "(> v_x 5.0)"},
		{"(GE x -5)", "(>= v_x (- 5.0))"},
		{"(LT x 0.5)", "(< v_x 0.5)"},
		{"(LE x -0.50)", "(<= v_x (- 0.5))"},
		{"(LET ((n Int)) (EQ n 007))", "(= v_n 7)"},
		{"(LET ((n Int)) (GT n 0.5))", "(> (to_real v_n) 0.5)"},
		{"(EQ (PLUS x y 1) 2)", "(= (+ v_x v_y 1.0) 2.0)"},
		{"(EQ (MINUS x y) 2)", "(= (- v_x v_y) 2.0)"},
		{"(EQ (MULT x y 3) 2)", "(= (* v_x v_y 3.0) 2.0)"},
		{"(EQ (DIV x y) 2)", "(assert (not (= v_y 0.0)))\n(assert (= (/ v_x v_y) 2.0))"},
		{"(EQ (DIV x 4) 2)", "(assert (= (/ v_x 4.0) 2.0))"},
		{"(EQ (MOD n m) 1)", "(assert (not (= v_m 0)))\n(assert (= (mod v_n v_m) 1))"},
		{"(EQ (POW x 3) 8)", "(= (let ((l1 v_x)) (* l1 l1 l1)) 8.0)"},
		{"(EQ (POW x 1) 8)", "(= v_x 8.0)"},
		{"(EQ (POW x 0) 1)", "(= 1.0 1.0)"},
		{"(EQ (ABS x) 1)", "(= (let ((l1 v_x)) (ite (>= l1 0.0) l1 (- l1))) 1.0)"},
		{"(EQ (NEG x) 1)", "(= (- v_x) 1.0)"},
		{"(EQ (NEG -3) x)", "(= 3.0 v_x)"},
		{"(EQ (IF p x 1) 2)", "(= (ite v_p v_x 1.0) 2.0)"},
		{`(AND (EQ e "") (GT d e))`, `(str.< v_e v_d)`},
		{`(AND (EQ e "") (GE d e))`, `(str.<= v_e v_d)`},
		{`(AND (EQ e "") (LT d e))`, `(str.< v_d v_e)`},
		{`(AND (EQ e "") (LE d e))`, `(str.<= v_d v_e)`},
		{`(GT "b" "a")`, `(str.< "a" "b")`},
		{`(GT d "ab")`, `(str.in_re v_d (re.union (re.++ (re.range "b" "\u{2ffff}") re.all) (re.++ (str.to_re "a") (re.union (re.++ (re.range "c" "\u{2ffff}") re.all) (re.++ (str.to_re "b") (re.+ re.allchar))))))`},
		{`(LT d "b")`, `(str.in_re v_d (re.union (str.to_re "") (re.++ (re.range "\u{0}" "a") re.all) (re.++ (str.to_re "b") re.none)))`},
		{`(LT "b" d)`, `(str.in_re v_d (re.union (re.++ (re.range "c" "\u{2ffff}") re.all) (re.++ (str.to_re "b") (re.+ re.allchar))))`},
		{`(GE d "b")`, `(str.in_re v_d (re.union (str.to_re "b") (re.union (re.++ (re.range "c"`},
		{`(LE d "b")`, `(str.in_re v_d (re.union (str.to_re "b") (re.union (str.to_re "")`},
		{`(FORALL d (GE d ""))`, `(forall ((q1_d String)) (str.in_re q1_d (re.union (str.to_re "") (re.+ re.allchar))))`},
		{`(GT d "` + strings.Repeat("a", MaxOrderConstRunes+1) + `")`, `(str.< "aaaa`},
		{`(EQ d "a\b")`, `(= v_d "a\u{5c}b")`},
		{`(EQ d "é")`, `(= v_d "\u{e9}")`},
		{`(MATCH s "ab")`, `(str.in_re v_s (str.to_re "ab"))`},
		{"(FORALL x (GT x 0))", "(forall ((q1_x Real)) (> q1_x 0.0))"},
		{"(EXISTS (x Int) (EXISTS x (GT x 0)))", "(exists ((q1_x Int)) (exists ((q2_x Real)) (> q2_x 0.0)))"},
		{"(AND (GT x 0) (FORALL x (GT x 0)))", "(and (> v_x 0.0) (forall ((q1_x Real)) (> q1_x 0.0)))"},
		{"(EQ true p)", "(= true v_p)"},
	}
	for _, c := range cases {
		f, tr := problemOf(t, c.q)
		if f != nil {
			t.Errorf("%q: %v", c.q, f)
			continue
		}
		if !strings.Contains(tr.Script, c.want) {
			t.Errorf("%q: script\n%s\nwant it to contain %s", c.q, tr.Script, c.want)
		}
	}
}

func TestSeed002_7_DivisionByZero(t *testing.T) {
	for _, q := range []string{"(EQ (DIV x 0) 1)", "(EQ (DIV x 0.0) 1)", "(EQ (MOD n 0) 1)"} {
		f, _ := problemOf(t, q)
		if f == nil || f.problem.Code != CodeInvalid {
			t.Errorf("%q: %v, want %s", q, f, CodeInvalid)
		}
	}
	f, _ := problemOf(t, "(FORALL x (EQ (DIV 1 x) 1))")
	if f == nil || f.status != engines.Unsupported {
		t.Errorf("divisor over a bound variable: %v, want UNSUPPORTED", f)
	}
	if f, tr := problemOf(t, "(FORALL x (EQ (DIV x y) 1))"); f != nil || !strings.Contains(tr.Script, "(assert (not (= v_y 0.0)))") {
		t.Errorf("free divisor under a quantifier: %v", f)
	}
}

func TestSeed002_7_UnsupportedPowers(t *testing.T) {
	for _, q := range []string{"(EQ (POW x y) 1)", "(EQ (POW x 0.5) 1)", "(EQ (POW x -1) 1)", "(EQ (POW x (PLUS 1 1)) 1)"} {
		if f, _ := problemOf(t, q); f == nil || f.status != engines.Unsupported || f.problem.Code != CodeUnsupported {
			t.Errorf("%q: %v, want UNSUPPORTED %s", q, f, CodeUnsupported)
		}
	}
}

func TestSeed002_7_TranslationIsDeterministic(t *testing.T) {
	q := `(AND (EQ (PLUS zeta alpha) mid) (FORALL k (GE (POW k 2) 0)) (MATCH s "[a-c]+") (EQ (DIV alpha beta) 2))`
	first, err := Translate(q, ModeSatisfiable)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		again, _ := Translate(q, ModeSatisfiable)
		if again.Script != first.Script {
			t.Fatalf("run %d: script differs:\n%s\n%s", i, again.Script, first.Script)
		}
	}
	if want := "(declare-const v_alpha Real)\n(declare-const v_beta Real)\n(declare-const v_mid Real)\n(declare-const v_s String)\n(declare-const v_zeta Real)\n"; !strings.HasPrefix(first.Script, want) {
		t.Fatalf("declarations not sorted:\n%s", first.Script)
	}
	valid, _ := Translate(q, ModeValid)
	if !strings.Contains(valid.Script, "(assert (not (and ") {
		t.Fatalf("mode valid does not negate:\n%s", valid.Script)
	}
}
