package logic

import (
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// Mode is what a query claims of its formula.
type Mode string

// The modes of params.mode.
const (
	// ModeSatisfiable (the default) claims the constraints can all hold:
	// SAT is VERIFIED with a model (a witness), UNSAT is FAILED.
	ModeSatisfiable Mode = "satisfiable"
	// ModeValid claims the formula holds for every assignment of its free
	// variables: the solver checks that its negation is UNSAT (VERIFIED);
	// SAT is FAILED with the counterexample as the model.
	ModeValid Mode = "valid"
)

// Translation is a query translated to SMT-LIB2.
type Translation struct {
	// Script declares the free variables (sorted by name) and asserts the
	// definedness guards and the formula (negated in ModeValid); it holds
	// no check-sat: the Solver adds the commands.
	Script string
	// Values are the SMT names of the free variables, sorted by DSL name:
	// the terms the Solver asks get-value for after SAT.
	Values []string
	// Names are the DSL names of Values, index for index.
	Names []string
	// Sorts are the sorts of Values, index for index.
	Sorts []Sort
	// Constraints is how many constraints the query holds (the operands
	// of a top-level AND, else 1).
	Constraints int
}

// Translate parses, checks and translates query for mode. The error is a
// *failure carrying its §8 problem (see Verify).
func Translate(query string, mode Mode) (*Translation, error) {
	t, f := translate(query, mode)
	if f != nil {
		return nil, f
	}
	return t, nil
}

func translate(query string, mode Mode) (*Translation, *failure) {
	root, f := parse(query)
	if f != nil {
		return nil, f
	}
	c, f := check(query, root)
	if f != nil {
		return nil, f
	}
	tr := &translator{c: c, guardSeen: map[string]bool{}}
	body, f := tr.term(root)
	if f != nil {
		return nil, f
	}
	var b strings.Builder
	out := &Translation{Constraints: 1}
	for _, s := range c.free {
		b.WriteString("(declare-const " + s.smtName() + " " + string(s.sort) + ")\n")
		out.Values = append(out.Values, s.smtName())
		out.Names = append(out.Names, s.name)
		out.Sorts = append(out.Sorts, s.sort)
	}
	for _, g := range tr.guards {
		b.WriteString("(assert " + g + ")\n")
	}
	if mode == ModeValid {
		b.WriteString("(assert (not " + body.text + "))\n")
	} else {
		b.WriteString("(assert " + body.text + ")\n")
	}
	if b.Len() > MaxScriptBytes {
		return nil, limitErr(query, 0, "translated script bytes", MaxScriptBytes)
	}
	out.Script = b.String()
	top := root
	for top.Kind == KindList && top.Op == "LET" {
		top = top.Args[0]
	}
	if top.Kind == KindList && top.Op == "AND" {
		out.Constraints = len(top.Args)
	}
	return out, nil
}

// term is a translated expression.
type term struct {
	text  string
	sort  Sort
	lit   string // an integer literal's canonical text ("-5"), else ""
	bound bool   // mentions a variable bound by FORALL/EXISTS
}

type translator struct {
	c         *checked
	guards    []string
	guardSeen map[string]bool
	lets      int
}

// smtNumber is a canonical DSL number as an SMT-LIB term.
func smtNumber(text string) string {
	if rest, ok := strings.CutPrefix(text, "-"); ok {
		return "(- " + rest + ")"
	}
	return text
}

// toReal is t as a Real term.
func toReal(t term) string {
	switch {
	case t.sort != SortInt:
		return t.text
	case t.lit != "":
		return smtNumber(t.lit + ".0")
	}
	return "(to_real " + t.text + ")"
}

// joinNum converts numeric terms to one sort: Real if any is Real.
func joinNum(ts []term) (Sort, []string) {
	s := SortInt
	for _, t := range ts {
		if t.sort == SortReal {
			s = SortReal
		}
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		if s == SortReal {
			out[i] = toReal(t)
		} else {
			out[i] = t.text
		}
	}
	return s, out
}

func zero(s Sort) string {
	if s == SortReal {
		return "0.0"
	}
	return "0"
}

func (tr *translator) fail(f *failure) (term, *failure) { return term{}, f }

func (tr *translator) term(n *Node) (term, *failure) {
	src := tr.c.src
	switch n.Kind {
	case KindVar:
		s := tr.c.syms[n.sym]
		return term{text: s.smtName(), sort: s.sort, bound: s.bound}, nil
	case KindInt:
		return term{text: smtNumber(n.Text), sort: SortInt, lit: n.Text}, nil
	case KindReal:
		return term{text: smtNumber(n.Text), sort: SortReal}, nil
	case KindBool:
		return term{text: n.Text, sort: SortBool}, nil
	case KindString:
		for i, r := range n.Text {
			if r > MaxSolverRune {
				return tr.fail(unsupported(src, n.Pos+1+i, "a character beyond U+2FFFF (the solver's alphabet)"))
			}
		}
		return term{text: smtString(n.Text), sort: SortString}, nil
	}
	if n.Op == "LET" {
		return tr.term(n.Args[0])
	}
	if n.Op == "FORALL" || n.Op == "EXISTS" {
		s := tr.c.syms[n.Args[0].sym]
		body, f := tr.term(n.Args[1])
		if f != nil {
			return term{}, f
		}
		q := strings.ToLower(n.Op)
		return term{text: "(" + q + " ((" + s.smtName() + " " + string(s.sort) + ")) " + body.text + ")", sort: SortBool}, nil
	}
	if n.Op == "MATCH" {
		s, f := tr.term(n.Args[0])
		if f != nil {
			return term{}, f
		}
		re, f := regexToSMT(src, n.Args[1].Pos, n.Args[1].Text)
		if f != nil {
			return term{}, f
		}
		return term{text: "(str.in_re " + s.text + " " + re + ")", sort: SortBool, bound: s.bound}, nil
	}
	if n.Op == "POW" {
		return tr.pow(n)
	}
	args := make([]term, len(n.Args))
	bound := false
	for i, a := range n.Args {
		t, f := tr.term(a)
		if f != nil {
			return term{}, f
		}
		args[i] = t
		bound = bound || t.bound
	}
	texts := func() []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = a.text
		}
		return out
	}
	app := func(op string, parts []string) string { return "(" + op + " " + strings.Join(parts, " ") + ")" }
	boolean := func(text string) (term, *failure) { return term{text: text, sort: SortBool, bound: bound}, nil }
	switch n.Op {
	case "AND", "OR", "XOR", "NOT":
		return boolean(app(strings.ToLower(n.Op), texts()))
	case "IMPLIES":
		return boolean(app("=>", texts()))
	case "IFF":
		return boolean(app("=", texts()))
	case "EQ", "NE":
		parts := texts()
		if args[0].sort == SortInt || args[0].sort == SortReal {
			_, parts = joinNum(args)
		}
		eq := app("=", parts)
		if n.Op == "NE" {
			eq = "(not " + eq + ")"
		}
		return boolean(eq)
	case "GT", "GE", "LT", "LE":
		if args[0].sort == SortString {
			if t, ok := strOrderConst(n, args); ok {
				return boolean(t)
			}
			a, b := args[0].text, args[1].text
			switch n.Op {
			case "GT":
				return boolean("(str.< " + b + " " + a + ")")
			case "GE":
				return boolean("(str.<= " + b + " " + a + ")")
			case "LT":
				return boolean("(str.< " + a + " " + b + ")")
			}
			return boolean("(str.<= " + a + " " + b + ")")
		}
		_, parts := joinNum(args)
		op := map[string]string{"GT": ">", "GE": ">=", "LT": "<", "LE": "<="}[n.Op]
		return boolean(app(op, parts))
	case "NEG":
		a := args[0]
		if a.lit != "" {
			neg := "-" + a.lit
			if a.lit == "0" {
				neg = "0"
			} else if rest, ok := strings.CutPrefix(a.lit, "-"); ok {
				neg = rest
			}
			return term{text: smtNumber(neg), sort: SortInt, lit: neg}, nil
		}
		return term{text: "(- " + a.text + ")", sort: a.sort, bound: bound}, nil
	case "PLUS", "MINUS", "MULT":
		s, parts := joinNum(args)
		op := map[string]string{"PLUS": "+", "MINUS": "-", "MULT": "*"}[n.Op]
		return term{text: app(op, parts), sort: s, bound: bound}, nil
	case "DIV":
		if f := tr.guard(n.Args[1], args[1]); f != nil {
			return term{}, f
		}
		return term{text: app("/", []string{toReal(args[0]), toReal(args[1])}), sort: SortReal, bound: bound}, nil
	case "MOD":
		for i, a := range args {
			if a.sort != SortInt {
				return tr.fail(syntaxErr(src, n.Args[i].Pos, "an Int operand of MOD (declare it with LET ((x Int)))", "a Real expression"))
			}
		}
		if f := tr.guard(n.Args[1], args[1]); f != nil {
			return term{}, f
		}
		return term{text: app("mod", texts()), sort: SortInt, bound: bound}, nil
	case "ABS":
		a := args[0]
		l := tr.let()
		return term{text: "(let ((" + l + " " + a.text + ")) (ite (>= " + l + " " + zero(a.sort) + ") " + l + " (- " + l + ")))", sort: a.sort, bound: bound}, nil
	case "IF":
		if args[1].sort == SortInt || args[1].sort == SortReal {
			s, parts := joinNum(args[1:])
			return term{text: app("ite", []string{args[0].text, parts[0], parts[1]}), sort: s, bound: bound}, nil
		}
		return term{text: app("ite", texts()), sort: args[1].sort, bound: bound}, nil
	}
	return tr.fail(syntaxErr(src, n.Pos, "operator", strconv.Quote(n.Op)))
}

