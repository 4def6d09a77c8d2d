package sql

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentgate/agentgate/domain/engines"
)

// The QWED protocol v1.0 §8.3 codes the engine answers with.
const (
	CodeInvalidRequest = "QWED-REQ-001"
	CodeSyntax         = "QWED-REQ-003"
	CodeTooLong        = "QWED-REQ-004"
	CodeUnsupported    = "QWED-REQ-005"
	CodeMalicious      = "QWED-SEC-002"
	CodeEngine         = "QWED-ENG-002"
)

// Error is the error of Classify: a QWED protocol v1.0 §8 problem (QWED-REQ-003 with
// {position, expected, found} for a syntax error, QWED-REQ-004 beyond a
// bound).
type Error struct {
	Problem engines.Problem
}

// Error returns the code and the message.
func (e *Error) Error() string { return e.Problem.Code + ": " + e.Problem.Message }

func problem(code, msg string, details map[string]any) *engines.Problem {
	return &engines.Problem{Code: code, Message: msg, Details: details}
}

// parsed is a query the parser accepted, with its size figures.
type parsed struct {
	src     string
	tree    *pg.ParseResult
	nodes   int
	nesting int
}

// parseSQL parses src (the query, or the schema DDL when what is
// "schema_ddl") under the hard bounds, or returns the §8 problem.
func parseSQL(src, what string, maxBytes int) (*parsed, *engines.Problem) {
	if p := precheck(src, what, maxBytes); p != nil {
		return nil, p
	}
	nesting, at := 0, 0
	if sc, err := pg.Scan(src); err == nil {
		nesting, at = nestingEstimate(sc.Tokens)
		if nesting > MaxNesting {
			return nil, problem(CodeTooLong, what+" nests too deeply", map[string]any{
				"limit": MaxNesting, "nesting": nesting, "position": charPos(src, at), "field": what})
		}
	}
	tree, err := pg.Parse(src)
	if err != nil {
		var pe *parser.Error
		if errors.As(err, &pe) {
			return nil, pgSyntaxProblem(src, what, pe)
		}
		if strings.Contains(err.Error(), "recursion depth") {
			return nil, problem(CodeTooLong, what+" nests too deeply", map[string]any{"limit": MaxNesting, "field": what})
		}
		return nil, problem(CodeEngine, "reading the parse tree: "+err.Error(), map[string]any{"field": what})
	}
	nodes := countNodes(tree.ProtoReflect(), MaxNodes+1)
	if nodes > MaxNodes {
		return nil, problem(CodeTooLong, what+" has more than "+strconv.Itoa(MaxNodes)+" parse-tree nodes",
			map[string]any{"limit": MaxNodes, "field": what})
	}
	return &parsed{src: src, tree: tree, nodes: nodes, nesting: nesting}, nil
}

// precheck refuses, before any parser runs, text longer than maxBytes
// (QWED-REQ-004), with a NUL byte or that is not UTF-8 (QWED-REQ-003).
func precheck(src, what string, maxBytes int) *engines.Problem {
	if len(src) > maxBytes {
		return problem(CodeTooLong, what+" longer than "+strconv.Itoa(maxBytes)+" bytes",
			map[string]any{"limit": maxBytes, "length": len(src), "field": what})
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return syntaxProblem(src, what, "NUL byte in "+what, charPos(src, i), "", "NUL byte")
	}
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return syntaxProblem(src, what, "invalid UTF-8 in "+what, charPos(src, i), "", "byte 0x"+strconv.FormatUint(uint64(src[i]), 16))
	}
	return nil
}

// nestingEstimate bounds from above the nesting the parser can build from
// toks: bracket depth, plus per bracket level the operators and keywords
// since the last list separator (',', AND, OR: lists are flat), plus the
// set operations and joins of the statement (left-deep trees that span
// separators). It returns the largest estimate and the byte offset of the
// token where it was reached.
func nestingEstimate(toks []*pg.ScanToken) (int, int) {
	counts := []int{0}
	sum, global, best, at := 0, 0, 0, 0
	for _, t := range toks {
		switch t.Token {
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT:
			continue
		case pg.Token_ASCII_40, pg.Token_ASCII_91: // ( [
			counts = append(counts, 0)
		case pg.Token_ASCII_41, pg.Token_ASCII_93: // ) ]
			if len(counts) > 1 {
				sum -= counts[len(counts)-1]
				counts = counts[:len(counts)-1]
			}
		case pg.Token_ASCII_44, pg.Token_AND, pg.Token_OR: // , AND OR
			sum -= counts[len(counts)-1]
			counts[len(counts)-1] = 0
		case pg.Token_ASCII_59: // ;
			counts = counts[:1]
			counts[0], sum, global = 0, 0, 0
		case pg.Token_IDENT, pg.Token_UIDENT, pg.Token_FCONST, pg.Token_SCONST, pg.Token_USCONST,
			pg.Token_BCONST, pg.Token_XCONST, pg.Token_ICONST, pg.Token_PARAM, pg.Token_ASCII_46:
		case pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_JOIN:
			global++
		default:
			counts[len(counts)-1]++
			sum++
		}
		if est := len(counts) - 1 + sum + global; est > best {
			best, at = est, int(t.Start)
		}
	}
	return best, at
}

