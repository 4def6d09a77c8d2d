package sql

import (
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/sqlc-dev/meyer/ast"
	"github.com/sqlc-dev/meyer/parser"

	"github.com/agentgate/agentgate/domain/engines"
)

// The SQLite path reads the query with meyer (a pure-Go rendering of
// SQLite's own grammar, parse.y, whose errors are SQLite's) and applies
// the PostgreSQL path's checks to its tree, under SQLite's comparisons (a
// number is less than any string, strings compare byte for byte, a bare
// non-zero number is true). SQLite's own dangers are statements and
// functions: ATTACH opens another database file, a PRAGMA that sets a
// value changes the connection (writable_schema, trusted_schema and the
// like switch off its safety), VACUUM INTO writes a file, CREATE TRIGGER
// runs statements on later writes, load_extension loads native code and
// the fileio functions read and write files.

// sqliteFunctions are the SQLite functions whose call changes a query's
// risk.
var sqliteFunctions = map[string]fnRisk{
	"load_extension": {RiskCritical, "critical", "loads native code into the database process"},
	"readfile":       {RiskCritical, "critical", "reads the database server's file system"},
	"writefile":      {RiskCritical, "critical", "writes the database server's file system"},
	"edit":           {RiskCritical, "critical", "runs an editor on the database server"},
	"fsdir":          {RiskCritical, "critical", "lists the database server's file system"},
	"fts3_tokenizer": {RiskCritical, "critical", "registers a tokenizer by memory address"},
}

// sqliteDangerousPragmas switch off SQLite's safety or corrupt the
// database when set: setting one is a security finding.
var sqliteDangerousPragmas = map[string]bool{
	"writable_schema": true, "trusted_schema": true, "schema_version": true, "ignore_check_constraints": true,
	"cell_size_check": true, "legacy_alter_table": true, "foreign_keys": true, "defer_foreign_keys": true,
	"recursive_triggers": true, "mmap_size": true, "temp_store_directory": true, "data_store_directory": true,
	"secure_delete": true, "locking_mode": true, "journal_mode": true, "synchronous": true, "query_only": true,
}

// sqliteReadPragmas take an argument in parentheses and only read (the
// schema introspection pragmas).
var sqliteReadPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_info": true, "index_xinfo": true,
	"index_list": true, "foreign_key_list": true, "foreign_key_check": true, "integrity_check": true,
	"quick_check": true,
}

// sqliteFold is SQLite's comparison for the tautology checks.
var sqliteFold = folding{likeFold: true}

// sqliteOps names the binary operators the tautology checks fold.
var sqliteOps = map[ast.Operator]string{
	ast.OpOr: "or", ast.OpAnd: "and", ast.OpEq: "=", ast.OpNe: "<>", ast.OpLt: "<", ast.OpLe: "<=",
	ast.OpGt: ">", ast.OpGe: ">=", ast.OpAdd: "+", ast.OpSub: "-", ast.OpMul: "*", ast.OpDiv: "/",
}

// sqliteParser is the SQLite path's parser.
var sqliteParser = goParser[ast.Stmt]{name: "SQLite", syntax: sqliteSyntaxProblem, parse: parser.ParseString}

func classifySQLite(query string, opt *options) (Class, *engines.Problem) {
	w := &sqliteWalker{a: newAnalysis(query, opt)}
	offsets := func(stmts []ast.Stmt) []int {
		offs := make([]int, len(stmts))
		for i, st := range stmts {
			offs[i] = st.Pos()
		}
		return offs
	}
	return classifyGo(w.a, sqliteParser, offsets, func(st ast.Stmt, _ int) int {
		w.statement(st)
		return w.nodes
	})
}

