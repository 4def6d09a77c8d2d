package sql

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

const shopDDL = `
CREATE TABLE users (id INT PRIMARY KEY, name TEXT, email TEXT, password_hash TEXT);
CREATE TABLE orders (id INT PRIMARY KEY, user_id INT REFERENCES users(id), total NUMERIC, status TEXT);
CREATE TABLE billing.invoices (id INT, order_id INT, amount NUMERIC);
CREATE INDEX orders_user ON orders (user_id);
ALTER TABLE orders ADD COLUMN shipped_at TIMESTAMPTZ;
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
`

func verify(t *testing.T, query string, params any) engines.Outcome {
	t.Helper()
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return New().Verify(context.Background(), engines.Request{Query: query, Type: EngineID, Params: raw})
}

func result(t *testing.T, o engines.Outcome) Result {
	t.Helper()
	r, ok := o.Result.(Result)
	if !ok {
		t.Fatalf("result %T (status %s, err %+v)", o.Result, o.Status, o.Err)
	}
	return r
}

// TestSeed002_5_2_5_Example verifies the example request of the QWED protocol
// v1.0 §5.2.5.
func TestSeed002_5_2_5_Example(t *testing.T) {
	o := verify(t, "SELECT * FROM users WHERE id = 1", map[string]any{
		"schema_ddl": "CREATE TABLE users (id INT PRIMARY KEY, name TEXT, email TEXT)",
		"dialect":    "postgresql",
	})
	if o.Status != engines.Verified {
		t.Fatalf("status %s, err %+v", o.Status, o.Err)
	}
	r := result(t, o)
	if !r.IsValid || r.Risk != RiskLow || r.Statement != "SELECT" || r.StatementClass != "read" {
		t.Errorf("result %+v", r)
	}
	if !slices.Equal(r.ColumnsRead, []string{"users.email", "users.id", "users.name"}) || !slices.Equal(r.Tables, []string{"users"}) {
		t.Errorf("tables %v columns %v", r.Tables, r.ColumnsRead)
	}
	if !slices.Contains(r.ChecksPassed, CheckSchemaValid) || len(r.ChecksFailed) != 0 {
		t.Errorf("checks %v / %v", r.ChecksPassed, r.ChecksFailed)
	}
}

// TestSeed000_4_2_ChecksPassed pins the checks of the verification
// response of the QWED-Agent spec v1.1 §4.2 for its example query.
func TestSeed000_4_2_ChecksPassed(t *testing.T) {
	o := verify(t, "SELECT * FROM customers WHERE status = 'active'", nil)
	r := result(t, o)
	if o.Status != engines.Verified || r.Risk != RiskLow {
		t.Fatalf("status %s risk %s", o.Status, r.Risk)
	}
	for _, c := range []string{CheckNoDestructive, CheckNoSensitive, CheckNoInjection} {
		if !slices.Contains(r.ChecksPassed, c) {
			t.Errorf("%s not passed: %v", c, r.ChecksPassed)
		}
	}
}

