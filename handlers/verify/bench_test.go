package verify_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// benchServer answers math claims with a table engine when the math
// engine has not landed, so the figures measure the protocol path
// (validation, routing, recording in the log, rendering) end to end.
func benchServer(b *testing.B) *server {
	b.Helper()
	return newServer(b, byQuery("math", map[string]engines.Outcome{
		"2+2=4": {Status: engines.Verified, Result: map[string]any{"is_valid": true, "message": "2 + 2 = 4"}},
	}))
}

// BenchmarkVerifyMathClaim is POST /verify end to end for one math claim
// (real socket, real gate: each call is recorded in the log).
func BenchmarkVerifyMathClaim(b *testing.B) {
	s := benchServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := s.verify(`{"query":"2+2=4","type":"math"}`); r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkVerifyBatch10 is POST /verify end to end for a batch of ten
// math claims.
func BenchmarkVerifyBatch10(b *testing.B) {
	s := benchServer(b)
	items := make([]string, 10)
	for i := range items {
		items[i] = `{"query":"2+2=4","type":"math","metadata":{"request_id":"` + strconv.Itoa(i) + `"}}`
	}
	body := `{"batch":true,"items":[` + strings.Join(items, ",") + `]}`
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := s.verify(body); r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
