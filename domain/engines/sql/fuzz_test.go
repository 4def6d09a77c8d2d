package sql

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// FuzzParseQuery pins that no query makes the engine panic or crash, that
// every outcome encodes, and that the answer is deterministic.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM users WHERE id = 1 OR 1=1",
		"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
		"SELECT u.name FROM users u JOIN orders o ON o.user_id = u.id",
		"INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = excluded.a RETURNING *",
		"COPY t TO PROGRAM 'x'", "SELECT 'abc", "SELECT $$ x $$", "SELECT 1e99999999 = 1e99999999 OR 2 > 1",
		"SELECT 1; DROP TABLE x", "SELECT ((((1))))", "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE",
		"SELECT 'ж\U0010FFFD' FROM users", "SELECT \"é\u3000\" FROM t", "SELECT $ж$ x $ж$", "SELECT U&'\\0441\\+10FFFD'",
		"SELECT {0\U0010FFFD0!}$", "SELECT 1 -- \u2028\nDROP TABLE users",
		"SELECT * FROM users WHERE name ILIKE '%' OR chr(49) = x'31'::text OR (x IS NULL OR x IS NOT NULL) OR $1 = $1",
		"DELETE FROM users WHERE concat('a', NULL) LIKE 'a#%' ESCAPE '#' OR nullif(1, 2) = 1 OR 'a' = 'a' COLLATE \"C\"",
	} {
		f.Add(s)
	}
	e := New()
	params := json.RawMessage(`{"schema_ddl":"CREATE TABLE users (id INT, name TEXT, password TEXT); CREATE TABLE orders (id INT, user_id INT)"}`)
	f.Fuzz(func(t *testing.T, q string) {
		verifyTwice(t, e, engines.Request{Query: q, Params: params, IncludeProof: true})
		if _, err := Classify(q); err != nil {
			if _, ok := ProblemOf(err); !ok {
				t.Fatalf("Classify error without a problem: %v", err)
			}
		}
	})
}

// FuzzParseSchema pins that no schema_ddl makes the engine panic.
func FuzzParseSchema(f *testing.F) {
	f.Add("CREATE TABLE t (a INT, b TEXT)")
	f.Add("CREATE TABLE t2 (LIKE t) INHERITS (t); ALTER TABLE t ADD COLUMN c INT; CREATE VIEW v AS SELECT * FROM t")
	f.Add("CREATE TABLE (")
	f.Fuzz(func(t *testing.T, ddl string) {
		s, err := ParseSchema(ddl)
		if err != nil {
			if _, ok := ProblemOf(err); !ok {
				t.Fatalf("error without a problem: %v", err)
			}
			return
		}
		for _, tb := range s.Tables() {
			if tb.Name == "" && tb.Schema != "" {
				t.Fatalf("table without a name: %+v", tb)
			}
		}
	})
}

// fuzzDialect pins, for one dialect's parser path, that no query or
// schema makes the engine panic, hang or answer an internal error, and
// that the answer is deterministic.
func fuzzDialect(f *testing.F, dialect, ddl string, seeds []string) {
	for _, s := range seeds {
		f.Add(s)
	}
	e := New()
	params, _ := json.Marshal(map[string]any{"dialect": dialect, "schema_ddl": ddl})
	f.Fuzz(func(t *testing.T, q string) {
		verifyTwice(t, e, engines.Request{Query: q, Params: params, IncludeProof: true})
		// The same text as the schema: a schema_ddl never panics either.
		verifyTwice(t, e, engines.Request{Query: "SELECT 1", Params: mustMarshal(t, map[string]any{"dialect": dialect, "schema_ddl": q})})
	})
}

// verifyTwice runs req twice: the outcome encodes, is the same both
// times, and is never an internal error.
func verifyTwice(t *testing.T, e engines.Engine, req engines.Request) {
	t.Helper()
	a := e.Verify(context.Background(), req)
	b := e.Verify(context.Background(), req)
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("not deterministic:\n%s\n%s", ja, jb)
	}
	if a.Status == engines.Error && a.Err != nil && a.Err.Code == CodeEngine {
		t.Fatalf("internal error on %q (params %s): %+v", req.Query, req.Params, a.Err)
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzParseMySQL is fuzzDialect for MySQL (the TiDB parser).
func FuzzParseMySQL(f *testing.F) {
	fuzzDialect(f, DialectMySQL, "CREATE TABLE users (id INT, name TEXT, password TEXT); CREATE TABLE orders (id INT, user_id INT)", []string{
		"SELECT `name` FROM `users` WHERE id = 1 OR 'a'='A' LIMIT 10, 5", "SELECT 1; DROP TABLE x # c\n",
		"SELECT LOAD_FILE('/etc/passwd') INTO OUTFILE '/tmp/x'", "LOAD DATA INFILE '/x' INTO TABLE t",
		"UPDATE users u JOIN orders o ON o.user_id = u.id SET u.name = 'x' WHERE o.id IN (SELECT 1)",
		"SELECT ((((1))))", "SELECT 'abc", "SELECT 1e99999 = 1e99999 OR 2 > 1", "SELECT * FROM mysql.user",
		"WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT 1 FROM r) SELECT * FROM r", "SELECT 0x41 <=> NULL",
		"SELECT id FROM users WHERE a LIKE '%' OR CHAR(49, NULL)=_binary'1' OR (x IS NULL) OR x IS NOT NULL OR IFNULL(NULL, 0x31)",
		"DELETE FROM users WHERE CONCAT('a', 'b') LIKE 'a\\%' ESCAPE '|' OR 1/4 = 0.25 OR lower(name) <=> lower(name)",
	})
}

// FuzzParseSQLite is fuzzDialect for SQLite (meyer).
func FuzzParseSQLite(f *testing.F) {
	fuzzDialect(f, DialectSQLite, "CREATE TABLE users (id INTEGER, name TEXT, password TEXT); CREATE TABLE orders (id, user_id)", []string{
		"SELECT [name] FROM `users` WHERE id = 1 OR \"a\"=\"a\" LIMIT 10, 5", "ATTACH DATABASE '/tmp/x' AS x; PRAGMA writable_schema=1",
		"VACUUM INTO '/tmp/x'", "SELECT load_extension('x')", "CREATE TRIGGER t AFTER INSERT ON users BEGIN DELETE FROM orders; END",
		"INSERT INTO users (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET name = excluded.name RETURNING *",
		"SELECT ((((1))))", "SELECT 'abc", "SELECT 1e99999 = 1e99999 OR 2 > 1", "SELECT x'41' IS NOT NULL",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT n FROM r",
		"SELECT id FROM users WHERE a GLOB '*' OR char(49)=x'31' OR (x ISNULL) OR x IS NOT NULL OR iif(1, 'a' || 'b', 0)",
		"DELETE FROM users WHERE name LIKE 'a!%' ESCAPE '!' OR coalesce(NULL, 1) OR upper(name) = upper(name)",
	})
}
