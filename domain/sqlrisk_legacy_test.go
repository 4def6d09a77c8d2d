package domain

import (
	"strings"
	"testing"
)

// TestDesign4_SQLRisk pins the SQL classification of docs/ARCHITECTURE.md
// ("Where the specifications disagree"): reads low, bounded writes high,
// unbounded or structural changes critical, injection patterns critical with a
// security violation, and strings and comments never mistaken for statements.
func TestDesign4_SQLRisk(t *testing.T) {
	cases := []struct {
		sql       string
		risk      Risk
		violation bool
	}{
		{"SELECT * FROM customers WHERE status = 'active'", RiskLow, false},
		{"select id from t", RiskLow, false},
		{"SELECT 'DROP TABLE users'", RiskLow, false},
		{"SELECT 'it''s; DROP TABLE x'", RiskLow, false},
		{`SELECT "weird;name" FROM t`, RiskLow, false},
		{"SELECT $$ DROP TABLE x; $$", RiskLow, false},
		{"SELECT $tag$ ; DELETE FROM t $tag$ AS body", RiskLow, false},
		{"SELECT * FROM t;", RiskLow, false},
		{"SELECT * FROM t; ", RiskLow, false},
		{"WITH a AS (SELECT 1) SELECT * FROM a", RiskLow, false},
		{"SHOW TABLES", RiskLow, false},
		{"EXPLAIN SELECT * FROM t", RiskLow, false},
		{"EXPLAIN DELETE FROM t", RiskLow, false},
		{"EXPLAIN ANALYZE DELETE FROM t", RiskCritical, false},
		{"EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET a = 1 WHERE id = 2", RiskHigh, false},
		{"SELECT * FROM t WHERE 1=1 AND id = 4", RiskLow, false},
		{"SELECT a FROM t -- fetch the list", RiskLow, false},
		{"SELECT a /* the list */ FROM t", RiskLow, false},
		{"SELECT * FROM t WHERE id = ?", RiskLow, false},
		{"SELECT * FROM t WHERE id = $1 AND name = :name", RiskLow, false},
		{"SELECT a::text FROM t", RiskLow, false},
		{"SELECT * INTO backup FROM t", RiskHigh, false},
		{"INSERT INTO t (a) VALUES (1)", RiskHigh, false},
		{"UPDATE orders SET status = 'shipped' WHERE id = 7", RiskHigh, false},
		{"DELETE FROM t WHERE id = 3", RiskHigh, false},
		{"DELETE FROM t WHERE id IN (SELECT id FROM u WHERE x = 1)", RiskHigh, false},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a", RiskHigh, false},
		{"WITH d AS (DELETE FROM t WHERE id = 1 RETURNING *) SELECT * FROM d", RiskHigh, false},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", RiskCritical, false},
		{"CREATE TABLE x (a int)", RiskHigh, false},
		{"CREATE UNIQUE INDEX i ON t (a)", RiskHigh, false},
		{"UPDATE orders SET status = 'shipped'", RiskCritical, false},
		{"UPDATE t SET a = (SELECT b FROM u WHERE u.id = 1)", RiskCritical, false},
		{"DELETE FROM t", RiskCritical, false},
		{"DELETE FROM t WHERE 1=1", RiskCritical, false},
		{"DELETE FROM t WHERE TRUE", RiskCritical, false},
		{"DROP TABLE users", RiskCritical, false},
		{"TRUNCATE t", RiskCritical, false},
		{"ALTER TABLE t ADD COLUMN a int", RiskCritical, false},
		{"GRANT ALL ON t TO bob", RiskCritical, false},
		{"REVOKE ALL ON t FROM bob", RiskCritical, false},
		{"CREATE ROLE admin", RiskCritical, false},
		{"CREATE USER bob", RiskCritical, false},
		{"CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql", RiskCritical, false},
		{"COPY t TO PROGRAM 'rm -rf /'", RiskCritical, false},
		{"VACUUM", RiskCritical, false},
		{"", RiskCritical, false},
		{"   ;  ", RiskCritical, false},
		{"SELECT 'unterminated", RiskCritical, false},
		{"SELECT (1", RiskCritical, false},
		{"SELECT 1)", RiskCritical, false},
		{"SELECT /* unterminated", RiskCritical, false},
		// Injection patterns: security violations.
		{"SELECT * FROM users; DROP TABLE users", RiskCritical, true},
		{"SELECT 1; SELECT 2", RiskCritical, true},
		{"SELECT * FROM users WHERE name = 'a' OR 1=1", RiskCritical, true},
		{"SELECT * FROM users WHERE name = '' OR 'a'='a'", RiskCritical, true},
		{"SELECT * FROM users WHERE id = 5 OR TRUE", RiskCritical, true},
		{"SELECT * FROM users WHERE id = 5 OR (2 > 1)", RiskCritical, true},
		{"SELECT * FROM users WHERE id = 5 or x = x", RiskCritical, true},
		{"SELECT * FROM users WHERE id = 5 OR 1", RiskCritical, true},
		{"SELECT * FROM users WHERE a = 'x' || 1=1", RiskCritical, true},
		{"SELECT * FROM t /* ; DROP TABLE t */", RiskCritical, true},
		{"SELECT * FROM t -- ; DELETE FROM t", RiskCritical, true},
		{"SELECT 1 /*! DROP TABLE t */", RiskCritical, true},
		// Dialect ambiguity: a backslash-escaped quote hides a statement in
		// MySQL's reading, a '#' comment hides one in PostgreSQL's.
		{`SELECT 'a\'; DROP TABLE t; --'`, RiskCritical, true},
		{"SELECT 1 # ; DROP TABLE t", RiskCritical, true},
		{"SELECT * FROM users WHERE id = 5 OR 2 = 3", RiskLow, false},
		{"SELECT * FROM t WHERE a = 1 OR b = 2", RiskLow, false},
	}
	for _, c := range cases {
		got := classifySQLLegacy(c.sql)
		if got.Risk != c.risk || got.Violation != c.violation {
			t.Errorf("classifySQLLegacy(%q) = %+v, want risk %s violation %v", c.sql, got, c.risk, c.violation)
		}
		if got.Risk != RiskLow && got.Reason == "" {
			t.Errorf("classifySQLLegacy(%q) = %+v: a risky classification needs a reason", c.sql, got)
		}
	}
}

