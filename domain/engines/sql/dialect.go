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
// of brackets plus, at each open bracket level, the operators since the
// last comma at that level (operator symbols, a multi-character one such
// as <=> or || counted once, and the operator keywords, chainOperators),
// skipping quoted text and comments. Operands do not end a chain: both
// parsers build a chain of binary operators (a+b+c, a OR b OR c, which
// PostgreSQL keeps flat) as a left-deep tree, one level per operator. It
// returns the estimate and the byte offset where it peaked. mysql reads
// MySQL's lexis: '#' starts a comment, '--' only before a blank or a
// control character, and the content of an executable comment (/*! */,
// and MariaDB's /*M! */) is code. backslash reads a backslash in a quoted
// string as an escape (MySQL's default). The parsers are Go code (a deep
// input cannot kill the process as C would, but it can take the stack and
// time): the engine refuses past MaxNesting before it parses.
func roughNesting(src string, mysql, backslash bool) (int, int) {
	counts := []int{0}
	sum, best, at := 0, 0, 0
	op := func(i int) {
		counts[len(counts)-1]++
		sum++
		if e := len(counts) - 1 + sum; e > best {
			best, at = e, i
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c <= ' ':
		case identByte(c):
			j := i + 1
			for j < len(src) && identByte(src[j]) {
				j++
			}
			if chainKeyword(src[i:j]) {
				op(i)
			}
			i = j - 1
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if backslash && src[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j
		case c == '[' && !mysql:
			j := strings.IndexByte(src[i:], ']')
			if j < 0 {
				return best, at
			}
			i += j
		case c == '-' && i+1 < len(src) && src[i+1] == '-' && (!mysql || i+2 == len(src) || src[i+2] <= ' '),
			c == '#' && mysql:
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return best, at
			}
			i += j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			if mysql && (strings.HasPrefix(src[i+2:], "!") || strings.HasPrefix(src[i+2:], "M!")) {
				i += strings.IndexByte(src[i:], '!') // code: its operands and operators count
				continue
			}
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return best, at
			}
			i += j + 3
		case c == '(':
			counts = append(counts, 0)
			if e := len(counts) - 1 + sum; e > best {
				best, at = e, i
			}
		case c == ')':
			if len(counts) > 1 {
				sum -= counts[len(counts)-1]
				counts = counts[:len(counts)-1]
			}
		case c == ',':
			sum -= counts[len(counts)-1]
			counts[len(counts)-1] = 0
		case c == ';':
			counts = counts[:1]
			counts[0], sum = 0, 0
		case operatorByte[c]:
			op(i)
			i += operatorLen(src[i:]) - 1
		}
	}
	return best, at
}

// operatorByte marks the characters operators are spelled with.
var operatorByte = func() (t [256]bool) {
	for _, c := range []byte("+-~!*/%^&|<>=:") {
		t[c] = true
	}
	return t
}()

// operatorLen is the length of the operator s starts with: <=>, ->> and
// the two-character operators are one operator each (one tree level).
func operatorLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch s[:2] {
	case "<=", "->":
		if len(s) > 2 && s[2] == '>' {
			return 3
		}
		return 2
	case ">=", "<>", "!=", "==", "||", "&&", "<<", ">>", ":=":
		return 2
	}
	return 1
}

// chainKeyword reports whether word is one of chainOperators, in any case.
func chainKeyword(word string) bool {
	if len(word) < 2 || len(word) > maxOperatorKeyword {
		return false
	}
	var buf [maxOperatorKeyword]byte
	for i := 0; i < len(word); i++ {
		buf[i] = word[i] | 0x20 // ASCII letters only: the keywords are letters
	}
	return chainOperators[string(buf[:len(word)])]
}

// chainOperators are the keywords that build a tree level over their
// operands in MySQL or SQLite; maxOperatorKeyword is the longest.
var chainOperators = map[string]bool{
	"and": true, "or": true, "xor": true, "not": true, "is": true, "isnull": true, "notnull": true,
	"like": true, "glob": true, "regexp": true, "rlike": true, "match": true, "sounds": true,
	"between": true, "in": true, "div": true, "mod": true, "collate": true, "escape": true,
	"member": true, "binary": true, "join": true,
}

