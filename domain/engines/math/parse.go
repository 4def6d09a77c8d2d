package math

import "strings"

// nodeKind is the kind of a syntax tree node.
type nodeKind int

const (
	nNum   nodeKind = iota // text: the literal
	nVar                   // text: the name (pi and e are constants)
	nNeg                   // kids[0]
	nAdd                   // kids[0] + kids[1]
	nSub                   // kids[0] - kids[1]
	nMul                   // kids[0] * kids[1]
	nDiv                   // kids[0] / kids[1]
	nPow                   // kids[0] ** kids[1]
	nCall                  // text: the function; kids: the arguments
	nDeriv                 // text: the variable; kids[0]: the body
)

// node is a syntax tree node; pos is the byte offset of its first token
// (of the operator for binary nodes).
type node struct {
	kind  nodeKind
	text  string
	pos   int
	kids  []*node
	paren bool // written in parentheses
}

// functions are the known functions and their arity. log and ln are the
// natural logarithm; diff(f, x) is the derivative of f in x.
var functions = map[string]int{
	"sqrt": 1, "exp": 1, "log": 1, "ln": 1, "sin": 1, "cos": 1, "tan": 1, "abs": 1, "diff": 2,
}

// constants are the reserved names that are not variables.
var constants = map[string]bool{"pi": true, "e": true}

// claim is a parsed query: lhs alone (an expression to evaluate) or
// lhs rel rhs.
type claim struct {
	lhs, rhs *node
	rel      tokKind // tokEOF when there is no rhs
	relText  string
}

// parser is a recursive-descent parser over the tokens of one query.
type parser struct {
	toks  []token
	i     int
	depth int
}

// parse parses a query: an expression, or two expressions joined by one of
// = == != < <= > >=.
func parse(q string) claim {
	p := &parser{toks: lex(q)}
	if p.peek().kind == tokEOF {
		fail(syntaxProblem(p.peek().pos, "an expression", "end of input", "empty query"))
	}
	c := claim{lhs: p.expr(), rel: tokEOF}
	switch t := p.peek(); t.kind {
	case tokEq, tokNe, tokLt, tokLe, tokGt, tokGe:
		p.i++
		c.rel, c.relText = t.kind, t.text
		switch t.kind {
		case tokEq:
			c.relText = "="
		case tokNe:
			c.relText = "!="
		case tokLe:
			c.relText = "<="
		case tokGe:
			c.relText = ">="
		}
		c.rhs = p.expr()
	}
	if t := p.peek(); t.kind != tokEOF {
		exp := "an operator or end of input"
		if c.rhs != nil {
			exp = "an operator or end of input (one relation per claim)"
		}
		fail(syntaxProblem(t.pos, exp, t.describe(), ""))
	}
	return c
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) expect(k tokKind, what string) token {
	t := p.peek()
	if t.kind != k {
		fail(syntaxProblem(t.pos, what, t.describe(), ""))
	}
	return p.next()
}

// enter counts one level of nesting against MaxDepth.
func (p *parser) enter() {
	p.depth++
	if p.depth > MaxDepth {
		fail(limitProblem("max_depth", MaxDepth, p.peek().pos))
	}
}

func (p *parser) leave() { p.depth-- }

// expr = term { ("+" | "-") term }.
func (p *parser) expr() *node {
	left := p.term()
	for {
		t := p.peek()
		switch t.kind {
		case tokPlus:
			p.next()
			left = &node{kind: nAdd, pos: t.pos, kids: []*node{left, p.term()}}
		case tokMinus:
			p.next()
			left = &node{kind: nSub, pos: t.pos, kids: []*node{left, p.term()}}
		default:
			return left
		}
	}
}

// term = unary { ("*" | "/") unary | power }, the last alternative being an
// implicit multiplication (2x, 2(x+1), (x+1)(x-1), 2 sin(x)). It is refused
// where it reads two ways: after a division (1/2(3+1), 1/2x), after a power
// (x^2y, 2^3x), and before a number (x 2, (x+1)2).
func (p *parser) term() *node {
	left := p.unary()
	last := left
	sawDiv := false
	for {
		t := p.peek()
		switch t.kind {
		case tokStar:
			p.next()
			f := p.unary()
			left = &node{kind: nMul, pos: t.pos, kids: []*node{left, f}}
			last = f
		case tokSlash:
			p.next()
			f := p.unary()
			left = &node{kind: nDiv, pos: t.pos, kids: []*node{left, f}}
			last = f
			sawDiv = true
		case tokNum, tokIdent, tokLParen:
			switch {
			case sawDiv:
				fail(ambiguous(t.pos, t.describe(), "after a division it is unclear whether the product is in the denominator (1/2(3+1) is 1/(2*(3+1)) or (1/2)*(3+1)); write * with parentheses"))
			case endsWithPower(last):
				fail(ambiguous(t.pos, t.describe(), "after a power it is unclear whether the factor is in the exponent (x^2y is x^(2*y) or x^2*y); write * with parentheses"))
			case t.kind == tokNum:
				fail(syntaxProblem(t.pos, "an operator", t.describe(), "a number cannot follow a factor without an operator"))
			}
			f := p.power()
			left = &node{kind: nMul, pos: t.pos, kids: []*node{left, f}}
			last = f
		default:
			return left
		}
	}
}

