package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// benchParallelism is the number of requests in flight per GOMAXPROCS: the
// worker batches what is waiting (one fsync per batch), so throughput
// needs many in flight.
const benchParallelism = 256

// BenchmarkHTTPVerify measures verify_action requests over real keep-alive
// HTTP connections against the real worker (Pebble log with fsync,
// projections) with GOMAXPROCS×benchParallelism requests in flight. Every
// request is a new, APPROVED decision: each goroutine has its own agent and
// walks its own conversations step by step (an agent acts sequentially, so
// requests in flight are spread over agents, as in a deployment).
//
// The gate has no engine Verifier: the benchmark measures the request path
// (HTTP, authentication, decode, decide, fsync'd append, projections,
// answer), as it has since it was written; the engines have their own
// benchmarks. With the test gate's in-process sql engine registered, every
// calculate action would also read the agent from the projections to
// decide whether an engine may run (Worker.verdictJob): about 20
// allocations more per request.
func BenchmarkHTTPVerify(b *testing.B) {
	g := newTestGate(b, gateOptions{noVerifier: true})
	key := g.issueKey("org_bench")
	workers := runtime.GOMAXPROCS(0) * benchParallelism
	agents := make([]agent, workers)
	var wg sync.WaitGroup
	for i := range agents {
		wg.Go(func() { agents[i] = g.register(key, "org_bench", 2, nil) })
	}
	wg.Wait()
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var failed atomic.Int64
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)-1) % len(agents)
		ag := agents[i]
		url := g.srv.URL + "/agents/" + ag.id + "/verify"
		auth := "Bearer " + ag.token
		var body []byte
		for n := 0; pb.Next(); n++ {
			body = fmt.Appendf(body[:0], `{"action":{"type":"calculate","query":"%d+1"},"context":{"conversation_id":"c%d-%d","step_number":%d}}`,
				n, i, n/50, n%50+1)
			status, ok := benchPost(b, client, url, "Authorization", auth, body, nil)
			if !ok {
				return
			}
			if status != http.StatusOK && failed.Add(1) == 1 {
				b.Errorf("status %d for %s", status, body)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkHTTPA2AIntercept measures POST /a2a/intercept over real
// keep-alive HTTP connections against the real worker (Pebble log with
// fsync, projections) with GOMAXPROCS×benchParallelism requests in
// flight: each request the seed's financial message (finance_guard
// recomputes 150.00, forwarded), decided, recorded and answered with its
// signed ES256 attestation. Each goroutine sends as its own pair of agents
// (the pairs' token buckets are set far above the rate reached), with a
// principal's API key, the agents trusted gate-wide.
func BenchmarkHTTPA2AIntercept(b *testing.B) {
	workers := runtime.GOMAXPROCS(0) * benchParallelism
	cfg := domain.DefaultA2AConfig()
	cfg.RatePerMinute, cfg.Burst = domain.MaxA2ARatePerMinute, domain.MaxA2ARatePerMinute
	for i := range workers {
		cfg.TrustedAgents = append(cfg.TrustedAgents, fmt.Sprintf("bench-sender-%d", i))
	}
	cfg.TrustedAgents = append(cfg.TrustedAgents, "bench-receiver")
	slices.Sort(cfg.TrustedAgents)
	g := newTestGate(b, gateOptions{noVerifier: true, a2a: &cfg})
	key := g.issueKey("org_bench")
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := g.srv.URL + "/a2a/intercept"
	var next atomic.Int64
	var failed atomic.Int64
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)-1) % workers
		body := []byte(gatetest.A2AMessage(fmt.Sprintf("bench-sender-%d", i), "bench-receiver", "financial_transaction",
			gatetest.SeedFinancial("150.00")))
		var out bytes.Buffer
		for pb.Next() {
			out.Reset()
			status, ok := benchPost(b, client, url, "X-API-Key", key, body, &out)
			if !ok {
				return
			}
			if (status != http.StatusOK || !bytes.Contains(out.Bytes(), []byte(`"status":"forwarded"`))) && failed.Add(1) == 1 {
				b.Errorf("status %d %s", status, out.Bytes())
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// benchPost posts a JSON body to url with one credential header and
// returns the answer's status, its body copied to out (nil: discarded);
// ok is false when the request failed (reported on b).
func benchPost(b *testing.B, c *http.Client, url, header, value string, body []byte, out *bytes.Buffer) (status int, ok bool) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return 0, false
	}
	req.Header.Set(header, value)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return 0, false
	}
	var w io.Writer = io.Discard
	if out != nil {
		w = out
	}
	_, _ = io.Copy(w, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, true
}
