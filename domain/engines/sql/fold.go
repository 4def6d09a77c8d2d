package sql

import (
	"math/big"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Constant folding for tautology detection: a condition is always true when
// it folds to the boolean true, exactly (numbers are math/big rationals,
// strings compare byte for byte and only for equality, whose result does
// not depend on the collation). Anything else folds to unknown.

type valKind int

const (
	valUnknown valKind = iota
	valBool
	valNum
	valStr
	valNull
)

type cval struct {
	kind valKind
	b    bool
	n    *big.Rat
	s    string
}

var unknownVal = cval{}

// maxFoldDigits bounds the numbers folded (digits and exponent), so that a
// literal such as 1e99999999 is not expanded.
const maxFoldDigits = 64

// alwaysTrue reports whether the condition n is true whatever the rows.
func alwaysTrue(n *pg.Node) bool {
	v := fold(n, 0)
	return v.kind == valBool && v.b
}

// maxFoldDepth bounds the recursion of fold (the tree is already bounded
// by MaxNesting; this keeps fold cheap on wide chains).
const maxFoldDepth = 64

func fold(n *pg.Node, depth int) cval {
	if n == nil || depth > maxFoldDepth {
		return unknownVal
	}
	switch x := n.Node.(type) {
	case *pg.Node_AConst:
		return foldConst(x.AConst)
	case *pg.Node_TypeCast:
		return foldCast(x.TypeCast, depth)
	case *pg.Node_BoolExpr:
		return foldBool(x.BoolExpr, depth)
	case *pg.Node_AExpr:
		return foldAExpr(x.AExpr, depth)
	case *pg.Node_NullTest:
		v := fold(x.NullTest.Arg, depth+1)
		if v.kind == valUnknown {
			return unknownVal
		}
		isNull := v.kind == valNull
		if x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			return boolVal(!isNull)
		}
		return boolVal(isNull)
	case *pg.Node_BooleanTest:
		v := fold(x.BooleanTest.Arg, depth+1)
		if v.kind != valBool && v.kind != valNull {
			return unknownVal
		}
		t, f := v.kind == valBool && v.b, v.kind == valBool && !v.b
		switch x.BooleanTest.Booltesttype {
		case pg.BoolTestType_IS_TRUE:
			return boolVal(t)
		case pg.BoolTestType_IS_NOT_TRUE:
			return boolVal(!t)
		case pg.BoolTestType_IS_FALSE:
			return boolVal(f)
		case pg.BoolTestType_IS_NOT_FALSE:
			return boolVal(!f)
		case pg.BoolTestType_IS_UNKNOWN:
			return boolVal(v.kind == valNull)
		case pg.BoolTestType_IS_NOT_UNKNOWN:
			return boolVal(v.kind != valNull)
		}
	}
	return unknownVal
}

func boolVal(b bool) cval { return cval{kind: valBool, b: b} }

func foldConst(c *pg.A_Const) cval {
	if c.Isnull {
		return cval{kind: valNull}
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return cval{kind: valNum, n: new(big.Rat).SetInt64(int64(v.Ival.Ival))}
	case *pg.A_Const_Fval:
		if r, ok := parseNum(v.Fval.Fval); ok {
			return cval{kind: valNum, n: r}
		}
	case *pg.A_Const_Boolval:
		return boolVal(v.Boolval.Boolval)
	case *pg.A_Const_Sval:
		return cval{kind: valStr, s: v.Sval.Sval}
	}
	return unknownVal
}

// parseNum reads a decimal literal exactly, refusing long ones.
func parseNum(s string) (*big.Rat, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		e, err := strconv.Atoi(exp)
		if err != nil || e > maxFoldDigits || e < -maxFoldDigits {
			return nil, false
		}
	}
	if len(mant) == 0 || len(mant) > maxFoldDigits {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// foldCast folds casts to the types whose conversion is exact here:
// booleans, integers and numerics, and text.
func foldCast(tc *pg.TypeCast, depth int) cval {
	v := fold(tc.Arg, depth+1)
	if v.kind == valUnknown || v.kind == valNull || tc.TypeName == nil || len(tc.TypeName.ArrayBounds) > 0 {
		return v
	}
	name := ""
	if names := tc.TypeName.Names; len(names) > 0 {
		if s, ok := names[len(names)-1].Node.(*pg.Node_String_); ok {
			name = s.String_.Sval
		}
	}
	switch name {
	case "bool":
		switch v.kind {
		case valBool:
			return v
		case valStr:
			switch strings.ToLower(strings.TrimSpace(v.s)) {
			case "t", "true", "y", "yes", "on", "1":
				return boolVal(true)
			case "f", "false", "n", "no", "off", "0":
				return boolVal(false)
			}
		}
	case "int2", "int4", "int8", "numeric":
		switch v.kind {
		case valNum:
			if name == "numeric" || v.n.IsInt() {
				return v
			}
		case valStr:
			if r, ok := parseNum(v.s); ok && (name == "numeric" || r.IsInt()) {
				return cval{kind: valNum, n: r}
			}
		}
	case "text", "varchar", "bpchar":
		if v.kind == valStr {
			return v
		}
	}
	return unknownVal
}

func foldBool(b *pg.BoolExpr, depth int) cval {
	switch b.Boolop {
	case pg.BoolExprType_NOT_EXPR:
		if len(b.Args) != 1 {
			return unknownVal
		}
		v := fold(b.Args[0], depth+1)
		if v.kind == valBool {
			return boolVal(!v.b)
		}
	case pg.BoolExprType_OR_EXPR:
		for _, a := range b.Args {
			if v := fold(a, depth+1); v.kind == valBool && v.b {
				return v
			}
		}
		all := true
		for _, a := range b.Args {
			if v := fold(a, depth+1); v.kind != valBool || v.b {
				all = false
			}
		}
		if all {
			return boolVal(false)
		}
	case pg.BoolExprType_AND_EXPR:
		for _, a := range b.Args {
			if v := fold(a, depth+1); v.kind == valBool && !v.b {
				return v
			}
		}
		for _, a := range b.Args {
			if v := fold(a, depth+1); v.kind != valBool || !v.b {
				return unknownVal
			}
		}
		return boolVal(true)
	}
	return unknownVal
}

func opName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	if s, ok := names[len(names)-1].Node.(*pg.Node_String_); ok {
		return s.String_.Sval
	}
	return ""
}

