package logic

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// category is what the checker knows of an expression's sort before it
// settles Int against Real.
type category uint8

const (
	catUnknown category = iota
	catBool
	catNum
	catString
)

func (c category) String() string {
	switch c {
	case catBool:
		return "Bool"
	case catNum:
		return "numeric"
	case catString:
		return "String"
	}
	return "unknown"
}

func catOf(s Sort) category {
	switch s {
	case SortBool:
		return catBool
	case SortString:
		return catString
	}
	return catNum
}

// symbol is one variable: a free one (one per name, a constant of the SMT
// script) or one bound by a FORALL/EXISTS (one per binder).
type symbol struct {
	name      string
	bound     bool
	binder    int // bound: the binder's number, in order of appearance
	declared  Sort
	tv        int
	intNeeded bool // an operand of MOD: Int unless declared
	sort      Sort
}

// smtName is the symbol's name in the SMT script: free variables are
// v_<name>, bound ones q<binder>_<name>, so that no DSL name can collide
// with an SMT-LIB keyword or function.
func (s *symbol) smtName() string {
	if s.bound {
		return "q" + strconv.Itoa(s.binder) + "_" + s.name
	}
	return "v_" + s.name
}

// checked is a query that parsed and type-checked.
type checked struct {
	src  string
	root *Node
	syms []*symbol
	free []*symbol // sorted by name
}

type checker struct {
	src     string
	syms    []*symbol
	free    map[string]int
	scope   []int // bound symbols in scope, innermost last
	binders int
	parent  []int
	cat     []category
	mods    []*Node
	ordered []*Node
}