// sqliteSyntaxProblem turns meyer's error (SQLite's message and a byte
// offset) into QWED-REQ-003.
func sqliteSyntaxProblem(src, what string, err error) *engines.Problem {
	var pe *parser.Error
	if !errors.As(err, &pe) {
		return syntaxProblem(src, what, clip(err.Error(), 200), charPos(src, len(src)), "a valid SQLite statement", "end of input")
	}
	off := min(max(pe.Offset, 0), len(src))
	found := "end of input"
	if i := strings.Index(pe.Message, `"`); i >= 0 {
		if j := strings.LastIndexByte(pe.Message, '"'); j > i {
			found = clip(pe.Message[i+1:j], 32)
		}
	}
	return syntaxProblem(src, what, clip(pe.Message, 200), charPos(src, off), "a valid SQLite statement", found)
}

// sqliteWalker analyses the statements of one SQLite query.
type sqliteWalker struct {
	a      *analysis
	f      *flatStmt
	nodes  int
	writes map[ast.Node]bool // the QualifiedNames the statement writes
	// memo keeps the value of each binary operation folded; complement
	// marks the OR chains true by a pair of null tests, orSeen the OR
	// nodes already searched for one.
	memo               map[*ast.BinaryExpr]tv
	complement, orSeen map[*ast.BinaryExpr]bool
}

func (w *sqliteWalker) statement(n ast.Stmt) {
	a := w.a
	st := &Statement{Statement: sqliteName(n), Class: "read", Risk: RiskLow, Reason: "read-only query",
		Position: charPos(a.src, n.Pos())}
	a.stmts = append(a.stmts, st)
	a.cur = st
	w.f = &flatStmt{}
	w.writes = map[ast.Node]bool{}
	w.kind(n)
	w.node(n, false)
	a.resolve(w.f)
}

func qname(q *ast.QualifiedName) (schema, name string) {
	if q == nil || q.Name == nil {
		return "", ""
	}
	if q.Schema != nil {
		schema = strings.ToLower(q.Schema.Name)
	}
	return schema, strings.ToLower(q.Name.Name)
}

// kind sets the statement's class and risk from its kind.
func (w *sqliteWalker) kind(n ast.Stmt) {
	a := w.a
	off := int32(n.Pos())
	switch x := n.(type) {
	case *ast.SelectStmt:
	case *ast.InsertStmt:
		verb := "INSERT writes rows"
		if x.Replace {
			verb = "REPLACE deletes and writes rows"
		}
		a.raise(RiskHigh, "write", verb)
		w.writes[x.Table] = true
		for _, c := range x.Columns {
			w.f.cols = append(w.f.cols, cref{name: strings.ToLower(c.Name), pos: c.Pos(), write: true})
		}
	case *ast.UpdateStmt:
		w.bounded("UPDATE", x.Where)
		w.writes[x.Table] = true
	case *ast.DeleteStmt:
		w.bounded("DELETE", x.Where)
		w.writes[x.Table] = true
	case *ast.CreateTableStmt, *ast.CreateIndexStmt, *ast.CreateViewStmt, *ast.CreateVirtualTableStmt:
		if c, ok := x.(*ast.CreateTableStmt); ok {
			w.writes[c.Name] = true
		}
		a.raise(RiskHigh, "ddl", "creates a schema object")
	case *ast.CreateTriggerStmt:
		a.raise(RiskCritical, "ddl", "creates a trigger, which runs statements on later writes")
	case *ast.DropTableStmt:
		w.writes[x.Name] = true
		a.raise(RiskCritical, "ddl", "drops table")
	case *ast.DropViewStmt, *ast.DropIndexStmt, *ast.DropTriggerStmt, *ast.AlterTableStmt:
		a.raise(RiskCritical, "ddl", strings.ToLower(a.cur.Statement)+" changes the schema")
	case *ast.AttachStmt:
		a.raise(RiskCritical, "admin", "ATTACH opens another database file")
		a.find("sql.attach", "critical", "ATTACH opens a database file on the database server's file system", off)
	case *ast.DetachStmt:
		a.raise(RiskHigh, "session", "DETACH closes an attached database")
	case *ast.PragmaStmt:
		_, name := qname(x.Name)
		if x.HasValue && !(x.Paren && sqliteReadPragmas[name]) {
			a.raise(RiskCritical, "admin", "PRAGMA "+name+" changes the database's configuration")
			if sqliteDangerousPragmas[name] {
				a.find("sql.dangerous_pragma", "critical", "PRAGMA "+name+" switches off a safety of SQLite or corrupts the database", off)
			}
		} else {
			a.raise(RiskHigh, "session", "PRAGMA "+name+" reads the database's configuration")
		}
	case *ast.VacuumStmt:
		if x.Into != nil {
			a.raise(RiskCritical, "admin", "VACUUM INTO writes a copy of the database to a file")
			a.find("sql.vacuum_into", "critical", "VACUUM INTO writes the database server's file system", off)
		} else {
			a.raise(RiskHigh, "write", "VACUUM rewrites the database")
		}
	case *ast.AnalyzeStmt, *ast.ReindexStmt:
		a.raise(RiskHigh, "write", strings.ToLower(a.cur.Statement)+" rewrites statistics or indexes")
	case *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt, *ast.ReleaseStmt:
		a.cur.Class, a.cur.Reason = "session", "session or transaction control, no data changed"
	case *ast.ExplainStmt:
		a.noExec++
		w.kind(x.Stmt)
		a.noExec--
		a.cur.Reason = "EXPLAIN describes the statement without running it"
	default:
		a.raise(RiskCritical, "admin", strings.ToLower(a.cur.Statement)+" is neither a plain read nor a plain write")
	}
}

