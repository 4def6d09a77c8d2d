package sql

import (
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentgate/agentgate/domain/engines"
)

// Risk is a statement's risk level; its values are those of the gate's
// domain.Risk (docs/ARCHITECTURE.md, "Where the specifications disagree"), so
// domain.Risk(class.Risk) converts.
type Risk string

// The risk levels the engine gives (it never gives medium).
const (
	RiskLow      Risk = "low"
	RiskHigh     Risk = "high"
	RiskCritical Risk = "critical"
)

func (r Risk) rank() int {
	switch r {
	case RiskLow:
		return 0
	case RiskHigh:
		return 2
	}
	return 3
}

// Class is the classification of a query (docs/ARCHITECTURE.md, "Where the
// specifications disagree"): the worst statement's risk, what the query touches,
// and the findings.
type Class struct {
	// Risk is the worst statement's risk (critical when a finding blocks).
	Risk Risk `json:"risk_level"`
	// Statement names the worst statement (SELECT, DELETE, DROP TABLE...).
	Statement string `json:"statement"`
	// StatementClass is the worst statement's class: read, write,
	// unbounded_write, ddl, privilege, session or admin.
	StatementClass string `json:"statement_class"`
	// Reason explains Risk.
	Reason string `json:"reason"`
	// Statements classifies each statement, in order.
	Statements []Statement `json:"statements"`
	// Violation is set when a finding is high or critical: an injection
	// pattern (tautology, stacked writes) or server file, program or
	// network access; the gate counts it as a security violation.
	Violation bool `json:"security_violation"`
	// Findings are sorted by line, column and rule.
	Findings []engines.Finding `json:"findings"`
	// Tables, TablesWritten, ColumnsRead and ColumnsWritten are sorted;
	// a column is table.column when its table is known, table.* for a star
	// over a table whose columns are unknown.
	Tables         []string `json:"tables"`
	TablesWritten  []string `json:"tables_written"`
	ColumnsRead    []string `json:"columns_read"`
	ColumnsWritten []string `json:"columns_written"`
	// SchemaErrors are the schema violations (only with a schema), sorted
	// by position.
	SchemaErrors []SchemaError `json:"schema_errors,omitempty"`
	// Complexity are the size figures checked against the limits.
	Complexity Complexity `json:"complexity"`
}

// Complexity are a query's size figures.
type Complexity struct {
	Statements    int `json:"statements"`
	Bytes         int `json:"bytes"`
	Nodes         int `json:"nodes"`
	Nesting       int `json:"nesting"`
	Joins         int `json:"joins"`
	SubqueryDepth int `json:"subquery_depth"`
}

// Classify classifies query (PostgreSQL) with the default sensitive lists
// and no schema, for the gate's risk of an execute_sql action. The error is
// an *Error: QWED-REQ-003 for a syntax error or an empty query, QWED-REQ-004
// beyond a hard bound; a caller fails closed on it (critical).
func Classify(query string) (Class, error) {
	c, p := classify(query, defaultOptions())
	if p != nil {
		return Class{}, &Error{Problem: *p}
	}
	return c, nil
}

func classify(query string, opt *options) (Class, *engines.Problem) {
	switch opt.dialect {
	case DialectMySQL:
		return classifyMySQL(query, opt)
	case DialectSQLite:
		return classifySQLite(query, opt)
	}
	ps, p := parseSQL(query, "query", MaxQueryBytes)
	if p != nil {
		return Class{}, p
	}
	if len(ps.tree.Stmts) == 0 {
		return Class{}, syntaxProblem(query, "query", "no statement", charPos(query, len(query)), "a statement", "end of input")
	}
	a := newAnalysis(query, opt)
	for _, raw := range ps.tree.Stmts {
		a.statement(raw)
	}
	second := int32(0)
	if len(ps.tree.Stmts) > 1 {
		second = ps.tree.Stmts[1].StmtLocation
	}
	return a.class(ps.nodes, ps.nesting, second), nil
}

