package sql

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// The dialects the engine reads (params.dialect), each with its own real
// parser: PostgreSQL with pg_query (PostgreSQL's own parser, C), MySQL
// with the TiDB parser (github.com/pingcap/tidb/pkg/parser, MySQL 8
// grammar, pure Go), SQLite with meyer (github.com/sqlc-dev/meyer, a
// pure-Go rendering of SQLite's parse.y).
const (
	DialectPostgres = "postgresql"
	DialectMySQL    = "mysql"
	DialectSQLite   = "sqlite"
)

// The parsers, as the capabilities document and the proof name them.
const (
	parserPostgres = "pg_query_go v6.2.5 (PostgreSQL 17 grammar)"
	parserMySQL    = "TiDB parser (github.com/pingcap/tidb/pkg/parser, MySQL 8 grammar)"
	parserSQLite   = "meyer v0.1.2 (github.com/sqlc-dev/meyer, SQLite parse.y)"
)

// dialectNames maps the names params.dialect may give to the dialects the
// engine reads.
var dialectNames = map[string]string{
	"": DialectPostgres, "postgresql": DialectPostgres, "postgres": DialectPostgres, "pg": DialectPostgres,
	"mysql": DialectMySQL, "sqlite": DialectSQLite, "sqlite3": DialectSQLite,
}

// Dialects returns the dialects the engine reads.
func Dialects() []string { return []string{DialectMySQL, DialectPostgres, DialectSQLite} }

// normalizeDialect maps a params.dialect to the dialect it names (false
// when the engine does not read it).
func normalizeDialect(d string) (string, bool) {
	n, ok := dialectNames[strings.ToLower(strings.TrimSpace(d))]
	return n, ok
}

// roughNesting bounds from above the nesting the MySQL and SQLite parsers,
// and the engine's walks over their trees, can build from src: the depth
// of brackets plus, at each depth, the longest run of operator characters
// and NOT keywords between operands, skipping quoted text and comments.
// It returns the estimate and the byte offset where it peaked. backslash
// reads a backslash in a quoted string as an escape (MySQL's default). The parsers
// are Go code (a deep input cannot kill the process as C would, but it can
// take the stack and time): the engine refuses past MaxNesting before it
// parses.
func roughNesting(src string, hashComments, backslash bool) (int, int) {
	depth, run, best, at := 0, 0, 0, 0
	note := func(i int) {
		if e := depth + run; e > best {
			best, at = e, i
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if backslash && src[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j
			run = 0
		case c == '[':
			j := strings.IndexByte(src[i:], ']')
			if j < 0 {
				return best, at
			}
			i += j
			run = 0
		case c == '-' && i+1 < len(src) && src[i+1] == '-', c == '#' && hashComments:
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return best, at
			}
			i += j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return best, at
			}
			i += j + 3
		case c == '(':
			depth++
			run = 0
			note(i)
		case c == ')':
			if depth > 0 {
				depth--
			}
			run = 0
		case strings.IndexByte("+-~!*/%^&|<>=", c) >= 0:
			run++
			note(i)
		case c == ',' || c == ';':
			run = 0
		case (c == 'n' || c == 'N') && i+3 <= len(src) && strings.EqualFold(src[i:i+3], "not") &&
			(i == 0 || !identByte(src[i-1])) && (i+3 == len(src) || !identByte(src[i+3])):
			run++
			note(i)
			i += 2
		case identByte(c):
			for i+1 < len(src) && identByte(src[i+1]) {
				i++
			}
			run = 0
		}
	}
	return best, at
}

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// tv is the value of a constant expression as the engine folds it for the
// tautology checks of the MySQL and SQLite dialects: exact numbers
// (math/big), strings, NULL, or unknown (anything that reads a column, a
// function or a parameter).
type tv struct {
	kind tvKind
	num  *big.Rat
	str  string
}

type tvKind int

const (
	tvUnknown tvKind = iota
	tvNull
	tvNum
	tvStr
)

var unknown = tv{}

func tvNumber(r *big.Rat) tv { return tv{kind: tvNum, num: r} }

func tvBool(b bool) tv {
	if b {
		return tvNumber(big.NewRat(1, 1))
	}
	return tvNumber(new(big.Rat))
}

