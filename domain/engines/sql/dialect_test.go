package sql

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// dialectCase is one query of a dialect and what the engine must answer.
type dialectCase struct {
	query  string
	status engines.Status
	risk   Risk   // "" when not checked
	rule   string // a finding the answer must hold, "" for none
	check  string // a check that must be in checks_failed, "" for none
}

func runDialect(t *testing.T, dialect string, cases []dialectCase) {
	t.Helper()
	for _, tc := range cases {
		o := verify(t, tc.query, map[string]any{"dialect": dialect})
		if o.Status != tc.status {
			t.Errorf("%s %q: %s %+v, want %s", dialect, tc.query, o.Status, o.Err, tc.status)
			continue
		}
		if o.Status == engines.Error {
			continue
		}
		r := result(t, o)
		if r.Dialect != dialect || (tc.risk != "" && r.Risk != tc.risk) {
			t.Errorf("%s %q: dialect %s risk %s, want %s", dialect, tc.query, r.Dialect, r.Risk, tc.risk)
		}
		if tc.rule != "" && !slices.ContainsFunc(o.Findings, func(f engines.Finding) bool { return f.Rule == tc.rule }) {
			t.Errorf("%s %q: findings %+v, want %s", dialect, tc.query, o.Findings, tc.rule)
		}
		if tc.check != "" && !slices.Contains(r.ChecksFailed, tc.check) {
			t.Errorf("%s %q: checks_failed %v, want %s", dialect, tc.query, r.ChecksFailed, tc.check)
		}
		if (o.Status == engines.Verified) != (len(r.ChecksFailed) == 0) {
			t.Errorf("%s %q: %s with checks_failed %v", dialect, tc.query, o.Status, r.ChecksFailed)
		}
	}
}

