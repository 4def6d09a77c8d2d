package logic_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/logic"
)

// benchVerify runs q on the warm shared pool and reports the median and
// the 99th percentile of the per-query latency.
func benchVerify(b *testing.B, q string, want engines.Status) {
	e := engine(b)
	req := engines.Request{Query: q, Type: "logic"}
	if o := e.Verify(context.Background(), req); o.Status != want {
		b.Fatalf("%s %+v, want %s", o.Status, o.Err, want)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		o := e.Verify(context.Background(), req)
		durs = append(durs, time.Since(start))
		if o.Status != want {
			b.Fatalf("%s %+v", o.Status, o.Err)
		}
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds())/1000, "p99-ms")
}

func BenchmarkVerify_Simple(b *testing.B) {
	benchVerify(b, "(AND (GT x 5) (LT y 10))", engines.Verified)
}

func BenchmarkVerify_Invoice(b *testing.B) {
	benchVerify(b, `(AND (EQ (PLUS subtotal tax) total) (GT invoice_date "2024-01-01") (MATCH gst_number "`+gst+`"))`, engines.Verified)
}

func BenchmarkVerify_Quantified(b *testing.B) {
	benchVerify(b, "(FORALL (n Int) (IMPLIES (GT n 0) (GE (MULT n n) n)))", engines.Verified)
}

// BenchmarkTranslate is the pure part: parse, check and translate.
func BenchmarkTranslate_Invoice(b *testing.B) {
	q := `(AND (EQ (PLUS subtotal tax) total) (GT invoice_date "2024-01-01") (MATCH gst_number "` + gst + `"))`
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := logicTranslate(q); err != nil {
			b.Fatal(err)
		}
	}
}

func logicTranslate(q string) (*logic.Translation, error) {
	return logic.Translate(q, logic.ModeSatisfiable)
}