// check resolves the variables of root and infers their sorts (QWED protocol v1.0
// §7.5): a LET declaration wins; otherwise a variable takes the category
// its uses give it (operands of logic operators are Bool, of arithmetic
// numeric, the first operand of MATCH a String; the operands of EQ, NE and
// the orderings, and the branches of IF, share one sort), and a variable no
// use settles is Real. A numeric variable is Real unless declared Int or
// used (directly or through PLUS, MINUS, MULT, NEG, ABS, POW, IF) as an
// operand of MOD, which SMT-LIB defines on Int only.
func check(src string, root *Node) (*checked, *failure) {
	c := &checker{src: src, free: map[string]int{}}
	tv, f := c.walk(root)
	if f != nil {
		return nil, f
	}
	if f := c.require(tv, catBool, root, "a Bool expression (the query is a constraint)"); f != nil {
		return nil, f
	}
	for _, n := range c.ordered {
		if c.cat[c.find(n.Args[0].tvar)] == catBool {
			return nil, syntaxErr(src, n.Pos, n.Op+" of numbers or strings", "Bool operands")
		}
	}
	for _, n := range c.mods {
		c.needInt(n.Args[0])
		c.needInt(n.Args[1])
	}
	out := &checked{src: src, root: root, syms: c.syms}
	for _, s := range c.syms {
		switch {
		case s.declared != "":
			s.sort = s.declared
		case c.cat[c.find(s.tv)] == catBool:
			s.sort = SortBool
		case c.cat[c.find(s.tv)] == catString:
			s.sort = SortString
		case s.intNeeded:
			s.sort = SortInt
		default:
			s.sort = SortReal
		}
		if !s.bound {
			out.free = append(out.free, s)
		}
	}
	slices.SortFunc(out.free, func(a, b *symbol) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func (c *checker) newTV(cat category) int {
	c.parent = append(c.parent, len(c.parent))
	c.cat = append(c.cat, cat)
	return len(c.parent) - 1
}

func (c *checker) find(x int) int {
	for c.parent[x] != x {
		c.parent[x] = c.parent[c.parent[x]]
		x = c.parent[x]
	}
	return x
}

// require says tv has category want; at is where a conflict is reported.
func (c *checker) require(tv int, want category, at *Node, expected string) *failure {
	r := c.find(tv)
	switch c.cat[r] {
	case catUnknown:
		c.cat[r] = want
		return nil
	case want:
		return nil
	}
	if expected == "" {
		expected = "a " + want.String() + " expression"
	}
	return syntaxErr(c.src, at.Pos, expected, "a "+c.cat[r].String()+" expression")
}

// unify says a and b have one sort (Int and Real count as one: numeric).
func (c *checker) unify(a, b int, at *Node, op string) *failure {
	ra, rb := c.find(a), c.find(b)
	if ra == rb {
		return nil
	}
	ca, cb := c.cat[ra], c.cat[rb]
	if ca != catUnknown && cb != catUnknown && ca != cb {
		return syntaxErr(c.src, at.Pos, "operands of "+op+" of one sort", fmt.Sprintf("%s and %s operands", ca, cb))
	}
	c.parent[rb] = ra
	if ca == catUnknown {
		c.cat[ra] = cb
	}
	return nil
}

// lookup resolves name: the innermost bound variable, else the free one.
func (c *checker) lookup(name string, pos int) (int, *failure) {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.syms[c.scope[i]].name == name {
			return c.scope[i], nil
		}
	}
	if i, ok := c.free[name]; ok {
		return i, nil
	}
	return c.addSymbol(&symbol{name: name}, pos)
}

func (c *checker) addSymbol(s *symbol, pos int) (int, *failure) {
	if len(c.syms) >= MaxVariables {
		return 0, limitErr(c.src, pos, "variables", MaxVariables)
	}
	s.tv = c.newTV(catUnknown)
	c.syms = append(c.syms, s)
	i := len(c.syms) - 1
	if !s.bound {
		c.free[s.name] = i
	}
	return i, nil
}

// declare gives symbol i the sort of b.
func (c *checker) declare(i int, b Binding) *failure {
	s := c.syms[i]
	if s.declared != "" && s.declared != b.Sort {
		return syntaxErr(c.src, b.Pos, fmt.Sprintf("sort %s (as %s was declared before)", s.declared, s.name), "sort "+string(b.Sort))
	}
	s.declared = b.Sort
	return c.require(s.tv, catOf(b.Sort), &Node{Pos: b.Pos}, fmt.Sprintf("%s used as %s, as declared", b.Name, b.Sort))
}

// walk resolves and infers n, returning its type variable.
func (c *checker) walk(n *Node) (int, *failure) {
	tv, f := c.walk1(n)
	n.tvar = tv
	return tv, f
}

func (c *checker) walk1(n *Node) (int, *failure) {
	switch n.Kind {
	case KindVar:
		i, f := c.lookup(n.Text, n.Pos)
		if f != nil {
			return 0, f
		}
		n.sym = i
		return c.syms[i].tv, nil
	case KindInt, KindReal:
		return c.newTV(catNum), nil
	case KindBool:
		return c.newTV(catBool), nil
	case KindString:
		return c.newTV(catString), nil
	}
	args := make([]int, 0, len(n.Args))
	walkAll := func(from int, want category) *failure {
		for _, a := range n.Args[from:] {
			tv, f := c.walk(a)
			if f != nil {
				return f
			}
			if want != catUnknown {
				if f := c.require(tv, want, a, fmt.Sprintf("a %s operand of %s", want, n.Op)); f != nil {
					return f
				}
			}
			args = append(args, tv)
		}
		return nil
	}
	switch n.Op {
	case "AND", "OR", "NOT", "IMPLIES", "IFF", "XOR":
		return c.newTV(catBool), walkAll(0, catBool)
	case "EQ", "NE", "GT", "GE", "LT", "LE":
		if f := walkAll(0, catUnknown); f != nil {
			return 0, f
		}
		if f := c.unify(args[0], args[1], n, n.Op); f != nil {
			return 0, f
		}
		if n.Op != "EQ" && n.Op != "NE" {
			c.ordered = append(c.ordered, n)
		}
		return c.newTV(catBool), nil
	case "PLUS", "MINUS", "MULT", "DIV", "MOD", "POW", "ABS", "NEG":
		if n.Op == "MOD" {
			c.mods = append(c.mods, n)
		}
		return c.newTV(catNum), walkAll(0, catNum)
	case "IF":
		if f := walkAll(0, catUnknown); f != nil {
			return 0, f
		}
		if f := c.require(args[0], catBool, n.Args[0], "a Bool condition of IF"); f != nil {
			return 0, f
		}
		return args[1], c.unify(args[1], args[2], n, "IF")
	case "MATCH":
		if n.Args[1].Kind != KindString {
			return 0, syntaxErr(c.src, n.Args[1].Pos, "a regular expression as a string literal", c.describe(n.Args[1]))
		}
		if f := walkAll(0, catUnknown); f != nil {
			return 0, f
		}
		return c.newTV(catBool), c.require(args[0], catString, n.Args[0], "a String operand of MATCH")
	case "FORALL", "EXISTS":
		v := n.Args[0]
		c.binders++
		i, f := c.addSymbol(&symbol{name: v.Text, bound: true, binder: c.binders}, v.Pos)
		if f != nil {
			return 0, f
		}
		v.sym = i
		v.tvar = c.syms[i].tv
		if len(n.Binds) == 1 {
			if f := c.declare(i, n.Binds[0]); f != nil {
				return 0, f
			}
		}
		c.scope = append(c.scope, i)
		tv, f := c.walk(n.Args[1])
		c.scope = c.scope[:len(c.scope)-1]
		if f != nil {
			return 0, f
		}
		return c.newTV(catBool), c.require(tv, catBool, n.Args[1], "a Bool body of "+n.Op)
	case "LET":
		for _, b := range n.Binds {
			i, f := c.lookup(b.Name, b.Pos)
			if f != nil {
				return 0, f
			}
			if f := c.declare(i, b); f != nil {
				return 0, f
			}
		}
		return c.walk(n.Args[0])
	}
	return 0, syntaxErr(c.src, n.Pos, "operator", strconv.Quote(n.Op))
}

func (c *checker) describe(n *Node) string {
	switch n.Kind {
	case KindVar:
		return "variable " + strconv.Quote(n.Text)
	case KindList:
		return "(" + n.Op + " ...)"
	}
	return n.Text
}

// needInt marks the variables an integer operand is made of as Int.
func (c *checker) needInt(n *Node) {
	switch n.Kind {
	case KindVar:
		c.syms[n.sym].intNeeded = true
	case KindList:
		switch n.Op {
		case "PLUS", "MINUS", "MULT", "NEG", "ABS":
			for _, a := range n.Args {
				c.needInt(a)
			}
		case "POW":
			c.needInt(n.Args[0])
		case "IF":
			c.needInt(n.Args[1])
			c.needInt(n.Args[2])
		case "LET":
			c.needInt(n.Args[0])
		}
	}
}