// TestQWEDProtocol_SQL_Dialect_MySQL pins the MySQL path (the TiDB parser)
// under the checks of the PostgreSQL path, with MySQL's own syntax
// (backquotes, LIMIT offset, count, # comments, executable /*! */
// comments, backslash escapes read both ways) and dangers (INTO OUTFILE,
// LOAD DATA, LOAD_FILE, SLEEP, mysql.user, SET GLOBAL).
func TestQWEDProtocol_SQL_Dialect_MySQL(t *testing.T) {
	v, b, e := engines.Verified, engines.Blocked, engines.Error
	runDialect(t, DialectMySQL, []dialectCase{
		{"SELECT `name` FROM `orders` WHERE `id` = 1 LIMIT 10, 5", v, RiskLow, "", ""},
		{"SELECT name FROM orders # a comment\nWHERE id = 1", v, RiskLow, "", ""},
		{"SELECT o.id FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id IN (SELECT 1)", v, RiskLow, "", ""},
		{"SHOW TABLES", v, RiskLow, "", ""},
		{"DELETE FROM orders WHERE id = 1 LIMIT 1", v, RiskHigh, "", ""},
		{"INSERT INTO orders (id, total) VALUES (1, 2) ON DUPLICATE KEY UPDATE total = 3", v, RiskHigh, "", ""},
		{"DROP TABLE users", b, RiskCritical, "", CheckNoDestructive},
		{"TRUNCATE TABLE orders", b, RiskCritical, "", CheckNoDestructive},
		{"DELETE FROM orders", b, RiskCritical, "", CheckNoDestructive},
		{"UPDATE orders SET total = 0 WHERE 1 = 1", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"GRANT ALL ON *.* TO 'bob'@'%'", b, RiskCritical, "", CheckNoDestructive},
		{"SET GLOBAL general_log = 1", b, RiskCritical, "", CheckNoDestructive},
		{"SELECT * FROM orders WHERE name = '' OR 'a' = 'A'", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE name = '' OR 1", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 || '1' = 1", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 OR id = id", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 OR 2 BETWEEN 1 AND 3", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 OR 'a' = 'b'", v, RiskLow, "", ""},
		{"SELECT 1; DROP TABLE orders", b, RiskCritical, "sql.stacked_statements", CheckNoInjection},
		{"SELECT 1; SELECT 2", b, RiskLow, "sql.stacked_statements", CheckSingle},
		{"SELECT LOAD_FILE('/etc/passwd')", b, RiskCritical, "sql.dangerous_function", CheckNoDestructive},
		{"SELECT * FROM orders WHERE id = 1 AND SLEEP(5)", b, RiskCritical, "sql.dangerous_function", CheckNoDestructive},
		{"SELECT name FROM orders INTO OUTFILE '/var/www/x.php'", b, RiskCritical, "sql.into_outfile", CheckNoDestructive},
		{"LOAD DATA INFILE '/etc/passwd' INTO TABLE orders", b, RiskCritical, "sql.load_data", CheckNoDestructive},
		{"SELECT authentication_string FROM mysql.user", b, RiskCritical, "sql.credential_catalog", CheckNoDestructive},
		{"SELECT password FROM accounts", b, RiskHigh, "sql.sensitive_column", CheckNoSensitive},
		{"SELECT * FROM users", b, RiskHigh, "sql.select_star_sensitive", CheckNoSensitive},
		{"EXPLAIN DELETE FROM orders", v, RiskLow, "", ""},
		{"SELECT * FROM orders WHERE a = 1 /*!OR 1=1*/", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT 1 /*! ; DROP TABLE orders */", b, RiskCritical, "sql.stacked_statements", CheckNoInjection},
		{"SELECT * FROM orders WHERE name = 'x\\' OR 1=1 -- '", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE name = 'it\\'s'", v, RiskLow, "", ""},
		{"SELEC 1", e, "", "", ""},
		{"SELECT 'abc", e, "", "", ""},
	})
	o := verify(t, "SELEC name FROM t", map[string]any{"dialect": "mysql"})
	if o.Err == nil || o.Err.Code != CodeSyntax || o.Err.Details["found"] != "SELEC" || o.Err.Details["position"] != 1 {
		t.Errorf("syntax error: %+v", o.Err)
	}
}

// TestQWEDProtocol_SQL_Dialect_SQLite pins the SQLite path (meyer) under
// the checks of the PostgreSQL path, with SQLite's own syntax ([brackets],
// backquotes, LIMIT offset, count) and dangers (ATTACH, PRAGMA that sets
// a value, VACUUM INTO, CREATE TRIGGER, load_extension, the fileio
// functions).
func TestQWEDProtocol_SQL_Dialect_SQLite(t *testing.T) {
	v, b, e := engines.Verified, engines.Blocked, engines.Error
	runDialect(t, DialectSQLite, []dialectCase{
		{"SELECT [name] FROM `orders` WHERE \"id\" = 1 LIMIT 10, 5", v, RiskLow, "", ""},
		{"SELECT o.id FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id IN (SELECT 1)", v, RiskLow, "", ""},
		{"PRAGMA table_info(orders)", v, RiskHigh, "", ""},
		{"DELETE FROM orders WHERE id = 1", v, RiskHigh, "", ""},
		{"INSERT INTO orders (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET total = 3", v, RiskHigh, "", ""},
		{"BEGIN; COMMIT", b, RiskLow, "sql.stacked_statements", CheckSingle},
		{"DROP TABLE users", b, RiskCritical, "", CheckNoDestructive},
		{"DELETE FROM orders", b, RiskCritical, "", CheckNoDestructive},
		{"UPDATE orders SET total = 0 WHERE 1", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"CREATE TRIGGER t AFTER INSERT ON orders BEGIN DELETE FROM items; END", b, RiskCritical, "", CheckNoDestructive},
		{"PRAGMA journal_size_limit = 10", b, RiskCritical, "", CheckNoDestructive},
		{"PRAGMA writable_schema = ON", b, RiskCritical, "sql.dangerous_pragma", CheckNoDestructive},
		{"ATTACH DATABASE '/etc/x.db' AS x", b, RiskCritical, "sql.attach", CheckNoDestructive},
		{"VACUUM INTO '/tmp/copy.db'", b, RiskCritical, "sql.vacuum_into", CheckNoDestructive},
		{"SELECT load_extension('/tmp/evil.so')", b, RiskCritical, "sql.dangerous_function", CheckNoDestructive},
		{"SELECT writefile('/tmp/x', 'y')", b, RiskCritical, "sql.dangerous_function", CheckNoDestructive},
		{"SELECT * FROM orders WHERE name = '' OR 'a' = 'a'", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 OR 1", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 OR id IS id", b, RiskCritical, "sql.tautology", CheckNoInjection},
		{"SELECT * FROM orders WHERE id = 1 OR 'a' = 'A'", v, RiskLow, "", ""},
		{"SELECT * FROM orders WHERE id = 1 OR 1 = '1'", v, RiskLow, "", ""},
		{"SELECT 1; DROP TABLE orders", b, RiskCritical, "sql.stacked_statements", CheckNoInjection},
		{"SELECT password FROM accounts", b, RiskHigh, "sql.sensitive_column", CheckNoSensitive},
		{"EXPLAIN QUERY PLAN DELETE FROM orders", v, RiskLow, "", ""},
		{"SELEC 1", e, "", "", ""},
		{"SELECT 'abc", e, "", "", ""},
	})
	o := verify(t, "SELECT name FROM t WHERE", map[string]any{"dialect": "sqlite3"})
	if o.Err == nil || o.Err.Code != CodeSyntax || o.Err.Details["position"] == nil || o.Err.Details["found"] == nil {
		t.Errorf("syntax error: %+v", o.Err)
	}
	// The message of an unterminated string is bounded, not the rest of
	// the query.
	o = verify(t, "SELECT 'abc"+strings.Repeat("x", 5000), map[string]any{"dialect": "sqlite"})
	if o.Err == nil || o.Err.Code != CodeSyntax || len(o.Err.Message) > 300 {
		t.Errorf("unterminated string: %d bytes of message", len(o.Err.Message))
	}
}

// TestQWEDProtocol_SQL_Dialect_Schema pins schema validation per dialect:
// schema_ddl is read with the dialect's parser, unknown tables and
// columns are FAILED with their name.
func TestQWEDProtocol_SQL_Dialect_Schema(t *testing.T) {
	ddl := map[string]string{
		DialectMySQL:  "CREATE TABLE `orders` (`id` INT PRIMARY KEY AUTO_INCREMENT, total DECIMAL(10,2)) ENGINE=InnoDB; CREATE TABLE items (id INT, sku TEXT)",
		DialectSQLite: "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, total REAL) WITHOUT ROWID; CREATE TABLE items (id, sku)",
	}
	for d, s := range ddl {
		p := map[string]any{"dialect": d, "schema_ddl": s}
		for _, q := range []string{"SELECT o.total FROM orders o WHERE id = 1",
			"SELECT total FROM orders WHERE id IN (SELECT id FROM items WHERE sku = 'x')",
			"SELECT o.id, i.sku FROM orders o JOIN items i ON i.id = o.id ORDER BY id"} {
			if o := verify(t, q, p); o.Status != engines.Verified {
				r, _ := o.Result.(Result)
				t.Errorf("%s %q: known columns: %s %+v %+v", d, q, o.Status, o.Err, r.SchemaErrors)
			}
		}
		for q, name := range map[string]string{"SELECT nope FROM orders": "nope", "SELECT id FROM missing": "missing",
			"SELECT o.nope FROM orders o": "nope"} {
			o := verify(t, q, p)
			r := result(t, o)
			if o.Status != engines.Failed || len(r.SchemaErrors) == 0 || r.SchemaErrors[0].Name != name {
				t.Errorf("%s %q: %s %+v", d, q, o.Status, r.SchemaErrors)
			}
		}
		p["schema_ddl"] = "CREATE TABLE ("
		if o := verify(t, "SELECT 1", p); o.Status != engines.Error || o.Err.Code != CodeInvalidRequest {
			t.Errorf("%s: bad schema: %s %+v", d, o.Status, o.Err)
		}
	}
}

// TestQWEDProtocol_SQL_Dialect_Pathological pins that a pathological
// input on a Go parser path is refused before it can take the stack or
// the time: deep nesting and long unary chains are QWED-REQ-004, an input
// over the length limit too, and the engine answers quickly.
func TestQWEDProtocol_SQL_Dialect_Pathological(t *testing.T) {
	for _, d := range []string{DialectMySQL, DialectSQLite} {
		for _, q := range []string{
			"SELECT " + strings.Repeat("(", 50000) + "1" + strings.Repeat(")", 50000),
			"SELECT " + strings.Repeat("- ", 20000) + "1",
			"SELECT 1 WHERE " + strings.Repeat("NOT ", 20000) + "1",
			"SELECT " + strings.Repeat("1+", MaxQueryBytes),
			// A backslash must not hide the nesting after it, whichever
			// way the dialect reads it.
			"SELECT '\\', " + strings.Repeat("(", 50000) + "1" + strings.Repeat(")", 50000),
			"SELECT 'a\\'' , " + strings.Repeat("(", 50000) + "1" + strings.Repeat(")", 50000),
		} {
			o := verify(t, q, map[string]any{"dialect": d})
			if o.Status != engines.Error || o.Err == nil || o.Err.Code != CodeTooLong {
				t.Errorf("%s %.30q: %s %+v", d, q, o.Status, o.Err)
			}
		}
		// Wide but shallow input parses.
		q := "SELECT 1 FROM t WHERE a IN (" + strings.Repeat("1,", 5000) + "1)"
		if o := verify(t, q, map[string]any{"dialect": d}); o.Status != engines.Verified {
			t.Errorf("%s wide IN list: %s %+v", d, o.Status, o.Err)
		}
	}
}

// TestSeed002_MySQLAnsiQuotesReading pins the ANSI_QUOTES reading of a
// MySQL query: under that server mode "x" is an identifier in which a
// backslash is a plain character, so a double-quoted "string" can read a
// sensitive column and a backslash can end the identifier early and
// expose a stacked DROP that the default and NO_BACKSLASH_ESCAPES
// readings both see inside quotes.
func TestSeed002_MySQLAnsiQuotesReading(t *testing.T) {
	for _, tc := range []struct{ query, check string }{
		{`SELECT '\'' , "\" ; DROP TABLE users; -- ' -- "`, CheckNoInjection},
		{`SELECT "password_hash" FROM users`, CheckNoSensitive},
	} {
		o := verify(t, tc.query, map[string]any{"dialect": "mysql"})
		r := result(t, o)
		if o.Status == engines.Verified || r.IsValid || !slices.Contains(r.ChecksFailed, tc.check) {
			t.Errorf("%q: status %s valid %v failed %v", tc.query, o.Status, r.IsValid, r.ChecksFailed)
		}
		if !strings.Contains(r.Reason, "ANSI_QUOTES") {
			t.Errorf("%q: reason %q does not name the reading", tc.query, r.Reason)
		}
	}
	// A double-quoted string over an ordinary column stays a low read.
	o := verify(t, `SELECT id FROM orders WHERE status = "active"`, map[string]any{"dialect": "mysql"})
	if r := result(t, o); o.Status != engines.Verified || r.Risk != RiskLow {
		t.Errorf("ordinary double-quoted string: status %s risk %s", o.Status, r.Risk)
	}
}

// TestSeed002_SQLiteTrueFalse pins SQLite's TRUE and FALSE (identifiers
// SQLite reads as 1 and 0): OR true is an always-true condition as in
// the other dialects, and with a schema they are not unknown columns.
func TestSeed002_SQLiteTrueFalse(t *testing.T) {
	schema := "CREATE TABLE orders (id INT, status TEXT, paid BOOLEAN)"
	for _, q := range []string{"SELECT id FROM orders WHERE status = 'a' OR true", "SELECT id FROM orders WHERE status = 'a' OR NOT FALSE"} {
		for _, p := range []map[string]any{{"dialect": "sqlite"}, {"dialect": "sqlite", "schema_ddl": schema}} {
			o := verify(t, q, p)
			r := result(t, o)
			if o.Status == engines.Verified || !r.Violation || !slices.Contains(r.ChecksFailed, CheckNoInjection) {
				t.Errorf("%q %v: status %s failed %v", q, p, o.Status, r.ChecksFailed)
			}
		}
	}
	o := verify(t, "SELECT id FROM orders WHERE paid = TRUE", map[string]any{"dialect": "sqlite", "schema_ddl": schema})
	if r := result(t, o); o.Status != engines.Verified || len(r.SchemaErrors) != 0 {
		t.Errorf("paid = TRUE: status %s schema errors %v", o.Status, r.SchemaErrors)
	}
}

// TestSeed002_MySQLMariaDBComments pins the MariaDB reading of the mysql
// dialect: MariaDB runs the content of /*M! ... */ (and /*M!100100 ...
// */), MySQL skips it, so a DROP or a tautology inside one counts.
func TestSeed002_MySQLMariaDBComments(t *testing.T) {
	for _, tc := range []struct{ query, check string }{
		{"SELECT 1 /*M! ; DROP TABLE users */", CheckNoInjection},
		{"SELECT id FROM orders WHERE status = 'a' /*M!100100 OR 1=1 */", CheckNoInjection},
	} {
		o := verify(t, tc.query, map[string]any{"dialect": "mysql"})
		r := result(t, o)
		if o.Status == engines.Verified || !slices.Contains(r.ChecksFailed, tc.check) || !strings.Contains(r.Reason, "MariaDB") {
			t.Errorf("%q: status %s failed %v reason %q", tc.query, o.Status, r.ChecksFailed, r.Reason)
		}
	}
	o := verify(t, "SELECT id /*M! , status */ FROM orders", map[string]any{"dialect": "mysql"})
	if r := result(t, o); o.Status != engines.Verified || r.Risk != RiskLow {
		t.Errorf("a harmless MariaDB comment: status %s risk %s", o.Status, r.Risk)
	}
}