const maxOperatorKeyword = 7

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// tv is the value of a constant expression as the engine folds it for the
// tautology checks of the MySQL and SQLite dialects: exact numbers
// (math/big), strings, NULL, or unknown (anything that reads a column, a
// function the engine does not fold or a parameter).
type tv struct {
	kind tvKind
	num  *big.Rat
	str  string
	// hex marks a MySQL hexadecimal or bit literal (0x31, X'31', b'1'):
	// next to a number it is the number its bytes spell (big-endian),
	// elsewhere a binary string.
	hex bool
	// bin marks a binary string (MySQL's CHAR(), a hexadecimal literal)
	// or an SQLite BLOB: compared byte for byte.
	bin bool
	// coll marks a string under an explicit COLLATE: only byte-identical
	// strings are decided equal (any collation holds those equal).
	coll bool
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

func tvString(s string) tv { return tv{kind: tvStr, str: s} }

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
		if len(s) > 2*maxFoldDigits {
			return nil, false
		}
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

// asNumber is v in a numeric context: a number, a hexadecimal literal's
// bytes read big-endian, a string's numeric prefix.
func (v tv) asNumber() *big.Rat {
	switch {
	case v.kind == tvNum:
		return v.num
	case v.hex:
		return new(big.Rat).SetInt(new(big.Int).SetBytes([]byte(v.str)))
	}
	return leadingNumber(v.str)
}

// folding is how a dialect compares and converts values.
type folding struct {
	// foldCase compares strings case-insensitively (MySQL's default
	// collations); the engine reads the broader equality, so a tautology
	// is never missed, but decides only what every collation of that kind
	// agrees on (ASCII letters, no trailing spaces).
	foldCase bool
	// coerce compares a number with a string as numbers (MySQL); without
	// it (SQLite), a number is less than any string, and a string less
	// than any BLOB.
	coerce bool
	// divScale is the decimals a division keeps (MySQL's
	// div_precision_increment, 4 by default); 0 folds only divisions
	// whose quotient is an integer (SQLite: an integer division
	// truncates, a real one is a float).
	divScale int
	// likeFold matches LIKE case-insensitively (MySQL's default
	// collations, SQLite's ASCII-only LIKE); likeEscape is the escape
	// character without an ESCAPE clause (0 for none).
	likeFold   bool
	likeEscape byte
	// likeCI matches LIKE case-insensitively always (ILIKE).
	likeCI bool
}

// known reports whether v has a truth value: a number or a string (a
// hexadecimal literal's depends on how the server reads it).
func (v tv) known() bool { return (v.kind == tvNum || v.kind == tvStr) && !v.hex }

// truth is v as a condition: true only when v is a non-zero number or a
// string whose numeric prefix is non-zero.
func (v tv) truth() bool {
	switch {
	case v.kind == tvNum:
		return v.num.Sign() != 0
	case v.kind == tvStr && !v.hex:
		return leadingNumber(v.str).Sign() != 0
	}
	return false
}

// ordered reports whether s holds only characters whose order every
// collation agrees on once lower-cased: ASCII lower-case letters, digits
// and spaces.
func ordered(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ' ') {
			return false
		}
	}
	return true
}

// compareStrings compares two strings as the dialect does; ok is false
// when the answer depends on a collation the engine does not know.
func (f folding) compareStrings(x, y tv, op string) (int, bool) {
	a, b := x.str, y.str
	switch {
	case !f.coerce && x.bin != y.bin: // SQLite: a TEXT is less than any BLOB
		if x.bin {
			return 1, true
		}
		return -1, true
	case a == b:
		return 0, true
	case x.coll || y.coll:
		return 0, false
	case x.bin || y.bin || !f.foldCase:
		return strings.Compare(a, b), true
	}
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if strings.TrimRight(la, " ") == strings.TrimRight(lb, " ") && la != lb {
		return 0, false // equal under PAD SPACE collations only
	}
	if !isASCII(a) || !isASCII(b) {
		return 0, false // accents and case beyond ASCII depend on the collation
	}
	if op != "=" && op != "<>" && op != "!=" && (!ordered(la) || !ordered(lb)) {
		return 0, false // punctuation sorts by the collation's weights
	}
	return strings.Compare(la, lb), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
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
		var ok bool
		if c, ok = f.compareStrings(x, y, op); !ok {
			return unknown
		}
	case f.coerce:
		c = x.asNumber().Cmp(y.asNumber())
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

// arith folds x op y (op one of + - * /); strings convert to their
// numeric prefix, a division by zero is NULL, and a division is folded
// only where its result does not depend on the operands' types (an exact
// quotient within the dialect's divScale decimals).
func (f folding) arith(op string, x, y tv) tv {
	if x.kind == tvUnknown || y.kind == tvUnknown {
		return unknown
	}
	if x.kind == tvNull || y.kind == tvNull {
		return tv{kind: tvNull}
	}
	a, b := x.asNumber(), y.asNumber()
	if len(a.String())+len(b.String()) > 4*maxFoldDigits {
		return unknown
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
		scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(f.divScale)), nil)))
		if !scaled.IsInt() {
			return unknown
		}
	default:
		return unknown
	}
	return tvNumber(r)
}

// logical folds AND, OR, XOR and NOT over truth values (unknown stays
// unknown unless the other side decides).
func logical(op string, x, y tv) tv {
	switch op {
	case "and":
		if (x.known() && !x.truth()) || (y.known() && !y.truth()) {
			return tvBool(false)
		}
		if x.known() && y.known() {
			return tvBool(true)
		}
	case "or":
		if (x.known() && x.truth()) || (y.known() && y.truth()) {
			return tvBool(true)
		}
		if x.known() && y.known() {
			return tvBool(false)
		}
	case "xor":
		if x.known() && y.known() {
			return tvBool(x.truth() != y.truth())
		}
	case "not":
		if x.known() {
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

// readSchema reads a schema_ddl with a Go parser path: table reads one
// statement as a table or view (false for any other statement, which is
// ignored).
func readSchema[S any](g goParser[S], ddl string, table func(S) (*Table, bool)) (*Schema, *engines.Problem) {
	stmts, _, p := g.read(ddl, "schema_ddl", MaxSchemaDDLBytes)
	if p != nil {
		return nil, p
	}
	s := &Schema{tables: map[string][]*Table{}}
	for _, st := range stmts {
		if t, ok := table(st); ok {
			if p := s.add(t); p != nil {
				return nil, p
			}
		}
	}
	return s, nil
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
		return f.arith(op, x, y)
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
