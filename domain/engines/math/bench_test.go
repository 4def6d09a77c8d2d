package math

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

// benchVerify runs one request b.N times and reports p50 and p99 of the
// per-op durations beside ns/op. (The clock is read here, in the
// benchmark, never by the engine.)
func benchVerify(b *testing.B, query, params string, want engines.Status) {
	req := engines.Request{Query: query, Type: "math"}
	if params != "" {
		req.Params = []byte(params)
	}
	e := New()
	if o := e.Verify(context.Background(), req); o.Status != want {
		b.Fatalf("%q: %s %+v", query, o.Status, o.Err)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		e.Verify(context.Background(), req)
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durs[(len(durs)*99)/100].Nanoseconds()), "p99-ns")
}

// BenchmarkVerify_Arithmetic is a typical calculate action (QWED-Agent user guide).
func BenchmarkVerify_Arithmetic(b *testing.B) {
	benchVerify(b, "12.5*8 + 3/4 = 100.75", "", engines.Verified)
}

// BenchmarkVerify_ArithmeticCorrected is a wrong sum answered CORRECTED.
func BenchmarkVerify_ArithmeticCorrected(b *testing.B) {
	benchVerify(b, "2+2=5", "", engines.Corrected)
}

// BenchmarkVerify_Identity is the QWED protocol v1.0 §5.2.1 identity.
func BenchmarkVerify_Identity(b *testing.B) {
	benchVerify(b, "x**2 + 2*x + 1 = (x+1)**2", `{"domain":"real","precision":10}`, engines.Verified)
}

// BenchmarkVerify_IdentityMultivariate is a larger identity in three
// variables.
func BenchmarkVerify_IdentityMultivariate(b *testing.B) {
	benchVerify(b, "(a+b+c)^4 - (a+b+c)^2*(a+b+c)^2 = 0", "", engines.Verified)
}

// BenchmarkVerify_Derivative is the derivative of the task brief.
func BenchmarkVerify_Derivative(b *testing.B) {
	benchVerify(b, "d/dx (x**3 + 2*x) = 3*x**2 + 2", "", engines.Verified)
}

// BenchmarkVerify_DerivativeElementary is a product and chain rule
// through elementary functions.
func BenchmarkVerify_DerivativeElementary(b *testing.B) {
	benchVerify(b, "d/dx (x*sin(x^2)*exp(x)) = sin(x^2)*exp(x) + 2x^2*cos(x^2)*exp(x) + x*sin(x^2)*exp(x)", "", engines.Verified)
}
