package sql

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/agentgate/agentgate/domain/engines"
)

// The MySQL path reads the query with the TiDB parser (MySQL 8 grammar:
// backquoted identifiers, LIMIT offset, count, # comments, INTO OUTFILE,
// LOAD DATA...) and applies the PostgreSQL path's checks to its tree:
// statement classes and risks, stacked statements, OR-tautologies folded
// exactly under MySQL's comparisons (case-insensitive strings, strings
// compared with numbers as numbers, a bare non-zero number is true),
// dangerous functions and statements, sensitive columns, the schema and
// the complexity limits. The TiDB parser builds positions for statements
// only: a finding inside a statement is reported at the statement's start.
// ("test_driver" is the parser's own stand-alone value package, for use
// outside TiDB.)

// mysqlFunctions are the MySQL functions whose call changes a query's risk.
var mysqlFunctions = map[string]fnRisk{
	"load_file":         {RiskCritical, "critical", "reads the database server's file system"},
	"sys_exec":          {RiskCritical, "critical", "runs a command on the database server"},
	"sys_eval":          {RiskCritical, "critical", "runs a command on the database server"},
	"sleep":             {RiskCritical, "high", "delays the server (the time-based blind injection pattern)"},
	"benchmark":         {RiskCritical, "high", "delays the server (the time-based blind injection pattern)"},
	"get_lock":          {RiskHigh, "", "takes a named lock"},
	"release_lock":      {RiskHigh, "", "releases a named lock"},
	"release_all_locks": {RiskHigh, "", "releases named locks"},
	"master_pos_wait":   {RiskHigh, "", "waits on replication"},
	"source_pos_wait":   {RiskHigh, "", "waits on replication"},
	"set_config":        {RiskCritical, "critical", "controls server configuration"},
}

// mysqlFold is MySQL's comparison for the tautology checks.
var mysqlFold = folding{foldCase: true, coerce: true, divScale: 4, likeFold: true, likeEscape: '\\'}

// mysqlOps names the binary operators the tautology checks fold.
var mysqlOps = map[opcode.Op]string{
	opcode.LogicOr: "or", opcode.LogicAnd: "and", opcode.LogicXor: "xor", opcode.EQ: "=", opcode.NullEQ: "<=>",
	opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/",
}

// mysqlParser is the MySQL path's parser: a fresh TiDB parser per call
// (a parser is not safe for concurrent use).
var mysqlParser = goParser[ast.StmtNode]{name: "MySQL", hash: true, syntax: mysqlSyntaxProblem, parse: mysqlParse(0)}

// mysqlModeParsers are the other readings of the server modes that change
// how MySQL lexes a query: NO_BACKSLASH_ESCAPES (a backslash in a string
// is a plain character) and ANSI_QUOTES ("x" is an identifier, in which a
// backslash is a plain character), alone and together; and MariaDB's,
// which runs the code of a /*M! ... */ comment that MySQL skips.
var mysqlModeParsers = []struct {
	name   string
	needs  string // the characters without which the reading is the default one
	substr string // the text without which it is ("" for none)
	p      goParser[ast.StmtNode]
}{
	{"NO_BACKSLASH_ESCAPES", "\\", "", mysqlModeParser(mysql.ModeNoBackslashEscapes)},
	{"ANSI_QUOTES", `"`, "", goParser[ast.StmtNode]{name: "MySQL", hash: true, syntax: mysqlSyntaxProblem,
		parse: func(src string) ([]ast.StmtNode, error) {
			return mysqlParse(mysql.ModeANSIQuotes)(ansiIdentBackslashes(src))
		}}},
	{"ANSI_QUOTES,NO_BACKSLASH_ESCAPES", `"\`, "", mysqlModeParser(mysql.ModeANSIQuotes | mysql.ModeNoBackslashEscapes)},
	{"MariaDB", "", "/*M!", goParser[ast.StmtNode]{name: "MySQL", hash: true, syntax: mysqlSyntaxProblem,
		parse: func(src string) ([]ast.StmtNode, error) {
			return mysqlParse(0)(mariaDBComments.ReplaceAllStringFunc(src, func(m string) string {
				return "/*!" + strings.Repeat(" ", len(m)-3)
			}))
		}}},
}

// mariaDBComments matches the opening of MariaDB's executable comments,
// /*M! and /*M!##### (a minimum version): MariaDB runs their content,
// MySQL does not. The MariaDB reading turns each into MySQL's /*! (same
// length: positions hold), whose content the TiDB parser reads as code.
var mariaDBComments = regexp.MustCompile(`/\*M![0-9]*`)

func mysqlModeParser(mode mysql.SQLMode) goParser[ast.StmtNode] {
	return goParser[ast.StmtNode]{name: "MySQL", hash: true, syntax: mysqlSyntaxProblem, parse: mysqlParse(mode)}
}

// ansiIdentBackslashes returns src with each backslash inside a
// "quoted identifier" replaced by '_' (same length, so offsets hold), as
// MySQL lexes under ANSI_QUOTES: a backslash escapes in a 'string' but is
// a plain character in an identifier, where the TiDB parser would read
// it as an escape ("\" ; DROP TABLE t would hide the DROP in one
// identifier). Executable comments are code; other comments are skipped.
func ansiIdentBackslashes(src string) string {
	b := []byte(src)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\'':
			for i++; i < len(b) && b[i] != '\''; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '"' || c == '`':
			for i++; i < len(b) && b[i] != c; i++ {
				if c == '"' && b[i] == '\\' {
					b[i] = '_'
				}
			}
		case c == '/' && i+2 < len(b) && b[i+1] == '*' && (b[i+2] == '!' || b[i+2] == '+'):
			i += 2
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return string(b)
			}
			i += j + 3
		case c == '#', c == '-' && i+2 < len(b) && b[i+1] == '-' && b[i+2] <= ' ':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return string(b)
			}
			i += j
		}
	}
	return string(b)
}

