package logic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/handlers/verify/z3pool"
)

var (
	poolOnce sync.Once
	pool     *z3pool.Pool
	poolErr  error
)

// engine is the logic engine on a real z3 pool shared by the tests (z3 is
// Debian's package z3; CI installs it).
func engine(t testing.TB) *logic.Engine {
	t.Helper()
	poolOnce.Do(func() { pool, poolErr = z3pool.New(z3pool.Config{Size: 2, Timeout: 20 * time.Second}) })
	if poolErr != nil {
		t.Fatalf("the logic engine tests need z3 (apt-get install z3): %v", poolErr)
	}
	return logic.New(pool)
}

func verify(t testing.TB, q, params string) engines.Outcome {
	t.Helper()
	req := engines.Request{Query: q, Type: "logic"}
	if params != "" {
		req.Params = json.RawMessage(params)
	}
	return engine(t).Verify(context.Background(), req)
}

func result(t testing.TB, o engines.Outcome) logic.Result {
	t.Helper()
	r, ok := o.Result.(logic.Result)
	if !ok {
		t.Fatalf("outcome %s %+v has no logic.Result", o.Status, o.Err)
	}
	return r
}

// rat reads an exact model number.
func rat(t testing.TB, v any) *big.Rat {
	t.Helper()
	s := fmt.Sprint(v)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("model value %v is not an exact number", v)
	}
	return r
}

func TestSeed002_5_2_2_LogicRequestIsVerifiedWithAModel(t *testing.T) {
	o := verify(t, "(AND (GT x 5) (LT y 10))", `{"format":"dsl"}`)
	r := result(t, o)
	if o.Status != engines.Verified || !r.IsValid || r.Satisfiability != "SAT" || r.ConstraintsEvaluated != 2 {
		t.Fatalf("outcome %s %+v", o.Status, r)
	}
	if rat(t, r.Model["x"]).Cmp(big.NewRat(5, 1)) <= 0 || rat(t, r.Model["y"]).Cmp(big.NewRat(10, 1)) >= 0 {
		t.Fatalf("model %v does not satisfy x > 5, y < 10", r.Model)
	}
}

func TestSeed002_7_4_SimpleConstraint(t *testing.T) {
	r := result(t, verify(t, "(AND (GT x 5) (LT x 10))\n; x > 5 AND x < 10", ""))
	x := rat(t, r.Model["x"])
	if !r.IsValid || x.Cmp(big.NewRat(5, 1)) <= 0 || x.Cmp(big.NewRat(10, 1)) >= 0 {
		t.Fatalf("result %+v", r)
	}
}

const gst = "[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z]{1}[1-9A-Z]{1}Z[0-9A-Z]{1}"

func TestSeed002_7_4_InvoiceValidation(t *testing.T) {
	q := `(AND
  (EQ (PLUS subtotal tax) total)
  (GT invoice_date "2024-01-01")
  (MATCH gst_number "` + gst + `"))`
	o := verify(t, q, "")
	r := result(t, o)
	if o.Status != engines.Verified || r.ConstraintsEvaluated != 3 {
		t.Fatalf("outcome %s %+v", o.Status, r)
	}
	sum := new(big.Rat).Add(rat(t, r.Model["subtotal"]), rat(t, r.Model["tax"]))
	if sum.Cmp(rat(t, r.Model["total"])) != 0 {
		t.Errorf("model %v: subtotal + tax != total", r.Model)
	}
	if d, _ := r.Model["invoice_date"].(string); d <= "2024-01-01" {
		t.Errorf("model invoice_date %q is not after 2024-01-01", d)
	}
	if g, _ := r.Model["gst_number"].(string); !regexp.MustCompile("^" + gst + "$").MatchString(g) {
		t.Errorf("model gst_number %q does not match the pattern", g)
	}
	// A concrete invoice: the claim about it is decided either way.
	concrete := func(gstNumber, date string) engines.Status {
		q := fmt.Sprintf(`(AND (EQ subtotal 100) (EQ tax 18) (EQ (PLUS subtotal tax) total) (EQ total 118) (GT %q "2024-01-01") (MATCH %q "%s"))`, date, gstNumber, gst)
		return verify(t, q, "").Status
	}
	if s := concrete("29ABCDE1234F1Z5", "2024-03-31"); s != engines.Verified {
		t.Errorf("valid invoice: %s", s)
	}
	if s := concrete("29ABCDE1234F1X5", "2024-03-31"); s != engines.Failed {
		t.Errorf("bad GST number: %s, want FAILED", s)
	}
	if s := concrete("29ABCDE1234F1Z5", "2023-12-31"); s != engines.Failed {
		t.Errorf("date before: %s, want FAILED", s)
	}
}