// TestSeed002_5_2_5_SchemaValidation pins schema validation against
// schema_ddl: unknown tables and columns FAILED with name and position;
// aliases, qualified names, CTEs, derived tables, views and ALTER TABLE
// ADD COLUMN resolved.
func TestSeed002_5_2_5_SchemaValidation(t *testing.T) {
	ok := []string{
		"SELECT u.name, o.total FROM users u JOIN orders o ON o.user_id = u.id WHERE o.status = 'paid'",
		"SELECT users.name FROM public.users WHERE users.id = 1",
		"SELECT i.amount FROM billing.invoices i",
		"WITH recent AS (SELECT id, total FROM orders) SELECT r.total FROM recent r",
		"WITH t(x) AS (SELECT id FROM orders) SELECT x FROM t",
		"SELECT d.n FROM (SELECT name AS n FROM users) d",
		"SELECT total * 2 AS double FROM orders ORDER BY double",
		"SELECT name FROM users WHERE EXISTS (SELECT 1 FROM orders WHERE orders.user_id = users.id)",
		"SELECT name FROM users u WHERE id IN (SELECT user_id FROM orders WHERE total > 10)",
		"SELECT shipped_at FROM orders",
		"SELECT total FROM big_orders",
		"UPDATE orders SET status = 'shipped' WHERE id = 7",
		"INSERT INTO orders (id, user_id, total) VALUES (1, 2, 3.5) RETURNING id",
		"INSERT INTO users (id, name) VALUES (1, 'a') ON CONFLICT (id) DO UPDATE SET name = excluded.name",
		"DELETE FROM orders o USING users u WHERE o.user_id = u.id AND u.name = 'x'",
		"SELECT count(*) FROM orders GROUP BY status HAVING count(*) > 1",
		"SELECT x.id FROM generate_series(1, 3) AS x(id)",
		`SELECT "name" FROM "users" WHERE "id" = 1`,
		"SELECT NAME FROM USERS",
		"SELECT u.name, (SELECT count(*) FROM orders o WHERE o.user_id = u.id) AS n FROM users u",
		"SELECT u.name FROM users u, LATERAL (SELECT total FROM orders o WHERE o.user_id = u.id) l WHERE l.total > 1",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
	}
	for _, q := range ok {
		o := verify(t, q, map[string]any{"schema_ddl": shopDDL})
		if o.Status != engines.Verified {
			r, _ := o.Result.(Result)
			t.Errorf("%q: status %s, schema errors %+v, err %+v", q, o.Status, r.SchemaErrors, o.Err)
		}
	}
	bad := []struct {
		sql, kind, name string
		pos             int
	}{
		{"SELECT * FROM customers", "unknown_table", "customers", 15},
		{"SELECT nme FROM users", "unknown_column", "nme", 8},
		{"SELECT u.nme FROM users u", "unknown_column", "nme", 8},
		{"SELECT x.name FROM users u", "unknown_qualifier", "x", 8},
		{"SELECT id FROM users u JOIN orders o ON o.user_id = u.id", "ambiguous_column", "id", 8},
		{"UPDATE orders SET colour = 'red' WHERE id = 1", "unknown_column", "colour", 19},
		{"INSERT INTO orders (id, nope) VALUES (1, 2)", "unknown_column", "nope", 25},
		{"SELECT r.total FROM (SELECT id FROM orders) r", "unknown_column", "total", 8},
		{"SELECT name FROM other.users", "unknown_table", "other.users", 18},
		{"SELECT é FROM users", "unknown_column", "é", 8},
		{`SELECT "Name" FROM users`, "unknown_column", "Name", 8},
		{`SELECT id FROM "Users"`, "unknown_table", "Users", 16},
		{"SELECT id FROM users, nowhere", "unknown_table", "nowhere", 23},
		{"SELECT o.total FROM users u", "unknown_qualifier", "o", 8},
		{"SELECT id FROM users WHERE\n  emial = 'a'", "unknown_column", "emial", 30},
	}
	for _, tc := range bad {
		o := verify(t, tc.sql, map[string]any{"schema_ddl": shopDDL})
		r := result(t, o)
		if o.Status != engines.Failed || len(r.SchemaErrors) == 0 {
			t.Errorf("%q: status %s, schema errors %+v", tc.sql, o.Status, r.SchemaErrors)
			continue
		}
		e := r.SchemaErrors[0]
		if e.Kind != tc.kind || e.Name != tc.name || e.Position != tc.pos || r.IsValid || r.Message == "" {
			t.Errorf("%q: %+v, want %s %s at %d", tc.sql, e, tc.kind, tc.name, tc.pos)
		}
		if !slices.Contains(r.ChecksFailed, CheckSchemaValid) {
			t.Errorf("%q: checks failed %v", tc.sql, r.ChecksFailed)
		}
	}
	// Line and column of a schema error on a later line.
	r := result(t, verify(t, "SELECT id FROM users WHERE\n  emial = 'a'", map[string]any{"schema_ddl": shopDDL}))
	if e := r.SchemaErrors[0]; e.Line != 2 || e.Column != 3 {
		t.Errorf("line/column %d:%d, want 2:3", e.Line, e.Column)
	}
}