func mysqlParse(mode mysql.SQLMode) func(string) ([]ast.StmtNode, error) {
	return func(src string) ([]ast.StmtNode, error) {
		p := parser.New()
		p.SetSQLMode(mode)
		stmts, _, err := p.Parse(src, "", "")
		return stmts, err
	}
}

// guardDialect applies the hard bounds before a Go parser runs: length,
// NUL, UTF-8 (precheck) and nesting (roughNesting).
func guardDialect(src, what string, maxBytes int, hashComments bool) (int, *engines.Problem) {
	if p := precheck(src, what, maxBytes); p != nil {
		return 0, p
	}
	// A backslash is an escape in MySQL's default mode and a plain
	// character in SQLite and in MySQL's NO_BACKSLASH_ESCAPES: where the
	// dialect may read it both ways, the deeper estimate counts.
	nesting, at := roughNesting(src, hashComments, false)
	if hashComments && strings.Contains(src, "\\") {
		if n, o := roughNesting(src, true, true); n > nesting {
			nesting, at = n, o
		}
	}
	if nesting > MaxNesting {
		return 0, problem(CodeTooLong, what+" nests too deeply", map[string]any{
			"limit": MaxNesting, "nesting": nesting, "position": charPos(src, at), "field": what})
	}
	return nesting, nil
}

// classifyMySQL classifies query as MySQL reads it by default and, when
// it holds a backslash or a double quote, as MySQL reads it under the
// server modes that lex those differently (NO_BACKSLASH_ESCAPES,
// ANSI_QUOTES): 'x\' OR 1=1 -- ' hides a tautology from one reading, and
// "password_hash" is a string by default but a column under ANSI_QUOTES;
// and, when it holds /*M!, as MariaDB reads it (that comment is code).
// An attacker picks the reading the server uses, so the riskiest
// classification wins (a reading the mode cannot parse cannot run there).
func classifyMySQL(query string, opt *options) (Class, *engines.Problem) {
	c, p := classifyMySQLAs(query, opt, mysqlParser)
	if p != nil {
		return c, p
	}
	for _, m := range mysqlModeParsers {
		if !containsAll(query, m.needs) || !strings.Contains(query, m.substr) {
			continue
		}
		alt, ap := classifyMySQLAs(query, opt, m.p)
		if ap == nil && ((alt.Violation && !c.Violation) || alt.Risk.rank() > c.Risk.rank()) {
			alt.Reason = "read under " + m.name + ": " + alt.Reason
			c = alt
		}
	}
	return c, nil
}

// containsAll reports whether s holds every character of chars.
func containsAll(s, chars string) bool {
	for _, r := range chars {
		if !strings.ContainsRune(s, r) {
			return false
		}
	}
	return true
}

func classifyMySQLAs(query string, opt *options, mp goParser[ast.StmtNode]) (Class, *engines.Problem) {
	w := &mysqlWalker{a: newAnalysis(query, opt)}
	return classifyGo(w.a, mp, func(stmts []ast.StmtNode) []int { return mysqlOffsets(query, stmts) },
		func(st ast.StmtNode, off int) int {
			w.off = off
			w.statement(st)
			return w.nodes
		})
}

