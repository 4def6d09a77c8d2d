package logic

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the kind of a Node.
type Kind uint8

// The kinds of nodes (QWED protocol v1.0 §7.2: atoms and lists).
const (
	KindVar    Kind = iota + 1 // a variable (Node.Text is its name)
	KindInt                    // an integer literal (Node.Text canonical: -12, 0)
	KindReal                   // a float literal (Node.Text canonical: -0.5, 3.25)
	KindBool                   // true or false (Node.Text)
	KindString                 // a string literal (Node.Text is the content)
	KindList                   // "(" operator {expression} ")" (Node.Op, Node.Args)
)

// Sort is the sort of a variable or expression.
type Sort string

// The sorts of the DSL (QWED protocol v1.0 §7.5, plus String for string literals).
const (
	SortInt    Sort = "Int"
	SortReal   Sort = "Real"
	SortBool   Sort = "Bool"
	SortString Sort = "String"
)

// Binding is one (name Sort) pair of a LET, or the typed variable of
// (FORALL (x Int) body).
type Binding struct {
	Name string
	Sort Sort
	Pos  int
}

// Node is one expression of a parsed query. Pos is the byte offset of its
// first byte in the query.
type Node struct {
	Kind Kind
	Pos  int
	Text string
	Op   string
	Args []*Node
	// Binds are a LET's declarations, or a quantifier's typed variable
	// (then Args[0] is the variable and Binds has its sort).
	Binds []Binding

	sym  int // KindVar: the symbol it resolves to (checker)
	tvar int // the checker's type variable
}

// arity is an operator's operand count: min, and max (-1: unbounded).
type arity struct{ min, max int }

// operators is the whitelist of the QWED protocol v1.0 §7.3 plus the special operators
// IF, LET and MATCH, with their arities. Anything else at the head of a
// list is a syntax error.
var operators = map[string]arity{
	"AND": {2, -1}, "OR": {2, -1}, "NOT": {1, 1}, "IMPLIES": {2, 2}, "IFF": {2, 2}, "XOR": {2, 2},
	"EQ": {2, 2}, "NE": {2, 2}, "GT": {2, 2}, "GE": {2, 2}, "LT": {2, 2}, "LE": {2, 2},
	"PLUS": {2, -1}, "MINUS": {2, 2}, "MULT": {2, -1}, "DIV": {2, 2}, "MOD": {2, 2}, "POW": {2, 2},
	"ABS": {1, 1}, "NEG": {1, 1},
	"FORALL": {2, 2}, "EXISTS": {2, 2},
	"IF": {3, 3}, "LET": {1, 1}, "MATCH": {2, 2},
}

// Operators lists the operators the DSL accepts, sorted.
func Operators() []string {
	out := make([]string, 0, len(operators))
	for op := range operators {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}

// parser reads one query. Its errors are *failure.
type parser struct {
	src   string
	pos   int
	nodes int
}

// Parse parses src per the grammar of the QWED protocol v1.0 §7.2. Extensions, all
// unambiguous: whitespace is space, tab, CR and LF; ";" starts a comment to
// the end of the line (so the seed's §7.4 examples parse as printed);
// (FORALL (x Int) body) gives the bound variable a sort. A variable may not
// be spelled as an operator or as true/false. The error is a *failure
// carrying QWED-REQ-003 or QWED-REQ-004 (use Verify for an Outcome).
func Parse(src string) (*Node, error) {
	n, f := parse(src)
	if f != nil {
		return nil, f
	}
	return n, nil
}

func parse(src string) (*Node, *failure) {
	if len(src) > MaxQueryBytes {
		return nil, limitErr(src, MaxQueryBytes, "query bytes", MaxQueryBytes)
	}
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, w := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && w == 1 {
				break
			}
			i += w
		}
		return nil, syntaxErr(src, i, "UTF-8 text", "an invalid byte")
	}
	p := &parser{src: src}
	p.skip()
	if p.pos == len(src) {
		return nil, syntaxErr(src, p.pos, "expression", "end of input")
	}
	n, f := p.expr(1)
	if f != nil {
		return nil, f
	}
	p.skip()
	if p.pos != len(src) {
		return nil, syntaxErr(src, p.pos, "end of input", p.foundAt(p.pos))
	}
	return n, nil
}

// skip passes whitespace and comments.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; c {
		case ' ', '\t', '\r', '\n':
			p.pos++
		case ';':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// foundAt describes what is at pos, for an error's "found".
func (p *parser) foundAt(pos int) string {
	if pos >= len(p.src) {
		return "end of input"
	}
	c := p.src[pos]
	switch {
	case c == '(':
		return `"("`
	case c == ')':
		return `")"`
	case c == '"':
		return "string"
	}
	end := pos
	for end < len(p.src) && !isDelim(p.src[end]) && end-pos < 32 {
		end++
	}
	if end == pos {
		r, _ := utf8.DecodeRuneInString(p.src[pos:])
		return strconv.QuoteRune(r)
	}
	return strconv.Quote(p.src[pos:end])
}

