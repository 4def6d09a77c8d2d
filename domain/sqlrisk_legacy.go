package domain

import (
	"strconv"
	"strings"
)

// The SQL risk of logs written before Config.EngineSQLRisk: frozen.
//
// The one rule of an SQL action's risk is the sql engine's statement class
// (domain/engines/sql: PostgreSQL's own parser, run in the engine workers;
// verdictRisk). Before Config.EngineSQLRisk, a command that carried no
// class (no engine, an engine error, a command older than the engines) was
// classified by the tokenizer below instead, and `replay --verify` must
// re-decide such a log byte for byte. So it stays, unchanged, and Decide
// calls it only on a state whose configuration predates the switch: the
// commands a log recorded before its first gate.configured with
// engine_sql_risk. A gate started with DefaultConfig never decides by it.
// Do not improve it: a change would change how those logs re-decide.
//
// It is a small, conservative classifier built on a tokenizer, not a
// parser: it knows strings, quoted identifiers, dollar quotes and comments
// well enough that `SELECT 'DROP TABLE x'` is a read, and it refuses to
// guess about everything else. Dialects disagree on backslashes in strings,
// on '#' comments and on nested block comments, and an attacker picks the
// reading that hides a statement; so the query is classified under both the
// PostgreSQL reading and the MySQL reading and the riskier result wins.
//
//	read-only SELECT / WITH … SELECT / SHOW / EXPLAIN / TABLE / VALUES → low
//	INSERT, MERGE, UPDATE or DELETE with a WHERE clause, CREATE TABLE/INDEX/VIEW → high
//	UPDATE or DELETE without WHERE (or WHERE <tautology>), DROP, TRUNCATE,
//	ALTER, GRANT, REVOKE, CREATE ROLE/USER/FUNCTION…, COPY, CALL, DO → critical
//	stacked statements, OR-tautologies (OR 1=1, OR 'a'='a'), comments that
//	hide statements → critical and a security violation
//	anything it cannot tokenize or does not know → critical

// legacySQLRisk is the risk of an SQL action on a state without
// Config.EngineSQLRisk whose verdict carries no class: the type's risk,
// refined by classifySQLLegacy (execute_sql takes the classification; the
// database types take the higher of both when a query is present).
func legacySQLRisk(spec ActionSpec, a *Action) (Risk, *SQLRisk) {
	if a.Query == "" {
		if spec.Risk == RiskCritical {
			sr := SQLRisk{Risk: RiskCritical, Reason: "no query to classify"}
			return RiskCritical, &sr
		}
		return spec.Risk, nil
	}
	sr := classifySQLLegacy(a.Query)
	if spec.Risk == RiskCritical { // execute_sql: the query decides
		return sr.Risk, &sr
	}
	if sr.Risk.Rank() > spec.Risk.Rank() {
		return sr.Risk, &sr
	}
	return spec.Risk, &sr
}

// SQLRisk is the classification of one SQL text.
type SQLRisk struct {
	// Risk is the classification: low, high or critical.
	Risk Risk `json:"risk_level"`
	// Statement is the leading keyword of the statement ("SELECT", …), ""
	// when there is none.
	Statement string `json:"statement"`
	// Violation is set for injection patterns (stacked statements,
	// tautologies, hiding comments): a security violation.
	Violation bool `json:"security_violation"`
	// Reason explains a high, critical or violating classification.
	Reason string `json:"reason,omitempty"`
}

// MaxSQLLength bounds the SQL text the classifier reads; longer text is
// critical (it is not read at all).
const MaxSQLLength = 64 << 10

// classifySQLLegacy returns the risk of query (see the package comment above).
func classifySQLLegacy(query string) SQLRisk {
	if len(query) > MaxSQLLength {
		return SQLRisk{Risk: RiskCritical, Reason: "query longer than " + strconv.Itoa(MaxSQLLength) + " bytes"}
	}
	pg := classifyDialect(query, dialectPostgres)
	my := classifyDialect(query, dialectMySQL)
	if my.Violation && !pg.Violation {
		return my
	}
	if pg.Violation && !my.Violation {
		return pg
	}
	if my.Risk.Rank() > pg.Risk.Rank() {
		return my
	}
	return pg
}

type sqlDialect int

const (
	dialectPostgres sqlDialect = iota // '' escapes only, nested /* */, # is an operator
	dialectMySQL                      // backslash escapes, flat /* */, # starts a comment
)

