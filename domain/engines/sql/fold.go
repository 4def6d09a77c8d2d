package sql

import (
	"math/big"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Constant folding for tautology detection: a condition is always true when
// it folds to the boolean true, exactly (numbers are math/big rationals,
// strings compare byte for byte and only for equality, whose result does
// not depend on the collation). Anything else folds to unknown. The value
// of each operator and boolean node is kept (pgFolder.memo), so a chain is
// folded once however many of its nodes the checks ask about.

type valKind int

const (
	valUnknown valKind = iota
	valBool
	valNum
	valStr
	valNull
	valBits // a bit string, as binary digits
)

type cval struct {
	kind valKind
	b    bool
	n    *big.Rat
	s    string
	coll bool // a string under an explicit COLLATE (tv.coll)
}

var unknownVal = cval{}

// maxFoldDigits bounds the numbers folded (digits and exponent), so that a
// literal such as 1e99999999 is not expanded.
const maxFoldDigits = 64

// pgFolder folds PostgreSQL expressions, keeping each operator's and
// boolean node's value.
type pgFolder struct {
	memo map[*pg.Node]cval
}

// alwaysTrue reports whether the condition n is true whatever the rows.
func (a *analysis) alwaysTrue(n *pg.Node) bool {
	v := a.pf.fold(n, 0)
	return v.kind == valBool && v.b
}

func (f *pgFolder) fold(n *pg.Node, depth int) cval {
	if n == nil || depth > MaxNesting {
		return unknownVal
	}
	switch x := n.Node.(type) {
	case *pg.Node_AConst:
		return foldConst(x.AConst)
	case *pg.Node_TypeCast:
		return f.foldCast(x.TypeCast, depth)
	case *pg.Node_BoolExpr, *pg.Node_AExpr:
		if v, ok := f.memo[n]; ok {
			return v
		}
		var v cval
		if b, ok := x.(*pg.Node_BoolExpr); ok {
			v = f.foldBool(b.BoolExpr, depth)
		} else {
			v = f.foldAExpr(n.GetAExpr(), depth)
		}
		if f.memo == nil {
			f.memo = map[*pg.Node]cval{}
		}
		f.memo[n] = v
		return v
	case *pg.Node_NullTest:
		v := f.fold(x.NullTest.Arg, depth+1)
		if v.kind == valUnknown {
			return unknownVal
		}
		isNull := v.kind == valNull
		if x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			return boolVal(!isNull)
		}
		return boolVal(isNull)
	case *pg.Node_BooleanTest:
		v := f.fold(x.BooleanTest.Arg, depth+1)
		if v.kind != valBool && v.kind != valNull {
			return unknownVal
		}
		t, fa := v.kind == valBool && v.b, v.kind == valBool && !v.b
		switch x.BooleanTest.Booltesttype {
		case pg.BoolTestType_IS_TRUE:
			return boolVal(t)
		case pg.BoolTestType_IS_NOT_TRUE:
			return boolVal(!t)
		case pg.BoolTestType_IS_FALSE:
			return boolVal(fa)
		case pg.BoolTestType_IS_NOT_FALSE:
			return boolVal(!fa)
		case pg.BoolTestType_IS_UNKNOWN:
			return boolVal(v.kind == valNull)
		case pg.BoolTestType_IS_NOT_UNKNOWN:
			return boolVal(v.kind != valNull)
		}
	case *pg.Node_CollateClause:
		v := f.fold(x.CollateClause.Arg, depth+1)
		if v.kind == valStr {
			v.coll = true
		}
		return v
	case *pg.Node_CoalesceExpr:
		for _, a := range x.CoalesceExpr.Args {
			if v := f.fold(a, depth+1); v.kind != valNull {
				return v // unknown stays unknown
			}
		}
		return cval{kind: valNull}
	case *pg.Node_FuncCall:
		return f.foldFunc(x.FuncCall, depth)
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
	case *pg.A_Const_Bsval:
		if bits, ok := bitDigits(v.Bsval.Bsval); ok {
			return cval{kind: valBits, s: bits}
		}
	}
	return unknownVal
}

