package a2aproxy_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/a2aproxy"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/httpapi"
)

// BenchmarkProxyOverhead measures proxy mode against a direct A2A call:
// the same Go upstream (an A2A JSON-RPC endpoint answering a fixed
// message) and the same Go client (keep-alive, one request at a time),
// direct, then through the gate's proxy path, where each message is
// decided by a real embedded gate (POST /a2a/intercept in process: the
// trust boundary, the passthrough route, the ES256 attestation, the
// fsynced append) before it is forwarded; and the decision alone (POST
// /a2a/intercept with the same client). It reports the median latency
// (p50-µs); the overhead is the difference of the medians of proxy and
// direct, of which intercept is the decision's share.
func BenchmarkProxyOverhead(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			fmt.Fprintf(w, `{"name":"bench","supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, "http://"+r.Host)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"answer","role":"ROLE_AGENT","parts":[{"text":"ok"}]}}}`)
	}))
	defer up.Close()

	cfg := domain.DefaultConfig()
	a := domain.DefaultA2AConfig()
	a.RatePerMinute, a.Burst = domain.MaxA2ARatePerMinute, domain.MaxA2ARatePerMinute
	a.TrustedAgents = []string{"procurement", "treasury"}
	cfg.A2A = &a
	g := gatetest.StartWith(b, embedded.Options{DataDir: b.TempDir(), AdminKey: "admin", Config: &cfg, Logger: slog.New(slog.DiscardHandler)})
	defer g.Stop(b)
	api := httpapi.New(httpapi.Config{Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash, JWKS: g.Keyring.JWKS, Logger: slog.New(slog.DiscardHandler)})
	u, err := a2aproxy.ParseUpstream("treasury=" + up.URL)
	if err != nil {
		b.Fatal(err)
	}
	p, err := a2aproxy.New(a2aproxy.Config{Upstreams: []a2aproxy.Upstream{u}, Interceptor: a2aproxy.InProcess(api), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	gate := httptest.NewServer(a2aproxy.Wrap(p, api))
	defer gate.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	const (
		send      = `{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"bench-%s-%d","role":"ROLE_USER","metadata":{"sender_agent_id":"procurement"},"parts":[{"text":"hello"}]}}}`
		intercept = `{"sender_agent_id":"procurement","receiver_agent_id":"treasury","payload_type":"general","payload":{"text":"hello"},"trace_id":"bench-%[2]s-%[3]d","x":%[1]d}`
	)
	for _, c := range []struct{ name, url, body, want string }{
		// The A2A call without the gate.
		{"direct", up.URL + "/rpc", send, `"result"`},
		// The same call through the proxy.
		{"proxy", gate.URL + a2aproxy.PathPrefix + "treasury", send, `"result"`},
		// The decision alone: the message's one part as POST /a2a/intercept
		// over HTTP, what any gated message pays.
		{"intercept", gate.URL + "/a2a/intercept", strings.Replace(intercept, `,"x":%[1]d`, "", 1), `"forwarded"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			i := 0
			for b.Loop() {
				i++
				body := fmt.Sprintf(c.body, i, b.Name(), i)
				if i == 1 {
					// Warm up outside the timing: the card's fetch, the
					// connections, the gate's first appends.
					b.StopTimer()
					for w := range 50 {
						call(b, client, c.url, fmt.Sprintf(c.body, -w, b.Name()+"-warm", w), c.want, fmt.Sprintf("warm-%s-%d", b.Name(), w))
					}
					b.StartTimer()
				}
				start := time.Now()
				call(b, client, c.url, body, c.want, fmt.Sprintf("bench-%s-%d", b.Name(), i))
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
		})
	}
}

// call posts one request and checks its answer.
func call(b *testing.B, client *http.Client, url, body, want, key string) {
	r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-API-Key", "admin")
	r.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), want) {
		b.Fatalf("%s: %d %s", url, resp.StatusCode, out)
	}
}