// endsWithPower reports whether n ends with an unparenthesised power.
func endsWithPower(n *node) bool {
	for {
		if n.paren {
			return false
		}
		switch n.kind {
		case nPow:
			return true
		case nNeg:
			n = n.kids[0]
		default:
			return false
		}
	}
}

// unary = ("-" | "+") unary | power. A sign applies to the whole power:
// -2**2 is -(2**2) = -4.
func (p *parser) unary() *node {
	t := p.peek()
	switch t.kind {
	case tokMinus:
		p.next()
		p.enter()
		defer p.leave()
		return &node{kind: nNeg, pos: t.pos, kids: []*node{p.unary()}}
	case tokPlus:
		p.next()
		p.enter()
		defer p.leave()
		return p.unary()
	}
	return p.power()
}

// power = primary [ ("**" | "^") unary ], right-associative: 2^3^2 is
// 2^(3^2); the exponent may carry a sign (2^-1).
func (p *parser) power() *node {
	base := p.primary()
	if t := p.peek(); t.kind == tokPow {
		p.next()
		p.enter()
		defer p.leave()
		return &node{kind: nPow, pos: t.pos, kids: []*node{base, p.unary()}}
	}
	return base
}

// primary = number | constant | variable | function "(" args ")" |
// "d/d" variable "(" expr ")" | "(" expr ")".
func (p *parser) primary() *node {
	t := p.peek()
	switch t.kind {
	case tokNum:
		p.next()
		return &node{kind: nNum, text: t.text, pos: t.pos}
	case tokLParen:
		p.next()
		p.enter()
		defer p.leave()
		n := p.expr()
		p.expect(tokRParen, "')'")
		n.paren = true
		return n
	case tokIdent:
		if t.text == "d" && p.peekAt(1).kind == tokSlash && p.peekAt(2).kind == tokIdent &&
			strings.HasPrefix(p.peekAt(2).text, "d") && len(p.peekAt(2).text) > 1 {
			return p.derivative()
		}
		p.next()
		if n, ok := functions[t.text]; ok {
			return p.call(t, n)
		}
		if p.peek().kind == tokLParen {
			fail(ambiguous(p.peek().pos, "'('", "'"+t.text+"(' is a call of an unknown function or a product; write "+t.text+"*(...)"))
		}
		return &node{kind: nVar, text: t.text, pos: t.pos}
	}
	fail(syntaxProblem(t.pos, "a number, a variable, a function or '('", t.describe(), ""))
	return nil
}

// derivative parses d/dx ( expr ).
func (p *parser) derivative() *node {
	t := p.next()
	p.next()
	v := p.next()
	name := v.text[1:]
	if _, fn := functions[name]; fn || constants[name] {
		fail(syntaxProblem(v.pos, "a variable", "'"+name+"'", "the derivative is taken in a variable"))
	}
	p.enter()
	defer p.leave()
	p.expect(tokLParen, "'(' after d/"+v.text)
	body := p.expr()
	p.expect(tokRParen, "')'")
	return &node{kind: nDeriv, text: name, pos: t.pos, kids: []*node{body}}
}

// call parses the arguments of function fn with arity n.
func (p *parser) call(fn token, n int) *node {
	p.enter()
	defer p.leave()
	p.expect(tokLParen, "'(' after "+fn.text)
	c := &node{kind: nCall, text: fn.text, pos: fn.pos}
	for {
		c.kids = append(c.kids, p.expr())
		if p.peek().kind != tokComma || len(c.kids) >= n {
			break
		}
		p.next()
	}
	if len(c.kids) != n {
		fail(syntaxProblem(p.peek().pos, "',' and a second argument", p.peek().describe(), fn.text+" takes 2 arguments"))
	}
	p.expect(tokRParen, "')'")
	if fn.text == "diff" {
		v := c.kids[1]
		if v.kind != nVar || constants[v.text] || v.paren {
			fail(syntaxProblem(v.pos, "a variable", "an expression", "diff(f, x) takes the variable as its second argument"))
		}
	}
	return c
}