// bitDigits reads a bit-string constant as the parser keeps it ("b0101"
// or "x1F") into its binary digits.
func bitDigits(s string) (string, bool) {
	if len(s) < 1 || len(s) > 4*maxFoldDigits {
		return "", false
	}
	switch s[0] {
	case 'b', 'B':
		if strings.Trim(s[1:], "01") != "" {
			return "", false
		}
		return s[1:], true
	case 'x', 'X':
		var b strings.Builder
		for _, c := range s[1:] {
			d, err := strconv.ParseUint(string(c), 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteString(strconv.FormatUint(d|16, 2)[1:])
		}
		return b.String(), true
	}
	return "", false
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
func (f *pgFolder) foldCast(tc *pg.TypeCast, depth int) cval {
	v := f.fold(tc.Arg, depth+1)
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
		if v.kind == valStr && (name != "bpchar" || !strings.HasSuffix(v.s, " ")) {
			return v
		}
	}
	return unknownVal
}

func (f *pgFolder) foldBool(b *pg.BoolExpr, depth int) cval {
	switch b.Boolop {
	case pg.BoolExprType_NOT_EXPR:
		if len(b.Args) != 1 {
			return unknownVal
		}
		v := f.fold(b.Args[0], depth+1)
		if v.kind == valBool {
			return boolVal(!v.b)
		}
	case pg.BoolExprType_OR_EXPR:
		if complementaryNulls(b) {
			return boolVal(true)
		}
		all := true
		for _, a := range b.Args {
			v := f.fold(a, depth+1)
			if v.kind == valBool && v.b {
				return v
			}
			if v.kind != valBool {
				all = false
			}
		}
		if all {
			return boolVal(false)
		}
	case pg.BoolExprType_AND_EXPR:
		all := true
		for _, a := range b.Args {
			v := f.fold(a, depth+1)
			if v.kind == valBool && !v.b {
				return v
			}
			if v.kind != valBool {
				all = false
			}
		}
		if all {
			return boolVal(true)
		}
	}
	return unknownVal
}

// complementaryNulls reports whether the OR b holds x IS NULL and
// x IS NOT NULL over one deterministic expression (among its first
// maxOrOperands operands): it is true for every row.
func complementaryNulls(b *pg.BoolExpr) bool {
	var tests map[string]int
	for i, arg := range b.Args {
		if i >= maxOrOperands {
			break
		}
		nt, ok := arg.Node.(*pg.Node_NullTest)
		if !ok {
			continue
		}
		key, ok := pgKey(nt.NullTest.Arg)
		if !ok {
			continue
		}
		bit := 1
		if nt.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			bit = 2
		}
		if tests == nil {
			tests = map[string]int{}
		}
		if tests[key] |= bit; tests[key] == 3 {
			return true
		}
	}
	return false
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

func (f *pgFolder) foldAExpr(e *pg.A_Expr, depth int) cval {
	op := opName(e.Name)
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if e.Lexpr == nil { // prefix operator
			v := f.fold(e.Rexpr, depth+1)
			if v.kind == valNum && (op == "-" || op == "+") {
				if op == "-" {
					return cval{kind: valNum, n: new(big.Rat).Neg(v.n)}
				}
				return v
			}
			return unknownVal
		}
		v := binop(op, f.fold(e.Lexpr, depth+1), f.fold(e.Rexpr, depth+1))
		// Constants are compared (NULL = NULL is NULL); what the fold
		// cannot decide is true when both sides are one expression.
		if v.kind == valUnknown && (op == "=" || op == "<=" || op == ">=") && pgSame(e.Lexpr, e.Rexpr) {
			return boolVal(true)
		}
		return v
	case pg.A_Expr_Kind_AEXPR_IN:
		l := f.fold(e.Lexpr, depth+1)
		list, ok := e.Rexpr.GetNode().(*pg.Node_List)
		if !ok || l.kind == valUnknown {
			return unknownVal
		}
		eq := "="
		if op == "<>" {
			eq = "<>"
		}
		for _, item := range list.List.Items {
			r := binop(eq, l, f.fold(item, depth+1))
			if eq == "=" && r.kind == valBool && r.b {
				return r
			}
			if eq == "<>" && r.kind == valBool && !r.b {
				return r
			}
		}
		return unknownVal
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		v := f.fold(e.Lexpr, depth+1)
		list, ok := e.Rexpr.GetNode().(*pg.Node_List)
		if !ok || len(list.List.Items) != 2 {
			return unknownVal
		}
		lo := binop(">=", v, f.fold(list.List.Items[0], depth+1))
		hi := binop("<=", v, f.fold(list.List.Items[1], depth+1))
		if lo.kind != valBool || hi.kind != valBool {
			return unknownVal
		}
		in := lo.b && hi.b
		if e.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			in = !in
		}
		return boolVal(in)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if pgSame(e.Lexpr, e.Rexpr) {
			return boolVal(e.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT)
		}
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, r := f.fold(e.Lexpr, depth+1), f.fold(e.Rexpr, depth+1)
		switch eq := binop("=", l, r); {
		case eq.kind == valBool && eq.b:
			return cval{kind: valNull}
		case eq.kind == valBool || eq.kind == valNull:
			return l
		}
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		return f.foldLike(e, op, depth)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		// SIMILAR TO '%' (any run) matches every value that is not NULL.
		if call, ok := e.Rexpr.GetNode().(*pg.Node_FuncCall); ok && op == "~" && len(call.FuncCall.Args) == 1 {
			if p := f.fold(call.FuncCall.Args[0], depth+1); p.kind == valStr && allPercent(p.s, 0) {
				return boolVal(true)
			}
		}
	}
	return unknownVal
}

