package sql

import (
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/agentgate/agentgate/domain/engines"
)

// Table is one table of a schema: its name, its columns in order, and
// whether its column list is complete (a table built with LIKE or INHERITS
// of a table the DDL does not define, or a partition, is not).
type Table struct {
	Schema   string   `json:"schema,omitempty"`
	Name     string   `json:"name"`
	Columns  []string `json:"columns"`
	Complete bool     `json:"complete"`
}

func (t *Table) has(col string) bool { return slices.Contains(t.Columns, col) }

// qualified is schema.name, or name without a schema.
func (t *Table) qualified() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// Schema is the set of tables read from params.schema_ddl.
type Schema struct {
	tables map[string][]*Table // by name
	count  int
}

// add adds t, or replaces the table of the same schema and name; past
// MaxSchemaTables it is QWED-REQ-004.
func (s *Schema) add(t *Table) *engines.Problem {
	if old := s.lookup(t.Schema, t.Name); old != nil && old.Schema == t.Schema {
		*old = *t
		return nil
	}
	s.count++
	if s.count > MaxSchemaTables {
		return problem(CodeTooLong, "schema_ddl defines more than "+strconv.Itoa(MaxSchemaTables)+" tables",
			map[string]any{"limit": MaxSchemaTables, "field": "schema_ddl"})
	}
	s.tables[t.Name] = append(s.tables[t.Name], t)
	return nil
}

// parseSchemaIn reads ddl in dialect d.
func parseSchemaIn(d, ddl string) (*Schema, *engines.Problem) {
	switch d {
	case DialectMySQL:
		return parseMySQLSchema(ddl)
	case DialectSQLite:
		return parseSQLiteSchema(ddl)
	}
	return parseSchema(ddl)
}

// Tables returns the schema's tables ordered by qualified name.
func (s *Schema) Tables() []*Table {
	var out []*Table
	for _, ts := range s.tables {
		out = append(out, ts...)
	}
	slices.SortFunc(out, func(a, b *Table) int { return strings.Compare(a.qualified(), b.qualified()) })
	return out
}

// lookup finds the table named name (in schema sch when the reference is
// qualified; a table the DDL does not qualify is in "public").
func (s *Schema) lookup(sch, name string) *Table {
	for _, t := range s.tables[name] {
		ts := t.Schema
		if ts == "" {
			ts = "public"
		}
		if sch == "" || sch == ts {
			return t
		}
	}
	return nil
}

// ParseSchema reads the CREATE TABLE (and CREATE VIEW, ALTER TABLE ... ADD
// COLUMN) statements of ddl with the PostgreSQL parser; other statements are
// ignored. Errors are QWED protocol v1.0 §8 problems (QWED-REQ-003 with position,
// expected and found for a syntax error, field "schema_ddl").
func ParseSchema(ddl string) (*Schema, error) {
	s, p := parseSchema(ddl)
	if p != nil {
		return nil, &Error{Problem: *p}
	}
	return s, nil
}

func parseSchema(ddl string) (*Schema, *engines.Problem) {
	ps, p := parseSQL(ddl, "schema_ddl", MaxSchemaDDLBytes)
	if p != nil {
		return nil, p
	}
	s := &Schema{tables: map[string][]*Table{}}
	add := s.add
	for _, raw := range ps.tree.Stmts {
		switch x := raw.Stmt.GetNode().(type) {
		case *pg.Node_CreateStmt:
			if err := add(s.createTable(x.CreateStmt)); err != nil {
				return nil, err
			}
		case *pg.Node_ViewStmt:
			v := x.ViewStmt
			t := &Table{Schema: v.View.GetSchemaname(), Name: v.View.GetRelname()}
			if names := stringList(v.Aliases); len(names) > 0 {
				t.Columns, t.Complete = names, true
			} else if sel, ok := v.Query.GetNode().(*pg.Node_SelectStmt); ok {
				t.Columns, t.Complete = targetNames(sel.SelectStmt)
			}
			if err := add(t); err != nil {
				return nil, err
			}
		case *pg.Node_AlterTableStmt:
			rel := x.AlterTableStmt.Relation
			t := s.lookup(rel.GetSchemaname(), rel.GetRelname())
			if t == nil {
				continue
			}
			for _, c := range x.AlterTableStmt.Cmds {
				cmd, ok := c.Node.(*pg.Node_AlterTableCmd)
				if !ok {
					continue
				}
				switch cmd.AlterTableCmd.Subtype {
				case pg.AlterTableType_AT_AddColumn:
					if cd, ok := cmd.AlterTableCmd.Def.GetNode().(*pg.Node_ColumnDef); ok && !t.has(cd.ColumnDef.Colname) {
						t.Columns = append(t.Columns, cd.ColumnDef.Colname)
					}
				case pg.AlterTableType_AT_DropColumn:
					t.Columns = slices.DeleteFunc(t.Columns, func(c string) bool { return c == cmd.AlterTableCmd.Name })
				}
			}
		}
	}
	return s, nil
}