// bounded classifies the WHERE of an UPDATE or DELETE as the PostgreSQL
// path does.
func (w *sqliteWalker) bounded(verb string, where ast.Expr) {
	off := int32(0)
	if where != nil {
		off = int32(where.Pos())
	}
	w.a.boundWrite(verb, where != nil, where != nil && w.alwaysTrue(where), off)
}

// node walks n: tables, columns (out: inside a result column), functions,
// joins, subquery depth and the conditions' tautologies.
func (w *sqliteWalker) node(n ast.Node, out bool) {
	if n == nil || w.nodes > MaxNodes {
		return
	}
	a := w.a
	w.nodes++
	switch x := n.(type) {
	case *ast.QualifiedName, *ast.JoinOperator:
		return
	case *ast.Ident:
		if _, ok := sqliteBoolKeyword(x); x != nil && !ok {
			w.f.cols = append(w.f.cols, cref{name: strings.ToLower(x.Name), pos: x.Pos(), output: out})
		}
		return
	case *ast.QualifiedRef:
		if k := len(x.Parts); k >= 2 {
			w.f.cols = append(w.f.cols, cref{qual: strings.ToLower(x.Parts[k-2].Name), name: strings.ToLower(x.Parts[k-1].Name),
				pos: x.Pos(), output: out})
		}
		return
	case *ast.Star:
		s := sref{pos: x.Pos(), output: true}
		if x.Table != nil {
			s.qual = strings.ToLower(x.Table.Name)
		}
		w.f.stars = append(w.f.stars, s)
		return
	case *ast.ResultColumn:
		if x.Alias != nil {
			w.f.aliases = append(w.f.aliases, strings.ToLower(x.Alias.Name))
		}
		w.node(x.Expr, true)
		return
	case *ast.TableRef:
		if x.Join != nil {
			a.joins++
		}
		if x.Name != nil && !x.HasArgs {
			schema, name := qname(x.Name)
			t := tref{schema: schema, name: name, pos: x.Pos(), write: w.writes[x.Name]}
			if x.Alias != nil {
				t.alias = strings.ToLower(x.Alias.Name)
			}
			w.f.tables = append(w.f.tables, t)
		}
		if x.Select != nil {
			a.enter()
			w.node(x.Select, false)
			a.leave()
		}
		walkAll(w, x.Args)
		walkAll(w, x.List)
		w.cond(x.On, false)
		return
	case *ast.SelectQuery:
		walkAll(w, x.Columns)
		walkAll(w, x.From)
		w.cond(x.Where, true)
		walkAll(w, x.GroupBy)
		w.cond(x.Having, false)
		walkAll(w, x.OrderBy)
		if x.Limit != nil {
			w.node(x.Limit, false)
		}
		walkAll(w, x.Windows)
		return
	case *ast.InsertStmt:
		w.dml(x.Table, x.Alias, x.With)
		if x.Select != nil {
			w.node(x.Select, false)
		}
		for _, u := range x.Upserts {
			walkAll(w, u.Set)
			w.cond(u.Where, false)
			w.cond(u.TargetWhere, false)
		}
		walkAll(w, x.Returning)
		return
	case *ast.UpdateStmt:
		w.dml(x.Table, x.Alias, x.With)
		walkAll(w, x.Set)
		walkAll(w, x.From)
		w.cond(x.Where, false)
		walkAll(w, x.Returning)
		return
	case *ast.DeleteStmt:
		w.dml(x.Table, x.Alias, x.With)
		w.cond(x.Where, false)
		walkAll(w, x.Returning)
		return
	case *ast.SetPair:
		for _, c := range x.Columns {
			w.f.cols = append(w.f.cols, cref{name: strings.ToLower(c.Name), pos: c.Pos(), write: true})
		}
		w.node(x.Value, false)
		return
	case *ast.CTE:
		if x.Name != nil {
			w.f.cte(strings.ToLower(x.Name.Name))
		}
		a.enter()
		w.node(x.Select, false)
		a.leave()
		return
	case *ast.SubqueryExpr, *ast.ExistsExpr:
		a.enter()
		for _, c := range n.Children() {
			w.node(c, false)
		}
		a.leave()
		return
	case *ast.InExpr:
		w.node(x.X, out)
		for _, e := range x.List {
			w.node(e, out)
		}
		if x.Select != nil {
			a.enter()
			w.node(x.Select, false)
			a.leave()
		}
		if x.Table != nil {
			schema, name := qname(x.Table)
			w.f.tables = append(w.f.tables, tref{schema: schema, name: name, pos: x.Table.Pos()})
		}
		return
	case *ast.FuncCall:
		if x.Name != nil {
			name := strings.ToLower(x.Name.Name)
			if r, ok := sqliteFunctions[name]; ok {
				a.raise(r.risk, "admin", name+" "+r.what)
				a.find("sql.dangerous_function", r.severity, name+" "+r.what, int32(x.Pos()))
			}
		}
		for _, arg := range x.Args {
			w.node(arg, out)
		}
		w.cond(x.Filter, false)
		walkAll(w, x.OrderBy)
		return
	case *ast.CollateExpr:
		w.node(x.X, out)
		return
	case *ast.CastExpr:
		w.node(x.X, out)
		return
	case *ast.CreateTableStmt, *ast.CreateIndexStmt, *ast.CreateViewStmt, *ast.CreateTriggerStmt, *ast.CreateVirtualTableStmt,
		*ast.DropTableStmt, *ast.DropViewStmt, *ast.DropIndexStmt, *ast.DropTriggerStmt, *ast.AlterTableStmt, *ast.PragmaStmt,
		*ast.AttachStmt, *ast.DetachStmt, *ast.VacuumStmt, *ast.AnalyzeStmt, *ast.ReindexStmt:
		// Their names are not column references; the schema statements'
		// bodies (a view's or a trigger's statements) do not run now.
		if c, ok := x.(*ast.CreateTableStmt); ok {
			schema, name := qname(c.Name)
			w.f.tables = append(w.f.tables, tref{schema: schema, name: name, pos: c.Pos(), write: true})
		}
		if d, ok := x.(*ast.DropTableStmt); ok {
			schema, name := qname(d.Name)
			w.f.tables = append(w.f.tables, tref{schema: schema, name: name, pos: d.Pos(), write: true})
		}
		if at, ok := x.(*ast.AttachStmt); ok {
			w.node(at.File, false)
		}
		return
	}
	for _, c := range n.Children() {
		w.node(c, out)
	}
}

