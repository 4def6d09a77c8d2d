package sql

import (
	"strings"
	"testing"
)

// TestDesign4_SQLClassify pins the risk of each statement class
// (docs/ARCHITECTURE.md, "Where the specifications disagree"; QWED-Agent spec v1.1 §2.2):
// reads low, bounded writes high, unbounded or
// structural changes critical; injection patterns (QWED protocol v1.0 §10.2)
// critical with a security violation; strings and comments never mistaken
// for statements, because the parser reads them.
func TestDesign4_SQLClassify(t *testing.T) {
	cases := []struct {
		sql       string
		risk      Risk
		violation bool
		statement string
	}{
		// Reads.
		{"SELECT * FROM customers WHERE status = 'active'", RiskLow, false, "SELECT"},
		{"select id from t", RiskLow, false, "SELECT"},
		{"SELECT 'DROP TABLE users'", RiskLow, false, "SELECT"},
		{"SELECT 'it''s; DROP TABLE x'", RiskLow, false, "SELECT"},
		{`SELECT "weird;name" FROM t`, RiskLow, false, "SELECT"},
		{"SELECT $$ DROP TABLE x; $$", RiskLow, false, "SELECT"},
		{"SELECT $tag$ ; DELETE FROM t $tag$ AS body", RiskLow, false, "SELECT"},
		{"SELECT E'\\'; DROP TABLE t; --'", RiskLow, false, "SELECT"},
		{"SELECT * FROM t;", RiskLow, false, "SELECT"},
		{"WITH a AS (SELECT 1) SELECT * FROM a", RiskLow, false, "SELECT"},
		{"SELECT a FROM t -- ; DROP TABLE t", RiskLow, false, "SELECT"},
		{"SELECT a /* ; DROP TABLE t */ FROM t", RiskLow, false, "SELECT"},
		{"SELECT * FROM t WHERE 1=1 AND id = 4", RiskLow, false, "SELECT"},
		{"SELECT * FROM t WHERE id = $1", RiskLow, false, "SELECT"},
		{"SELECT a::text FROM t", RiskLow, false, "SELECT"},
		{"SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id GROUP BY o.id", RiskLow, false, "SELECT"},
		{"SELECT 1 UNION ALL SELECT 2 ORDER BY 1", RiskLow, false, "SELECT"},
		{"SELECT * FROM t WHERE a = 1 OR b = 2", RiskLow, false, "SELECT"},
		{"SELECT * FROM t WHERE a = 1 OR 1 = 2", RiskLow, false, "SELECT"},
		{"SHOW search_path", RiskLow, false, "SHOW"},
		{"EXPLAIN SELECT * FROM t", RiskLow, false, "EXPLAIN"},
		{"EXPLAIN DELETE FROM t", RiskLow, false, "EXPLAIN"},
		{"BEGIN", RiskLow, false, "BEGIN"},
		// Bounded writes and creations.
		{"INSERT INTO t (a) VALUES (1)", RiskHigh, false, "INSERT"},
		{"INSERT INTO t SELECT * FROM s ON CONFLICT (id) DO UPDATE SET a = excluded.a", RiskHigh, false, "INSERT"},
		{"UPDATE orders SET status = 'shipped' WHERE id = 7", RiskHigh, false, "UPDATE"},
		{"DELETE FROM t WHERE id = 3", RiskHigh, false, "DELETE"},
		{"DELETE FROM t WHERE id IN (SELECT id FROM u WHERE x = 1)", RiskHigh, false, "DELETE"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a", RiskHigh, false, "MERGE"},
		{"WITH d AS (DELETE FROM t WHERE id = 1 RETURNING *) SELECT * FROM d", RiskHigh, false, "SELECT"},
		{"SELECT * INTO backup FROM t", RiskHigh, false, "SELECT INTO"},
		{"SELECT * FROM t WHERE id = 1 FOR UPDATE", RiskHigh, false, "SELECT"},
		{"SELECT nextval('s')", RiskHigh, false, "SELECT"},
		{"CREATE TABLE x (a int)", RiskHigh, false, "CREATE TABLE"},
		{"CREATE UNIQUE INDEX i ON t (a)", RiskHigh, false, "CREATE INDEX"},
		{"EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET a = 1 WHERE id = 2", RiskHigh, false, "EXPLAIN"},
		{"SELECT password FROM users WHERE id = 1", RiskHigh, false, "SELECT"},
		// Unbounded writes and structural changes.
		{"UPDATE orders SET status = 'shipped'", RiskCritical, false, "UPDATE"},
		{"UPDATE t SET a = (SELECT b FROM u WHERE u.id = 1)", RiskCritical, false, "UPDATE"},
		{"DELETE FROM t", RiskCritical, false, "DELETE"},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", RiskCritical, false, "SELECT"},
		{"EXPLAIN ANALYZE DELETE FROM t", RiskCritical, false, "EXPLAIN"},
		{"DROP TABLE users", RiskCritical, false, "DROP TABLE"},
		{"DROP/**/TABLE users", RiskCritical, false, "DROP TABLE"},
		{"TRUNCATE t", RiskCritical, false, "TRUNCATE"},
		{"ALTER TABLE t ADD COLUMN a int", RiskCritical, false, "ALTER TABLE"},
		{"GRANT ALL ON t TO bob", RiskCritical, false, "GRANT"},
		{"REVOKE ALL ON t FROM bob", RiskCritical, false, "REVOKE"},
		{"CREATE ROLE admin", RiskCritical, false, "CREATE ROLE"},
		{"CREATE USER bob WITH PASSWORD 'x'", RiskCritical, false, "CREATE USER"},
		{"ALTER USER bob WITH SUPERUSER", RiskCritical, false, "ALTER ROLE"},
		{"SET ROLE postgres", RiskCritical, false, "SET"},
		{"CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql", RiskCritical, false, "CREATE FUNCTION"},
		{"DO $$ BEGIN PERFORM 1; END $$", RiskCritical, false, "DO"},
		{"CALL p()", RiskCritical, false, "CALL"},
		{"VACUUM", RiskCritical, false, "VACUUM"},
		{"EXECUTE stmt", RiskCritical, false, "EXECUTE"},
		// Injection patterns and server access: security violations.
		{"COPY t TO PROGRAM 'rm -rf /'", RiskCritical, true, "COPY"},
		{"COPY t FROM '/etc/passwd'", RiskCritical, true, "COPY"},
		{"SELECT pg_read_file('/etc/passwd')", RiskCritical, true, "SELECT"},
		{"SELECT * FROM t WHERE id = 1 AND pg_sleep(10) IS NOT NULL", RiskCritical, true, "SELECT"},
		{"SELECT lo_export(1, '/tmp/x')", RiskCritical, true, "SELECT"},
		{"SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(a int)", RiskCritical, true, "SELECT"},
		{"SELECT usename, passwd FROM pg_shadow", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users; DROP TABLE users", RiskCritical, true, "DROP TABLE"},
		{"SELECT 1; UPDATE users SET role = 'admin' WHERE id = 5", RiskCritical, true, "UPDATE"},
		{"SELECT * FROM users WHERE name = 'a' OR 1=1", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE name = '' OR 'a'='a'", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR TRUE", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR (2 > 1)", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 or x = x", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR 1+1 = 2", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR '1' = 1", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR 2 BETWEEN 1 AND 3", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR NOT false", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR 'x'::text = 'x'", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5/**/OR/**/1=1", RiskCritical, true, "SELECT"},
		{"SELECT * FROM users WHERE id = 5 OR 1=1 -- '", RiskCritical, true, "SELECT"},
		{"SELECT * FROM a JOIN b ON a.id = b.id OR 1=1", RiskCritical, true, "SELECT"},
		{"SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE u.a = 1 OR 'a' = 'a')", RiskCritical, true, "SELECT"},
		{"DELETE FROM t WHERE 1=1", RiskCritical, true, "DELETE"},
		{"DELETE FROM t WHERE TRUE", RiskCritical, true, "DELETE"},
		{"UPDATE users SET admin = true WHERE name = 'x' OR 1=1", RiskCritical, true, "UPDATE"},
	}
	for _, tc := range cases {
		c, err := Classify(tc.sql)
		if err != nil {
			t.Errorf("%q: %v", tc.sql, err)
			continue
		}
		if c.Risk != tc.risk || c.Violation != tc.violation || c.Statement != tc.statement {
			t.Errorf("%q: risk %s violation %v statement %q (%s); want %s %v %q; findings %+v",
				tc.sql, c.Risk, c.Violation, c.Statement, c.Reason, tc.risk, tc.violation, tc.statement, c.Findings)
		}
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
}

// TestSeed002_8_4_SyntaxErrorDetails pins QWED-REQ-003 with the details of
// QWED protocol v1.0 §8.4: position (PostgreSQL's cursorpos, 1-based characters),
// expected when it is known, and the token found there.
func TestSeed002_8_4_SyntaxErrorDetails(t *testing.T) {
	cases := []struct {
		sql      string
		pos      int
		found    string
		expected string
	}{
		{"SELECT * FROM", 14, "end of input", "more input (the statement is incomplete)"},
		{"SELECT * FORM t", 10, "FORM", ""},
		{"SELECT é, ü FROM t WHERE FROM", 26, "FROM", ""},
		{"SELECT 'abc", 8, "'abc", "closing quote '"},
		{"SELECT 1 /* open", 10, "/* open", "end of comment */"},
		{"", 1, "end of input", "a statement"},
		{" -- only a comment", 19, "end of input", "a statement"},
		{"SELECT 1\x00; DROP TABLE t", 9, "NUL byte", ""},
		{"SELECT '\xff'", 9, "byte 0xff", ""},
	}
	for _, tc := range cases {
		_, err := Classify(tc.sql)
		p, ok := ProblemOf(err)
		if !ok || p.Code != CodeSyntax {
			t.Errorf("%q: error %v, want %s", tc.sql, err, CodeSyntax)
			continue
		}
		if p.Details["position"] != tc.pos || p.Details["found"] != tc.found {
			t.Errorf("%q: details %v, want position %d found %q", tc.sql, p.Details, tc.pos, tc.found)
		}
		if exp, _ := p.Details["expected"].(string); exp != tc.expected {
			t.Errorf("%q: expected %q, want %q", tc.sql, exp, tc.expected)
		}
	}
}

// TestDesign2_7_QueryBounds pins the hard bounds on both sides (invariant 7,
// docs/ARCHITECTURE.md): query bytes, and the nesting checked before the C
// parser runs (a C stack overflow would kill the process).
func TestDesign2_7_QueryBounds(t *testing.T) {
	under := "SELECT '" + strings.Repeat("a", MaxQueryBytes-len("SELECT ''")) + "'"
	if _, err := Classify(under); err != nil {
		t.Errorf("query of exactly MaxQueryBytes: %v", err)
	}
	if _, err := Classify(under + " "); !hasCode(err, CodeTooLong) {
		t.Errorf("query of MaxQueryBytes+1: %v, want %s", err, CodeTooLong)
	}
	// 1+1+...: one nesting level per operator.
	ok := "SELECT 1" + strings.Repeat("+1", MaxNesting-2)
	if _, err := Classify(ok); err != nil {
		t.Errorf("nesting at the limit: %v", err)
	}
	for _, q := range []string{
		"SELECT 1" + strings.Repeat("+1", MaxNesting),
		"SELECT 1" + strings.Repeat("+1", 45000),
		"SELECT 1" + strings.Repeat("::int", 19000),
		"SELECT 1 FROM t" + strings.Repeat(" JOIN t USING (a)", 5000),
		"SELECT a, b FROM t" + strings.Repeat(" UNION SELECT a, b FROM t", 3000),
		"SELECT " + strings.Repeat("(", 3000) + "1" + strings.Repeat(")", 3000),
		"SELECT " + strings.Repeat("NOT ", 20000) + "true",
	} {
		if _, err := Classify(q); !hasCode(err, CodeTooLong) {
			t.Errorf("%.40q...: %v, want %s", q, err, CodeTooLong)
		}
	}
	// A scanner error after a deep prefix: the parser stops at the error
	// and never builds the tree.
	if _, err := Classify("SELECT 1" + strings.Repeat("+1", 45000) + " 'open"); !hasCode(err, CodeSyntax) {
		t.Errorf("deep prefix then unterminated string: %v, want %s", err, CodeSyntax)
	}
	// Wide but flat input is fine: a long IN list and many AND terms.
	wide := "SELECT * FROM t WHERE a IN (" + strings.TrimSuffix(strings.Repeat("1,", 5000), ",") + ") AND " +
		strings.TrimSuffix(strings.Repeat("b = 1 AND ", 2000), " AND ")
	if _, err := Classify(wide); err != nil {
		t.Errorf("wide query: %v", err)
	}
}

func hasCode(err error, code string) bool {
	p, ok := ProblemOf(err)
	return ok && p.Code == code
}

// TestDesign2_7_NodeAndSchemaBounds pins MaxNodes and MaxSchemaTables on
// both sides.
func TestDesign2_7_NodeAndSchemaBounds(t *testing.T) {
	nodes := func(q string) int {
		ps, p := parseSQL(q, "query", MaxQueryBytes)
		if p != nil {
			t.Fatalf("%.40q: %+v", q, p)
		}
		return ps.nodes
	}
	base := nodes("SELECT 1")
	per := nodes("SELECT 1,1") - base
	k := (MaxNodes - base) / per
	if _, err := Classify("SELECT 1" + strings.Repeat(",1", k)); err != nil {
		t.Errorf("%d nodes: %v", base+k*per, err)
	}
	if _, err := Classify("SELECT 1" + strings.Repeat(",1", k+1)); !hasCode(err, CodeTooLong) {
		t.Errorf("%d nodes: %v, want %s", base+(k+1)*per, err, CodeTooLong)
	}
	ddl := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString("CREATE TABLE t" + itoa(i) + " (a int);")
		}
		return b.String()
	}
	if s, err := ParseSchema(ddl(MaxSchemaTables)); err != nil || len(s.Tables()) != MaxSchemaTables {
		t.Errorf("%d tables: %v", MaxSchemaTables, err)
	}
	if _, err := ParseSchema(ddl(MaxSchemaTables + 1)); !hasCode(err, CodeTooLong) {
		t.Errorf("%d tables: %v, want %s", MaxSchemaTables+1, err, CodeTooLong)
	}
}