// TestDesign2_7_SQLLengthLimit pins the classifier's input bound on both sides.
func TestDesign2_7_SQLLengthLimit(t *testing.T) {
	q := "SELECT '" + strings.Repeat("x", MaxSQLLength-len("SELECT ''")) + "'"
	if len(q) != MaxSQLLength {
		t.Fatalf("len %d", len(q))
	}
	if got := classifySQLLegacy(q); got.Risk != RiskLow {
		t.Fatalf("at the limit: %+v", got)
	}
	if got := classifySQLLegacy(q + " "); got.Risk != RiskCritical || !strings.Contains(got.Reason, "longer than") {
		t.Fatalf("over the limit: %+v", got)
	}
}

// FuzzClassifySQL: the classifier never panics, is deterministic, and a
// string literal never raises the risk of a read.
func FuzzClassifySQLLegacy(f *testing.F) {
	for _, s := range []string{"SELECT 1", "DELETE FROM t WHERE a = 1", "SELECT 'x'; DROP TABLE y", "SELECT $a$ $$ $a$",
		"/* /* */ */ SELECT 1", `SELECT E'\'' FROM t`, "SELECT 1 OR 1=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b := classifySQLLegacy(s), classifySQLLegacy(s)
		if a != b {
			t.Fatalf("not deterministic: %+v vs %+v", a, b)
		}
		if _, err := ParseRisk(string(a.Risk)); err != nil {
			t.Fatalf("risk %q", a.Risk)
		}
		if strings.ContainsAny(s, "'\\\x00") || !isPrintableASCII(s) {
			return
		}
		lit := "SELECT '" + s + "' FROM t"
		if r := classifySQLLegacy(lit); r.Risk != RiskLow {
			t.Fatalf("classifySQLLegacy(%q) = %+v: a string literal changed the risk", lit, r)
		}
	})
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
