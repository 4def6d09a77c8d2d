package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// The HTTP benchmarks of the consumer policy engine (issue 14, "Figures"):
// an execute through the gate against a local business endpoint (a real
// socket, the testBusiness), on the embedded gate (Pebble log with fsync,
// projections, the adapter runner recording each outcome), in open mode
// with a spending policy the executes stay under, so Evaluate runs on each.

// benchExecGate is the gate of the execute benchmarks: n agents of one
// consumer and a daily limit far above what the benchmark spends.
func benchExecGate(b *testing.B, n int) (*execGate, []agent) {
	g := newExecGate(b, domain.ExecuteModeOpen, 100)
	g.addPolicy(g.key, map[string]any{"id": "bench-daily", "type": "spending", "spending": map[string]any{"daily_cents": 1_000_000_000_000}})
	agents := make([]agent, n)
	var wg sync.WaitGroup
	for i := range agents {
		wg.Go(func() { agents[i] = g.register(g.key, "org_a", 2, nil) })
	}
	wg.Wait()
	return g, agents
}

// latencies collects request durations.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// p returns the q-quantile (0 < q < 1) in milliseconds.
func (l *latencies) p(q float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))]) / float64(time.Millisecond)
}

// BenchmarkHTTPExecuteLatency measures one execute at a time through the
// gate (decide, fsync'd append, the adapter's call to the business, the
// outcome's fsync'd append, the answer with the business's data) and one
// call at a time straight to the same business with the same body: the
// p50 of each and the gate's overhead, their difference.
func BenchmarkHTTPExecuteLatency(b *testing.B) {
	g, agents := benchExecGate(b, 1)
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	gate, raw := &latencies{}, &latencies{}
	ag := agents[0]
	var body []byte
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		body = fmt.Appendf(body[:0], `{"businessId":"shop","agent_token":%q,"request":{"item":"bench-%d","amount_cents":1}}`, ag.token, n)
		start := time.Now()
		status, ok := benchPost(b, client, g.srv.URL+"/agp/execute", "X-Agent-ID", ag.id, body, nil)
		gate.add(time.Since(start))
		if !ok || status != http.StatusOK {
			b.Fatalf("execute: %d", status)
		}
		req := body[bytes.Index(body, []byte(`"request":`))+len(`"request":`) : len(body)-1]
		start = time.Now()
		status, ok = benchPost(b, client, g.biz.srv.URL, "Idempotency-Key", fmt.Sprintf("raw-%d", n), req, nil)
		raw.add(time.Since(start))
		if !ok || status != http.StatusOK {
			b.Fatalf("raw call: %d", status)
		}
	}
	b.StopTimer()
	b.ReportMetric(gate.p(0.5), "gate-p50-ms")
	b.ReportMetric(raw.p(0.5), "raw-p50-ms")
	b.ReportMetric(gate.p(0.5)-raw.p(0.5), "overhead-p50-ms")
}

// BenchmarkHTTPExecuteThroughput measures executes through the gate with
// GOMAXPROCS×benchParallelism in flight, spread over 64 agents of one
// consumer (one ledger, one home partition): executes answered per second,
// each with the business's outcome, and their p50 and p99.
func BenchmarkHTTPExecuteThroughput(b *testing.B) {
	g, agents := benchExecGate(b, 64)
	workers := runtime.GOMAXPROCS(0) * benchParallelism
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next, failed atomic.Int64
	lat := &latencies{}
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1) - 1)
		ag := agents[i%len(agents)]
		var body []byte
		for n := 0; pb.Next(); n++ {
			body = fmt.Appendf(body[:0], `{"businessId":"shop","agent_token":%q,"request":{"item":"bench-%d-%d","amount_cents":1}}`, ag.token, i, n)
			start := time.Now()
			status, ok := benchPost(b, client, g.srv.URL+"/agp/execute", "X-Agent-ID", ag.id, body, nil)
			lat.add(time.Since(start))
			if !ok {
				return
			}
			if status != http.StatusOK && failed.Add(1) == 1 {
				b.Errorf("execute: status %d", status)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exec/s")
	b.ReportMetric(lat.p(0.5), "p50-ms")
	b.ReportMetric(lat.p(0.99), "p99-ms")
}