// walkAll walks each node of list.
func walkAll[T ast.Node](w *sqliteWalker, list []T) {
	for _, n := range list {
		w.node(n, false)
	}
}

// dml records the target table of an INSERT, UPDATE or DELETE and walks
// its WITH clause.
func (w *sqliteWalker) dml(table *ast.QualifiedName, alias *ast.Ident, with *ast.With) {
	if with != nil {
		w.node(with, false)
	}
	schema, name := qname(table)
	t := tref{schema: schema, name: name, pos: table.Pos(), write: true}
	if alias != nil {
		t.alias = strings.ToLower(alias.Name)
	}
	w.f.tables = append(w.f.tables, t)
}

// cond walks a condition and finds its OR-tautologies; where marks a
// SELECT's WHERE, also a finding (medium) when always true as a whole.
func (w *sqliteWalker) cond(e ast.Expr, where bool) {
	if e == nil {
		return
	}
	a := w.a
	before := len(a.findings)
	var scan func(n ast.Node)
	scan = func(n ast.Node) {
		switch x := n.(type) {
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return
		case *ast.InExpr:
			if x.Select != nil {
				return
			}
		case *ast.BinaryExpr:
			if x.Op == ast.OpOr && w.complement[x] {
				a.tautology("OR of x IS NULL and x IS NOT NULL ("+snippetAt(a.src, x.Pos())+
					") makes the condition true for every row", int32(x.Pos()))
			}
			if x.Op == ast.OpOr {
				for _, arg := range []ast.Expr{x.X, x.Y} {
					if w.value(arg, 0).truth() {
						a.tautology("OR with an always-true operand ("+snippetAt(a.src, arg.Pos())+
							") makes the condition true for every row", int32(arg.Pos()))
					}
				}
			}
		}
		for _, c := range n.Children() {
			if c != nil {
				scan(c)
			}
		}
	}
	w.markComplements(e)
	scan(e)
	if where && len(a.findings) == before && w.alwaysTrue(e) {
		a.find("sql.tautology_where", "medium", "the WHERE clause is always true: it filters nothing", int32(e.Pos()))
	}
	w.node(e, false)
}

