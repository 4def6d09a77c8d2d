package logic

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseModel reads arbitrary solver answers (the output of another
// process) back into a model: never a panic; an accepted answer gives
// exactly one JSON-encodable value per free variable, of its sort.
func FuzzParseModel(f *testing.F) {
	tr, err := Translate(`(LET ((x Int) (y Real) (p Bool) (s String)) (AND (GT x 1) (LT y 2) p (EQ s "a")))`, ModeSatisfiable)
	if err != nil {
		f.Fatal(err)
	}
	// answer pairs the SMT names of p, s, x, y (sorted by DSL name) with
	// the given value texts.
	answer := func(vals ...string) string {
		var b strings.Builder
		b.WriteString("(")
		for i, v := range vals {
			b.WriteString("(" + tr.Values[i%len(tr.Values)] + " " + v + ")")
		}
		return b.String() + ")"
	}
	if strings.Join(tr.Names, ",") != "p,s,x,y" {
		f.Fatalf("names %v", tr.Names)
	}
	good := answer("true", `"a"`, "2", "(/ 1 2)")
	if m, err := parseModel(tr, good); err != nil || len(m) != 4 {
		f.Fatalf("the well-formed seed is refused: %v %v", m, err)
	}
	for _, s := range []string{
		good,
		answer("false", `"a""b"`, "(- 3)", "(root-obj (+ (^ x 2) (- 2)) 1)"),
		answer("true", `""`, "2.0", "1.5"), answer("true", `"a"`, "2"), answer("true", `"a"`, "2", "1", "1"),
		answer("1", "2", `"s"`, "true"), answer("true", `"\u{1F600}"`, "99999999999999999999999999999999", "(/ 0 0)"),
		good + " trailing", `()`, `(`, `((z 1))`, `x`, strings.Repeat("(", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		model, err := parseModel(tr, answer)
		if err != nil {
			return
		}
		if len(model) != len(tr.Names) {
			t.Fatalf("%d values for %d variables: %v", len(model), len(tr.Names), model)
		}
		for i, name := range tr.Names {
			v, ok := model[name]
			if !ok {
				t.Fatalf("no value for %s in %v", name, model)
			}
			switch tr.Sorts[i] {
			case SortBool:
				if _, ok := v.(bool); !ok {
					t.Fatalf("%s: %T for Bool", name, v)
				}
			case SortString:
				if _, ok := v.(string); !ok {
					t.Fatalf("%s: %T for String", name, v)
				}
			}
		}
		if _, err := json.Marshal(model); err != nil {
			t.Fatalf("model %v does not encode: %v", model, err)
		}
	})
}