// mysqlOffsets finds where each statement starts in src: the parser
// keeps each statement's text, not its offset, so each text is looked for
// after the end of the one before (the start of src when not found).
func mysqlOffsets(src string, stmts []ast.StmtNode) []int {
	offs := make([]int, len(stmts))
	from := 0
	for i, st := range stmts {
		text := strings.TrimSpace(st.Text())
		if text == "" {
			offs[i] = from
			continue
		}
		if j := strings.Index(src[from:], text); j >= 0 {
			offs[i] = from + j
			from += j + len(text)
		} else {
			offs[i] = from
		}
	}
	return offs
}

// mysqlSyntaxProblem turns the TiDB parser's error ("... line L column C
// near "text" ...") into QWED-REQ-003 with position, found and expected.
func mysqlSyntaxProblem(src, what string, err error) *engines.Problem {
	msg := err.Error()
	pos, found := 0, ""
	if i := strings.Index(msg, `near "`); i >= 0 {
		rest := msg[i+len(`near "`):]
		if j := strings.LastIndexByte(rest, '"'); j >= 0 {
			rest = rest[:j]
		}
		// The near text is the input from the token the parser refused.
		if rest != "" && strings.HasSuffix(src, rest) {
			pos = charPos(src, len(src)-len(rest))
		}
		found = clip(strings.TrimSpace(rest), 32)
		if k := strings.IndexAny(found, " \t\r\n"); k > 0 {
			found = found[:k]
		}
	}
	if i := strings.Index(msg, "line "); i >= 0 {
		var line, col int
		if _, e := fmt.Sscanf(msg[i:], "line %d column %d", &line, &col); e == nil && line >= 1 {
			off := 0
			for l := 1; l < line && off < len(src); l++ {
				j := strings.IndexByte(src[off:], '\n')
				if j < 0 {
					off = len(src)
					break
				}
				off += j + 1
			}
			if pos == 0 {
				// The parser reports where it stopped: the column after
				// the token it could not take.
				pos = charPos(src, min(off+col, len(src)))
			}
		}
	}
	if found == "" {
		found = "end of input"
	}
	if pos == 0 {
		pos = charPos(src, len(src))
	}
	if j := strings.Index(msg, "You have an error"); j > 0 {
		msg = msg[j:]
	}
	return syntaxProblem(src, what, clip(msg, 200), pos, "a valid MySQL statement", found)
}

// mysqlWalker analyses the statements of one MySQL query.
type mysqlWalker struct {
	a      *analysis
	f      *flatStmt
	off    int // the current statement's byte offset
	nodes  int
	output int // > 0 inside a select list
	writes map[*ast.TableName]bool
	// memo keeps the value of each binary operation folded; complement
	// marks the OR chains true by a pair of null tests, orSeen the OR
	// nodes already searched for one.
	memo               map[*ast.BinaryOperationExpr]tv
	complement, orSeen map[*ast.BinaryOperationExpr]bool
	hasNull            int // 0 not known yet, 1 the query spells NULL, 2 it does not
}

// visitor adapts enter and leave functions to ast.Visitor: enter returns
// false to skip a node's children.
type visitor struct {
	enter func(ast.Node) bool
	leave func(ast.Node)
}

func (v *visitor) Enter(n ast.Node) (ast.Node, bool) { return n, !v.enter(n) }

func (v *visitor) Leave(n ast.Node) (ast.Node, bool) {
	if v.leave != nil {
		v.leave(n)
	}
	return n, true
}

func (w *mysqlWalker) statement(n ast.StmtNode) {
	a := w.a
	st := &Statement{Statement: mysqlName(n), Class: "read", Risk: RiskLow, Reason: "read-only query",
		Position: charPos(a.src, w.off)}
	a.stmts = append(a.stmts, st)
	a.cur = st
	w.f = &flatStmt{}
	w.writes = map[*ast.TableName]bool{}
	w.kind(n)
	w.walk(n)
	a.resolve(w.f)
}