// TestSeed002_5_2_5_SchemaDDLErrors pins bad schema_ddl: QWED-REQ-001 with
// the position of the syntax error, field schema_ddl.
func TestSeed002_5_2_5_SchemaDDLErrors(t *testing.T) {
	o := verify(t, "SELECT 1", map[string]any{"schema_ddl": "CREATE TABLE t (a INT,"})
	if o.Status != engines.Error || o.Err == nil || o.Err.Code != CodeInvalidRequest ||
		o.Err.Details["field"] != "schema_ddl" || o.Err.Details["position"] != 23 {
		t.Errorf("outcome %s %+v", o.Status, o.Err)
	}
	long := "CREATE TABLE t (a INT);" + strings.Repeat(" ", MaxSchemaDDLBytes)
	if o := verify(t, "SELECT 1", map[string]any{"schema_ddl": long}); o.Err == nil || o.Err.Code != CodeTooLong {
		t.Errorf("long DDL: %+v", o.Err)
	}
	if _, err := ParseSchema(strings.Repeat(" ", MaxSchemaDDLBytes-len("CREATE TABLE t (a INT)")) + "CREATE TABLE t (a INT)"); err != nil {
		t.Errorf("DDL of exactly the limit: %v", err)
	}
}

// TestSeed002_8_Params pins params decoding: unknown fields and wrong types
// are QWED-REQ-001, another dialect is UNSUPPORTED with the reason.
func TestSeed002_8_Params(t *testing.T) {
	for _, p := range []string{`{"schema_dd":"x"}`, `{"dialect":5}`, `{"max_joins":-1}`, `{"max_joins":257}`,
		`{"max_subquery_depth":65}`, `[1]`, `{"sensitive_columns":"password"}`} {
		o := New().Verify(context.Background(), engines.Request{Query: "SELECT 1", Params: json.RawMessage(p)})
		if o.Status != engines.Error || o.Err == nil || o.Err.Code != CodeInvalidRequest {
			t.Errorf("params %s: %s %+v", p, o.Status, o.Err)
		}
	}
	for _, d := range []string{"tsql", "oracle", "mariadb"} {
		o := verify(t, "SELECT 1", map[string]any{"dialect": d})
		if o.Status != engines.Unsupported || o.Err == nil || !strings.Contains(o.Err.Message, d) {
			t.Errorf("dialect %s: %s %+v", d, o.Status, o.Err)
		}
	}
	for _, d := range []string{"postgresql", "PostgreSQL", "postgres", "pg", ""} {
		if o := verify(t, "SELECT 1", map[string]any{"dialect": d}); o.Status != engines.Verified {
			t.Errorf("dialect %q: %s %+v", d, o.Status, o.Err)
		}
	}
	var names []string
	for i := 0; i <= MaxSensitiveNames; i++ {
		names = append(names, "c")
	}
	if o := verify(t, "SELECT 1", map[string]any{"sensitive_columns": names}); o.Err == nil || o.Err.Code != CodeInvalidRequest {
		t.Errorf("too many sensitive names: %+v", o.Err)
	}
	if o := verify(t, "SELECT 1", map[string]any{"sensitive_columns": names[1:]}); o.Status != engines.Verified {
		t.Errorf("sensitive names at the limit: %s %+v", o.Status, o.Err)
	}
}