// foldLike folds LIKE (op ~~, !~~) and ILIKE (~~*, !~~*): backslash is the
// escape character unless ESCAPE names another (an empty one: none).
func (f *pgFolder) foldLike(e *pg.A_Expr, op string, depth int) cval {
	not := strings.HasPrefix(op, "!")
	ci := strings.HasSuffix(op, "*")
	pat, esc := e.Rexpr, byte('\\')
	if call, ok := e.Rexpr.GetNode().(*pg.Node_FuncCall); ok && pgFuncName(call.FuncCall) == "like_escape" {
		if len(call.FuncCall.Args) != 2 {
			return unknownVal
		}
		ev := f.fold(call.FuncCall.Args[1], depth+1)
		switch {
		case ev.kind == valStr && ev.s == "":
			esc = 0
		case ev.kind == valStr && len(ev.s) == 1:
			esc = ev.s[0]
		default:
			return unknownVal
		}
		pat = call.FuncCall.Args[0]
	}
	v, p := f.fold(e.Lexpr, depth+1), f.fold(pat, depth+1)
	t := folding{likeCI: ci}.like(tvOf(v), tvOf(p), esc)
	switch {
	case t.kind == tvNull:
		return cval{kind: valNull}
	case t.kind == tvUnknown && esc == '\\' && pgSame(e.Lexpr, pat):
		t = tvBool(true) // every character of a value matches itself
	case t.kind == tvUnknown:
		return unknownVal
	}
	return boolVal(t.truth() != not)
}

// tvOf is a string, NULL or unknown of the PostgreSQL fold as the
// dialects' value (the LIKE fold is shared).
func tvOf(v cval) tv {
	switch v.kind {
	case valNull:
		return tv{kind: tvNull}
	case valStr:
		return tv{kind: tvStr, str: v.s, coll: v.coll}
	}
	return unknown
}

// pgFuncName is a call's name when it is a built-in one (unqualified or
// in pg_catalog), "" otherwise.
func pgFuncName(c *pg.FuncCall) string {
	names := c.Funcname
	if len(names) == 2 {
		if s, ok := names[0].Node.(*pg.Node_String_); !ok || s.String_.Sval != "pg_catalog" {
			return ""
		}
	} else if len(names) != 1 {
		return ""
	}
	return strings.ToLower(opName(names))
}

// foldFunc folds chr, concat, lower, upper, ascii and the lengths over
// constants (a plain call: no aggregate, window, star or ordering).
func (f *pgFolder) foldFunc(c *pg.FuncCall, depth int) cval {
	name := pgFuncName(c)
	if c.AggStar || c.AggDistinct || c.Over != nil || c.AggFilter != nil || len(c.AggOrder) > 0 || c.FuncVariadic ||
		(name != "chr" && name != "concat" && name != "lower" && name != "upper" && name != "ascii" &&
			name != "length" && name != "char_length" && name != "character_length" && name != "octet_length") {
		return unknownVal
	}
	args := make([]cval, len(c.Args))
	for i, a := range c.Args {
		if args[i] = f.fold(a, depth+1); args[i].kind == valUnknown {
			return unknownVal
		}
	}
	switch name {
	case "chr":
		// chr(n) below 128 is n's ASCII character in every encoding.
		if len(args) == 1 && args[0].kind == valNum && args[0].n.IsInt() {
			if n := args[0].n.Num(); n.Sign() > 0 && n.Cmp(big.NewInt(128)) < 0 {
				return cval{kind: valStr, s: string(rune(n.Int64()))}
			}
		}
		if len(args) == 1 && args[0].kind == valNull {
			return args[0]
		}
	case "concat":
		var b strings.Builder
		for _, a := range args {
			switch {
			case a.kind == valNull:
				continue
			case a.kind != valStr || a.coll || b.Len()+len(a.s) > maxLikeBytes:
				return unknownVal // a number's or a boolean's text depends on its type
			}
			b.WriteString(a.s)
		}
		return cval{kind: valStr, s: b.String()}
	case "ascii", "length", "char_length", "character_length", "octet_length":
		if len(args) == 1 && (args[0].kind == valStr || args[0].kind == valNull) {
			switch v := (folding{}).foldCall(funcDialect{}, name, []tv{tvOf(args[0])}); v.kind {
			case tvNull:
				return cval{kind: valNull}
			case tvNum:
				return cval{kind: valNum, n: v.num}
			}
		}
	case "lower", "upper":
		if len(args) == 1 && args[0].kind == valNull {
			return args[0]
		}
		if len(args) == 1 && args[0].kind == valStr && isASCII(args[0].s) {
			v := args[0]
			if name == "lower" {
				v.s = strings.ToLower(v.s)
			} else {
				v.s = strings.ToUpper(v.s)
			}
			return v
		}
	}
	return unknownVal
}