// sqliteFuncs is how SQLite's functions treat NULL and characters.
var sqliteFuncs = funcDialect{concatSkipsNull: true}

// alwaysTrue reports whether the condition e is true whatever the rows.
func (w *sqliteWalker) alwaysTrue(e ast.Expr) bool {
	w.markComplements(e)
	return w.value(e, 0).truth()
}

// value folds a constant SQLite expression (unknown for anything that
// reads data); x = x over the same operand is true, as is LIKE '%' (for
// every row where x is not NULL). The value of each binary operation is
// kept (w.memo), so a chain of n operators is folded in n steps.
func (w *sqliteWalker) value(e ast.Expr, depth int) tv {
	if depth > MaxNesting || e == nil {
		return unknown
	}
	d := depth + 1
	switch x := e.(type) {
	case *ast.Literal:
		switch x.Kind {
		case ast.LitNull:
			return tv{kind: tvNull}
		case ast.LitInteger, ast.LitFloat:
			if r, ok := parseNumber(x.Value); ok {
				return tvNumber(r)
			}
		case ast.LitString:
			return tvString(x.Value)
		case ast.LitBlob:
			if b, ok := blobBytes(x.Raw); ok {
				return tv{kind: tvStr, str: string(b), bin: true}
			}
		}
		return unknown
	case *ast.Ident:
		if b, ok := sqliteBoolKeyword(x); ok {
			return tvBool(b)
		}
		return unknown
	case *ast.ParenExpr:
		return w.value(x.X, d)
	case *ast.UnaryExpr:
		v := w.value(x.X, d)
		switch x.Op {
		case ast.OpNot:
			return negate(v, true)
		case ast.OpMinus:
			return sqliteFold.arith("-", tvNumber(new(big.Rat)), v)
		case ast.OpPlus:
			return v
		}
		return unknown
	case *ast.BinaryExpr:
		if v, ok := w.memo[x]; ok {
			return v
		}
		v := w.binary(x, d)
		if w.memo == nil {
			w.memo = map[*ast.BinaryExpr]tv{}
		}
		w.memo[x] = v
		return v
	case *ast.IsExpr:
		if w.same(x.X, x.Y) {
			return tvBool(!x.Not)
		}
		return negate(sqliteFold.compare("<=>", w.value(x.X, d), w.value(x.Y, d)), x.Not)
	case *ast.NullCheckExpr:
		v := w.value(x.X, d)
		if v.kind == tvUnknown {
			return unknown
		}
		return tvBool((v.kind == tvNull) == (x.Test == ast.TestIsNull))
	case *ast.BetweenExpr:
		return sqliteFold.between(w.value(x.X, d), w.value(x.Lo, d), w.value(x.Hi, d), x.Not)
	case *ast.InExpr:
		if x.Select != nil || x.Table != nil {
			return unknown
		}
		items := make([]tv, len(x.List))
		for i, item := range x.List {
			items[i] = w.value(item, d)
		}
		return sqliteFold.in(w.value(x.X, d), items, x.Not)
	case *ast.LikeExpr:
		return negate(w.like(x, d), x.Not)
	case *ast.FuncCall:
		if x.Name == nil || x.Star || x.Distinct || x.Filter != nil || x.Over != nil || len(x.OrderBy) > 0 {
			return unknown
		}
		name := strings.ToLower(x.Name.Name)
		if !detFunctions[name] {
			return unknown
		}
		vals := make([]tv, len(x.Args))
		for i, a := range x.Args {
			vals[i] = w.value(a, d)
		}
		return sqliteFold.foldCall(sqliteFuncs, name, vals)
	case *ast.CollateExpr:
		v := w.value(x.X, d)
		if v.kind == tvStr {
			v.coll = true
		}
		return v
	}
	return unknown
}