func (s *Schema) createTable(c *pg.CreateStmt) *Table {
	t := &Table{Schema: c.Relation.GetSchemaname(), Name: c.Relation.GetRelname(), Complete: true}
	if c.Partbound != nil || c.OfTypename != nil {
		t.Complete = false
	}
	addCols := func(cols []string) {
		for _, col := range cols {
			if !t.has(col) {
				t.Columns = append(t.Columns, col)
			}
		}
	}
	for _, inh := range c.InhRelations {
		rv, ok := inh.Node.(*pg.Node_RangeVar)
		if p := s.lookup(rv.RangeVar.GetSchemaname(), rv.RangeVar.GetRelname()); ok && p != nil {
			addCols(p.Columns)
			t.Complete = t.Complete && p.Complete
		} else {
			t.Complete = false
		}
	}
	for _, e := range c.TableElts {
		switch x := e.Node.(type) {
		case *pg.Node_ColumnDef:
			addCols([]string{x.ColumnDef.Colname})
		case *pg.Node_TableLikeClause:
			rv := x.TableLikeClause.Relation
			if p := s.lookup(rv.GetSchemaname(), rv.GetRelname()); p != nil {
				addCols(p.Columns)
				t.Complete = t.Complete && p.Complete
			} else {
				t.Complete = false
			}
		}
	}
	return t
}

// stringList returns the String values of l.
func stringList(l []*pg.Node) []string {
	var out []string
	for _, n := range l {
		if s, ok := n.Node.(*pg.Node_String_); ok {
			out = append(out, s.String_.Sval)
		}
	}
	return out
}

// targetNames are the output column names of a plain SELECT's target list,
// and false when one of them cannot be named (a star).
func targetNames(sel *pg.SelectStmt) ([]string, bool) {
	for sel.Op != pg.SetOperation_SETOP_NONE && sel.Larg != nil {
		sel = sel.Larg
	}
	var out []string
	for _, t := range sel.TargetList {
		rt, ok := t.Node.(*pg.Node_ResTarget)
		if !ok {
			return nil, false
		}
		name, ok := targetName(rt.ResTarget)
		if !ok {
			return nil, false
		}
		out = append(out, name)
	}
	return out, true
}

// targetName is the name PostgreSQL gives an output column.
func targetName(rt *pg.ResTarget) (string, bool) {
	if rt.Name != "" {
		return rt.Name, true
	}
	v := rt.Val
	for {
		tc, ok := v.GetNode().(*pg.Node_TypeCast)
		if !ok {
			break
		}
		v = tc.TypeCast.Arg
	}
	switch x := v.GetNode().(type) {
	case *pg.Node_ColumnRef:
		f := x.ColumnRef.Fields
		if len(f) == 0 {
			return "", false
		}
		if s, ok := f[len(f)-1].Node.(*pg.Node_String_); ok {
			return s.String_.Sval, true
		}
		return "", false // a star
	case *pg.Node_FuncCall:
		return opName(x.FuncCall.Funcname), true
	}
	return "?column?", true
}