// pgSame reports whether a and b are one deterministic expression (x = x,
// lower(x) = lower(x)): equal whatever the row, unless NULL.
func pgSame(a, b *pg.Node) bool {
	// The common cases without building a key: operands of different
	// node types differ, two column references are compared by name, and
	// a constant is the fold's to decide.
	if a == nil || b == nil || a.ProtoReflect().WhichOneof(nodeOneof) != b.ProtoReflect().WhichOneof(nodeOneof) {
		return false
	}
	switch x := a.Node.(type) {
	case *pg.Node_AConst:
		return false
	case *pg.Node_ColumnRef:
		return sameColumnRef(x.ColumnRef, b.GetColumnRef())
	}
	ka, ok1 := pgKey(a)
	if !ok1 {
		return false
	}
	kb, ok2 := pgKey(b)
	return ok2 && ka == kb
}

// sameColumnRef reports whether a and b name the same column (x = x).
func sameColumnRef(a, b *pg.ColumnRef) bool {
	if a == nil || b == nil || len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		sa, ok1 := a.Fields[i].Node.(*pg.Node_String_)
		sb, ok2 := b.Fields[i].Node.(*pg.Node_String_)
		if !ok1 || !ok2 || sa.String_.Sval != sb.String_.Sval {
			return false
		}
	}
	return true
}

// pgKey is the parse tree of n without its positions, when n is
// deterministic (columns, constants, parameters, operators, casts and the
// functions of detFunctions) and at most maxSameNodes messages.
func pgKey(n *pg.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	count, ok := 0, true
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if !ok {
			return
		}
		if count++; count > maxSameNodes {
			ok = false
			return
		}
		switch x := m.Interface().(type) {
		case *pg.Node, *pg.ColumnRef, *pg.String, *pg.A_Const, *pg.A_Expr, *pg.TypeCast, *pg.TypeName, *pg.BoolExpr,
			*pg.NullTest, *pg.BooleanTest, *pg.CollateClause, *pg.ParamRef, *pg.CoalesceExpr, *pg.List, *pg.Integer,
			*pg.Float, *pg.Boolean, *pg.BitString:
		case *pg.FuncCall:
			ok = detFunctions[pgFuncName(x)] && !x.AggStar && x.Over == nil && x.AggFilter == nil
		default:
			ok = false
		}
		eachChild(m, walk)
	}
	walk(n.ProtoReflect())
	if !ok {
		return "", false
	}
	c := proto.Clone(n)
	clearLocations(c.ProtoReflect())
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	return string(b), err == nil
}

// clearLocations zeroes every location field of m's tree.
func clearLocations(m protoreflect.Message) {
	if fd := m.Descriptor().Fields().ByName("location"); fd != nil {
		m.Clear(fd)
	}
	eachChild(m, clearLocations)
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
		case "=", "<>", "!=":
			eq := l.s == r.s
			if !eq && (l.coll || r.coll) {
				return unknownVal // a nondeterministic collation may hold them equal
			}
			return boolVal(eq == (op == "="))
		case "||":
			if len(l.s)+len(r.s) > 4096 || l.coll || r.coll {
				return unknownVal
			}
			return cval{kind: valStr, s: l.s + r.s}
		}
	case l.kind == valBits && r.kind == valBits:
		switch op {
		case "=":
			return boolVal(l.s == r.s)
		case "<>", "!=":
			return boolVal(l.s != r.s)
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