// binary folds one binary operation by SQLite's rules; x = x (or <=, >=)
// over one deterministic operand the fold cannot decide is true, and so
// is an OR chain holding x IS NULL and x NOT NULL (w.complement).
func (w *sqliteWalker) binary(x *ast.BinaryExpr, d int) tv {
	switch x.Op {
	case ast.OpOr:
		if w.complement[x] {
			return tvBool(true)
		}
	case ast.OpConcat:
		return sqliteFold.concat(w.value(x.X, d), w.value(x.Y, d))
	}
	v := sqliteFold.binary(sqliteOps[x.Op], w.value(x.X, d), w.value(x.Y, d))
	switch x.Op {
	case ast.OpEq, ast.OpLe, ast.OpGe:
		// Constants are compared (NULL = NULL is NULL); what the fold
		// cannot decide is true when both sides are one expression.
		if v.kind == tvUnknown && w.same(x.X, x.Y) {
			return tvBool(true)
		}
	}
	return v
}

// like folds LIKE and GLOB (REGEXP and MATCH call functions the
// engine does not know): LIKE matches ASCII letters case-insensitively
// unless PRAGMA case_sensitive_like is on, so only an answer both give is
// certain; GLOB is case-sensitive, '*' any run, '?' one character (a
// pattern with a [class] is not folded).
func (w *sqliteWalker) like(x *ast.LikeExpr, d int) tv {
	if x.Op == nil {
		return unknown
	}
	r := w.likeValue(x, d)
	if r.kind == tvUnknown && x.Escape == nil && strings.EqualFold(x.Op.Name, "like") && w.same(x.X, x.Y) {
		return tvBool(true) // every character of a value matches itself as a LIKE pattern
	}
	return r
}