func TestSeed002_7_4_BusinessRule(t *testing.T) {
	q := `(IMPLIES (EQ category "electronics") (GE tax_rate 0.18))`
	r := result(t, verify(t, q, ""))
	if !r.IsValid {
		t.Fatalf("result %+v", r)
	}
	if r.Model["category"] == "electronics" && rat(t, r.Model["tax_rate"]).Cmp(big.NewRat(18, 100)) < 0 {
		t.Fatalf("model %v breaks the rule", r.Model)
	}
	// Not valid: a counterexample is electronics taxed below 18%.
	o := verify(t, q, `{"mode":"valid"}`)
	r = result(t, o)
	if o.Status != engines.Failed || r.Model["category"] != "electronics" || rat(t, r.Model["tax_rate"]).Cmp(big.NewRat(18, 100)) >= 0 {
		t.Fatalf("mode valid: %s %+v", o.Status, r)
	}
	// With the fact that electronics are taxed 20%, the rule is proved.
	o = verify(t, `(IMPLIES (IMPLIES (EQ category "electronics") (EQ tax_rate 0.2)) `+q+`)`, `{"mode":"prove"}`)
	if o.Status != engines.Verified {
		t.Fatalf("proof: %s %+v", o.Status, o.Result)
	}
}

func TestSeed002_7_5_VariableDeclaration(t *testing.T) {
	r := result(t, verify(t, "(LET ((x Int) (y Real) (p Bool)) (AND (GT x 0) (NOT p)))", ""))
	if !r.IsValid || r.Model["p"] != false || rat(t, r.Model["x"]).Sign() <= 0 || !rat(t, r.Model["x"]).IsInt() {
		t.Fatalf("result %+v", r)
	}
	// Int is integer arithmetic: no integer lies strictly between 1 and 2.
	if o := verify(t, "(LET ((n Int)) (AND (GT n 1) (LT n 2)))", ""); o.Status != engines.Failed {
		t.Fatalf("Int between 1 and 2: %s", o.Status)
	}
	if o := verify(t, "(AND (GT n 1) (LT n 2))", ""); o.Status != engines.Verified {
		t.Fatalf("Real between 1 and 2: %s", o.Status)
	}
}

func TestSeed002_6_3_3_UnsatIsFailed(t *testing.T) {
	o := verify(t, "(AND (GT x 5) (LT x 3))", "")
	r := result(t, o)
	if o.Status != engines.Failed || r.IsValid || r.Satisfiability != "UNSAT" || r.Model != nil || r.Expected != "satisfiable" {
		t.Fatalf("outcome %s %+v", o.Status, r)
	}
}

