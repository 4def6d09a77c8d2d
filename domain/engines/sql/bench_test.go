package sql

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

// benchVerify runs req b.N times and reports p50 and p99 of the per-op
// durations besides ns/op.
func benchVerify(b *testing.B, req engines.Request, want engines.Status) {
	e := New()
	if o := e.Verify(context.Background(), req); o.Status != want {
		b.Fatalf("status %s, want %s (%+v)", o.Status, want, o.Err)
	}
	d := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		e.Verify(context.Background(), req)
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(d[(len(d)*99)/100].Nanoseconds()), "p99-ns")
}

func BenchmarkVerify_SimpleSelect(b *testing.B) {
	benchVerify(b, engines.Request{Query: "SELECT * FROM customers WHERE status = 'active'"}, engines.Verified)
}

func BenchmarkVerify_JoinWithSchema(b *testing.B) {
	params, _ := json.Marshal(map[string]string{"schema_ddl": shopDDL})
	benchVerify(b, engines.Request{
		Query:  "SELECT u.name, o.total, i.amount FROM users u JOIN orders o ON o.user_id = u.id JOIN billing.invoices i ON i.order_id = o.id WHERE o.status = 'paid' AND u.id = $1 ORDER BY o.total DESC LIMIT 10",
		Params: params,
	}, engines.Verified)
}

func BenchmarkVerify_LongQuery(b *testing.B) {
	// ~60 KB: a wide select list and a long IN list, under every bound.
	var cols []string
	for i := 0; i < 2000; i++ {
		cols = append(cols, "c"+itoa(i))
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM t WHERE id IN (" + strings.TrimSuffix(strings.Repeat("123456, ", 4000), ", ") + ")"
	benchVerify(b, engines.Request{Query: q}, engines.Verified)
}

func BenchmarkVerify_Injection(b *testing.B) {
	benchVerify(b, engines.Request{Query: "SELECT * FROM users WHERE name = '' OR 'a'='a'; DROP TABLE users"}, engines.Blocked)
}

func BenchmarkClassify_SimpleSelect(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Classify("SELECT * FROM customers WHERE status = 'active'"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify_Dialects compares the three parser paths on the same
// query (QWED-Agent spec v1.1 §4.2's example) and on a join with a
// subquery.
func BenchmarkVerify_Dialects(b *testing.B) {
	for _, q := range []struct{ name, sql string }{
		{"select", "SELECT * FROM customers WHERE status = 'active'"},
		{"join", "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > (SELECT avg(total) FROM orders) ORDER BY o.id LIMIT 10"},
	} {
		for _, d := range []string{DialectPostgres, DialectMySQL, DialectSQLite} {
			b.Run(q.name+"/"+d, func(b *testing.B) {
				benchVerify(b, engines.Request{Query: q.sql, Params: json.RawMessage(`{"dialect":"` + d + `"}`)}, engines.Verified)
			})
		}
	}
}

// chainQueries are the queries of BenchmarkVerify_OperatorChain: an OR
// chain of 5,000 always-true operands (20 KB: past the bound in MySQL and
// SQLite, a flat list in PostgreSQL), and the heaviest chain under the
// bound: 20 groups of 480 OR operands joined by AND (~96 KB).
func chainQueries() map[string]string {
	var groups []string
	for i := 0; i < 20; i++ {
		groups = append(groups, "(a = 1"+strings.Repeat(" OR 1", 480)+")")
	}
	return map[string]string{
		"chain5000":  "SELECT id FROM t WHERE a = 1" + strings.Repeat(" OR 1", 5000),
		"underbound": "SELECT id FROM t WHERE " + strings.Join(groups, " AND "),
	}
}

// BenchmarkVerify_OperatorChain measures the worst operator chains per
// dialect: refused before the parser runs past the bound, folded in
// linear time under it.
func BenchmarkVerify_OperatorChain(b *testing.B) {
	qs := chainQueries()
	for _, name := range []string{"chain5000", "underbound"} {
		for _, d := range Dialects() {
			b.Run(name+"/"+d, func(b *testing.B) {
				e := New()
				req := engines.Request{Query: qs[name], Params: json.RawMessage(`{"dialect":"` + d + `"}`)}
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					e.Verify(context.Background(), req)
				}
			})
		}
	}
}

// BenchmarkPrecheck_Nesting measures the pre-parse estimate of the MySQL
// and SQLite paths alone, on a normal query and on a query of
// MaxQueryBytes.
func BenchmarkPrecheck_Nesting(b *testing.B) {
	for name, q := range map[string]string{
		"normal": "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > (SELECT avg(total) FROM orders) ORDER BY o.id LIMIT 10",
		"100KB":  "SELECT " + strings.Repeat("a+b, ", MaxQueryBytes/5-2),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for i := 0; i < b.N; i++ {
				roughNesting(q, true, false)
			}
		})
	}
}