type sqlTokKind int

const (
	tokWord sqlTokKind = iota
	tokNumber
	tokString
	tokIdent // quoted identifier
	tokParam // $1, ?, :name
	tokPunct
	tokSemicolon
)

type sqlTok struct {
	kind  sqlTokKind
	text  string // upper-cased for words; the literal body for strings
	depth int    // parenthesis depth
}

// sqlTokens is a tokenized statement list, or the reason it could not be
// tokenized, plus the flags found in comments.
type sqlTokens struct {
	toks       []sqlTok
	err        string
	hiddenStmt string // reason when a comment hides a statement
}

var hiddenKeywords = []string{"DROP", "DELETE", "INSERT", "UPDATE", "ALTER", "TRUNCATE", "GRANT",
	"REVOKE", "CREATE", "EXEC", "EXECUTE", "MERGE", "UNION", "SHUTDOWN", "COPY"}

func tokenizeSQL(q string, d sqlDialect) sqlTokens {
	var out sqlTokens
	depth := 0
	noteComment := func(body string) {
		if out.hiddenStmt != "" {
			return
		}
		if strings.Contains(body, ";") {
			out.hiddenStmt = "comment contains a statement separator"
			return
		}
		up := strings.ToUpper(body)
		for _, w := range sqlWords(up) {
			for _, k := range hiddenKeywords {
				if w == k {
					out.hiddenStmt = "comment contains " + k
					return
				}
			}
		}
	}
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '#' && d == dialectMySQL:
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				end = len(q) - i
			}
			noteComment(q[i : i+end])
			i += end
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			if i+2 < len(q) && (q[i+2] == '!') {
				out.hiddenStmt = "executable comment /*!"
			}
			j, ok := skipBlockComment(q, i, d == dialectPostgres)
			if !ok {
				out.err = "unterminated comment"
				return out
			}
			noteComment(q[i:j])
			i = j
		case c == '\'' || ((c == 'E' || c == 'e') && i+1 < len(q) && q[i+1] == '\''):
			backslash := d == dialectMySQL
			if c != '\'' {
				backslash = true
				i++
			}
			body, j, ok := scanQuoted(q, i, '\'', backslash)
			if !ok {
				out.err = "unterminated string literal"
				return out
			}
			out.toks = append(out.toks, sqlTok{kind: tokString, text: body, depth: depth})
			i = j
		case c == '"' || c == '`':
			body, j, ok := scanQuoted(q, i, c, false)
			if !ok {
				out.err = "unterminated quoted identifier"
				return out
			}
			out.toks = append(out.toks, sqlTok{kind: tokIdent, text: body, depth: depth})
			i = j
		case c == '$':
			if i+1 < len(q) && isDigit(q[i+1]) {
				j := i + 1
				for j < len(q) && isDigit(q[j]) {
					j++
				}
				out.toks = append(out.toks, sqlTok{kind: tokParam, text: q[i:j], depth: depth})
				i = j
				continue
			}
			j := i + 1
			for j < len(q) && isWordByte(q[j]) && q[j] != '$' {
				j++
			}
			if j >= len(q) || q[j] != '$' {
				out.err = "stray '$'"
				return out
			}
			tag := q[i : j+1]
			end := strings.Index(q[j+1:], tag)
			if end < 0 {
				out.err = "unterminated dollar-quoted string"
				return out
			}
			out.toks = append(out.toks, sqlTok{kind: tokString, text: q[j+1 : j+1+end], depth: depth})
			i = j + 1 + end + len(tag)
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			j := i
			for j < len(q) && (isDigit(q[j]) || q[j] == '.' || q[j] == 'e' || q[j] == 'E' ||
				((q[j] == '+' || q[j] == '-') && j > i && (q[j-1] == 'e' || q[j-1] == 'E'))) {
				j++
			}
			out.toks = append(out.toks, sqlTok{kind: tokNumber, text: q[i:j], depth: depth})
			i = j
		case isWordByte(c) || c >= 0x80:
			j := i
			for j < len(q) && (isWordByte(q[j]) || q[j] >= 0x80) {
				j++
			}
			out.toks = append(out.toks, sqlTok{kind: tokWord, text: strings.ToUpper(q[i:j]), depth: depth})
			i = j
		case c == '?':
			out.toks = append(out.toks, sqlTok{kind: tokParam, text: "?", depth: depth})
			i++
		case c == ':' && i+1 < len(q) && isWordByte(q[i+1]) && (i == 0 || q[i-1] != ':'):
			j := i + 1
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			out.toks = append(out.toks, sqlTok{kind: tokParam, text: q[i:j], depth: depth})
			i = j
		case c == ';':
			out.toks = append(out.toks, sqlTok{kind: tokSemicolon, text: ";", depth: depth})
			i++
		case c == '(':
			out.toks = append(out.toks, sqlTok{kind: tokPunct, text: "(", depth: depth})
			depth++
			i++
		case c == ')':
			depth--
			if depth < 0 {
				out.err = "unbalanced ')'"
				return out
			}
			out.toks = append(out.toks, sqlTok{kind: tokPunct, text: ")", depth: depth})
			i++
		case strings.IndexByte("<>=!", c) >= 0:
			j := i + 1
			for j < len(q) && strings.IndexByte("<>=!", q[j]) >= 0 {
				j++
			}
			out.toks = append(out.toks, sqlTok{kind: tokPunct, text: q[i:j], depth: depth})
			i = j
		case strings.IndexByte(",.*+-/%|&^~@[]{}:#\\", c) >= 0:
			out.toks = append(out.toks, sqlTok{kind: tokPunct, text: q[i : i+1], depth: depth})
			i++
		default:
			out.err = "unexpected character " + strconv.QuoteRune(rune(c))
			return out
		}
	}
	if depth != 0 {
		out.err = "unbalanced '('"
	}
	return out
}