// TestSeed002_7_3_EveryOperatorIsDecided proves a fact about each operator
// (mode valid) and refutes a false one.
func TestSeed002_7_3_EveryOperatorIsDecided(t *testing.T) {
	valid := []string{
		"(IFF (AND p q) (NOT (OR (NOT p) (NOT q))))",
		"(IMPLIES (AND p (IMPLIES p q)) q)",
		"(XOR p (NOT p))",
		"(AND p q r (NOT false) true)\n; fails: replaced below",
		"(EQ (PLUS 0.1 0.2) 0.3)",
		"(EQ (PLUS 1 2 3 4) 10)",
		"(EQ (MINUS 7 2) 5)",
		"(EQ (MULT 2 3 4) 24)",
		"(EQ (DIV 1 3) (DIV 2 6))",
		"(EQ (DIV 7 2) 3.5)",
		"(EQ (MOD -7 3) 2)",
		"(LET ((n Int)) (IMPLIES (EQ n 7) (EQ (MOD n 3) 1)))",
		"(EQ (POW 2 10) 1024)",
		"(EQ (POW x 0) 1)",
		"(EQ (ABS -4.5) 4.5)",
		"(EQ (ABS x) (ABS (NEG x)))",
		"(EQ (NEG 3) -3)",
		"(NE 1 2)", "(GE 2 2)", "(LE 2 2)", "(LT 1 2)", "(GT 2 1)",
		"(EQ (IF (GE x 0) x (NEG x)) (ABS x))",
		"(FORALL x (GE (MULT x x) 0))",
		"(EXISTS x (EQ (MULT x x) 4))",
		"(FORALL (n Int) (OR (EQ (MOD n 2) 0) (EQ (MOD n 2) 1)))",
		`(GT "b" "a")`, `(LE "abc" "abd")`, `(LT "2024-01-31" "2024-02-01")`,
		`(IFF (GT s "abc") (NOT (LE s "abc")))`,
		`(GE s "")`,
		`(MATCH "29ABCDE1234F1Z5" "` + gst + `")`,
		`(NOT (MATCH "29abcde1234F1Z5" "` + gst + `"))`,
		`(IMPLIES (MATCH s "[0-9]+") (NOT (MATCH s "[a-z]*")))`,
		"(IMPLIES (AND (GT x 0) (GT y 0)) (GT (MULT x y) 0))",
		"(IMPLIES (NE y 0) (EQ (MULT (DIV x y) y) x))",
	}
	valid[3] = "(IMPLIES (AND p q r) (AND q (NOT false) true))"
	for _, q := range valid {
		o := verify(t, q, `{"mode":"valid"}`)
		if o.Status != engines.Verified {
			t.Errorf("%q: %s %+v %+v, want VERIFIED (valid)", q, o.Status, o.Result, o.Err)
		}
	}
	invalid := []string{
		"(XOR p q)", "(EQ (MOD -7 3) -1)", "(EQ (DIV 1 3) 0.33)", "(GT (MULT x x) 0)",
		"(FORALL x (GT (MULT x x) 0))", `(GT "B" "a")`, "(EQ (POW x 2) x)",
	}
	for _, q := range invalid {
		o := verify(t, q, `{"mode":"valid"}`)
		if o.Status != engines.Failed {
			t.Errorf("%q: %s %+v, want FAILED (not valid)", q, o.Status, o.Err)
		}
	}
}

func TestSeed002_7_3_MatchAgreesWithGoRegexp(t *testing.T) {
	cases := []struct{ pat, s string }{
		{"[0-9]{2}", "42"}, {"[0-9]{2}", "4"}, {"[0-9]{2}", "423"}, {"a|bc", "bc"}, {"a|bc", "ab"},
		{"(ab)+", "ababab"}, {"(ab)+", "aba"}, {"x?y*z", "z"}, {"x?y*z", "xxz"}, {"a{2,3}", "aaa"},
		{"a{2,3}", "aaaa"}, {"a{2,}", "aaaaaa"}, {"[^0-9]+", "abc"}, {"[^0-9]+", "ab1"}, {`\d+\.\d{2}`, "12.50"},
		{`\d+\.\d{2}`, "12x50"}, {".*@.*", "a@b"}, {".*@.*", "ab"}, {`\w+\s\w+`, "hi there"}, {`[a-z-]+`, "a-b"},
		{"^abc$", "abc"}, {"(?:a|b)c", "bc"}, {"é+", "éé"}, {`[\d_]+`, "1_2"}, {"", ""}, {"", "a"},
	}
	for _, c := range cases {
		want := regexp.MustCompile("^(?:" + c.pat + ")$").MatchString(c.s)
		o := verify(t, fmt.Sprintf(`(MATCH %q "%s")`, c.s, strings.ReplaceAll(c.pat, `"`, "")), "")
		got := o.Status == engines.Verified
		if (o.Status != engines.Verified && o.Status != engines.Failed) || got != want {
			t.Errorf("MATCH %q %q: %s, Go regexp says %v", c.s, c.pat, o.Status, want)
		}
	}
}

func TestSeed002_5_2_2_ParamsAreStrict(t *testing.T) {
	for _, p := range []string{`{"format":"smtlib"}`, `{"mode":"maybe"}`, `{"mode":5}`, `{"extra":1}`, `[1]`} {
		o := verify(t, "(GT x 1)", p)
		if o.Status != engines.Error || o.Err == nil || o.Err.Code != logic.CodeInvalid {
			t.Errorf("params %s: %s %+v, want ERROR %s", p, o.Status, o.Err, logic.CodeInvalid)
		}
	}
	for _, p := range []string{`null`, `{}`, `{"format":"dsl","mode":"satisfiable"}`} {
		if o := verify(t, "(GT x 1)", p); o.Status != engines.Verified {
			t.Errorf("params %s: %s %+v", p, o.Status, o.Err)
		}
	}
}