// kind sets the statement's class and risk from its kind, and marks the
// tables and columns it writes.
func (w *mysqlWalker) kind(n ast.StmtNode) {
	a := w.a
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.SelectIntoOpt != nil && x.SelectIntoOpt.Tp != ast.SelectIntoVars {
			a.raise(RiskCritical, "admin", "SELECT ... INTO OUTFILE/DUMPFILE writes a file on the database server")
			a.find("sql.into_outfile", "critical", "SELECT ... INTO OUTFILE/DUMPFILE writes the server's file system", int32(w.off))
		}
		if x.LockInfo != nil && x.LockInfo.LockType != ast.SelectLockNone {
			a.raise(RiskHigh, "write", "SELECT ... FOR UPDATE/SHARE locks rows")
		}
	case *ast.SetOprStmt, *ast.ShowStmt, *ast.DoStmt:
	case *ast.InsertStmt:
		verb := "INSERT writes rows"
		if x.IsReplace {
			verb = "REPLACE deletes and writes rows"
		}
		a.raise(RiskHigh, "write", verb)
		if x.Table != nil {
			w.markWrites(x.Table.TableRefs, nil)
		}
		for _, c := range x.Columns {
			w.f.cols = append(w.f.cols, cref{name: c.Name.L, pos: w.off, write: true})
		}
		for _, as := range x.OnDuplicate {
			w.f.cols = append(w.f.cols, cref{name: as.Column.Name.L, pos: w.off, write: true})
		}
	case *ast.UpdateStmt:
		w.bounded("UPDATE", x.Where)
		if x.TableRefs != nil {
			quals := map[string]bool{}
			for _, as := range x.List {
				quals[as.Column.Table.L] = true
				w.f.cols = append(w.f.cols, cref{name: as.Column.Name.L, pos: w.off, write: true})
			}
			w.markWrites(x.TableRefs.TableRefs, quals)
		}
	case *ast.DeleteStmt:
		w.bounded("DELETE", x.Where)
		switch {
		case x.IsMultiTable && x.Tables != nil:
			for _, t := range x.Tables.Tables {
				w.writes[t] = true
				w.f.tables = append(w.f.tables, tref{schema: t.Schema.L, name: t.Name.L, pos: w.off, write: true})
			}
		case x.TableRefs != nil:
			w.markWrites(x.TableRefs.TableRefs, nil)
		}
	case *ast.LoadDataStmt:
		a.raise(RiskCritical, "admin", "LOAD DATA reads a file into a table")
		a.find("sql.load_data", "critical", "LOAD DATA INFILE reads a file of the database server or the client", int32(w.off))
		if x.Table != nil {
			w.writes[x.Table] = true
		}
	case *ast.CreateTableStmt, *ast.CreateIndexStmt, *ast.CreateViewStmt, *ast.CreateDatabaseStmt, *ast.CreateSequenceStmt:
		if c, ok := x.(*ast.CreateTableStmt); ok && c.Table != nil {
			w.writes[c.Table] = true
		}
		a.raise(RiskHigh, "ddl", "creates a schema object")
	case *ast.DropTableStmt:
		for _, t := range x.Tables {
			w.writes[t] = true
		}
		a.raise(RiskCritical, "ddl", "drops "+strings.ToLower(strings.TrimPrefix(a.cur.Statement, "DROP ")))
	case *ast.TruncateTableStmt:
		if x.Table != nil {
			w.writes[x.Table] = true
		}
		a.raise(RiskCritical, "ddl", "TRUNCATE removes every row")
	case *ast.DropDatabaseStmt, *ast.DropIndexStmt, *ast.AlterTableStmt, *ast.RenameTableStmt, *ast.DropSequenceStmt,
		*ast.AlterDatabaseStmt:
		a.raise(RiskCritical, "ddl", strings.ToLower(a.cur.Statement)+" changes the schema")
	case *ast.GrantStmt, *ast.RevokeStmt, *ast.GrantRoleStmt, *ast.RevokeRoleStmt, *ast.CreateUserStmt, *ast.AlterUserStmt,
		*ast.DropUserStmt, *ast.SetPwdStmt, *ast.SetRoleStmt, *ast.SetDefaultRoleStmt, *ast.RenameUserStmt:
		a.raise(RiskCritical, "privilege", strings.ToLower(a.cur.Statement)+" changes privileges or users")
	case *ast.SetStmt:
		global := false
		for _, v := range x.Variables {
			global = global || v.IsGlobal || v.IsInstance
		}
		if global {
			a.raise(RiskCritical, "admin", "SET GLOBAL changes the server's configuration")
		} else {
			a.raise(RiskHigh, "session", "changes a session setting")
		}
	case *ast.UseStmt, *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt, *ast.ReleaseSavepointStmt,
		*ast.DeallocateStmt:
		a.cur.Class, a.cur.Reason = "session", "session or transaction control, no data changed"
	case *ast.ExplainStmt:
		if x.Analyze {
			w.kind(x.Stmt)
			a.cur.Reason = "EXPLAIN ANALYZE runs the statement: " + a.cur.Reason
		} else {
			a.noExec++
			w.kind(x.Stmt)
			a.noExec--
			a.cur.Reason = "EXPLAIN without ANALYZE plans the statement without running it"
		}
	case *ast.PrepareStmt, *ast.ExecuteStmt:
		a.raise(RiskCritical, "admin", "runs SQL given as a string, which the engine cannot see")
	default:
		if strings.HasPrefix(a.cur.Statement, "ALTER ") || strings.HasPrefix(a.cur.Statement, "DROP ") {
			a.raise(RiskCritical, "ddl", strings.ToLower(a.cur.Statement)+" changes the schema")
		} else {
			a.raise(RiskCritical, "admin", strings.ToLower(a.cur.Statement)+" is neither a plain read nor a plain write")
		}
	}
}