// parseNumber reads a numeric literal exactly (decimal, with an optional
// exponent, or 0x hexadecimal).
func parseNumber(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		n, ok := new(big.Int).SetString(s[2:], 16)
		if !ok {
			return nil, false
		}
		return new(big.Rat).SetInt(n), true
	}
	if len(s) > 400 {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// An exponent beyond a few digits would build a huge number.
		if len(s)-i > 5 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// leadingNumber is the number a string converts to in MySQL and SQLite
// arithmetic: its longest numeric prefix (after spaces), 0 when none.
func leadingNumber(s string) *big.Rat {
	s = strings.TrimLeft(s, " \t\r\n")
	end, digits, dot := 0, false, false
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) {
		c := s[end]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' && !dot:
			dot = true
		default:
			goto done
		}
		end++
	}
done:
	if !digits {
		return new(big.Rat)
	}
	r, ok := parseNumber(strings.TrimSuffix(s[:end], "."))
	if !ok {
		return new(big.Rat)
	}
	return r
}

// folding is how a dialect compares and converts values.
type folding struct {
	// foldCase compares strings case-insensitively (MySQL's default
	// collations); the engine reads the broader equality, so a tautology
	// is never missed.
	foldCase bool
	// coerce compares a number with a string as numbers (MySQL); without
	// it (SQLite), a number is less than any string.
	coerce bool
}

// truth is v as a condition: true only when v is a non-zero number or a
// string whose numeric prefix is non-zero.
func (v tv) truth() bool {
	switch v.kind {
	case tvNum:
		return v.num.Sign() != 0
	case tvStr:
		return leadingNumber(v.str).Sign() != 0
	}
	return false
}

// compare folds x op y (op one of = <> < <= > >= <=>).
func (f folding) compare(op string, x, y tv) tv {
	if op == "<=>" {
		if x.kind == tvNull || y.kind == tvNull {
			if x.kind == tvUnknown || y.kind == tvUnknown {
				return unknown
			}
			return tvBool(x.kind == y.kind)
		}
		op = "="
	}
	if x.kind == tvUnknown || y.kind == tvUnknown {
		return unknown
	}
	if x.kind == tvNull || y.kind == tvNull {
		return tv{kind: tvNull}
	}
	var c int
	switch {
	case x.kind == tvNum && y.kind == tvNum:
		c = x.num.Cmp(y.num)
	case x.kind == tvStr && y.kind == tvStr:
		a, b := x.str, y.str
		if f.foldCase {
			a, b = strings.ToLower(strings.TrimRight(a, " ")), strings.ToLower(strings.TrimRight(b, " "))
		}
		c = strings.Compare(a, b)
	case f.coerce:
		a, b := x, y
		if a.kind == tvStr {
			a = tvNumber(leadingNumber(a.str))
		}
		if b.kind == tvStr {
			b = tvNumber(leadingNumber(b.str))
		}
		c = a.num.Cmp(b.num)
	case x.kind == tvNum:
		c = -1
	default:
		c = 1
	}
	switch op {
	case "=":
		return tvBool(c == 0)
	case "<>", "!=":
		return tvBool(c != 0)
	case "<":
		return tvBool(c < 0)
	case "<=":
		return tvBool(c <= 0)
	case ">":
		return tvBool(c > 0)
	case ">=":
		return tvBool(c >= 0)
	}
	return unknown
}

// arith folds x op y (op one of + - * / %); strings convert to their
// numeric prefix, a division by zero is NULL.
func arith(op string, x, y tv) tv {
	if x.kind == tvUnknown || y.kind == tvUnknown {
		return unknown
	}
	if x.kind == tvNull || y.kind == tvNull {
		return tv{kind: tvNull}
	}
	a, b := x.num, y.num
	if x.kind == tvStr {
		a = leadingNumber(x.str)
	}
	if y.kind == tvStr {
		b = leadingNumber(y.str)
	}
	r := new(big.Rat)
	switch op {
	case "+":
		r.Add(a, b)
	case "-":
		r.Sub(a, b)
	case "*":
		r.Mul(a, b)
	case "/":
		if b.Sign() == 0 {
			return tv{kind: tvNull}
		}
		r.Quo(a, b)
	default:
		return unknown
	}
	return tvNumber(r)
}

// logical folds AND, OR, XOR and NOT over truth values (unknown stays
// unknown unless the other side decides).
func logical(op string, x, y tv) tv {
	known := func(v tv) bool { return v.kind == tvNum || v.kind == tvStr }
	switch op {
	case "and":
		if (known(x) && !x.truth()) || (known(y) && !y.truth()) {
			return tvBool(false)
		}
		if known(x) && known(y) {
			return tvBool(true)
		}
	case "or":
		if (known(x) && x.truth()) || (known(y) && y.truth()) {
			return tvBool(true)
		}
		if known(x) && known(y) {
			return tvBool(false)
		}
	case "xor":
		if known(x) && known(y) {
			return tvBool(x.truth() != y.truth())
		}
	case "not":
		if known(x) {
			return tvBool(!x.truth())
		}
	}
	return unknown
}