// TestSeed002_6_2_Outcomes pins the status of each kind of query: BLOCKED
// with QWED-SEC-002 for injection patterns, ERROR with QWED-REQ-003 for a
// syntax error, VERIFIED with the class for the rest.
func TestSeed002_6_2_Outcomes(t *testing.T) {
	o := verify(t, "SELECT * FROM users WHERE name = '' OR 'a'='a'", nil)
	if o.Status != engines.Blocked || o.Err == nil || o.Err.Code != CodeMalicious || len(o.Findings) == 0 {
		t.Errorf("tautology: %s %+v", o.Status, o.Err)
	}
	if r := result(t, o); r.IsValid || !slices.Contains(r.ChecksFailed, CheckNoInjection) {
		t.Errorf("tautology result %+v", r)
	}
	o = verify(t, "SELECT 1; DROP TABLE users", nil)
	if o.Status != engines.Blocked || o.Err.Code != CodeMalicious {
		t.Errorf("stacked destructive: %s %+v", o.Status, o.Err)
	}
	o = verify(t, "SELECT 1; SELECT 2", nil)
	if r := result(t, o); o.Status != engines.Blocked || !slices.Contains(r.ChecksFailed, CheckSingle) || len(o.Findings) != 1 {
		t.Errorf("stacked reads: %s %+v", o.Status, o.Findings)
	}
	o = verify(t, "SELECT 1; SELECT 2", map[string]any{"allow": []string{AllowMultiple}})
	if r := result(t, o); o.Status != engines.Verified || !slices.Equal(r.ChecksWaived, []string{CheckSingle}) || len(r.ChecksFailed) != 0 {
		t.Errorf("stacked reads allowed: %s %+v", o.Status, r)
	}
	o = New().Verify(context.Background(), engines.Request{Query: "DELETE FROM t WHERE id = 1", IncludeProof: true})
	if pr, ok := o.Proof.(Proof); !ok || len(pr.Steps) != 1 || !strings.Contains(pr.Steps[0], "DELETE -> write, high") {
		t.Errorf("proof %+v", o.Proof)
	}
	if o := verify(t, "DELETE FROM t WHERE id = 1", nil); o.Proof != nil {
		t.Errorf("proof without include_proof: %+v", o.Proof)
	}
	o = verify(t, "SELEC 1", nil)
	if o.Status != engines.Error || o.Err.Code != CodeSyntax || o.Err.Details["found"] != "SELEC" || o.Err.Details["position"] != 1 {
		t.Errorf("syntax: %s %+v", o.Status, o.Err)
	}
	if o.Status.HTTPStatus() != 500 {
		t.Errorf("http %d", o.Status.HTTPStatus())
	}
}

// TestSeed002_5_2_5_SensitiveColumns pins the sensitive-column findings:
// the default list, params additions, SELECT * on a table with one (each
// BLOCKED: a failed check is not verified), and columns used only in
// conditions not flagged.
func TestSeed002_5_2_5_SensitiveColumns(t *testing.T) {
	cases := []struct {
		sql    string
		params map[string]any
		rule   string
	}{
		{"SELECT password FROM accounts_x", nil, "sql.sensitive_column"},
		{"SELECT u.api_key FROM u", nil, "sql.sensitive_column"},
		{"SELECT stripe_secret_key FROM cfg", nil, "sql.sensitive_column"},
		{"UPDATE users SET password_hash = 'x' WHERE id = 1", nil, "sql.sensitive_column"},
		{"SELECT id FROM t RETURNING ssn", nil, ""}, // syntax error: skipped below
		{"SELECT * FROM users", map[string]any{"schema_ddl": shopDDL}, "sql.select_star_sensitive"},
		{"SELECT * FROM credentials", nil, "sql.select_star_sensitive"},
		{"SELECT salary FROM staff", map[string]any{"sensitive_columns": []string{"salary"}}, "sql.sensitive_column"},
		{"SELECT * FROM staff", map[string]any{"sensitive_tables": []string{"staff"}}, "sql.select_star_sensitive"},
		{"SELECT id FROM users WHERE token = $1", nil, "-"},
		{"SELECT * FROM orders", map[string]any{"schema_ddl": shopDDL}, "-"},
		{"SELECT token_count FROM usage", nil, "sql.sensitive_column"},
		{"SELECT tokens_used FROM usage", nil, "-"},
	}
	for _, tc := range cases {
		if tc.rule == "" {
			continue
		}
		o := verify(t, tc.sql, tc.params)
		want := engines.Verified
		if tc.rule != "-" {
			want = engines.Blocked
		}
		if o.Status != want {
			t.Errorf("%q: %s %+v", tc.sql, o.Status, o.Err)
			continue
		}
		r := result(t, o)
		got := ""
		for _, f := range o.Findings {
			got = f.Rule
		}
		if tc.rule == "-" {
			if got != "" || !slices.Contains(r.ChecksPassed, CheckNoSensitive) {
				t.Errorf("%q: finding %q", tc.sql, got)
			}
			continue
		}
		if got != tc.rule || r.Risk != RiskHigh || !slices.Contains(r.ChecksFailed, CheckNoSensitive) {
			t.Errorf("%q: finding %q risk %s, want %s high", tc.sql, got, r.Risk, tc.rule)
		}
	}
}