func isDelim(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '(' || c == ')' || c == '"' || c == ';'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (p *parser) newNode(n *Node) (*Node, *failure) {
	p.nodes++
	if p.nodes > MaxNodes {
		return nil, limitErr(p.src, n.Pos, "nodes", MaxNodes)
	}
	return n, nil
}

// expr parses one expression at nesting depth (1 = top level).
func (p *parser) expr(depth int) (*Node, *failure) {
	p.skip()
	if p.pos >= len(p.src) {
		return nil, syntaxErr(p.src, p.pos, "expression", "end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '(':
		return p.list(depth)
	case c == ')':
		return nil, syntaxErr(p.src, p.pos, "expression", `")"`)
	case c == '"':
		return p.str()
	default:
		return p.atom()
	}
}

// word reads the run of non-delimiter bytes at p.pos.
func (p *parser) word() string {
	start := p.pos
	for p.pos < len(p.src) && !isDelim(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// atom parses a variable, a number or a boolean.
func (p *parser) atom() (*Node, *failure) {
	start := p.pos
	w := p.word()
	switch {
	case w == "true" || w == "false":
		return p.newNode(&Node{Kind: KindBool, Pos: start, Text: w})
	case isLetter(w[0]):
		for i := 1; i < len(w); i++ {
			if c := w[i]; !isLetter(c) && !isDigit(c) && c != '_' {
				return nil, syntaxErr(p.src, start+i, "letter, digit or \"_\" in a variable name", p.foundAt(start+i))
			}
		}
		if len(w) > MaxNameBytes {
			return nil, limitErr(p.src, start, "variable name bytes", MaxNameBytes)
		}
		if _, ok := operators[w]; ok {
			return nil, syntaxErr(p.src, start, "variable, number, boolean or string (an operator is written at the head of a list)", strconv.Quote(w))
		}
		return p.newNode(&Node{Kind: KindVar, Pos: start, Text: w})
	case isDigit(w[0]) || w[0] == '-':
		return p.number(start, w)
	}
	return nil, syntaxErr(p.src, start, "variable, number, boolean, string or \"(\"", p.foundAt(start))
}

// number parses integer = ["-"] digit {digit} or float = integer "." digit
// {digit}, and canonicalises it (no leading zeros, no "-0").
func (p *parser) number(start int, w string) (*Node, *failure) {
	i := 0
	neg := false
	if w[0] == '-' {
		neg = true
		i = 1
	}
	intStart := i
	for i < len(w) && isDigit(w[i]) {
		i++
	}
	if i == intStart {
		return nil, syntaxErr(p.src, start+i, "digit", p.foundAt(start+i))
	}
	intPart := w[intStart:i]
	frac := ""
	kind := KindInt
	if i < len(w) && w[i] == '.' {
		i++
		fs := i
		for i < len(w) && isDigit(w[i]) {
			i++
		}
		if i == fs {
			return nil, syntaxErr(p.src, start+i, "digit after \".\"", p.foundAt(start+i))
		}
		frac = w[fs:i]
		kind = KindReal
	}
	if i != len(w) {
		return nil, syntaxErr(p.src, start+i, "digit or delimiter after a number", p.foundAt(start+i))
	}
	if len(intPart)+len(frac) > MaxNumberDigits {
		return nil, limitErr(p.src, start, "number digits", MaxNumberDigits)
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	text := intPart
	zero := intPart == "0"
	if kind == KindReal {
		frac = strings.TrimRight(frac, "0")
		if frac == "" {
			frac = "0"
		} else {
			zero = false
		}
		text += "." + frac
	}
	if neg && !zero {
		text = "-" + text
	}
	return p.newNode(&Node{Kind: kind, Pos: start, Text: text})
}

// str parses '"' {character} '"': any printable character but '"'.
func (p *parser) str() (*Node, *failure) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		r, w := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == '"' {
			text := p.src[start+1 : p.pos]
			p.pos++
			if len(text) > MaxStringBytes {
				return nil, limitErr(p.src, start, "string bytes", MaxStringBytes)
			}
			if p.pos < len(p.src) && !isDelim(p.src[p.pos]) {
				return nil, syntaxErr(p.src, p.pos, "delimiter after a string", p.foundAt(p.pos))
			}
			return p.newNode(&Node{Kind: KindString, Pos: start, Text: text})
		}
		if !unicode.IsPrint(r) {
			return nil, syntaxErr(p.src, p.pos, "printable character or closing quote", fmt.Sprintf("%U", r))
		}
		p.pos += w
	}
	return nil, syntaxErr(p.src, p.pos, "closing quote", "end of input")
}

// list parses "(" operator {expression} ")" at nesting depth.
func (p *parser) list(depth int) (*Node, *failure) {
	start := p.pos
	if depth > MaxDepth {
		return nil, limitErr(p.src, start, "depth", MaxDepth)
	}
	p.pos++
	p.skip()
	opPos := p.pos
	if p.pos >= len(p.src) || isDelim(p.src[p.pos]) {
		return nil, syntaxErr(p.src, p.pos, "operator", p.foundAt(p.pos))
	}
	op := p.word()
	ar, ok := operators[op]
	if !ok {
		return nil, syntaxErr(p.src, opPos, "operator (one of "+strings.Join(Operators(), ", ")+")", strconv.Quote(op))
	}
	n, f := p.newNode(&Node{Kind: KindList, Pos: start, Op: op})
	if f != nil {
		return nil, f
	}
	switch op {
	case "LET":
		if n.Binds, f = p.bindings(depth + 1); f != nil {
			return nil, f
		}
	case "FORALL", "EXISTS":
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == '(' {
			v, b, f := p.typedVar(depth + 1)
			if f != nil {
				return nil, f
			}
			n.Args = append(n.Args, v)
			n.Binds = []Binding{b}
		} else {
			v, f := p.expr(depth + 1)
			if f != nil {
				return nil, f
			}
			if v.Kind != KindVar {
				return nil, syntaxErr(p.src, v.Pos, "variable bound by "+op, p.foundAt(v.Pos))
			}
			n.Args = append(n.Args, v)
		}
	}
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return nil, syntaxErr(p.src, p.pos, "closing parenthesis", "end of input")
		}
		if p.src[p.pos] == ')' {
			break
		}
		if ar.max >= 0 && len(n.Args) >= ar.max {
			return nil, syntaxErr(p.src, p.pos, fmt.Sprintf("closing parenthesis (%s takes %s)", op, ar.describe()), p.foundAt(p.pos))
		}
		a, f := p.expr(depth + 1)
		if f != nil {
			return nil, f
		}
		n.Args = append(n.Args, a)
	}
	if got := len(n.Args); got < ar.min {
		return nil, syntaxErr(p.src, p.pos, fmt.Sprintf("%s (%s takes %s)", plural(ar.min-got, "more operand"), op, ar.describe()), `")"`)
	}
	p.pos++
	if p.pos < len(p.src) && !isDelim(p.src[p.pos]) {
		return nil, syntaxErr(p.src, p.pos, "delimiter after \")\"", p.foundAt(p.pos))
	}
	return n, nil
}

func (a arity) describe() string {
	switch {
	case a.max < 0:
		return plural(a.min, "or more operands")
	case a.min == a.max:
		return plural(a.min, "operand")
	}
	return fmt.Sprintf("%d to %d operands", a.min, a.max)
}

func plural(n int, what string) string {
	if n == 1 || strings.HasPrefix(what, "or more") {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// bindings parses a LET's "(" {"(" variable sort ")"} ")".
func (p *parser) bindings(depth int) ([]Binding, *failure) {
	p.skip()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return nil, syntaxErr(p.src, p.pos, "\"(\" opening the LET declarations", p.foundAt(p.pos))
	}
	if depth > MaxDepth {
		return nil, limitErr(p.src, p.pos, "depth", MaxDepth)
	}
	p.pos++
	var out []Binding
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return nil, syntaxErr(p.src, p.pos, "declaration (name Sort) or \")\"", "end of input")
		}
		if p.src[p.pos] == ')' {
			p.pos++
			return out, nil
		}
		if p.src[p.pos] != '(' {
			return nil, syntaxErr(p.src, p.pos, "declaration (name Sort) or \")\"", p.foundAt(p.pos))
		}
		_, b, f := p.typedVar(depth + 1)
		if f != nil {
			return nil, f
		}
		for _, o := range out {
			if o.Name == b.Name {
				return nil, syntaxErr(p.src, b.Pos, "a variable declared once per LET", strconv.Quote(b.Name))
			}
		}
		out = append(out, b)
	}
}

// typedVar parses "(" variable sort ")".
func (p *parser) typedVar(depth int) (*Node, Binding, *failure) {
	if depth > MaxDepth {
		return nil, Binding{}, limitErr(p.src, p.pos, "depth", MaxDepth)
	}
	p.pos++ // "("
	p.skip()
	v, f := p.expr(depth)
	if f != nil {
		return nil, Binding{}, f
	}
	if v.Kind != KindVar {
		return nil, Binding{}, syntaxErr(p.src, v.Pos, "variable name", p.foundAt(v.Pos))
	}
	p.skip()
	sp := p.pos
	s := Sort(p.word())
	switch s {
	case SortInt, SortReal, SortBool, SortString:
	default:
		return nil, Binding{}, syntaxErr(p.src, sp, "sort Int, Real, Bool or String", p.foundAt(sp))
	}
	p.skip()
	if p.pos >= len(p.src) || p.src[p.pos] != ')' {
		return nil, Binding{}, syntaxErr(p.src, p.pos, "\")\" closing the declaration", p.foundAt(p.pos))
	}
	p.pos++
	return v, Binding{Name: v.Text, Sort: s, Pos: v.Pos}, nil
}