// countNodes counts the messages of the tree rooted at m, stopping once the
// count reaches limit.
func countNodes(m protoreflect.Message, limit int) int {
	n := 0
	var walk func(protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if n >= limit {
			return
		}
		n++
		eachChild(m, walk)
	}
	walk(m)
	return n
}

// nodeOneof is the oneof of pg.Node (one field per node type).
var nodeOneof = (&pg.Node{}).ProtoReflect().Descriptor().Oneofs().Get(0)

// eachChild calls fn on every message directly held by m, in field order.
func eachChild(m protoreflect.Message, fn func(protoreflect.Message)) {
	if _, ok := m.Interface().(*pg.Node); ok {
		if fd := m.WhichOneof(nodeOneof); fd != nil {
			fn(m.Get(fd).Message())
		}
		return
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.MessageKind || !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		if fd.IsList() {
			l := v.List()
			for j := 0; j < l.Len(); j++ {
				fn(l.Get(j).Message())
			}
			continue
		}
		if fd.IsMap() {
			continue
		}
		fn(v.Message())
	}
}

// syntaxProblem is QWED-REQ-003 with the details of the QWED protocol v1.0 §8.4.
func syntaxProblem(src, what, msg string, pos int, expected, found string) *engines.Problem {
	d := map[string]any{"position": pos, "found": found}
	if expected != "" {
		d["expected"] = expected
	}
	line, col := lineColOfChar(src, pos)
	if line > 0 {
		d["line"], d["column"] = line, col
	}
	if what != "query" {
		d["field"] = what
	}
	return problem(CodeSyntax, "invalid "+what+" syntax: "+msg, d)
}

// pgSyntaxProblem turns the parser's error into QWED-REQ-003: position is
// the parser's cursorpos (1-based characters), found the token it names
// (or the text at the position), expected what the message implies.
func pgSyntaxProblem(src, what string, pe *parser.Error) *engines.Problem {
	pos := pe.Cursorpos
	msg := pe.Message
	found := ""
	switch {
	case strings.Contains(msg, "at end of input"):
		found = "end of input"
	case strings.Contains(msg, `at or near "`):
		i := strings.Index(msg, `at or near "`) + len(`at or near "`)
		if j := strings.LastIndexByte(msg, '"'); j >= i {
			found = msg[i:j]
		}
	}
	if found == "" {
		found = textAt(src, pos)
	}
	expected := ""
	switch {
	case strings.HasPrefix(msg, "unterminated quoted string"):
		expected = "closing quote '"
	case strings.HasPrefix(msg, "unterminated quoted identifier"):
		expected = `closing quote "`
	case strings.HasPrefix(msg, "unterminated /* comment"):
		expected = "end of comment */"
	case strings.HasPrefix(msg, "unterminated dollar-quoted string"):
		expected = "closing dollar quote"
	case strings.HasPrefix(msg, "unterminated bit string"), strings.HasPrefix(msg, "unterminated hexadecimal string"):
		expected = "closing quote '"
	case strings.Contains(msg, "syntax error at end of input"):
		expected = "more input (the statement is incomplete)"
	}
	return syntaxProblem(src, what, msg, pos, expected, found)
}

// textAt is the word at 1-based character position pos (at most 32
// characters), or "end of input".
func textAt(src string, pos int) string {
	off := byteOfChar(src, pos)
	if off >= len(src) || pos <= 0 {
		return "end of input"
	}
	rest := src[off:]
	end := strings.IndexAny(rest, " \t\r\n")
	if end < 0 {
		end = len(rest)
	}
	return clip(rest[:end], 32)
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// charPos is the 1-based character position of byte offset off.
func charPos(src string, off int) int {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	return utf8.RuneCountInString(src[:off]) + 1
}

// byteOfChar is the byte offset of 1-based character position pos.
func byteOfChar(src string, pos int) int {
	n := 1
	for i := range src {
		if n == pos {
			return i
		}
		n++
	}
	return len(src)
}

// lineCol is the 1-based line and character column of byte offset off.
func lineCol(src string, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	line := 1 + strings.Count(src[:off], "\n")
	start := strings.LastIndexByte(src[:off], '\n') + 1
	return line, utf8.RuneCountInString(src[start:off]) + 1
}

// lineColOfChar is lineCol for a 1-based character position (0, 0 when
// pos is unknown).
func lineColOfChar(src string, pos int) (int, int) {
	if pos <= 0 {
		return 0, 0
	}
	return lineCol(src, byteOfChar(src, pos))
}