// likeValue folds LIKE and GLOB over the operands' values (like).
func (w *sqliteWalker) likeValue(x *ast.LikeExpr, d int) tv {
	v, p := w.value(x.X, d), w.value(x.Y, d)
	switch strings.ToLower(x.Op.Name) {
	case "like":
		esc := byte(0)
		if x.Escape != nil {
			e := w.value(x.Escape, d)
			if e.kind != tvStr || len(e.str) != 1 {
				return unknown
			}
			esc = e.str[0]
		}
		return sqliteFold.like(v, p, esc)
	case "glob":
		if p.kind == tvStr && !p.bin {
			if strings.Trim(p.str, "*") == "" && p.str != "" {
				return sqliteFold.like(v, tvString("%"), 0)
			}
			if strings.ContainsAny(p.str, "[\x01") || strings.ContainsRune(v.str, 1) {
				return unknown
			}
			var b strings.Builder
			for _, r := range p.str {
				switch r {
				case '*':
					b.WriteByte('%')
				case '?':
					b.WriteByte('_')
				case '%', '_':
					b.WriteByte(1)
					b.WriteRune(r)
				default:
					b.WriteRune(r)
				}
			}
			p.str = b.String()
		}
		return folding{}.like(v, p, 1)
	}
	return unknown
}

// markComplements finds, once per OR chain of e, whether the chain holds
// both x IS NULL and x IS NOT NULL (or NOTNULL, NOT NULL) over one
// deterministic operand among its first maxOrOperands operands.
func (w *sqliteWalker) markComplements(e ast.Expr) {
	if e == nil || e.Pos() < 0 || e.End() > len(w.a.src) || e.Pos() > e.End() || !mentionsNull(w.a.src[e.Pos():e.End()]) {
		return
	}
	asOr := func(e ast.Expr) (ast.Expr, ast.Expr, bool) {
		or, ok := sqliteUnparen(e).(*ast.BinaryExpr)
		if !ok || or.Op != ast.OpOr {
			return nil, nil, false
		}
		w.orSeen[or] = true
		return or.X, or.Y, true
	}
	nullTest := func(e ast.Expr) (string, bool, bool) {
		x, isNull, ok := sqliteNullTest(sqliteUnparen(e))
		if !ok {
			return "", false, false
		}
		key, ok := w.key(x)
		return key, isNull, ok
	}
	var scan func(n ast.Node)
	scan = func(n ast.Node) {
		if top, ok := n.(*ast.BinaryExpr); ok && top.Op == ast.OpOr && !w.orSeen[top] {
			if w.orSeen == nil {
				w.orSeen, w.complement = map[*ast.BinaryExpr]bool{}, map[*ast.BinaryExpr]bool{}
			}
			w.complement[top] = complementInChain[ast.Expr](top, asOr, nullTest)
		}
		for _, c := range n.Children() {
			if c != nil {
				scan(c)
			}
		}
	}
	scan(e)
}