// markWrites marks as written the tables of a join the statement writes:
// those quals names (by alias or name), or every table when quals is nil
// or names none of them.
func (w *mysqlWalker) markWrites(j *ast.Join, quals map[string]bool) {
	var all []*ast.TableName
	var named []*ast.TableName
	var walk func(r ast.ResultSetNode)
	walk = func(r ast.ResultSetNode) {
		switch x := r.(type) {
		case *ast.Join:
			if x != nil {
				walk(x.Left)
				if x.Right != nil {
					walk(x.Right)
				}
			}
		case *ast.TableSource:
			if t, ok := x.Source.(*ast.TableName); ok {
				all = append(all, t)
				if quals[x.AsName.L] || quals[t.Name.L] {
					named = append(named, t)
				}
			}
		case *ast.TableName:
			all = append(all, x)
		}
	}
	if j != nil {
		walk(j)
	}
	if len(named) == 0 {
		if len(all) > 1 && quals != nil {
			all = all[:1]
		}
		named = all
	}
	for _, t := range named {
		w.writes[t] = true
	}
}

// bounded classifies the WHERE of an UPDATE or DELETE as the PostgreSQL
// path does.
func (w *mysqlWalker) bounded(verb string, where ast.ExprNode) {
	w.a.boundWrite(verb, where != nil, where != nil && w.alwaysTrue(where), int32(w.off))
}

// walk visits every node of a statement: tables, columns, functions,
// joins, subquery depth and the conditions' tautologies.
func (w *mysqlWalker) walk(n ast.Node) {
	a := w.a
	v := &visitor{}
	v.enter = func(n ast.Node) bool {
		w.nodes++
		if w.nodes > MaxNodes {
			return false
		}
		switch x := n.(type) {
		case *ast.SelectStmt:
			w.cond(x.Where, true)
			if x.Having != nil {
				w.cond(x.Having.Expr, false)
			}
		case *ast.UpdateStmt:
			w.cond(x.Where, false)
		case *ast.DeleteStmt:
			w.cond(x.Where, false)
		case *ast.OnCondition:
			w.cond(x.Expr, false)
		case *ast.Join:
			if x.Right != nil {
				a.joins++
			}
		case *ast.TableSource:
			if t, ok := x.Source.(*ast.TableName); ok {
				w.f.tables = append(w.f.tables, tref{schema: t.Schema.L, name: t.Name.L, alias: x.AsName.L, pos: w.off, write: w.writes[t]})
				w.nodes++
				return false
			}
			switch x.Source.(type) {
			case *ast.SelectStmt, *ast.SetOprStmt:
				a.enter()
			}
		case *ast.TableName:
			w.f.tables = append(w.f.tables, tref{schema: x.Schema.L, name: x.Name.L, pos: w.off, write: w.writes[x]})
		case *ast.SubqueryExpr:
			a.enter()
		case *ast.CommonTableExpression:
			w.f.cte(x.Name.L)
		case *ast.SelectField:
			if x.WildCard != nil {
				w.f.stars = append(w.f.stars, sref{qual: x.WildCard.Table.L, pos: w.off, output: true})
			}
			if x.AsName.L != "" {
				w.f.aliases = append(w.f.aliases, x.AsName.L)
			}
			w.output++
		case *ast.ColumnNameExpr:
			w.f.cols = append(w.f.cols, cref{qual: x.Name.Table.L, name: x.Name.Name.L, pos: w.off, output: w.output > 0})
		case *ast.FuncCallExpr:
			name := x.FnName.L
			if r, ok := mysqlFunctions[name]; ok && r.what != "" {
				class := "admin"
				if r.risk == RiskHigh {
					class = "write"
				}
				a.raise(r.risk, class, name+" "+r.what)
				if r.severity != "" {
					a.find("sql.dangerous_function", r.severity, name+" "+r.what, int32(w.off))
				}
			}
		}
		return true
	}
	v.leave = func(n ast.Node) {
		switch x := n.(type) {
		case *ast.SubqueryExpr:
			a.leave()
		case *ast.TableSource:
			switch x.Source.(type) {
			case *ast.SelectStmt, *ast.SetOprStmt:
				a.leave()
			}
		case *ast.SelectField:
			w.output--
		}
	}
	n.Accept(v)
}