func skipBlockComment(q string, i int, nested bool) (int, bool) {
	level := 0
	for i < len(q) {
		switch {
		case i+1 < len(q) && q[i] == '/' && q[i+1] == '*':
			if level == 0 || nested {
				level++
			}
			i += 2
		case i+1 < len(q) && q[i] == '*' && q[i+1] == '/':
			level--
			i += 2
			if level == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return i, false
}

// scanQuoted reads a literal opened by quote at q[i]; a doubled quote is an
// escaped quote, and with backslash a backslash escapes the next byte.
func scanQuoted(q string, i int, quote byte, backslash bool) (string, int, bool) {
	var b strings.Builder
	j := i + 1
	for j < len(q) {
		c := q[j]
		switch {
		case backslash && c == '\\' && j+1 < len(q):
			b.WriteByte(q[j+1])
			j += 2
		case c == quote && j+1 < len(q) && q[j+1] == quote:
			b.WriteByte(quote)
			j += 2
		case c == quote:
			return b.String(), j + 1, true
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", j, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// sqlWords splits upper-cased text into its words.
func sqlWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r > 0x7f || !isWordByte(byte(r)) })
}

func classifyDialect(q string, d sqlDialect) SQLRisk {
	t := tokenizeSQL(q, d)
	if t.err != "" {
		return SQLRisk{Risk: RiskCritical, Reason: "unparseable SQL: " + t.err}
	}
	if t.hiddenStmt != "" {
		return SQLRisk{Risk: RiskCritical, Violation: true, Reason: "hidden statement: " + t.hiddenStmt}
	}
	var stmts [][]sqlTok
	start := 0
	for i, tk := range t.toks {
		if tk.kind == tokSemicolon {
			if i > start {
				stmts = append(stmts, t.toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(t.toks) {
		stmts = append(stmts, t.toks[start:])
	}
	if len(stmts) == 0 {
		return SQLRisk{Risk: RiskCritical, Reason: "empty SQL"}
	}
	if len(stmts) > 1 {
		return SQLRisk{Risk: RiskCritical, Violation: true, Statement: leadWord(stmts[0]),
			Reason: "stacked statements (" + strconv.Itoa(len(stmts)) + ")"}
	}
	st := stmts[0]
	if r := findTautology(st); r != "" {
		return SQLRisk{Risk: RiskCritical, Violation: true, Statement: leadWord(st), Reason: "tautology " + r}
	}
	return classifyStatement(st)
}

func leadWord(st []sqlTok) string {
	for _, tk := range st {
		if tk.kind == tokWord {
			return tk.text
		}
		if tk.kind != tokPunct || tk.text != "(" {
			return ""
		}
	}
	return ""
}

func classifyStatement(st []sqlTok) SQLRisk {
	lead := leadWord(st)
	r := SQLRisk{Statement: lead}
	switch lead {
	case "SELECT", "WITH", "TABLE", "VALUES":
		if w := firstWord(st, "INSERT", "UPDATE", "DELETE", "MERGE"); w != "" {
			return classifyWrite(st, w, r)
		}
		if intoAfterSelect(st) {
			r.Risk, r.Reason = RiskHigh, "SELECT INTO writes a table"
			return r
		}
		r.Risk = RiskLow
		return r
	case "SHOW", "DESCRIBE", "DESC":
		r.Risk = RiskLow
		return r
	case "EXPLAIN":
		rest := st[1:]
		analyze := false
		for len(rest) > 0 {
			tk := rest[0]
			if tk.kind == tokWord && (tk.text == "ANALYZE" || tk.text == "ANALYSE" || tk.text == "VERBOSE") {
				analyze = analyze || tk.text != "VERBOSE"
				rest = rest[1:]
				continue
			}
			if tk.kind == tokPunct && tk.text == "(" {
				// EXPLAIN (ANALYZE, …) options
				j := 1
				for j < len(rest) && !(rest[j].kind == tokPunct && rest[j].text == ")" && rest[j].depth == tk.depth) {
					if rest[j].kind == tokWord && (rest[j].text == "ANALYZE" || rest[j].text == "ANALYSE") {
						analyze = true
					}
					j++
				}
				if j < len(rest) {
					rest = rest[j+1:]
				} else {
					rest = nil
				}
				continue
			}
			break
		}
		if len(rest) == 0 {
			return SQLRisk{Risk: RiskCritical, Statement: lead, Reason: "EXPLAIN without a statement"}
		}
		if !analyze {
			// Plain EXPLAIN plans the statement without running it.
			r.Risk = RiskLow
			return r
		}
		inner := classifyStatement(rest)
		inner.Statement = lead
		if inner.Risk == RiskLow {
			return inner
		}
		inner.Reason = "EXPLAIN ANALYZE executes: " + inner.Reason
		return inner
	case "INSERT", "UPDATE", "DELETE", "MERGE":
		return classifyWrite(st, lead, r)
	case "DROP", "TRUNCATE", "ALTER", "GRANT", "REVOKE", "COPY", "CALL", "DO", "EXEC", "EXECUTE":
		r.Risk, r.Reason = RiskCritical, lead+" statement"
		return r
	case "CREATE":
		obj := ""
		for _, tk := range st[1:] {
			if tk.kind == tokWord && tk.text != "OR" && tk.text != "REPLACE" && tk.text != "UNIQUE" &&
				tk.text != "TEMP" && tk.text != "TEMPORARY" && tk.text != "UNLOGGED" && tk.text != "MATERIALIZED" {
				obj = tk.text
				break
			}
		}
		switch obj {
		case "TABLE", "INDEX", "VIEW", "SEQUENCE", "SCHEMA", "TYPE":
			r.Risk, r.Reason = RiskHigh, "CREATE "+obj
		default:
			r.Risk, r.Reason = RiskCritical, "CREATE "+obj
		}
		return r
	}
	r.Risk = RiskCritical
	if lead == "" {
		r.Reason = "no statement keyword"
	} else {
		r.Reason = "unknown statement " + lead
	}
	return r
}

// classifyWrite classifies a data-modifying statement (possibly inside a
// WITH): INSERT and MERGE are high; UPDATE and DELETE are high with a real
// WHERE clause at the statement's own level, critical without.
func classifyWrite(st []sqlTok, verb string, r SQLRisk) SQLRisk {
	r.Risk, r.Reason = RiskHigh, verb+" modifies data"
	if verb != "UPDATE" && verb != "DELETE" {
		return r
	}
	for i, tk := range st {
		if tk.kind != tokWord || tk.text != verb {
			continue
		}
		if whereBounded(st[i+1:], tk.depth) {
			continue
		}
		r.Risk, r.Reason = RiskCritical, verb+" without WHERE"
		return r
	}
	return r
}

// whereBounded reports whether the statement following a verb has a WHERE
// at its own depth that is not a bare tautology (WHERE 1=1, WHERE TRUE).
func whereBounded(st []sqlTok, depth int) bool {
	for i, tk := range st {
		if tk.depth < depth {
			return false
		}
		if tk.kind == tokWord && tk.text == "WHERE" && tk.depth == depth {
			cond := st[i+1:]
			n, ok := tautologyAt(cond)
			if ok && (n == len(cond) || isWordTok(cond[n], "OR") || cond[n].depth < depth) {
				return false
			}
			return len(cond) > 0
		}
	}
	return false
}

func isWordTok(tk sqlTok, w string) bool { return tk.kind == tokWord && tk.text == w }

func firstWord(st []sqlTok, words ...string) string {
	for _, tk := range st {
		if tk.kind != tokWord {
			continue
		}
		for _, w := range words {
			if tk.text == w {
				return w
			}
		}
	}
	return ""
}

// intoAfterSelect reports whether an INTO follows a SELECT (SELECT … INTO t).
func intoAfterSelect(st []sqlTok) bool {
	sel := false
	for _, tk := range st {
		if isWordTok(tk, "SELECT") {
			sel = true
		}
		if sel && isWordTok(tk, "INTO") {
			return true
		}
	}
	return false
}

// findTautology looks for OR <always true>: OR 1=1, OR 'a'='a', OR x=x,
// OR 2>1, OR TRUE, OR 1. It returns the offending text or "".
func findTautology(st []sqlTok) string {
	for i, tk := range st {
		if !isWordTok(tk, "OR") && !(tk.kind == tokPunct && tk.text == "|") {
			continue
		}
		rest := st[i+1:]
		if tk.kind == tokPunct { // MySQL || is OR
			if len(rest) == 0 || rest[0].kind != tokPunct || rest[0].text != "|" {
				continue
			}
			rest = rest[1:]
		}
		if n, ok := tautologyAt(rest); ok {
			parts := make([]string, 0, n)
			for _, p := range rest[:n] {
				parts = append(parts, p.text)
			}
			return "OR " + strings.Join(parts, " ")
		}
	}
	return ""
}

// tautologyAt reports whether toks starts with an always-true condition and
// how many tokens it spans.
func tautologyAt(toks []sqlTok) (int, bool) {
	// Strip leading parentheses: OR (1=1).
	open := 0
	for open < len(toks) && toks[open].kind == tokPunct && toks[open].text == "(" {
		open++
	}
	t := toks[open:]
	if len(t) == 0 {
		return 0, false
	}
	if isWordTok(t[0], "TRUE") {
		return open + 1, true
	}
	if len(t) >= 2 && isWordTok(t[0], "NOT") && isWordTok(t[1], "FALSE") {
		return open + 2, true
	}
	if len(t) >= 3 && t[1].kind == tokPunct && isComparison(t[1].text) && isOperand(t[0]) && isOperand(t[2]) {
		if compareTrue(t[0], t[1].text, t[2]) {
			return open + 3, true
		}
		return 0, false
	}
	if t[0].kind == tokNumber {
		next := 1
		if next == len(t) || isWordTok(t[next], "OR") || isWordTok(t[next], "AND") ||
			(t[next].kind == tokPunct && t[next].text == ")") || t[next].kind == tokSemicolon {
			if v, err := strconv.ParseFloat(t[0].text, 64); err == nil && v != 0 {
				return open + 1, true
			}
		}
	}
	return 0, false
}

func isComparison(op string) bool {
	switch op {
	case "=", "==", "<>", "!=", "<", ">", "<=", ">=", "<=>":
		return true
	}
	return false
}

func isOperand(tk sqlTok) bool {
	return tk.kind == tokNumber || tk.kind == tokString || tk.kind == tokWord || tk.kind == tokIdent
}

// compareTrue evaluates a comparison of two literals (or of an identifier
// with itself) when its value is known to be true.
func compareTrue(a sqlTok, op string, b sqlTok) bool {
	if a.kind == tokNumber && b.kind == tokNumber {
		x, err1 := strconv.ParseFloat(a.text, 64)
		y, err2 := strconv.ParseFloat(b.text, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		switch op {
		case "=", "==", "<=>":
			return x == y
		case "<>", "!=":
			return x != y
		case "<":
			return x < y
		case ">":
			return x > y
		case "<=":
			return x <= y
		case ">=":
			return x >= y
		}
		return false
	}
	same := a.kind == b.kind && a.text == b.text
	if a.kind == tokString && b.kind == tokString {
		switch op {
		case "=", "==", "<=>", "<=", ">=":
			return same
		case "<>", "!=":
			return !same
		}
		return false
	}
	if (a.kind == tokWord || a.kind == tokIdent) && same {
		// x = x is true for every non-null x; keywords such as NULL excluded.
		return a.text != "NULL" && (op == "=" || op == "==" || op == "<=>" || op == "<=" || op == ">=")
	}
	return false
}
