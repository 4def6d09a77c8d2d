package sql

import (
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentgate/agentgate/domain/engines"
)

// options are what an analysis depends on besides the query.
type options struct {
	schema           *Schema
	sensitiveColumns wordList
	sensitiveTables  wordList
	maxJoins         int
	maxSubqueryDepth int
	allow            map[string]bool // checks waived (params.allow)
	dialect          string          // DialectPostgres, DialectMySQL or DialectSQLite
}

func defaultOptions() *options {
	return &options{
		sensitiveColumns: newWordList(SensitiveColumns, nil),
		sensitiveTables:  newWordList(SensitiveTables, nil),
		maxJoins:         DefaultMaxJoins,
		maxSubqueryDepth: DefaultMaxSubqueryDepth,
		dialect:          DialectPostgres,
	}
}

// SchemaError is one schema violation: an unknown table or column, or an
// ambiguous column, with its name and where it is.
type SchemaError struct {
	Kind     string `json:"kind"` // unknown_table, unknown_column, ambiguous_column, unknown_qualifier
	Name     string `json:"name"`
	Table    string `json:"table,omitempty"`
	Position int    `json:"position"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Message  string `json:"message"`
}

// Statement is the classification of one statement of the query.
type Statement struct {
	// Statement names it: SELECT, INSERT, DROP TABLE, CREATE ROLE, ...
	Statement string `json:"statement"`
	// Class is read, write, unbounded_write, ddl, privilege, session or
	// admin.
	Class string `json:"class"`
	// Risk is low, high or critical.
	Risk Risk `json:"risk_level"`
	// Reason explains the risk.
	Reason string `json:"reason"`
	// Position is where the statement starts (1-based characters).
	Position int `json:"position"`
}

// analysis is the state of one walk over a parsed query.
type analysis struct {
	src        string
	opt        *options
	stmts      []*Statement
	cur        *Statement
	tables     map[string]bool
	written    map[string]bool // tables written
	colsRead   map[string]bool
	colsWrite  map[string]bool
	findings   []engines.Finding
	seen       map[string]bool // finding dedup: rule@offset
	perRule    map[string]int  // findings kept per rule (MaxFindingsPerRule)
	pf         pgFolder        // the PostgreSQL path's constant folding
	schemaErrs []SchemaError
	joins      int
	depth      int // current subquery depth
	maxDepth   int
	noExec     int // > 0 inside EXPLAIN without ANALYZE: nothing runs
}

func newAnalysis(src string, opt *options) *analysis {
	return &analysis{src: src, opt: opt, tables: map[string]bool{}, written: map[string]bool{},
		colsRead: map[string]bool{}, colsWrite: map[string]bool{}, seen: map[string]bool{}}
}

// raise sets the current statement's risk to r when r is higher.
func (a *analysis) raise(r Risk, class, reason string) {
	if a.noExec > 0 || a.cur == nil {
		return
	}
	if r.rank() > a.cur.Risk.rank() {
		a.cur.Risk, a.cur.Class, a.cur.Reason = r, class, reason
	}
}

// find records a finding at byte offset off of the query (once per rule
// and offset, at most MaxFindingsPerRule per rule).
func (a *analysis) find(rule, severity, msg string, off int32) {
	key := rule + "@" + itoa(int(off))
	if a.seen[key] || a.perRule[rule] >= MaxFindingsPerRule {
		return
	}
	a.seen[key] = true
	if a.perRule == nil {
		a.perRule = map[string]int{}
	}
	a.perRule[rule]++
	line, col := lineCol(a.src, int(off))
	a.findings = append(a.findings, engines.Finding{Rule: rule, Severity: severity, Message: msg,
		Line: line, Column: col, Snippet: snippetAt(a.src, int(off))})
}

func (a *analysis) schemaError(kind, name, table, msg string, off int32) {
	line, col := lineCol(a.src, int(off))
	a.schemaErrs = append(a.schemaErrs, SchemaError{Kind: kind, Name: name, Table: table,
		Position: charPos(a.src, int(off)), Line: line, Column: col, Message: msg})
}

// snippetAt is the query text from off to the end of its line, at most 60
// bytes.
func snippetAt(src string, off int) string {
	if off < 0 || off >= len(src) {
		return ""
	}
	s := src[off:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(clip(s, 60))
}

// ctx is where an expression sits.
type ctx struct {
	cond    bool // inside WHERE, HAVING or a JOIN condition
	output  bool // in a select list or RETURNING: its value leaves the database
	outputs bool // ORDER BY / GROUP BY: output column names resolve
}

// entry is one range-table entry: a table, CTE, derived table or function
// in FROM, visible by alias.
type entry struct {
	alias  string
	schema string
	rel    string   // the name columns are reported under
	table  *Table   // a schema table
	cols   []string // known columns (table or derived)
	known  bool     // cols is complete
	isTab  bool     // a base table (not a CTE or derived table)
}

func (e *entry) has(col string) bool { return slices.Contains(e.cols, col) }

type cteDef struct {
	cols  []string
	known bool
}

type scope struct {
	parent  *scope
	entries []*entry
	ctes    map[string]*cteDef
	outputs []string
}

func (s *scope) cte(name string) *cteDef {
	for ; s != nil; s = s.parent {
		if c, ok := s.ctes[name]; ok {
			return c
		}
	}
	return nil
}

// --- statements ------------------------------------------------------------

// statement analyses one top-level statement.
func (a *analysis) statement(raw *pg.RawStmt) {
	st := &Statement{Statement: statementName(raw.Stmt), Class: "read", Risk: RiskLow,
		Reason: "read-only query", Position: charPos(a.src, int(raw.StmtLocation))}
	a.stmts = append(a.stmts, st)
	a.cur = st
	a.node(raw.Stmt, nil, true)
	a.functions(raw.Stmt)
}

// node analyses a statement node (top level, or inside EXPLAIN, PREPARE,
// COPY, a CTE); it returns the output columns when they are known.
func (a *analysis) node(n *pg.Node, sc *scope, top bool) ([]string, bool) {
	switch x := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		return a.selectStmt(x.SelectStmt, sc, top)
	case *pg.Node_InsertStmt:
		return a.insertStmt(x.InsertStmt, sc)
	case *pg.Node_UpdateStmt:
		return a.updateStmt(x.UpdateStmt, sc)
	case *pg.Node_DeleteStmt:
		return a.deleteStmt(x.DeleteStmt, sc)
	case *pg.Node_MergeStmt:
		return a.mergeStmt(x.MergeStmt, sc)
	case *pg.Node_ExplainStmt:
		analyze := false
		for _, o := range x.ExplainStmt.Options {
			if d, ok := o.Node.(*pg.Node_DefElem); ok && d.DefElem.Defname == "analyze" {
				analyze = defElemTrue(d.DefElem)
			}
		}
		if analyze {
			a.node(x.ExplainStmt.Query, sc, false)
			if a.cur.Reason != "" {
				a.cur.Reason = "EXPLAIN ANALYZE runs the statement: " + a.cur.Reason
			}
		} else {
			a.noExec++
			a.node(x.ExplainStmt.Query, sc, false)
			a.noExec--
			a.cur.Reason = "EXPLAIN without ANALYZE plans the statement without running it"
		}
	case *pg.Node_PrepareStmt:
		a.node(x.PrepareStmt.Query, sc, false)
	case *pg.Node_DeclareCursorStmt:
		a.node(x.DeclareCursorStmt.Query, sc, false)
	case *pg.Node_CopyStmt:
		a.copyStmt(x.CopyStmt, sc)
	case *pg.Node_CreateTableAsStmt:
		c := x.CreateTableAsStmt
		a.node(c.Query, sc, false)
		if c.Into != nil && c.Into.Rel != nil {
			a.noteWrite(rvName(c.Into.Rel))
		}
		a.raise(RiskHigh, "ddl", "creates "+strings.ToLower(strings.TrimPrefix(a.cur.Statement, "CREATE "))+" from a query")
	case *pg.Node_ViewStmt:
		a.noExec++
		a.node(x.ViewStmt.Query, sc, false)
		a.noExec--
		a.raise(RiskHigh, "ddl", "creates a view")
	case *pg.Node_VariableShowStmt, *pg.Node_TransactionStmt, *pg.Node_FetchStmt, *pg.Node_ClosePortalStmt,
		*pg.Node_DeallocateStmt, *pg.Node_ListenStmt, *pg.Node_UnlistenStmt:
		a.cur.Class, a.cur.Reason = "session", "session or transaction control, no data changed"
	case *pg.Node_CreateStmt, *pg.Node_IndexStmt, *pg.Node_CreateSeqStmt, *pg.Node_CompositeTypeStmt,
		*pg.Node_CreateEnumStmt, *pg.Node_CreateRangeStmt, *pg.Node_CommentStmt:
		if c, ok := x.(*pg.Node_CreateStmt); ok {
			a.noteWrite(rvName(c.CreateStmt.Relation))
		}
		a.raise(RiskHigh, "ddl", "creates a schema object")
	case *pg.Node_CreateSchemaStmt:
		if x.CreateSchemaStmt.Authrole != nil || len(x.CreateSchemaStmt.SchemaElts) > 0 {
			a.raise(RiskCritical, "ddl", "creates a schema with an owner or objects")
		} else {
			a.raise(RiskHigh, "ddl", "creates a schema")
		}
	case *pg.Node_LockStmt, *pg.Node_NotifyStmt, *pg.Node_RefreshMatViewStmt:
		a.raise(RiskHigh, "write", strings.ToLower(a.cur.Statement)+" changes shared state")
	case *pg.Node_VariableSetStmt:
		switch strings.ToLower(x.VariableSetStmt.Name) {
		case "role", "session_authorization", "session authorization":
			a.raise(RiskCritical, "privilege", "changes the session's role")
		default:
			a.raise(RiskHigh, "session", "changes a session setting")
		}
	case *pg.Node_DropStmt:
		if x.DropStmt.RemoveType == pg.ObjectType_OBJECT_TABLE {
			for _, o := range x.DropStmt.Objects {
				if l, ok := o.Node.(*pg.Node_List); ok {
					a.noteWrite(strings.Join(stringList(l.List.Items), "."))
				}
			}
		}
		a.raise(RiskCritical, "ddl", "drops "+strings.ToLower(strings.TrimPrefix(a.cur.Statement, "DROP ")))
	case *pg.Node_TruncateStmt:
		for _, r := range x.TruncateStmt.Relations {
			if rv, ok := r.Node.(*pg.Node_RangeVar); ok {
				a.noteWrite(rvName(rv.RangeVar))
			}
		}
		a.raise(RiskCritical, "ddl", "TRUNCATE removes every row")
	case *pg.Node_GrantStmt, *pg.Node_GrantRoleStmt, *pg.Node_CreateRoleStmt, *pg.Node_AlterRoleStmt,
		*pg.Node_AlterRoleSetStmt, *pg.Node_DropRoleStmt, *pg.Node_AlterDefaultPrivilegesStmt,
		*pg.Node_ReassignOwnedStmt, *pg.Node_DropOwnedStmt, *pg.Node_AlterOwnerStmt:
		a.raise(RiskCritical, "privilege", strings.ToLower(a.cur.Statement)+" changes privileges or roles")
	default:
		if strings.HasPrefix(a.cur.Statement, "ALTER ") || strings.HasPrefix(a.cur.Statement, "DROP ") {
			a.raise(RiskCritical, "ddl", strings.ToLower(a.cur.Statement)+" changes the schema")
		} else {
			a.raise(RiskCritical, "admin", strings.ToLower(a.cur.Statement)+" is neither a plain read nor a plain write")
		}
	}
	return nil, false
}

func defElemTrue(d *pg.DefElem) bool {
	switch v := d.Arg.GetNode().(type) {
	case nil:
		return true
	case *pg.Node_Boolean:
		return v.Boolean.Boolval
	case *pg.Node_String_:
		switch strings.ToLower(v.String_.Sval) {
		case "false", "off", "no", "0":
			return false
		}
	case *pg.Node_Integer:
		return v.Integer.Ival != 0
	}
	return true
}

func (a *analysis) copyStmt(c *pg.CopyStmt, sc *scope) {
	switch {
	case c.IsProgram:
		a.raise(RiskCritical, "admin", "COPY runs a program on the database server")
		a.find("sql.copy_program", "critical", "COPY ... PROGRAM runs a shell command on the database server", 0)
	case c.Filename != "":
		a.raise(RiskCritical, "admin", "COPY reads or writes a file on the database server")
		a.find("sql.copy_file", "critical", "COPY with a server file name reads or writes the server's file system", 0)
	}
	if c.Query != nil {
		a.node(c.Query, sc, false)
		return
	}
	if c.Relation == nil {
		return
	}
	s := &scope{parent: sc}
	e := a.relation(c.Relation, s, c.IsFrom)
	s.entries = append(s.entries, e)
	for _, col := range stringList(c.Attlist) {
		a.column(e, col, c.IsFrom, c.Relation.Location, ctx{output: !c.IsFrom})
	}
	if len(c.Attlist) == 0 {
		a.star(e, c.Relation.Location, !c.IsFrom)
	}
	if c.IsFrom {
		a.raise(RiskHigh, "write", "COPY FROM writes rows")
	}
	a.expr(c.WhereClause, s, ctx{cond: true})
}

// --- SELECT ----------------------------------------------------------------

func (a *analysis) selectStmt(s *pg.SelectStmt, parent *scope, top bool) ([]string, bool) {
	if s == nil {
		return nil, false
	}
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		a.with(s.WithClause, sc)
	}
	if s.Op != pg.SetOperation_SETOP_NONE {
		cols, ok := a.selectStmt(s.Larg, sc, false)
		a.selectStmt(s.Rarg, sc, false)
		sc.outputs = cols
		for _, n := range s.SortClause {
			a.expr(n, sc, ctx{outputs: true})
		}
		a.expr(s.LimitCount, sc, ctx{})
		a.expr(s.LimitOffset, sc, ctx{})
		return cols, ok
	}
	if s.IntoClause != nil && s.IntoClause.Rel != nil {
		a.noteWrite(rvName(s.IntoClause.Rel))
		a.raise(RiskHigh, "write", "SELECT INTO creates a table")
	}
	if len(s.LockingClause) > 0 {
		a.raise(RiskHigh, "write", "SELECT ... FOR UPDATE/SHARE locks rows")
	}
	for i, f := range s.FromClause {
		if i > 0 {
			a.joins++
		}
		a.fromItem(f, sc)
	}
	for _, v := range s.ValuesLists {
		a.expr(v, sc, ctx{output: true})
	}
	var outs []string
	known := true
	for _, t := range s.TargetList {
		rt, ok := t.Node.(*pg.Node_ResTarget)
		if !ok {
			a.expr(t, sc, ctx{output: true})
			known = false
			continue
		}
		a.expr(rt.ResTarget.Val, sc, ctx{output: true})
		if name, ok := targetName(rt.ResTarget); ok {
			outs = append(outs, name)
		} else if cols, ok := a.starColumns(sc, rt.ResTarget.Val); ok {
			outs = append(outs, cols...)
		} else {
			known = false
		}
	}
	if s.WhereClause != nil {
		before := len(a.findings)
		a.expr(s.WhereClause, sc, ctx{cond: true})
		if len(a.findings) == before && a.alwaysTrue(s.WhereClause) {
			a.find("sql.tautology_where", "medium", "the WHERE clause is always true: it filters nothing",
				exprLocation(s.WhereClause))
		}
	}
	a.expr(s.HavingClause, sc, ctx{cond: true})
	sc.outputs = outs
	for _, n := range s.GroupClause {
		a.expr(n, sc, ctx{outputs: true})
	}
	for _, n := range s.SortClause {
		a.expr(n, sc, ctx{outputs: true})
	}
	for _, n := range s.DistinctClause {
		a.expr(n, sc, ctx{outputs: true})
	}
	for _, n := range s.WindowClause {
		a.expr(n, sc, ctx{})
	}
	a.expr(s.LimitCount, sc, ctx{})
	a.expr(s.LimitOffset, sc, ctx{})
	if len(s.ValuesLists) > 0 && len(s.TargetList) == 0 {
		return nil, false
	}
	return outs, known
}

// starColumns expands a star target (* or t.*) when its columns are known.
func (a *analysis) starColumns(sc *scope, v *pg.Node) ([]string, bool) {
	cr, ok := v.GetNode().(*pg.Node_ColumnRef)
	if !ok {
		return nil, false
	}
	names := stringList(cr.ColumnRef.Fields)
	var out []string
	for _, e := range sc.entries {
		if len(names) > 0 && e.alias != names[len(names)-1] {
			continue
		}
		if !e.known {
			return nil, false
		}
		out = append(out, e.cols...)
	}
	return out, true
}

func (a *analysis) with(w *pg.WithClause, sc *scope) {
	sc.ctes = map[string]*cteDef{}
	for _, n := range w.Ctes {
		c, ok := n.Node.(*pg.Node_CommonTableExpr)
		if !ok {
			continue
		}
		cte := c.CommonTableExpr
		alias := stringList(cte.Aliascolnames)
		if w.Recursive {
			sc.ctes[cte.Ctename] = &cteDef{cols: alias, known: len(alias) > 0}
		}
		a.enter()
		cols, known := a.node(cte.Ctequery, sc, false)
		a.leave()
		if len(alias) > 0 {
			cols, known = alias, true
		}
		sc.ctes[cte.Ctename] = &cteDef{cols: cols, known: known}
	}
}

func (a *analysis) enter() {
	a.depth++
	if a.depth > a.maxDepth {
		a.maxDepth = a.depth
	}
}

func (a *analysis) leave() { a.depth-- }

// fromItem adds the entries of one FROM item to sc.
func (a *analysis) fromItem(n *pg.Node, sc *scope) {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeVar:
		sc.entries = append(sc.entries, a.relation(x.RangeVar, sc, false))
	case *pg.Node_RangeSubselect:
		r := x.RangeSubselect
		view := &scope{parent: sc.parent, ctes: sc.ctes}
		if r.Lateral {
			view = sc
		}
		a.enter()
		cols, known := a.node(r.Subquery, view, false)
		a.leave()
		e := &entry{cols: cols, known: known}
		a.aliasEntry(e, r.Alias)
		sc.entries = append(sc.entries, e)
	case *pg.Node_JoinExpr:
		j := x.JoinExpr
		a.joins++
		a.fromItem(j.Larg, sc)
		a.fromItem(j.Rarg, sc)
		a.expr(j.Quals, sc, ctx{cond: true})
		if j.Alias != nil {
			sc.entries = append(sc.entries, &entry{alias: j.Alias.Aliasname, rel: j.Alias.Aliasname})
		}
	case *pg.Node_RangeFunction:
		r := x.RangeFunction
		view := sc
		for _, f := range r.Functions {
			a.expr(f, view, ctx{})
		}
		e := &entry{}
		if len(r.Functions) > 0 {
			if l, ok := r.Functions[0].Node.(*pg.Node_List); ok && len(l.List.Items) > 0 {
				if fc, ok := l.List.Items[0].Node.(*pg.Node_FuncCall); ok {
					e.alias, e.rel = opName(fc.FuncCall.Funcname), opName(fc.FuncCall.Funcname)
				}
			}
		}
		a.aliasEntry(e, r.Alias)
		sc.entries = append(sc.entries, e)
	default:
		a.expr(n, sc, ctx{})
		e := &entry{}
		m := n.GetNode()
		if m != nil {
			if al := findAlias(n); al != nil {
				a.aliasEntry(e, al)
			}
		}
		sc.entries = append(sc.entries, e)
	}
}

// findAlias returns the Alias field of a FROM item of another kind
// (TABLESAMPLE, XMLTABLE, JSON_TABLE), if any.
func findAlias(n *pg.Node) *pg.Alias {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeTableSample:
		if rv, ok := x.RangeTableSample.Relation.GetNode().(*pg.Node_RangeVar); ok {
			if rv.RangeVar.Alias != nil {
				return rv.RangeVar.Alias
			}
			return &pg.Alias{Aliasname: rv.RangeVar.Relname}
		}
	case *pg.Node_RangeTableFunc:
		return x.RangeTableFunc.Alias
	case *pg.Node_JsonTable:
		return x.JsonTable.Alias
	}
	return nil
}

// aliasEntry names e by alias (and renames its columns).
func (a *analysis) aliasEntry(e *entry, al *pg.Alias) {
	if al == nil {
		return
	}
	e.alias, e.rel = al.Aliasname, al.Aliasname
	if names := stringList(al.Colnames); len(names) > 0 {
		if len(e.cols) >= len(names) {
			e.cols = append(slices.Clone(names), e.cols[len(names):]...)
		} else {
			e.cols, e.known = names, false
		}
	}
}

// relation resolves a table reference: a CTE, a schema table, or (without
// a schema) a table whose columns are unknown.
func (a *analysis) relation(rv *pg.RangeVar, sc *scope, write bool) *entry {
	name := rv.Relname
	alias := name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	if rv.Schemaname == "" {
		if c := sc.cte(name); c != nil {
			e := &entry{alias: alias, rel: name, cols: slices.Clone(c.cols), known: c.known}
			a.aliasEntry(e, rv.Alias)
			e.rel = name
			return e
		}
	}
	q := rvName(rv)
	a.tables[q] = true
	if write {
		a.noteWrite(q)
	}
	if credentialCatalogs[name] && (rv.Schemaname == "" || rv.Schemaname == "pg_catalog") {
		a.raise(RiskCritical, "admin", "reads "+name+", which holds credentials")
		a.find("sql.credential_catalog", "critical", name+" holds password hashes or connection credentials", rv.Location)
	}
	e := &entry{alias: alias, schema: rv.Schemaname, rel: q, isTab: true}
	if a.opt.schema != nil {
		t := a.opt.schema.lookup(rv.Schemaname, name)
		if t == nil {
			a.schemaError("unknown_table", q, "", "table "+q+" is not in the schema", rv.Location)
			return e
		}
		e.table, e.rel, e.cols, e.known = t, t.qualified(), slices.Clone(t.Columns), t.Complete
	}
	a.aliasEntry(e, rv.Alias)
	if rv.Alias != nil {
		e.rel = q
		if e.table != nil {
			e.rel = e.table.qualified()
		}
	}
	return e
}

func rvName(rv *pg.RangeVar) string {
	if rv.Schemaname != "" {
		return rv.Schemaname + "." + rv.Relname
	}
	return rv.Relname
}

func (a *analysis) noteWrite(table string) {
	a.tables[table] = true
	a.written[table] = true
}

// --- DML -------------------------------------------------------------------

func (a *analysis) insertStmt(s *pg.InsertStmt, parent *scope) ([]string, bool) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		a.with(s.WithClause, sc)
	}
	a.raise(RiskHigh, "write", "INSERT writes rows")
	target := a.relation(s.Relation, sc, true)
	for _, c := range s.Cols {
		if rt, ok := c.Node.(*pg.Node_ResTarget); ok {
			a.column(target, rt.ResTarget.Name, true, rt.ResTarget.Location, ctx{})
		}
	}
	if len(s.Cols) == 0 {
		a.star(target, s.Relation.Location, false)
		for _, c := range target.cols {
			a.colsWrite[target.rel+"."+c] = true
		}
	}
	if s.SelectStmt != nil {
		a.node(s.SelectStmt, sc, false)
	}
	ts := &scope{parent: sc, entries: []*entry{target}}
	if oc := s.OnConflictClause; oc != nil {
		excl := *target
		excl.alias = "excluded"
		cs := &scope{parent: sc, entries: []*entry{target, &excl}}
		a.expr(oc.WhereClause, cs, ctx{cond: true})
		if oc.Infer != nil {
			a.expr(oc.Infer.WhereClause, cs, ctx{cond: true})
		}
		a.setList(target, oc.TargetList, cs)
	}
	return a.returning(s.ReturningList, ts)
}

// setList analyses SET col = expr targets: the columns are written, the
// expressions read.
func (a *analysis) setList(target *entry, targets []*pg.Node, sc *scope) {
	for _, t := range targets {
		rt, ok := t.Node.(*pg.Node_ResTarget)
		if !ok {
			continue
		}
		a.column(target, rt.ResTarget.Name, true, rt.ResTarget.Location, ctx{})
		a.expr(rt.ResTarget.Val, sc, ctx{})
	}
}

func (a *analysis) returning(list []*pg.Node, sc *scope) ([]string, bool) {
	if len(list) == 0 {
		return nil, true
	}
	var outs []string
	known := true
	for _, t := range list {
		rt, ok := t.Node.(*pg.Node_ResTarget)
		if !ok {
			continue
		}
		a.expr(rt.ResTarget.Val, sc, ctx{output: true})
		if name, ok := targetName(rt.ResTarget); ok {
			outs = append(outs, name)
		} else if cols, ok := a.starColumns(sc, rt.ResTarget.Val); ok {
			outs = append(outs, cols...)
		} else {
			known = false
		}
	}
	return outs, known
}

// bounded classifies the WHERE of an UPDATE or DELETE (boundWrite).
func (a *analysis) bounded(verb string, where *pg.Node, loc int32) {
	always, off := where != nil && a.alwaysTrue(where), int32(0)
	if always {
		off = exprLocationOr(where, loc)
	}
	a.boundWrite(verb, where != nil, always, off)
}

// boundWrite classifies an UPDATE or DELETE by its WHERE, in every
// dialect: none, or always true, is unbounded (critical); an always-true
// WHERE (at byte offset off) is also a tautology finding.
func (a *analysis) boundWrite(verb string, hasWhere, alwaysTrue bool, off int32) {
	switch {
	case !hasWhere:
		a.raise(RiskCritical, "unbounded_write", verb+" without WHERE changes every row")
	case alwaysTrue:
		a.raise(RiskCritical, "unbounded_write", verb+" whose WHERE is always true changes every row")
		a.find("sql.tautology", "critical", verb+" with an always-true WHERE clause changes every row", off)
	default:
		a.raise(RiskHigh, "write", verb+" with WHERE changes the matching rows")
	}
}

// tautology records an always-true OR in a condition (msg, at byte
// offset off): an injection pattern in every dialect.
func (a *analysis) tautology(msg string, off int32) {
	a.raise(RiskCritical, a.cur.Class, "a condition contains an always-true OR")
	a.find("sql.tautology", "critical", msg, off)
}

func (a *analysis) updateStmt(s *pg.UpdateStmt, parent *scope) ([]string, bool) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		a.with(s.WithClause, sc)
	}
	a.bounded("UPDATE", s.WhereClause, s.Relation.GetLocation())
	target := a.relation(s.Relation, sc, true)
	sc.entries = append(sc.entries, target)
	for i, f := range s.FromClause {
		if i > 0 {
			a.joins++
		}
		a.fromItem(f, sc)
	}
	a.setList(target, s.TargetList, sc)
	a.expr(s.WhereClause, sc, ctx{cond: true})
	return a.returning(s.ReturningList, sc)
}

func (a *analysis) deleteStmt(s *pg.DeleteStmt, parent *scope) ([]string, bool) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		a.with(s.WithClause, sc)
	}
	a.bounded("DELETE", s.WhereClause, s.Relation.GetLocation())
	target := a.relation(s.Relation, sc, true)
	sc.entries = append(sc.entries, target)
	for i, f := range s.UsingClause {
		if i > 0 {
			a.joins++
		}
		a.fromItem(f, sc)
	}
	a.expr(s.WhereClause, sc, ctx{cond: true})
	return a.returning(s.ReturningList, sc)
}

func (a *analysis) mergeStmt(s *pg.MergeStmt, parent *scope) ([]string, bool) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		a.with(s.WithClause, sc)
	}
	a.raise(RiskHigh, "write", "MERGE writes the matching rows")
	target := a.relation(s.Relation, sc, true)
	sc.entries = append(sc.entries, target)
	a.joins++
	a.fromItem(s.SourceRelation, sc)
	a.expr(s.JoinCondition, sc, ctx{cond: true})
	if a.alwaysTrue(s.JoinCondition) {
		a.raise(RiskCritical, "unbounded_write", "MERGE whose join condition is always true matches every row")
		a.find("sql.tautology", "critical", "MERGE with an always-true ON condition matches every row", exprLocation(s.JoinCondition))
	}
	for _, w := range s.MergeWhenClauses {
		mw, ok := w.Node.(*pg.Node_MergeWhenClause)
		if !ok {
			continue
		}
		c := mw.MergeWhenClause
		a.expr(c.Condition, sc, ctx{cond: true})
		switch c.CommandType {
		case pg.CmdType_CMD_UPDATE:
			a.setList(target, c.TargetList, sc)
		case pg.CmdType_CMD_INSERT:
			for _, t := range c.TargetList {
				if rt, ok := t.Node.(*pg.Node_ResTarget); ok {
					a.column(target, rt.ResTarget.Name, true, rt.ResTarget.Location, ctx{})
				}
			}
			for _, v := range c.Values {
				a.expr(v, sc, ctx{})
			}
		}
	}
	return a.returning(s.ReturningList, sc)
}

// --- expressions -----------------------------------------------------------

// expr analyses an expression: column references are resolved, nested
// queries analysed in a child scope, OR-tautologies in conditions found.
func (a *analysis) expr(n *pg.Node, sc *scope, c ctx) {
	if n == nil {
		return
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		a.columnRef(x.ColumnRef, sc, c)
		return
	case *pg.Node_SelectStmt, *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt, *pg.Node_MergeStmt:
		a.enter()
		a.node(n, sc, false)
		a.leave()
		return
	case *pg.Node_BoolExpr:
		if c.cond && x.BoolExpr.Boolop == pg.BoolExprType_OR_EXPR && complementaryNulls(x.BoolExpr) {
			a.tautology("OR of x IS NULL and x IS NOT NULL ("+snippetAt(a.src, int(x.BoolExpr.Location))+
				") makes the condition true for every row", x.BoolExpr.Location)
		}
		if c.cond && x.BoolExpr.Boolop == pg.BoolExprType_OR_EXPR {
			for _, arg := range x.BoolExpr.Args {
				if a.alwaysTrue(arg) {
					a.tautology("OR with an always-true operand ("+snippetAt(a.src, int(exprLocation(arg)))+
						") makes the condition true for every row", exprLocationOr(arg, x.BoolExpr.Location))
				}
			}
		}
	case *pg.Node_SubLink:
		a.expr(x.SubLink.Testexpr, sc, c)
		a.expr(x.SubLink.Subselect, sc, c)
		return
	}
	a.children(n, sc, c)
}

// children walks the fields of m generically.
func (a *analysis) children(m proto.Message, sc *scope, c ctx) {
	eachChild(m.ProtoReflect(), func(ch protoreflect.Message) {
		if n, ok := ch.Interface().(*pg.Node); ok {
			a.expr(n, sc, c)
			return
		}
		a.children(ch.Interface(), sc, c)
	})
}

func (a *analysis) columnRef(cr *pg.ColumnRef, sc *scope, c ctx) {
	f := cr.Fields
	if len(f) == 0 {
		return
	}
	_, star := f[len(f)-1].Node.(*pg.Node_AStar)
	names := stringList(f)
	switch {
	case star && len(names) == 0:
		if sc != nil {
			for _, e := range sc.entries {
				a.star(e, cr.Location, c.output)
			}
		}
	case star:
		if e := a.qualifier(names, sc, cr.Location); e != nil {
			a.star(e, cr.Location, c.output)
		}
	case len(names) == 1:
		a.unqualified(names[0], sc, cr.Location, c)
	default:
		col := names[len(names)-1]
		if e := a.qualifier(names[:len(names)-1], sc, cr.Location); e != nil {
			a.column(e, col, false, cr.Location, c)
		}
	}
}

// qualifier finds the entry a qualified reference names (t.c or s.t.c),
// innermost scope first; a schema error when there is a schema and none.
func (a *analysis) qualifier(q []string, sc *scope, loc int32) *entry {
	for s := sc; s != nil; s = s.parent {
		for _, e := range s.entries {
			switch len(q) {
			case 1:
				if e.alias == q[0] {
					return e
				}
			case 2:
				if e.isTab && e.alias == q[1] && (e.schema == q[0] || (e.table != nil && e.table.Schema == q[0])) {
					return e
				}
			}
		}
	}
	if len(q) == 1 && sc != nil {
		// (composite).field: a column of an entry used as a record.
		for s := sc; s != nil; s = s.parent {
			for _, e := range s.entries {
				if !e.known || e.has(q[0]) {
					return nil
				}
			}
		}
	}
	if a.opt.schema != nil {
		name := strings.Join(q, ".")
		a.schemaError("unknown_qualifier", name, "", "no table or alias "+name+" in FROM", loc)
	}
	return nil
}

func (a *analysis) unqualified(col string, sc *scope, loc int32, c ctx) {
	for s := sc; s != nil; s = s.parent {
		var hits []*entry
		unknown := false
		for _, e := range s.entries {
			switch {
			case !e.known:
				unknown = true
			case e.has(col):
				hits = append(hits, e)
			}
		}
		if len(hits) == 1 && !unknown {
			a.column(hits[0], col, false, loc, c)
			return
		}
		if len(hits) > 1 && a.opt.schema != nil {
			a.schemaError("ambiguous_column", col, "", "column "+col+" is in more than one table of FROM", loc)
			return
		}
		if len(hits) > 0 || unknown {
			if len(s.entries) == 1 {
				a.column(s.entries[0], col, false, loc, c)
			} else {
				a.bareColumn(col, loc, c)
			}
			return
		}
	}
	if c.outputs && sc != nil && slices.Contains(sc.outputs, col) {
		return
	}
	for s := sc; s != nil; s = s.parent {
		for _, e := range s.entries {
			if e.alias == col {
				return // a whole-row reference
			}
		}
	}
	if a.opt.schema != nil {
		a.schemaError("unknown_column", col, "", "column "+col+" is in no table of FROM", loc)
		return
	}
	a.bareColumn(col, loc, c)
}

// column records col of entry e as read or written, checking it against
// the schema and the sensitive list.
func (a *analysis) column(e *entry, col string, write bool, loc int32, c ctx) {
	if e.known && !e.has(col) {
		if a.opt.schema != nil {
			a.schemaError("unknown_column", col, e.rel, "table "+e.rel+" has no column "+col, loc)
		}
		return
	}
	name := col
	if e.rel != "" {
		name = e.rel + "." + col
	}
	if write {
		a.colsWrite[name] = true
	} else {
		a.colsRead[name] = true
	}
	if (write || c.output) && a.opt.sensitiveColumns.match(col) != "" {
		verb := "reads"
		if write {
			verb = "writes"
		}
		a.raise(RiskHigh, a.cur.Class, verb+" the sensitive column "+name)
		a.find("sql.sensitive_column", "medium", verb+" the sensitive column "+name, loc)
	}
}

func (a *analysis) bareColumn(col string, loc int32, c ctx) {
	a.column(&entry{}, col, false, loc, c)
}

// star records a * over entry e: every known column is read; a sensitive
// table's SELECT * is a finding.
func (a *analysis) star(e *entry, loc int32, output bool) {
	if !e.known {
		a.colsRead[e.rel+".*"] = true
		if output && e.isTab && a.opt.schema == nil && a.opt.sensitiveTables.match(e.rel[strings.LastIndexByte(e.rel, '.')+1:]) != "" {
			a.raise(RiskHigh, a.cur.Class, "SELECT * on the sensitive table "+e.rel)
			a.find("sql.select_star_sensitive", "medium", "SELECT * on the sensitive table "+e.rel, loc)
		}
		return
	}
	var sens []string
	for _, col := range e.cols {
		a.colsRead[e.rel+"."+col] = true
		if a.opt.sensitiveColumns.match(col) != "" {
			sens = append(sens, col)
		}
	}
	if output && len(sens) > 0 {
		a.raise(RiskHigh, a.cur.Class, "SELECT * reads the sensitive columns "+strings.Join(sens, ", ")+" of "+e.rel)
		a.find("sql.select_star_sensitive", "medium", "SELECT * on "+e.rel+" reads its sensitive columns "+strings.Join(sens, ", "), loc)
	}
}

// exprLocation is the leftmost location in an expression's subtree (0
// when it has none): where its text starts.
func exprLocation(n *pg.Node) int32 {
	if n == nil {
		return 0
	}
	best := int32(-1)
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if fd := m.Descriptor().Fields().ByName("location"); fd != nil && fd.Kind() == protoreflect.Int32Kind {
			if l := int32(m.Get(fd).Int()); l >= 0 && (best < 0 || l < best) {
				best = l
			}
		}
		eachChild(m, walk)
	}
	walk(n.ProtoReflect())
	if best < 0 {
		return 0
	}
	return best
}

func exprLocationOr(n *pg.Node, def int32) int32 {
	if l := exprLocation(n); l > 0 {
		return l
	}
	if def < 0 {
		return 0
	}
	return def
}

// statementName names a statement node: SELECT, DROP TABLE, CREATE ROLE...
func statementName(n *pg.Node) string {
	switch x := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		if x.SelectStmt.IntoClause != nil {
			return "SELECT INTO"
		}
		return "SELECT"
	case *pg.Node_DropStmt:
		return "DROP " + objectName(x.DropStmt.RemoveType)
	case *pg.Node_GrantStmt:
		if x.GrantStmt.IsGrant {
			return "GRANT"
		}
		return "REVOKE"
	case *pg.Node_GrantRoleStmt:
		if x.GrantRoleStmt.IsGrant {
			return "GRANT ROLE"
		}
		return "REVOKE ROLE"
	case *pg.Node_CreateRoleStmt:
		switch x.CreateRoleStmt.StmtType {
		case pg.RoleStmtType_ROLESTMT_USER:
			return "CREATE USER"
		case pg.RoleStmtType_ROLESTMT_GROUP:
			return "CREATE GROUP"
		}
		return "CREATE ROLE"
	case *pg.Node_VariableSetStmt:
		if x.VariableSetStmt.Kind == pg.VariableSetKind_VAR_SET_VALUE || x.VariableSetStmt.Kind == pg.VariableSetKind_VAR_SET_CURRENT {
			return "SET"
		}
		return "RESET"
	case *pg.Node_VariableShowStmt:
		return "SHOW"
	case *pg.Node_CreateStmt:
		return "CREATE TABLE"
	case *pg.Node_IndexStmt:
		return "CREATE INDEX"
	case *pg.Node_ViewStmt:
		return "CREATE VIEW"
	case *pg.Node_CreateTableAsStmt:
		if x.CreateTableAsStmt.Objtype == pg.ObjectType_OBJECT_MATVIEW {
			return "CREATE MATERIALIZED VIEW"
		}
		return "CREATE TABLE AS"
	case *pg.Node_TransactionStmt:
		return strings.TrimPrefix(x.TransactionStmt.Kind.String(), "TRANS_STMT_")
	case *pg.Node_AlterTableStmt:
		return "ALTER " + objectName(x.AlterTableStmt.Objtype)
	case *pg.Node_CreateFunctionStmt:
		if x.CreateFunctionStmt.IsProcedure {
			return "CREATE PROCEDURE"
		}
		return "CREATE FUNCTION"
	case nil:
		return ""
	}
	m := n.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().Get(0))
	name := strings.TrimSuffix(string(fd.Name()), "_stmt")
	return strings.ToUpper(strings.ReplaceAll(name, "_", " "))
}

func objectName(t pg.ObjectType) string {
	return strings.ReplaceAll(strings.TrimPrefix(t.String(), "OBJECT_"), "_", " ")
}