// TestDesign2_7_PolicyLimits pins joins and subquery depth on both sides of
// their limits: at the limit VERIFIED, beyond it FAILED with the reason.
func TestDesign2_7_PolicyLimits(t *testing.T) {
	joins := func(n int) string {
		return "SELECT 1 FROM t0" + strings.Repeat(" JOIN t0 USING (a)", n)
	}
	nest := func(n int) string {
		return "SELECT 1 WHERE 1 IN " + strings.Repeat("(SELECT 1 WHERE 1 IN ", n-1) + "(SELECT 1" + strings.Repeat(")", n)
	}
	for _, tc := range []struct {
		sql    string
		params map[string]any
		status engines.Status
	}{
		{joins(DefaultMaxJoins), nil, engines.Verified},
		{joins(DefaultMaxJoins + 1), nil, engines.Failed},
		{joins(3), map[string]any{"max_joins": 3}, engines.Verified},
		{joins(4), map[string]any{"max_joins": 3}, engines.Failed},
		{nest(DefaultMaxSubqueryDepth), nil, engines.Verified},
		{nest(DefaultMaxSubqueryDepth + 1), nil, engines.Failed},
		{nest(2), map[string]any{"max_subquery_depth": 2}, engines.Verified},
		{nest(3), map[string]any{"max_subquery_depth": 2}, engines.Failed},
	} {
		o := verify(t, tc.sql, tc.params)
		if o.Status != tc.status {
			t.Errorf("%.60q %v: %s, want %s", tc.sql, tc.params, o.Status, tc.status)
			continue
		}
		if r := result(t, o); tc.status == engines.Failed && (!strings.Contains(r.Message, "too complex") || !slices.Contains(r.ChecksFailed, CheckComplexity)) {
			t.Errorf("%.60q: %+v", tc.sql, r)
		}
	}
}