func TestSeed002_8_3_NoSolverIsEngineNotAvailable(t *testing.T) {
	e := logic.New(nil)
	o := e.Verify(context.Background(), engines.Request{Query: "(GT x 1)"})
	if o.Status != engines.Error || o.Err == nil || o.Err.Code != logic.CodeUnavailable {
		t.Fatalf("%s %+v, want ERROR %s", o.Status, o.Err, logic.CodeUnavailable)
	}
	// A syntax error is still a syntax error without a solver.
	o = e.Verify(context.Background(), engines.Request{Query: "(GT x 1"})
	if o.Err == nil || o.Err.Code != logic.CodeSyntax || o.Err.Details["expected"] != "closing parenthesis" || o.Err.Details["found"] != "end of input" || o.Err.Details["position"] != 7 {
		t.Fatalf("%s %+v", o.Status, o.Err)
	}
	if o.Status.HTTPStatus() != 500 {
		t.Fatalf("HTTP %d", o.Status.HTTPStatus())
	}
	o = e.Verify(context.Background(), engines.Request{Query: ""})
	if o.Err == nil || o.Err.Code != "QWED-REQ-002" {
		t.Fatalf("empty query: %+v", o.Err)
	}
	if _, err := z3pool.New(z3pool.Config{Path: "/nonexistent/z3"}); err == nil {
		t.Fatal("a pool without z3 started")
	}
}

func TestSeed002_2_2_OutcomesAreDeterministic(t *testing.T) {
	queries := []string{
		`(AND (EQ (PLUS subtotal tax) total) (GT invoice_date "2024-01-01") (MATCH gst_number "` + gst + `"))`,
		"(AND (GT x 5) (LT y 10) (EQ (MOD n 7) 3) (NOT p))",
		"(EXISTS k (AND (GT k x) (LT k (DIV x 3))))",
	}
	for _, q := range queries {
		req := engines.Request{Query: q, IncludeProof: true}
		first, _ := json.Marshal(engine(t).Verify(context.Background(), req))
		for i := 0; i < 6; i++ {
			// Interleave other queries so that the pool's processes have
			// different histories.
			verify(t, fmt.Sprintf("(AND (GT z %d) (LT w %d))", i, -i), "")
			again, _ := json.Marshal(engine(t).Verify(context.Background(), req))
			if string(again) != string(first) {
				t.Fatalf("%q run %d:\n%s\n%s", q, i, again, first)
			}
		}
	}
}

func TestSeed002_5_1_IncludeProofGivesTheScript(t *testing.T) {
	o := engine(t).Verify(context.Background(), engines.Request{Query: "(AND (GT x 5) (LT y 10))", IncludeProof: true})
	p, ok := o.Proof.(logic.Proof)
	if !ok || p.Solver != "z3" || !strings.Contains(p.Script, "(assert (and (> v_x 5.0) (< v_y 10.0)))") || p.Sorts["x"] != logic.SortReal {
		t.Fatalf("proof %+v", o.Proof)
	}
	if o := verify(t, "(GT x 1)", ""); o.Proof != nil {
		t.Fatalf("proof without include_proof: %+v", o.Proof)
	}
}