func (tr *translator) let() string {
	tr.lets++
	return "l" + strconv.Itoa(tr.lets)
}

// guard requires a divisor to be non-zero: a DIV or MOD asserts that its
// divisor is not 0 (SMT-LIB leaves x/0 unspecified, which would let the
// solver pick any value for it). A literal 0 is refused; a divisor over a
// quantified variable is UNSUPPORTED (the guard would have to live under
// the quantifier, where it changes the claim).
func (tr *translator) guard(n *Node, d term) *failure {
	if (n.Kind == KindInt || n.Kind == KindReal) && n.Text != "0" && n.Text != "0.0" {
		return nil
	}
	if n.Kind == KindInt || n.Kind == KindReal {
		line, col := lineCol(tr.c.src, n.Pos)
		return &failure{engines.Error, engines.Problem{Code: CodeInvalid, Message: "Division by zero",
			Details: map[string]any{"position": n.Pos, "line": line, "column": col, "reason": "division by the literal 0 is undefined"}}}
	}
	if d.bound {
		return unsupported(tr.c.src, n.Pos, "a DIV or MOD whose divisor depends on a quantified variable (division by zero would be undefined under the quantifier)")
	}
	g := "(not (= " + d.text + " " + zero(d.sort) + "))"
	if !tr.guardSeen[g] {
		tr.guardSeen[g] = true
		tr.guards = append(tr.guards, g)
	}
	return nil
}