// TestSeed002_2_2_Determinism pins that the same request gives the same
// outcome, byte for byte once encoded.
func TestSeed002_2_2_Determinism(t *testing.T) {
	queries := []string{
		"SELECT u.name, password_hash, o.* FROM users u JOIN orders o ON o.user_id = u.id WHERE u.id = 1 OR 'a'='a'; DELETE FROM orders",
		"WITH a AS (SELECT * FROM users), b AS (SELECT * FROM orders) SELECT nope, a.zz FROM a, b, missing",
		"SELECT * FROM",
	}
	for _, q := range queries {
		req := engines.Request{Query: q, Params: json.RawMessage(`{"schema_ddl":` + strings.ReplaceAll(jsonString(shopDDL), "\n", " ") + `}`), IncludeProof: true}
		first, err := json.Marshal(New().Verify(context.Background(), req))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			again, _ := json.Marshal(New().Verify(context.Background(), req))
			if string(again) != string(first) {
				t.Fatalf("%q: run %d differs:\n%s\n%s", q, i, first, again)
			}
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSeed002_4_2_Capabilities pins the capabilities document.
func TestSeed002_4_2_Capabilities(t *testing.T) {
	c := New().Capabilities()
	if c.EngineID != "sql" || c.Version != Version || c.Limits["query_bytes"] != MaxQueryBytes || !json.Valid(c.Params) {
		t.Errorf("capabilities %+v", c)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Error(err)
	}
}

// TestQWEDProtocol_SQL_DestructiveNotVerified pins the verdict rule of the
// QWED protocol v1.0 §6.1 ("verified: true if verification passed") for
// the sql engine: a statement that fails a check is never VERIFIED. A
// destructive statement (DROP, TRUNCATE, an unbounded DELETE or UPDATE,
// GRANT...) is BLOCKED with QWED-SEC-002, is_valid false and
// security_violation set, its risk class still reported; params.allow
// waives the check (the gate's verify_action does, and decides by the
// class), listing it in checks_waived.
func TestQWEDProtocol_SQL_DestructiveNotVerified(t *testing.T) {
	for _, q := range []string{"DROP TABLE users", "TRUNCATE orders", "DELETE FROM users", "UPDATE users SET name = 'x'",
		"GRANT ALL ON users TO bob", "ALTER TABLE users DROP COLUMN email"} {
		o := verify(t, q, nil)
		r := result(t, o)
		if o.Status != engines.Blocked || o.Err == nil || o.Err.Code != CodeMalicious || r.IsValid || !r.Violation ||
			r.Risk != RiskCritical || !slices.Equal(r.ChecksFailed, []string{CheckNoDestructive}) {
			t.Errorf("%q: %s %+v %+v", q, o.Status, o.Err, r)
		}
		if !strings.Contains(o.Err.Message, "destructive") || o.Err.Details["checks_failed"] == nil {
			t.Errorf("%q: error %+v", q, o.Err)
		}
		o = verify(t, q, map[string]any{"allow": GateAllow()})
		r = result(t, o)
		if o.Status != engines.Verified || !r.IsValid || r.Violation || r.Risk != RiskCritical ||
			len(r.ChecksFailed) != 0 || !slices.Equal(r.ChecksWaived, []string{CheckNoDestructive}) {
			t.Errorf("%q allowed: %s %+v", q, o.Status, r)
		}
	}
	// A bounded write is not destructive: VERIFIED, high risk.
	o := verify(t, "DELETE FROM users WHERE id = 1", nil)
	if r := result(t, o); o.Status != engines.Verified || r.Risk != RiskHigh || len(r.ChecksFailed) != 0 {
		t.Errorf("bounded delete: %s %+v", o.Status, r)
	}
	// Waiving never lets an injection through.
	o = verify(t, "DELETE FROM users WHERE id = 1 OR 1=1", map[string]any{"allow": GateAllow()})
	if o.Status != engines.Blocked || !slices.Contains(result(t, o).ChecksFailed, CheckNoInjection) {
		t.Errorf("tautology allowed: %s %+v", o.Status, o.Err)
	}
	// Every VERIFIED answer of the engine has no failed check.
	for _, q := range []string{"SELECT 1", "SELECT password FROM u", "SELECT 1; SELECT 2", "DROP TABLE t", "INSERT INTO t VALUES (1)"} {
		for _, p := range []map[string]any{nil, {"allow": GateAllow()}} {
			o := verify(t, q, p)
			if r := result(t, o); (o.Status == engines.Verified) != (len(r.ChecksFailed) == 0) || (o.Status == engines.Verified) != r.IsValid {
				t.Errorf("%q %v: %s with checks_failed %v", q, p, o.Status, r.ChecksFailed)
			}
		}
	}
	for _, bad := range []string{`{"allow":["schema_valid"]}`, `{"allow":"destructive_operations"}`,
		`{"allow":["destructive_operations","sensitive_columns","multiple_statements","destructive_operations"]}`} {
		o := New().Verify(context.Background(), engines.Request{Query: "SELECT 1", Params: json.RawMessage(bad)})
		if o.Status != engines.Error || o.Err == nil || o.Err.Code != CodeInvalidRequest {
			t.Errorf("params %s: %s %+v", bad, o.Status, o.Err)
		}
	}
}