// parserPanic is a panic of a Go parser, recovered: the engine answers
// ERROR with QWED-ENG-002 (fail closed), never a syntax error.
type parserPanic struct{ msg string }

func (p *parserPanic) Error() string { return p.msg }

// goParser is one Go parser path (MySQL or SQLite): its parse function,
// its syntax errors, and whether '#' starts a comment.
type goParser[S any] struct {
	name   string
	parse  func(string) ([]S, error)
	syntax func(src, what string, err error) *engines.Problem
	hash   bool
}

// read applies the hard bounds to src (guardDialect) and parses it: a
// syntax error is QWED-REQ-003, a panic of the parser QWED-ENG-002 (fail
// closed, never taken for a syntax error). It returns the statements and
// the nesting estimate.
func (g goParser[S]) read(src, what string, maxBytes int) ([]S, int, *engines.Problem) {
	nesting, p := guardDialect(src, what, maxBytes, g.hash)
	if p != nil {
		return nil, 0, p
	}
	stmts, err := g.safeParse(src)
	if err != nil {
		var pp *parserPanic
		if errors.As(err, &pp) {
			return nil, 0, problem(CodeEngine, "reading the "+what+": "+pp.msg, map[string]any{"field": what})
		}
		return nil, 0, g.syntax(src, what, err)
	}
	return stmts, nesting, nil
}

func (g goParser[S]) safeParse(src string) (stmts []S, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, &parserPanic{fmt.Sprintf("the %s parser failed: %v", g.name, r)}
		}
	}()
	return g.parse(src)
}

// classifyGo classifies a.src with a Go parser path: offsets gives where
// each statement starts, stmt analyses one statement (at that byte
// offset) and answers the parse-tree nodes counted so far.
func classifyGo[S any](a *analysis, g goParser[S], offsets func([]S) []int, stmt func(S, int) int) (Class, *engines.Problem) {
	stmts, nesting, p := g.read(a.src, "query", MaxQueryBytes)
	if p != nil {
		return Class{}, p
	}
	if len(stmts) == 0 {
		return Class{}, noStatement(a.src)
	}
	offs := offsets(stmts)
	nodes := 0
	for i, st := range stmts {
		if nodes = stmt(st, offs[i]); nodes > MaxNodes {
			return Class{}, tooManyNodes()
		}
	}
	second := int32(0)
	if len(offs) > 1 {
		second = int32(offs[1])
	}
	return a.class(nodes, nesting, second), nil
}

// tooManyNodes is QWED-REQ-004 for a query past MaxNodes.
func tooManyNodes() *engines.Problem {
	return problem(CodeTooLong, "query has more than "+strconv.Itoa(MaxNodes)+" parse-tree nodes",
		map[string]any{"limit": MaxNodes, "field": "query"})
}

// noStatement is QWED-REQ-003 for a query without a statement.
func noStatement(query string) *engines.Problem {
	return syntaxProblem(query, "query", "no statement", charPos(query, len(query)), "a statement", "end of input")
}

// typeStatementName names a statement by its Go type: *ast.CreateIndexStmt
// is CREATE INDEX.
func typeStatementName(n any) string {
	name := fmt.Sprintf("%T", n)
	name = strings.TrimSuffix(name[strings.LastIndexByte(name, '.')+1:], "Stmt")
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// binary folds x op y for op one of or and xor = <> < <= > >= <=> + - * /.
func (f folding) binary(op string, x, y tv) tv {
	switch op {
	case "or", "and", "xor":
		return logical(op, x, y)
	case "=", "<>", "<", "<=", ">", ">=", "<=>":
		return f.compare(op, x, y)
	case "+", "-", "*", "/":
		return arith(op, x, y)
	}
	return unknown
}

// between folds v [NOT] BETWEEN lo AND hi.
func (f folding) between(v, lo, hi tv, not bool) tv {
	return negate(logical("and", f.compare(">=", v, lo), f.compare("<=", v, hi)), not)
}

// in folds v [NOT] IN (items...).
func (f folding) in(v tv, items []tv, not bool) tv {
	res := tvBool(false)
	for _, it := range items {
		res = logical("or", res, f.compare("=", v, it))
	}
	return negate(res, not)
}

// negate is NOT v when not is set, v otherwise.
func negate(v tv, not bool) tv {
	if not {
		return logical("not", v, unknown)
	}
	return v
}
