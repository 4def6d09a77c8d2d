package logic

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// sexp is one S-expression of the solver's answer.
type sexp struct {
	atom   string // a symbol or numeral ("" for a list or string)
	str    string // a string literal's content, decoded
	isStr  bool
	list   []*sexp
	isList bool
	raw    string // the source text
}

// maxSexpDepth bounds the nesting of a solver answer read back.
const maxSexpDepth = 200

// parseSexp reads one S-expression from s (the solver's get-value answer).
func parseSexp(s string) (*sexp, error) {
	r := &sexpReader{s: s}
	e, err := r.read(0)
	if err != nil {
		return nil, err
	}
	r.skip()
	if r.pos != len(s) {
		return nil, fmt.Errorf("reading solver answer: trailing text at %d", r.pos)
	}
	return e, nil
}

type sexpReader struct {
	s   string
	pos int
}

func (r *sexpReader) skip() {
	for r.pos < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.pos]) >= 0 {
		r.pos++
	}
}

func (r *sexpReader) read(depth int) (*sexp, error) {
	if depth > maxSexpDepth {
		return nil, fmt.Errorf("reading solver answer: nested deeper than %d", maxSexpDepth)
	}
	r.skip()
	if r.pos >= len(r.s) {
		return nil, fmt.Errorf("reading solver answer: unexpected end")
	}
	start := r.pos
	switch r.s[r.pos] {
	case '(':
		r.pos++
		e := &sexp{isList: true}
		for {
			r.skip()
			if r.pos >= len(r.s) {
				return nil, fmt.Errorf("reading solver answer: unclosed list")
			}
			if r.s[r.pos] == ')' {
				r.pos++
				e.raw = r.s[start:r.pos]
				return e, nil
			}
			c, err := r.read(depth + 1)
			if err != nil {
				return nil, err
			}
			e.list = append(e.list, c)
		}
	case ')':
		return nil, fmt.Errorf("reading solver answer: unexpected ) at %d", r.pos)
	case '"':
		r.pos++
		var b strings.Builder
		for {
			if r.pos >= len(r.s) {
				return nil, fmt.Errorf("reading solver answer: unclosed string")
			}
			c := r.s[r.pos]
			if c == '"' {
				if r.pos+1 < len(r.s) && r.s[r.pos+1] == '"' {
					b.WriteByte('"')
					r.pos += 2
					continue
				}
				r.pos++
				break
			}
			if c == '\\' && strings.HasPrefix(r.s[r.pos:], `\u{`) {
				if end := strings.IndexByte(r.s[r.pos:], '}'); end > 3 && end <= 9 {
					if v, err := strconv.ParseUint(r.s[r.pos+3:r.pos+end], 16, 32); err == nil {
						b.WriteRune(rune(v))
						r.pos += end + 1
						continue
					}
				}
			}
			b.WriteByte(c)
			r.pos++
		}
		return &sexp{isStr: true, str: b.String(), raw: r.s[start:r.pos]}, nil
	}
	for r.pos < len(r.s) && strings.IndexByte(" \t\r\n()\"", r.s[r.pos]) < 0 {
		r.pos++
	}
	return &sexp{atom: r.s[start:r.pos], raw: r.s[start:r.pos]}, nil
}

// rational evaluates a numeric value: a numeral, a decimal, (- v) and
// (/ a b). ok is false for anything else (an algebraic number).
func rational(e *sexp) (*big.Rat, bool) {
	if !e.isList {
		if e.isStr || e.atom == "" {
			return nil, false
		}
		for _, c := range e.atom {
			if c != '.' && (c < '0' || c > '9') {
				return nil, false
			}
		}
		v, ok := new(big.Rat).SetString(e.atom)
		return v, ok
	}
	if len(e.list) < 2 || e.list[0].isList || e.list[0].isStr {
		return nil, false
	}
	switch op := e.list[0].atom; {
	case op == "-" && len(e.list) == 2:
		v, ok := rational(e.list[1])
		if !ok {
			return nil, false
		}
		return v.Neg(v), true
	case op == "/" && len(e.list) == 3:
		a, ok1 := rational(e.list[1])
		b, ok2 := rational(e.list[2])
		if !ok1 || !ok2 || b.Sign() == 0 {
			return nil, false
		}
		return a.Quo(a, b), true
	}
	return nil, false
}

// exactNumber is v as an exact JSON value: a json.Number when v is an
// integer or a finite decimal (5, -2.5), else a string "p/q" (1/3).
func exactNumber(v *big.Rat) any {
	if v.IsInt() {
		return json.Number(v.Num().String())
	}
	d := new(big.Int).Set(v.Denom())
	digits := 0
	two, five := big.NewInt(2), big.NewInt(5)
	m := new(big.Int)
	for _, p := range []*big.Int{two, five} {
		n := 0
		for {
			q, r := new(big.Int).QuoRem(d, p, m)
			if r.Sign() != 0 {
				break
			}
			d = q
			n++
		}
		digits = max(digits, n)
	}
	if d.Cmp(big.NewInt(1)) == 0 {
		return json.Number(v.FloatString(digits))
	}
	return v.RatString()
}

// modelValue is the JSON value of one get-value entry of sort s: bool,
// string, an exact number (exactNumber), or, for an irrational algebraic
// number z3 prints as (root-obj ...), that SMT-LIB term as a string.
func modelValue(e *sexp, s Sort) (any, error) {
	switch s {
	case SortBool:
		if e.atom == "true" || e.atom == "false" {
			return e.atom == "true", nil
		}
	case SortString:
		if e.isStr {
			return e.str, nil
		}
	default:
		if v, ok := rational(e); ok {
			return exactNumber(v), nil
		}
		if e.isList {
			return e.raw, nil
		}
	}
	return nil, fmt.Errorf("reading solver value %q of sort %s: unexpected form", e.raw, s)
}

// parseModel reads the solver's get-value answer ((name value) ...) into
// the DSL names of t.
func parseModel(t *Translation, answer string) (map[string]any, error) {
	e, err := parseSexp(answer)
	if err != nil {
		return nil, err
	}
	if !e.isList {
		return nil, fmt.Errorf("reading solver model: not a list")
	}
	idx := make(map[string]int, len(t.Values))
	for i, v := range t.Values {
		idx[v] = i
	}
	model := make(map[string]any, len(t.Values))
	for _, p := range e.list {
		if !p.isList || len(p.list) != 2 || p.list[0].isList || p.list[0].isStr {
			return nil, fmt.Errorf("reading solver model: entry %q is not (name value)", p.raw)
		}
		i, ok := idx[p.list[0].atom]
		if !ok {
			return nil, fmt.Errorf("reading solver model: unknown name %q", p.list[0].atom)
		}
		v, err := modelValue(p.list[1], t.Sorts[i])
		if err != nil {
			return nil, err
		}
		model[t.Names[i]] = v
	}
	if len(model) != len(t.Values) {
		return nil, fmt.Errorf("reading solver model: %d values for %d variables", len(model), len(t.Values))
	}
	return model, nil
}
