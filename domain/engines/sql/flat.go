package sql

import "slices"

// The MySQL and SQLite paths collect, per statement, what it reads and
// writes into a flatStmt, and resolve it in one scope: every table of the
// statement (subqueries and CTE bodies included) is visible to every
// column. That is coarser than the PostgreSQL path's nested scopes: an
// unqualified column is taken from the first table of the statement that
// has it (an ambiguity is left to the database), and it is unknown only
// when no table of the statement has it, so an unknown table or column
// is never missed, and a column a nested scope could not see is not
// reported.

// tref is a table reference: schema.name AS alias, at byte offset pos.
type tref struct {
	schema, name, alias string
	pos                 int
	write               bool
}

// cref is a column reference qual.name (qual "" when unqualified).
type cref struct {
	qual, name string
	pos        int
	output     bool // its value leaves the database (select list, RETURNING)
	write      bool // assigned (INSERT column list, UPDATE SET)
}

// sref is a star (qual.* or *).
type sref struct {
	qual   string
	pos    int
	output bool
}

// flatStmt is what one statement reads and writes.
type flatStmt struct {
	tables  []tref
	ctes    map[string]bool
	cols    []cref
	stars   []sref
	aliases []string // select-list aliases (ORDER BY, GROUP BY, HAVING may name them)
}

func (f *flatStmt) cte(name string) {
	if f.ctes == nil {
		f.ctes = map[string]bool{}
	}
	f.ctes[name] = true
}

// credentialTables are, per dialect, the system tables that hold password
// hashes (read: critical, a security finding).
var credentialTables = map[string]map[string]bool{
	DialectMySQL: {"mysql.user": true, "mysql.global_priv": true, "mysql.password_history": true},
}

// resolve records f's tables and columns as the PostgreSQL path does
// (tables read and written, columns read and written, sensitive columns,
// schema errors), in one scope.
func (a *analysis) resolve(f *flatStmt) {
	sc := &scope{outputs: f.aliases}
	byAlias := map[string]*entry{}
	for _, t := range f.tables {
		e := a.tableEntry(t, f.ctes)
		if prev, ok := byAlias[e.alias]; ok && prev.rel == e.rel {
			if t.write {
				a.noteWrite(e.rel)
			}
			continue
		}
		byAlias[e.alias] = e
		sc.entries = append(sc.entries, e)
	}
	for _, s := range f.stars {
		for _, e := range sc.entries {
			if s.qual == "" || s.qual == e.alias {
				a.star(e, int32(s.pos), s.output)
			}
		}
	}
	for _, c := range f.cols {
		cx := ctx{output: c.output, outputs: true}
		switch {
		case c.write:
			target := &entry{}
			for _, t := range f.tables {
				if t.write {
					target = byAlias[aliasOf(t)]
					break
				}
			}
			a.column(target, c.name, true, int32(c.pos), ctx{})
		case c.qual != "":
			if e := a.qualifier([]string{c.qual}, sc, int32(c.pos)); e != nil {
				a.column(e, c.name, false, int32(c.pos), cx)
			}
		default:
			if slices.Contains(f.aliases, c.name) && !c.output {
				continue
			}
			a.flatColumn(c.name, sc, int32(c.pos), cx)
		}
	}
}

// flatColumn resolves an unqualified column in the one scope: to the
// first table that has it; to the only table when its columns are
// unknown; unknown (a schema error) only when every table's columns are
// known and none has it. One scope holds the tables of every nesting
// level, so a name two of them share is not taken for ambiguous.
func (a *analysis) flatColumn(col string, sc *scope, loc int32, c ctx) {
	unknownCols := false
	for _, e := range sc.entries {
		if !e.known {
			unknownCols = true
			continue
		}
		if e.has(col) {
			a.column(e, col, false, loc, c)
			return
		}
	}
	switch {
	case unknownCols && len(sc.entries) == 1:
		a.column(sc.entries[0], col, false, loc, c)
	case unknownCols || a.opt.schema == nil:
		a.bareColumn(col, loc, c)
	default:
		a.schemaError("unknown_column", col, "", "column "+col+" is in no table of the statement", loc)
	}
}

func aliasOf(t tref) string {
	if t.alias != "" {
		return t.alias
	}
	return t.name
}

// tableEntry resolves one table reference: a CTE, a schema table, or a
// table whose columns are unknown.
func (a *analysis) tableEntry(t tref, ctes map[string]bool) *entry {
	alias := aliasOf(t)
	if t.schema == "" && ctes[t.name] {
		return &entry{alias: alias, rel: t.name}
	}
	q := t.name
	if t.schema != "" {
		q = t.schema + "." + t.name
	}
	a.tables[q] = true
	if t.write {
		a.noteWrite(q)
	}
	if credentialTables[a.opt.dialect][q] {
		a.raise(RiskCritical, "admin", "reads "+q+", which holds credentials")
		a.find("sql.credential_catalog", "critical", q+" holds password hashes", int32(t.pos))
	}
	e := &entry{alias: alias, schema: t.schema, rel: q, isTab: true}
	if a.opt.schema != nil {
		tab := a.opt.schema.lookup(t.schema, t.name)
		if tab == nil && t.schema != "" {
			// A database-qualified name matches a table the DDL does not
			// qualify (MySQL's schema is the database).
			if u := a.opt.schema.lookup("", t.name); u != nil && u.Schema == "" {
				tab = u
			}
		}
		if tab == nil {
			a.schemaError("unknown_table", q, "", "table "+q+" is not in the schema", int32(t.pos))
			return e
		}
		e.table, e.rel, e.cols, e.known = tab, tab.qualified(), slices.Clone(tab.Columns), tab.Complete
	}
	return e
}