// cond finds the OR-tautologies of a condition; where marks a SELECT's
// WHERE, which is also a finding (medium) when it is always true as a
// whole.
func (w *mysqlWalker) cond(e ast.ExprNode, where bool) {
	if e == nil {
		return
	}
	a := w.a
	before := len(a.findings)
	w.markComplements(e)
	v := &visitor{}
	v.enter = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SubqueryExpr:
			return false // walked with its own statement
		case *ast.BinaryOperationExpr:
			if x.Op == opcode.LogicOr && w.complement[x] {
				a.tautology("OR of x IS NULL and x IS NOT NULL makes the condition true for every row", int32(w.off))
			}
			if x.Op == opcode.LogicOr {
				for _, arg := range []ast.ExprNode{x.L, x.R} {
					if w.value(arg, 0).truth() {
						a.tautology("OR with an always-true operand makes the condition true for every row", int32(w.off))
					}
				}
			}
		}
		return true
	}
	e.Accept(v)
	if where && len(a.findings) == before && w.alwaysTrue(e) {
		a.find("sql.tautology_where", "medium", "the WHERE clause is always true: it filters nothing", int32(w.off))
	}
}

func (w *mysqlWalker) alwaysTrue(e ast.ExprNode) bool {
	w.markComplements(e)
	return w.value(e, 0).truth()
}

// mysqlFuncs is how MySQL's functions treat NULL and characters.
var mysqlFuncs = funcDialect{charBytes: true}

// value folds a constant MySQL expression (unknown for anything that
// reads data); x = x over the same operand is true, as is LIKE '%' (for
// every row where x is not NULL). The value of each binary operation is
// kept (w.memo), so a chain of n operators is folded in n steps, however
// many of its nodes the tautology checks ask about.
func (w *mysqlWalker) value(e ast.ExprNode, depth int) tv {
	if depth > MaxNesting {
		return unknown
	}
	d := depth + 1
	switch x := e.(type) {
	case *driver.ValueExpr:
		switch x.Kind() {
		case driver.KindNull:
			return tv{kind: tvNull}
		case driver.KindInt64:
			return tvNumber(big.NewRat(x.GetInt64(), 1))
		case driver.KindUint64:
			return tvNumber(new(big.Rat).SetInt(new(big.Int).SetUint64(x.GetUint64())))
		case driver.KindFloat64, driver.KindFloat32:
			if r, ok := new(big.Rat).SetString(strconv.FormatFloat(x.GetFloat64(), 'g', -1, 64)); ok {
				return tvNumber(r)
			}
		case driver.KindMysqlDecimal:
			if r, ok := parseNumber(x.GetMysqlDecimal().String()); ok {
				return tvNumber(r)
			}
		case driver.KindString, driver.KindBytes:
			// _binary'a' is a binary string: compared byte for byte.
			return tv{kind: tvStr, str: x.GetString(), bin: x.GetType().GetCharset() == "binary"}
		case driver.KindBinaryLiteral:
			if b := x.GetBytes(); len(b) <= maxFoldDigits {
				return tv{kind: tvStr, str: string(b), hex: true, bin: true}
			}
		}
		return unknown
	case *ast.ParenthesesExpr:
		return w.value(x.Expr, d)
	case *ast.UnaryOperationExpr:
		v := w.value(x.V, d)
		switch x.Op {
		case opcode.Not, opcode.Not2:
			return negate(v, true)
		case opcode.Minus:
			return mysqlFold.arith("-", tvNumber(new(big.Rat)), v)
		case opcode.Plus:
			return mysqlFold.arith("+", tvNumber(new(big.Rat)), v)
		}
		return unknown
	case *ast.BinaryOperationExpr:
		if v, ok := w.memo[x]; ok {
			return v
		}
		v := w.binary(x, d)
		if w.memo == nil {
			w.memo = map[*ast.BinaryOperationExpr]tv{}
		}
		w.memo[x] = v
		return v
	case *ast.IsNullExpr:
		v := w.value(x.Expr, d)
		if v.kind == tvUnknown {
			return unknown
		}
		return tvBool((v.kind == tvNull) != x.Not)
	case *ast.IsTruthExpr:
		v := w.value(x.Expr, d)
		if v.kind == tvUnknown || v.hex {
			return unknown
		}
		return tvBool((v.truth() == (x.True != 0)) != x.Not)
	case *ast.BetweenExpr:
		return mysqlFold.between(w.value(x.Expr, d), w.value(x.Left, d), w.value(x.Right, d), x.Not)
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return unknown
		}
		items := make([]tv, len(x.List))
		for i, item := range x.List {
			items[i] = w.value(item, d)
		}
		return mysqlFold.in(w.value(x.Expr, d), items, x.Not)
	case *ast.PatternLikeOrIlikeExpr:
		esc := x.Escape
		if !x.EscapeExplicit {
			esc = '\\'
		}
		v := mysqlFold.like(w.value(x.Expr, d), w.value(x.Pattern, d), esc)
		if v.kind == tvUnknown && !x.EscapeExplicit && mysqlSame(x.Expr, x.Pattern) {
			v = tvBool(true) // every character of a value matches itself
		}
		return negate(v, x.Not)
	case *ast.FuncCallExpr:
		name := x.FnName.L
		if !detFunctions[name] || x.Schema.L != "" {
			return unknown
		}
		args := x.Args
		if name == "char_func" && len(args) > 0 {
			// The parser adds the charset of CHAR(... USING charset)
			// as a last argument (NULL without USING).
			if cs, ok := args[len(args)-1].(*driver.ValueExpr); !ok || cs.Kind() != driver.KindNull {
				return unknown
			}
			args = args[:len(args)-1]
		}
		vals := make([]tv, len(args))
		for i, a := range args {
			vals[i] = w.value(a, d)
		}
		return mysqlFold.foldCall(mysqlFuncs, name, vals)
	case *ast.SetCollationExpr:
		v := w.value(x.Expr, d)
		if v.kind == tvStr {
			v.coll = true
		}
		return v
	}
	return unknown
}