// pow is (POW b k) for a natural literal k <= MaxPowExponent: b*b*...*b.
func (tr *translator) pow(n *Node) (term, *failure) {
	base, f := tr.term(n.Args[0])
	if f != nil {
		return term{}, f
	}
	e := n.Args[1]
	k := -1
	if e.Kind == KindInt && !strings.HasPrefix(e.Text, "-") && len(e.Text) <= 3 {
		k, _ = strconv.Atoi(e.Text)
	}
	if k < 0 || k > MaxPowExponent {
		return term{}, unsupported(tr.c.src, e.Pos, "POW needs a natural number literal exponent from 0 to "+strconv.Itoa(MaxPowExponent)+" (other powers are not decidable exactly)")
	}
	switch k {
	case 0:
		if base.sort == SortReal {
			return term{text: "1.0", sort: SortReal}, nil
		}
		return term{text: "1", sort: SortInt, lit: "1"}, nil
	case 1:
		return base, nil
	}
	l := tr.let()
	parts := make([]string, k)
	for i := range parts {
		parts[i] = l
	}
	return term{text: "(let ((" + l + " " + base.text + ")) (* " + strings.Join(parts, " ") + "))", sort: base.sort, bound: base.bound}, nil
}

// MaxOrderConstRunes is the longest string literal a string ordering
// compares against as a regular language (below, str.< and str.<=).
const MaxOrderConstRunes = 64

// strOrderConst translates (GT s "c"), (GE s "c"), (LT s "c"), (LE s "c")
// (or the literal first) to a membership of s in the regular language of
// the strings above or below the constant: the same meaning as str.< and
// str.<=, which z3 solves ten times slower.
func strOrderConst(n *Node, args []term) (string, bool) {
	a, b := n.Args[0], n.Args[1]
	s := args[0].text
	op := n.Op
	if a.Kind == KindString && b.Kind != KindString {
		a, b = b, a
		s = args[1].text
		op = map[string]string{"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE"}[op]
	}
	if a.Kind == KindString || b.Kind != KindString {
		return "", false
	}
	c := []rune(b.Text)
	if len(c) > MaxOrderConstRunes {
		return "", false
	}
	var re string
	switch op {
	case "GT":
		re = reAbove(c)
	case "GE":
		re = "(re.union (str.to_re " + smtString(b.Text) + ") " + reAbove(c) + ")"
	case "LT":
		re = reBelow(c)
	default:
		re = "(re.union (str.to_re " + smtString(b.Text) + ") " + reBelow(c) + ")"
	}
	return "(str.in_re " + s + " " + re + ")", true
}

// reAbove is the language of the strings lexicographically above c.
func reAbove(c []rune) string {
	if len(c) == 0 {
		return "(re.+ re.allchar)"
	}
	rest := "(re.++ (str.to_re " + smtString(string(c[0])) + ") " + reAbove(c[1:]) + ")"
	if c[0] >= MaxSolverRune {
		return rest
	}
	return "(re.union (re.++ (re.range " + smtString(string(c[0]+1)) + " " + smtString(string(rune(MaxSolverRune))) + ") re.all) " + rest + ")"
}

// reBelow is the language of the strings lexicographically below c.
func reBelow(c []rune) string {
	if len(c) == 0 {
		return "re.none"
	}
	parts := `(str.to_re "")`
	if c[0] > 0 {
		parts += " (re.++ (re.range " + smtString(string(rune(0))) + " " + smtString(string(c[0]-1)) + ") re.all)"
	}
	return "(re.union " + parts + " (re.++ (str.to_re " + smtString(string(c[0])) + ") " + reBelow(c[1:]) + "))"
}