// sqliteUnparen is e without the brackets around it.
func sqliteUnparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// blobBytes reads a BLOB literal, X'3132' as written, into its bytes (at
// most maxFoldDigits).
func blobBytes(raw string) ([]byte, bool) {
	if len(raw) < 3 || raw[1] != '\'' || raw[len(raw)-1] != '\'' {
		return nil, false
	}
	digits := raw[2 : len(raw)-1]
	if len(digits)%2 != 0 || len(digits) > 2*maxFoldDigits {
		return nil, false
	}
	b := make([]byte, len(digits)/2)
	for i := range b {
		v, err := strconv.ParseUint(digits[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, false
		}
		b[i] = byte(v)
	}
	return b, true
}

// sqliteNullTest reads e as a null test of x: x ISNULL, x NOTNULL,
// x NOT NULL, x IS [NOT] NULL.
func sqliteNullTest(e ast.Expr) (x ast.Expr, isNull, ok bool) {
	switch t := e.(type) {
	case *ast.NullCheckExpr:
		return t.X, t.Test == ast.TestIsNull, true
	case *ast.IsExpr:
		if l, ok := t.Y.(*ast.Literal); ok && l.Kind == ast.LitNull && !t.Distinct {
			return t.X, !t.Not, true
		}
	}
	return nil, false, false
}

// same reports whether a and b are one deterministic expression: the same
// text, no anonymous parameter, only functions of detFunctions, at most
// maxSameNodes nodes.
func (w *sqliteWalker) same(a, b ast.Expr) bool {
	// The text first (no allocation): most operands differ there.
	if a == nil || b == nil || a.End()-a.Pos() != b.End()-b.Pos() || a.Pos() < 0 || b.Pos() < 0 ||
		a.End() > len(w.a.src) || b.End() > len(w.a.src) || w.a.src[a.Pos():a.End()] != w.a.src[b.Pos():b.End()] {
		return false
	}
	ka, ok1 := w.key(a)
	if !ok1 {
		return false
	}
	kb, ok2 := w.key(b)
	return ok2 && ka == kb
}

// key is e's text in the query when e is deterministic and small (same).
func (w *sqliteWalker) key(e ast.Expr) (string, bool) {
	if e == nil || e.Pos() < 0 || e.End() > len(w.a.src) || e.Pos() >= e.End() {
		return "", false
	}
	nodes, ok := 0, true
	var scan func(n ast.Node)
	scan = func(n ast.Node) {
		if !ok {
			return
		}
		if nodes++; nodes > maxSameNodes {
			ok = false
			return
		}
		switch x := n.(type) {
		case *ast.Ident, *ast.QualifiedRef, *ast.Literal, *ast.BinaryExpr, *ast.UnaryExpr, *ast.ParenExpr, *ast.LikeExpr,
			*ast.IsExpr, *ast.NullCheckExpr, *ast.BetweenExpr, *ast.CollateExpr, *ast.CastExpr, *ast.TypeName:
		case *ast.BindParam:
			ok = x.Kind != ast.ParamAnon
		case *ast.InExpr:
			ok = x.Select == nil && x.Table == nil
		case *ast.FuncCall:
			ok = x.Name != nil && detFunctions[strings.ToLower(x.Name.Name)] && x.Filter == nil && x.Over == nil
		default:
			ok = false
		}
		for _, c := range n.Children() {
			if c != nil {
				scan(c)
			}
		}
	}
	scan(e)
	if !ok {
		return "", false
	}
	return w.a.src[e.Pos():e.End()], true
}

// sqliteBoolKeyword reads an unquoted TRUE or FALSE, which SQLite (since
// 3.23) parses as an identifier and reads as 1 or 0 when no column has
// that name: a value for the tautology checks, not a column.
func sqliteBoolKeyword(x *ast.Ident) (value, ok bool) {
	if x == nil || x.Quote != ast.QuoteNone {
		return false, false
	}
	switch strings.ToLower(x.Name) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// sqliteName names a statement: SELECT, DROP TABLE, PRAGMA...
func sqliteName(n ast.Stmt) string {
	switch x := n.(type) {
	case *ast.InsertStmt:
		if x.Replace {
			return "REPLACE"
		}
	case *ast.CreateVirtualTableStmt:
		return "CREATE VIRTUAL TABLE"
	}
	return typeStatementName(n)
}

// parseSQLiteSchema reads the CREATE TABLE and CREATE VIEW statements of a
// SQLite schema_ddl (a view's or a CREATE TABLE AS's columns are unknown);
// other statements are ignored.
func parseSQLiteSchema(ddl string) (*Schema, *engines.Problem) {
	return readSchema(sqliteParser, ddl, func(st ast.Stmt) (*Table, bool) {
		switch x := st.(type) {
		case *ast.CreateTableStmt:
			schema, name := qname(x.Name)
			t := &Table{Schema: schema, Name: name, Complete: x.Select == nil}
			for _, c := range x.Columns {
				t.Columns = append(t.Columns, strings.ToLower(c.Name.Name))
			}
			return t, true
		case *ast.CreateViewStmt:
			schema, name := qname(x.Name)
			return &Table{Schema: schema, Name: name}, true
		}
		return nil, false
	})
}