// binary folds one binary operation by MySQL's rules; x = x (or <=>, >=,
// <=) over one deterministic operand the fold cannot decide is true, and
// so is an OR chain holding x IS NULL and x IS NOT NULL (w.complement).
func (w *mysqlWalker) binary(x *ast.BinaryOperationExpr, d int) tv {
	if x.Op == opcode.LogicOr && w.complement[x] {
		return tvBool(true)
	}
	v := mysqlFold.binary(mysqlOps[x.Op], w.value(x.L, d), w.value(x.R, d))
	switch x.Op {
	case opcode.EQ, opcode.NullEQ, opcode.GE, opcode.LE:
		// Constants are compared (NULL = NULL is NULL); what the fold
		// cannot decide is true when both sides are one expression.
		if v.kind == tvUnknown && mysqlSame(x.L, x.R) {
			return tvBool(true)
		}
	}
	return v
}

// markComplements finds, once per OR chain of e, whether the chain holds
// both x IS NULL and x IS NOT NULL over one deterministic operand (among
// its first maxOrOperands operands): that chain is true for every row.
// Each chain is walked from its top node only, so the cost is linear.
func (w *mysqlWalker) markComplements(e ast.ExprNode) {
	if e == nil || !w.mentionsNull() {
		return
	}
	asOr := func(e ast.ExprNode) (ast.ExprNode, ast.ExprNode, bool) {
		or, ok := mysqlUnparen(e).(*ast.BinaryOperationExpr)
		if !ok || or.Op != opcode.LogicOr {
			return nil, nil, false
		}
		w.orSeen[or] = true
		return or.L, or.R, true
	}
	nullTest := func(e ast.ExprNode) (string, bool, bool) {
		t, ok := mysqlUnparen(e).(*ast.IsNullExpr)
		if !ok {
			return "", false, false
		}
		key, ok := mysqlKey(t.Expr)
		return key, !t.Not, ok
	}
	v := &visitor{enter: func(n ast.Node) bool {
		if top, ok := n.(*ast.BinaryOperationExpr); ok && top.Op == opcode.LogicOr && !w.orSeen[top] {
			if w.orSeen == nil {
				w.orSeen, w.complement = map[*ast.BinaryOperationExpr]bool{}, map[*ast.BinaryOperationExpr]bool{}
			}
			w.complement[top] = complementInChain[ast.ExprNode](top, asOr, nullTest)
		}
		return true
	}}
	e.Accept(v)
}

