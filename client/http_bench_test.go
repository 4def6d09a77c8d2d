package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// BenchmarkHTTPClientOverhead measures what the client adds to a call,
// once raw (net/http: the request, the body read, no decoding) and once
// through AgentClient (URL and headers, the retry loop, the JSON encoding
// and typed decoding), interleaved, on the same keep-alive transport to
// the same real gate, for GET /agents/{id}/budget and POST
// /agents/{id}/verify with the agent's token. It reports the median of
// each and the median of the per-pair difference (overhead-p50-µs); ns/op
// is the pair.
func BenchmarkHTTPClientOverhead(b *testing.B) {
	ctx := context.Background()
	// The gate's start-up lines would split the benchmark's result line
	// (benchstat reads it whole).
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Cleanup(func() { slog.SetDefault(prev) })
	g := startGate(b, nil)
	agent, reg := register(b, g.principal(b, "org_bench"), "org_bench", "bench", domain.Permissions{}, domain.Limits{})
	hc := g.srv.Client()
	bearer := "Bearer " + string(reg.AgentToken)
	rawCall := func(method, url, body string) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, rd)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", bearer)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("raw call: %d %v", resp.StatusCode, err)
		}
	}
	b.Run("GET budget", func(b *testing.B) {
		url := g.URL + "/agents/" + reg.AgentID + "/budget"
		overhead(b, func(int) { rawCall(http.MethodGet, url, "") }, func(int) {
			if _, err := agent.Budget(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	runs := 0
	b.Run("POST verify", func(b *testing.B) {
		// Each call is a new action: its own step of a conversation of at
		// most 40 steps (the gate allows 50), raw and client apart, each
		// run of this function in conversations of its own.
		url := g.URL + "/agents/" + reg.AgentID + "/verify"
		runs++
		run := runs
		overhead(b, func(i int) {
			rawCall(http.MethodPost, url, fmt.Sprintf(`{"action":{"type":"calculate","query":"%d+1"},"context":{"conversation_id":"raw_%d_%d","step_number":%d}}`,
				i, run, i/40, i%40+1))
		}, func(i int) {
			d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: strconv.Itoa(i) + "+2"},
				&domain.ActionContext{ConversationID: fmt.Sprintf("cli_%d_%d", run, i/40), StepNumber: json.Number(strconv.Itoa(i%40 + 1))})
			if err != nil || d.Decision != domain.Approved {
				b.Fatalf("client call: %+v %v", d, err)
			}
		})
	})
}

// overhead runs raw and viaClient alternately (each call's index given),
// after a warm-up, and reports their medians and the median difference.
func overhead(b *testing.B, raw, viaClient func(i int)) {
	for i := range 100 {
		raw(1_000_000 + i)
		viaClient(1_000_000 + i)
	}
	rawT := make([]time.Duration, 0, b.N)
	cliT := make([]time.Duration, 0, b.N)
	diff := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		first, second := raw, viaClient
		if i%2 == 1 { // alternate the order: neither path always runs second
			first, second = viaClient, raw
		}
		t0 := time.Now()
		first(i)
		t1 := time.Now()
		second(i)
		t2 := time.Now()
		r, c := t1.Sub(t0), t2.Sub(t1)
		if i%2 == 1 {
			r, c = c, r
		}
		rawT, cliT, diff = append(rawT, r), append(cliT, c), append(diff, c-r)
	}
	b.StopTimer()
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2]) / float64(time.Microsecond)
	}
	if len(diff) > 0 {
		b.ReportMetric(median(rawT), "raw-p50-µs")
		b.ReportMetric(median(cliT), "client-p50-µs")
		b.ReportMetric(median(diff), "overhead-p50-µs")
	}
}
