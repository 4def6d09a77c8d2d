package logic

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

func TestSeed002_7_3_MatchTranslatesTheDecidableSubset(t *testing.T) {
	cases := []struct{ pat, want string }{
		{"abc", `(str.to_re "abc")`},
		{"", `(str.to_re "")`},
		{"^ab$", `(str.to_re "ab")`},
		{"[0-9]{2}", `((_ re.loop 2 2) (re.range "0" "9"))`},
		{"a{2,5}", `((_ re.loop 2 5) (str.to_re "a"))`},
		{"[ab]{1}c{1,1}", `(re.++ (re.union (str.to_re "a") (str.to_re "b")) (str.to_re "c"))`},
		{"a{2,}", `(re.++ ((_ re.loop 2 2) (str.to_re "a")) (re.* (str.to_re "a")))`},
		{"ab*", `(re.++ (str.to_re "a") (re.* (str.to_re "b")))`},
		{"a+?", `(re.+ (str.to_re "a"))`},
		{"(ab)?", `(re.opt (str.to_re "ab"))`},
		{"(?:a|bc)|d", `(re.union (re.union (str.to_re "a") (str.to_re "bc")) (str.to_re "d"))`},
		{"[^a-z]", `(re.inter re.allchar (re.comp (re.range "a" "z")))`},
		{"[-a]", `(re.union (str.to_re "-") (str.to_re "a"))`},
		{"[]a]", `(re.union (str.to_re "]") (str.to_re "a"))`},
		{".", `re.allchar`},
		{`\d\.`, `(re.++ (re.range "0" "9") (str.to_re "."))`},
		{`[\d_]`, `(re.union (re.range "0" "9") (str.to_re "_"))`},
		{`\S`, `(re.inter re.allchar (re.comp (re.union (str.to_re " ") (re.range "\u{9}" "\u{d}"))))`},
		{`\t`, `(str.to_re "\u{9}")`},
		{"é+", `(re.+ (str.to_re "\u{e9}"))`},
	}
	for _, c := range cases {
		got, f := regexToSMT(`(MATCH s "`+c.pat+`")`, 9, c.pat)
		if f != nil {
			t.Errorf("%q: %v", c.pat, f)
			continue
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.pat, got, c.want)
		}
	}
}

func TestSeed002_7_3_MatchOutsideTheSubsetIsUnsupported(t *testing.T) {
	for _, pat := range []string{`(a)\1`, `\bword`, `a(?=b)`, `a(?!b)`, `(?i)abc`, `(?P<n>a)`, `a^b`, `a$b`, `\p{L}`, `[[:alpha:]]`, `[\D]`, `\x41`, `\A`, `\z`} {
		q := `(MATCH s "` + pat + `")`
		_, f := regexToSMT(q, 9, pat)
		if f == nil || f.status != engines.Unsupported || f.problem.Code != CodeUnsupported {
			t.Errorf("%q: %v, want UNSUPPORTED", pat, f)
			continue
		}
		if !strings.Contains(f.problem.Message, "MATCH pattern") || f.problem.Details["reason"] == nil {
			t.Errorf("%q: %v carries no reason", pat, f.problem)
		}
	}
}

func TestSeed002_8_4_MatchSyntaxErrorsPointIntoThePattern(t *testing.T) {
	cases := []struct {
		pat string
		off int // offset in the pattern
	}{
		{"a(b", 3}, {"a)b", 1}, {"*a", 0}, {"a{2", 3}, {"a{x}", 1}, {"a{3,2}", 1}, {"[a", 0}, {"[z-a]", 3}, {"[]", 0}, {`a\`, 2}, {"a|+", 2},
	}
	for _, c := range cases {
		q := `(MATCH s "` + c.pat + `")`
		_, f := regexToSMT(q, 9, c.pat)
		if f == nil || f.problem.Code != CodeSyntax {
			t.Errorf("%q: %v, want %s", c.pat, f, CodeSyntax)
			continue
		}
		if f.problem.Details["position"] != 10+c.off {
			t.Errorf("%q: position %v, want %d", c.pat, f.problem.Details["position"], 10+c.off)
		}
	}
}

func TestSeed002_6_3_3_ModelValuesAreExact(t *testing.T) {
	tr := &Translation{
		Values: []string{"v_a", "v_b", "v_c", "v_d", "v_e", "v_f", "v_g", "v_p", "v_s"},
		Names:  []string{"a", "b", "c", "d", "e", "f", "g", "p", "s"},
		Sorts:  []Sort{SortInt, SortInt, SortReal, SortReal, SortReal, SortReal, SortReal, SortBool, SortString},
	}
	answer := `((v_a 6)
 (v_b (- 3))
 (v_c (/ 11.0 2.0))
 (v_d (- (/ 1.0 3.0)))
 (v_e 0.0)
 (v_f (root-obj (+ (^ x 2) (- 2)) 1))
 (v_g (/ (- 7.0) 8.0))
 (v_p false)
 (v_s "a""b\u{e9}\u{1f600}"))`
	m, err := parseModel(tr, answer)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m)
	want := `{"a":6,"b":-3,"c":5.5,"d":"-1/3","e":0,"f":"(root-obj (+ (^ x 2) (- 2)) 1)","g":-0.875,"p":false,"s":"a\"bé😀"}`
	if string(got) != want {
		t.Fatalf("model %s\nwant  %s", got, want)
	}
	for _, bad := range []string{"", "(", "((v_a 1) (v_zz 2))", "((v_a true))", "((v_a 1))", "((v_a 1) (v_b 2) extra", `((v_s 5))`} {
		if _, err := parseModel(tr, bad); err == nil {
			t.Errorf("%q: parsed, want an error", bad)
		}
	}
}

func TestExactNumber(t *testing.T) {
	for in, want := range map[string]string{"5": "5", "-5/2": "-2.5", "1/3": `"1/3"`, "1/40": "0.025", "7/6": `"7/6"`, "-1/1024": "-0.0009765625"} {
		r, _ := new(big.Rat).SetString(in)
		got, _ := json.Marshal(exactNumber(r))
		if string(got) != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// FuzzParseDSL: no input panics the parser, checker or translator; what
// translates has a script, and translating twice gives the same script.
func FuzzParseDSL(f *testing.F) {
	for _, s := range []string{
		"(AND (GT x 5) (LT y 10))",
		`(AND (EQ (PLUS subtotal tax) total) (GT invoice_date "2024-01-01") (MATCH gst_number "[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z]{1}[1-9A-Z]{1}Z[0-9A-Z]{1}"))`,
		`(IMPLIES (EQ category "electronics") (GE tax_rate 0.18))`,
		"(LET ((x Int) (y Real) (p Bool)) (AND (GT x 0) (NOT p)))",
		"(FORALL (x Int) (EXISTS y (GT (POW y 2) (ABS (NEG x)))))",
		`(IF p (EQ (MOD n 3) 1) (MATCH s "(a|b)*[^c]{1,3}\d?"))`,
		"(EQ (DIV x y) -0.5) ; comment",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		tr, err := Translate(q, ModeSatisfiable)
		if err != nil {
			if _, ok := err.(*failure); !ok {
				t.Fatalf("error %T is not a *failure", err)
			}
			return
		}
		if !strings.Contains(tr.Script, "(assert ") {
			t.Fatalf("no assertion in %q", tr.Script)
		}
		again, _ := Translate(q, ModeSatisfiable)
		if again.Script != tr.Script {
			t.Fatal("translation is not deterministic")
		}
	})
}