// mentionsNull reports whether the query spells NULL anywhere (the
// parser keeps no expression's text), once per query.
func (w *mysqlWalker) mentionsNull() bool {
	if w.hasNull == 0 {
		w.hasNull = 2
		if mentionsNull(w.a.src) {
			w.hasNull = 1
		}
	}
	return w.hasNull == 1
}

// mysqlUnparen is e without the brackets around it.
func mysqlUnparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// mysqlSame reports whether a and b are one deterministic expression
// (the same text once restored, no parameter, only functions of
// detFunctions, at most maxSameNodes nodes): equal whatever the row,
// unless NULL.
func mysqlSame(a, b ast.ExprNode) bool {
	// The common cases without restoring any text: two columns are
	// compared by name; a constant is the fold's to decide, so it is
	// never the same as what the fold could not decide.
	if ca, ok := a.(*ast.ColumnNameExpr); ok {
		cb, ok := b.(*ast.ColumnNameExpr)
		return ok && ca.Name.Name.L == cb.Name.Name.L && ca.Name.Table.L == cb.Name.Table.L && ca.Name.Schema.L == cb.Name.Schema.L
	}
	switch b.(type) {
	case *ast.ColumnNameExpr, *driver.ValueExpr:
		return false
	}
	if _, ok := a.(*driver.ValueExpr); ok {
		return false
	}
	ka, ok1 := mysqlKey(a)
	if !ok1 {
		return false
	}
	kb, ok2 := mysqlKey(b)
	return ok2 && ka == kb
}

// mysqlKey is e's text as the parser restores it, when e is deterministic
// and small (mysqlSame).
func mysqlKey(e ast.ExprNode) (string, bool) {
	if e == nil {
		return "", false
	}
	nodes, ok := 0, true
	v := &visitor{enter: func(n ast.Node) bool {
		nodes++
		if nodes > maxSameNodes {
			ok = false
		}
		switch x := n.(type) {
		case *ast.ColumnNameExpr, *ast.ColumnName, *driver.ValueExpr, *ast.BinaryOperationExpr, *ast.UnaryOperationExpr,
			*ast.ParenthesesExpr, *ast.PatternLikeOrIlikeExpr, *ast.IsNullExpr, *ast.IsTruthExpr, *ast.BetweenExpr,
			*ast.SetCollationExpr:
		case *ast.PatternInExpr:
			ok = ok && x.Sel == nil
		case *ast.FuncCallExpr:
			ok = ok && detFunctions[x.FnName.L] && x.Schema.L == ""
		default:
			ok = false
		}
		return ok
	}}
	e.Accept(v)
	if !ok {
		return "", false
	}
	var b strings.Builder
	if err := e.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return "", false
	}
	return b.String(), true
}

// mysqlName names a statement: SELECT, DROP TABLE, GRANT...
func mysqlName(n ast.StmtNode) string {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.SelectIntoOpt != nil {
			return "SELECT INTO"
		}
		return "SELECT"
	case *ast.SetOprStmt:
		return "SELECT"
	case *ast.InsertStmt:
		if x.IsReplace {
			return "REPLACE"
		}
		return "INSERT"
	case *ast.DropTableStmt:
		if x.IsView {
			return "DROP VIEW"
		}
		return "DROP TABLE"
	case *ast.TruncateTableStmt:
		return "TRUNCATE"
	case *ast.LoadDataStmt:
		return "LOAD DATA"
	case *ast.ExplainStmt:
		return "EXPLAIN"
	}
	return typeStatementName(n)
}

// parseMySQLSchema reads the CREATE TABLE and CREATE VIEW statements of a
// MySQL schema_ddl (a view's columns are unknown: its table is not
// complete); other statements are ignored.
func parseMySQLSchema(ddl string) (*Schema, *engines.Problem) {
	return readSchema(mysqlParser, ddl, func(st ast.StmtNode) (*Table, bool) {
		switch x := st.(type) {
		case *ast.CreateTableStmt:
			t := &Table{Schema: x.Table.Schema.L, Name: x.Table.Name.L, Complete: x.ReferTable == nil && x.Select == nil}
			for _, c := range x.Cols {
				t.Columns = append(t.Columns, c.Name.Name.L)
			}
			return t, true
		case *ast.CreateViewStmt:
			return &Table{Schema: x.ViewName.Schema.L, Name: x.ViewName.Name.L}, true
		}
		return nil, false
	})
}