// class is the classification the analysis reached over every statement
// of the query: the worst statement, the stacked-statements finding (at
// byte offset second, where the second statement starts), the findings
// sorted, and the size figures.
func (a *analysis) class(nodes, nesting int, second int32) Class {
	c := Class{
		Complexity: Complexity{Statements: len(a.stmts), Bytes: len(a.src), Nodes: nodes,
			Nesting: nesting, Joins: a.joins, SubqueryDepth: a.maxDepth},
	}
	worst := a.stmts[0]
	writes := false
	for _, st := range a.stmts {
		c.Statements = append(c.Statements, *st)
		if st.Risk.rank() > worst.Risk.rank() {
			worst = st
		}
		if st.Risk.rank() >= RiskHigh.rank() {
			writes = true
		}
	}
	if n := len(a.stmts); n > 1 {
		sev, msg := "medium", strconv.Itoa(n)+" stacked statements"
		if writes {
			sev, msg = "critical", msg+", of which one writes or changes the database: an injection pattern"
		}
		a.find("sql.stacked_statements", sev, msg, second)
	}
	c.Risk, c.Statement, c.StatementClass, c.Reason = worst.Risk, worst.Statement, worst.Class, worst.Reason
	slices.SortFunc(a.findings, func(x, y engines.Finding) int {
		if x.Line != y.Line {
			return x.Line - y.Line
		}
		if x.Column != y.Column {
			return x.Column - y.Column
		}
		return strings.Compare(x.Rule, y.Rule)
	})
	c.Findings = append([]engines.Finding{}, a.findings...)
	for _, f := range c.Findings {
		if f.Severity == "critical" || f.Severity == "high" {
			c.Violation = true
		}
	}
	if c.Violation && c.Risk != RiskCritical {
		c.Risk, c.Reason = RiskCritical, "security finding: "+firstBlocking(c.Findings)
	}
	c.Tables = sortedKeys(a.tables)
	c.TablesWritten = sortedKeys(a.written)
	c.ColumnsRead = sortedKeys(a.colsRead)
	c.ColumnsWritten = sortedKeys(a.colsWrite)
	slices.SortStableFunc(a.schemaErrs, func(x, y SchemaError) int { return x.Position - y.Position })
	c.SchemaErrors = dedupSchemaErrors(a.schemaErrs)
	if c.Statements == nil {
		c.Statements = []Statement{}
	}
	return c
}

func firstBlocking(fs []engines.Finding) string {
	for _, f := range fs {
		if f.Severity == "critical" || f.Severity == "high" {
			return f.Message
		}
	}
	return ""
}

func dedupSchemaErrors(in []SchemaError) []SchemaError {
	var out []SchemaError
	for i, e := range in {
		if i > 0 && e == in[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// fnRisk is what calling a function does.
type fnRisk struct {
	risk     Risk
	severity string // of the finding; "" for none
	what     string
}

// Functions are the server functions whose call changes a query's risk,
// by name (in lower case, whatever the schema they are called in: a
// same-named function elsewhere is treated alike).
var functionRisks = map[string]fnRisk{}

func init() {
	add := func(r Risk, sev, what string, names ...string) {
		for _, n := range names {
			functionRisks[n] = fnRisk{risk: r, severity: sev, what: what}
		}
	}
	add(RiskCritical, "critical", "reads the database server's file system",
		"pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir", "pg_ls_waldir",
		"pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_ls_logicalsnapdir", "pg_ls_logicalmapdir",
		"pg_ls_replslotdir", "pg_logdir_ls", "lo_import")
	add(RiskCritical, "critical", "writes the database server's file system",
		"lo_export", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync")
	add(RiskCritical, "critical", "opens a connection to another server",
		"dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_send_query", "dblink_open",
		"dblink_fetch", "dblink_get_result")
	add(RiskCritical, "critical", "runs a query given as a string, which the engine cannot see",
		"query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema")
	add(RiskCritical, "critical", "controls server processes or configuration",
		"pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote",
		"pg_switch_wal", "pg_create_restore_point", "set_config", "pg_log_backend_memory_contexts",
		"pg_drop_replication_slot", "pg_create_logical_replication_slot", "pg_create_physical_replication_slot",
		"pg_replication_origin_create", "pg_replication_origin_drop", "pg_backup_start", "pg_backup_stop")
	add(RiskCritical, "high", "delays the server (the time-based blind injection pattern)",
		"pg_sleep", "pg_sleep_for", "pg_sleep_until")
	add(RiskHigh, "", "writes large objects",
		"lo_create", "lo_creat", "lo_unlink", "lo_put", "lo_from_bytea", "lo_truncate", "lowrite")
	add(RiskHigh, "", "advances or sets a sequence", "nextval", "setval")
	add(RiskHigh, "", "takes an advisory lock",
		"pg_advisory_lock", "pg_advisory_xact_lock", "pg_advisory_lock_shared", "pg_advisory_xact_lock_shared",
		"pg_try_advisory_lock", "pg_try_advisory_xact_lock", "pg_try_advisory_lock_shared",
		"pg_try_advisory_xact_lock_shared")
}

// functions finds the calls of risky functions anywhere in a statement
// (whatever the clause or statement kind).
func (a *analysis) functions(n *pg.Node) {
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if fc, ok := m.Interface().(*pg.FuncCall); ok {
			name := strings.ToLower(opName(fc.Funcname))
			if r, ok := functionRisks[name]; ok {
				class := "admin"
				if r.risk == RiskHigh {
					class = "write"
				}
				a.raise(r.risk, class, name+" "+r.what)
				if r.severity != "" {
					a.find("sql.dangerous_function", r.severity, name+" "+r.what, fc.Location)
				}
			}
		}
		eachChild(m, walk)
	}
	walk(n.ProtoReflect())
}