func foldAExpr(e *pg.A_Expr, depth int) cval {
	op := opName(e.Name)
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if e.Lexpr == nil { // prefix operator
			v := fold(e.Rexpr, depth+1)
			if v.kind == valNum && (op == "-" || op == "+") {
				if op == "-" {
					return cval{kind: valNum, n: new(big.Rat).Neg(v.n)}
				}
				return v
			}
			return unknownVal
		}
		if sameColumn(e.Lexpr, e.Rexpr) {
			switch op {
			case "=", "<=", ">=":
				return boolVal(true)
			}
			return unknownVal
		}
		return binop(op, fold(e.Lexpr, depth+1), fold(e.Rexpr, depth+1))
	case pg.A_Expr_Kind_AEXPR_IN:
		l := fold(e.Lexpr, depth+1)
		list, ok := e.Rexpr.GetNode().(*pg.Node_List)
		if !ok || l.kind == valUnknown {
			return unknownVal
		}
		eq := "="
		if op == "<>" {
			eq = "<>"
		}
		for _, item := range list.List.Items {
			r := binop(eq, l, fold(item, depth+1))
			if eq == "=" && r.kind == valBool && r.b {
				return r
			}
			if eq == "<>" && r.kind == valBool && !r.b {
				return r
			}
		}
		return unknownVal
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		v := fold(e.Lexpr, depth+1)
		list, ok := e.Rexpr.GetNode().(*pg.Node_List)
		if !ok || len(list.List.Items) != 2 {
			return unknownVal
		}
		lo := binop(">=", v, fold(list.List.Items[0], depth+1))
		hi := binop("<=", v, fold(list.List.Items[1], depth+1))
		if lo.kind != valBool || hi.kind != valBool {
			return unknownVal
		}
		in := lo.b && hi.b
		if e.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			in = !in
		}
		return boolVal(in)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if sameColumn(e.Lexpr, e.Rexpr) {
			return boolVal(e.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT)
		}
	}
	return unknownVal
}

// sameColumn reports whether a and b are the same column reference (x = x).
func sameColumn(a, b *pg.Node) bool {
	ca, ok1 := a.GetNode().(*pg.Node_ColumnRef)
	cb, ok2 := b.GetNode().(*pg.Node_ColumnRef)
	if !ok1 || !ok2 || len(ca.ColumnRef.Fields) != len(cb.ColumnRef.Fields) {
		return false
	}
	for i := range ca.ColumnRef.Fields {
		sa, ok1 := ca.ColumnRef.Fields[i].Node.(*pg.Node_String_)
		sb, ok2 := cb.ColumnRef.Fields[i].Node.(*pg.Node_String_)
		if !ok1 || !ok2 || sa.String_.Sval != sb.String_.Sval {
			return false
		}
	}
	return true
}

// binop folds a binary operator over two constants.
func binop(op string, l, r cval) cval {
	if l.kind == valUnknown || r.kind == valUnknown {
		return unknownVal
	}
	if l.kind == valNull || r.kind == valNull {
		return cval{kind: valNull}
	}
	// An untyped string literal next to a number is read as a number, as
	// PostgreSQL resolves the unknown literal to the other side's type.
	if l.kind == valStr && r.kind == valNum {
		if n, ok := parseNum(l.s); ok {
			l = cval{kind: valNum, n: n}
		}
	}
	if r.kind == valStr && l.kind == valNum {
		if n, ok := parseNum(r.s); ok {
			r = cval{kind: valNum, n: n}
		}
	}
	switch {
	case l.kind == valNum && r.kind == valNum:
		c := l.n.Cmp(r.n)
		switch op {
		case "=":
			return boolVal(c == 0)
		case "<>", "!=":
			return boolVal(c != 0)
		case "<":
			return boolVal(c < 0)
		case ">":
			return boolVal(c > 0)
		case "<=":
			return boolVal(c <= 0)
		case ">=":
			return boolVal(c >= 0)
		case "+":
			return cval{kind: valNum, n: new(big.Rat).Add(l.n, r.n)}
		case "-":
			return cval{kind: valNum, n: new(big.Rat).Sub(l.n, r.n)}
		case "*":
			if len(l.n.String())+len(r.n.String()) > 4*maxFoldDigits {
				return unknownVal
			}
			return cval{kind: valNum, n: new(big.Rat).Mul(l.n, r.n)}
		}
	case l.kind == valStr && r.kind == valStr:
		switch op {
		case "=":
			return boolVal(l.s == r.s)
		case "<>", "!=":
			return boolVal(l.s != r.s)
		case "||":
			if len(l.s)+len(r.s) > 4096 {
				return unknownVal
			}
			return cval{kind: valStr, s: l.s + r.s}
		}
	case l.kind == valBool && r.kind == valBool:
		switch op {
		case "=":
			return boolVal(l.b == r.b)
		case "<>", "!=":
			return boolVal(l.b != r.b)
		}
	}
	return unknownVal
}