func TestSeed002_6_2_HardProblemTimesOut(t *testing.T) {
	p, err := z3pool.New(z3pool.Config{Size: 1, Timeout: 100 * time.Millisecond, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e := logic.New(p)
	// The pigeonhole principle, 12 pigeons in 11 holes: UNSAT, and
	// exponential for the solver's resolution.
	q := pigeonhole(11)
	o := e.Verify(context.Background(), engines.Request{Query: q})
	if o.Status != engines.Timeout || o.Err == nil || o.Err.Code != logic.CodeTimeout || o.Status.HTTPStatus() != 504 {
		t.Fatalf("%s %+v, want TIMEOUT %s", o.Status, o.Err, logic.CodeTimeout)
	}
	// The pool recovers: a later query is answered. The pool's budget is
	// 100 ms for this test, which a loaded machine can exceed even for a
	// trivial query on a freshly restarted process (its start-up counts),
	// so the recovery gets a few tries; a pool that stays broken fails
	// them all.
	var after engines.Outcome
	for try := 0; try < 5; try++ {
		if after = e.Verify(context.Background(), engines.Request{Query: "(GT x 1)"}); after.Status == engines.Verified {
			break
		}
	}
	if after.Status != engines.Verified {
		t.Fatalf("after the timeout: %s %+v", after.Status, after.Err)
	}
	// The caller's deadline bounds the query too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if o := e.Verify(ctx, engines.Request{Query: q}); o.Status != engines.Timeout {
		t.Fatalf("ctx deadline: %s %+v", o.Status, o.Err)
	}
}

func TestSeed002_4_2_Capabilities(t *testing.T) {
	c := logic.New(nil).Capabilities()
	if c.EngineID != "logic" || c.Version == "" || c.Limits["depth"] != logic.MaxDepth || len(c.Capabilities["operators"].([]string)) != 25 {
		t.Fatalf("capabilities %+v", c)
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Params, &schema); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(logic.New(nil).Capabilities())
	if string(a) != string(b) {
		t.Fatal("capabilities are not deterministic")
	}
}

// pigeonhole is "n+1 pigeons fit in n holes, one per hole" in the DSL.
func pigeonhole(n int) string {
	var b strings.Builder
	b.WriteString("(AND")
	for i := 0; i <= n; i++ {
		b.WriteString(" (OR")
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, " p%d_%d", i, j)
		}
		b.WriteString(")")
	}
	for j := 0; j < n; j++ {
		for i := 0; i <= n; i++ {
			for k := i + 1; k <= n; k++ {
				fmt.Fprintf(&b, " (NOT (AND p%d_%d p%d_%d))", i, j, k, j)
			}
		}
	}
	b.WriteString(")")
	return b.String()
}

func TestSeed002_7_NonlinearIntegersAreNotGuessed(t *testing.T) {
	// Fermat's last theorem for cubes: the solver cannot decide it; the
	// engine says so and never answers VERIFIED or FAILED.
	q := "(LET ((a Int) (b Int) (c Int)) (AND (GT a 0) (GT b 0) (GT c 0) (EQ (PLUS (POW a 3) (POW b 3)) (POW c 3))))"
	p, err := z3pool.New(z3pool.Config{Size: 1, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	o := logic.New(p).Verify(context.Background(), engines.Request{Query: q})
	if o.Status != engines.Unsupported && o.Status != engines.Timeout {
		t.Fatalf("%s %+v, want UNSUPPORTED or TIMEOUT", o.Status, o.Err)
	}
	if r := result(t, o); r.IsValid || r.Satisfiability != "UNKNOWN" {
		t.Fatalf("result %+v", r)
	}
}

// TestSeed002_7_StringOrderingAgreesWithGo: an ordering against a literal
// (translated to a regular language) decides as Go's string comparison
// (byte order of UTF-8 is code point order).
func TestSeed002_7_StringOrderingAgreesWithGo(t *testing.T) {
	consts := []string{"2024-01-01", "ab", "", "bé"}
	values := []string{"2024-01-01", "2024-01-02", "2024-01-0", "2023-12-31", "2024-01-011", "9", "", "a", "ab", "abc", "aa", "b", "bé", "béz", "bz", "bÿ"}
	ops := map[string]func(a, b string) bool{
		"GT": func(a, b string) bool { return a > b }, "GE": func(a, b string) bool { return a >= b },
		"LT": func(a, b string) bool { return a < b }, "LE": func(a, b string) bool { return a <= b },
	}
	for _, c := range consts {
		for _, v := range values {
			for op, f := range ops {
				for _, flip := range []bool{false, true} {
					q := fmt.Sprintf("(AND (EQ s %q) (%s s %q))", v, op, c)
					want := f(v, c)
					if flip {
						q = fmt.Sprintf("(AND (EQ s %q) (%s %q s))", v, op, c)
						want = f(c, v)
					}
					o := verify(t, q, "")
					if (o.Status == engines.Verified) != want || (o.Status != engines.Verified && o.Status != engines.Failed) {
						t.Errorf("%s: %s, Go says %v", q, o.Status, want)
					}
				}
			}
		}
	}
}
