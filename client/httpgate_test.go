package client_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/schemas/openapi"
)

// adminKey is the test gates' admin API key.
const adminKey = "qwed_admin_client_test_key"

// testGate is a real embedded gate (Pebble on disk, the built-in engines)
// served by the HTTP API on a real socket, wired as `agentgate serve`
// wires it.
type testGate struct {
	URL string
	srv *httptest.Server
}

// startGate starts a gate in a temporary folder; front, when non-nil,
// wraps its handler (a fault injector in front of the real gate).
func startGate(t testing.TB, front func(http.Handler) http.Handler) *testGate {
	t.Helper()
	return startGateTLS(t, front, false)
}

// startGateTLS is startGate, served over TLS (a self-signed certificate
// the server's own client trusts) when tlsGate.
func startGateTLS(t testing.TB, front func(http.Handler) http.Handler, tlsGate bool) *testGate {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{})...)
	if err != nil {
		t.Fatal(err)
	}
	// The business calls of executes run after their commit point, as
	// serve runs them: the adapter follows the committed batches.
	var runner atomic.Pointer[adapter.Runner]
	cfg := domain.DefaultConfig() // the decision options serve starts with
	g := gatetest.StartWith(t, embedded.Options{
		DataDir: t.TempDir(), AdminKey: adminKey, Logger: logger, Config: &cfg,
		Verifier: verify.NewActionVerifier(reg, 0), AttestationTTL: attest.DefaultAttestationTTL,
		OnBatch: func(evs []*domain.Event, _ time.Duration) {
			if r := runner.Load(); r != nil {
				r.Observe(evs)
			}
		},
	})
	caller, err := adapter.NewCaller(adapter.CallerConfig{Keyring: g.Keyring, NodeID: g.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	r, err := adapter.NewRunner(adapter.RunnerConfig{Caller: caller, Gate: g.Worker,
		Source: adapter.LogSource{State: g.Store, Log: g.Log}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	runner.Store(r)
	stopRunner := r.Start()
	// The worker records the configuration before the first request.
	settle := &domain.Command{Type: domain.CmdTick, Request: domain.RequestID{Source: "test", ID: "settle"}, Tick: &domain.Tick{}}
	if _, err := g.Worker.Submit(context.Background(), settle); err != nil {
		t.Fatal(err)
	}
	// Every exchange the client makes with the gate must be one the
	// OpenAPI document describes (the injected faults in front are not
	// the gate's).
	var h http.Handler = openapi.Hook(t, httpapi.New(httpapi.Config{
		Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash, JWKS: g.Keyring.JWKS,
		Registry: prometheus.NewRegistry(), Logger: logger, Clock: time.Now, Log: g.Log,
		SignTreeHead: func(c attest.TreeHeadClaims) (string, error) { return g.Keyring.SignTreeHead(g.NodeID, c) },
	}))
	if front != nil {
		h = front(h)
	}
	srv := httptest.NewUnstartedServer(recordRoutes(h))
	if tlsGate {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(func() {
		srv.Close()
		stopRunner()
		g.Stop(t)
	})
	return &testGate{URL: srv.URL, srv: srv}
}

// client returns a client of the gate with opts, on the server's
// keep-alive transport.
func (g *testGate) client(t testing.TB, opts ...client.HTTPOption) *client.HTTPClient {
	t.Helper()
	c, err := client.NewHTTP(g.URL, append([]client.HTTPOption{client.WithHTTPClient(g.srv.Client())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// principal issues an API key for principal with the admin key and
// returns a client with it.
func (g *testGate) principal(t testing.TB, principal string) *client.HTTPClient {
	t.Helper()
	k, err := g.client(t, client.WithAPIKey(adminKey)).IssuePrincipalKey(context.Background(), principal)
	if err != nil {
		t.Fatalf("issuing a key for %s: %v", principal, err)
	}
	if k.KeyID == "" || k.APIKey == "" || k.PrincipalID != principal {
		t.Fatalf("IssuePrincipalKey(%s) = %+v", principal, k.KeyReply)
	}
	return g.client(t, client.WithAPIKey(string(k.APIKey)))
}

// register registers a supervised agent of principal with permissions and
// budget and returns its client.
func register(t testing.TB, c *client.HTTPClient, principal, name string, perms domain.Permissions, budget domain.Limits) (*client.AgentClient, *client.Registration) {
	t.Helper()
	a, reg, err := c.RegisterAgentClient(context.Background(), client.RegisterRequest{
		Agent:       domain.AgentInfo{Name: name, Type: "supervised", PrincipalID: principal},
		Permissions: perms, Budget: budget,
	})
	if err != nil {
		t.Fatalf("registering %s: %v", name, err)
	}
	return a, reg
}

// routesHit holds "METHOD /path" of every request the suite's gates saw.
var routesHit sync.Map

// recordRoutes records each request's method and path in routesHit.
func recordRoutes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		routesHit.Store(r.Method+" "+r.URL.Path, true)
		h.ServeHTTP(w, r)
	})
}

// TestMain runs the suite and, when it ran whole (no -run, -bench or
// -fuzz), fails it unless the client called every operation of the
// OpenAPI document: a route the gate gains is a method the client lacks
// until a test calls it.
func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 || flag.Lookup("test.run").Value.String() != "" || flag.Lookup("test.bench").Value.String() != "" {
		os.Exit(code)
	}
	if missing, err := uncalledOperations(); err != nil || len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "the client's tests call no operation of %v (%v): add the method and a test\n", missing, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// uncalledOperations returns the operations of schemas/openapi.v1.json
// that no request of the suite matched, sorted.
func uncalledOperations() ([]string, error) {
	b, err := os.ReadFile("../schemas/openapi.v1.json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	param := regexp.MustCompile(`\{[^}/]+\}`)
	var missing []string
	for path, ops := range doc.Paths {
		quoted := regexp.QuoteMeta(param.ReplaceAllString(path, "PARAM"))
		re := regexp.MustCompile("^" + strings.ReplaceAll(quoted, "PARAM", `[^/]+`) + "$")
		for method := range ops {
			method = strings.ToUpper(method)
			if method != "GET" && method != "POST" && method != "PUT" && method != "DELETE" {
				continue
			}
			hit := false
			routesHit.Range(func(k, _ any) bool {
				m, p, _ := strings.Cut(k.(string), " ")
				hit = m == method && re.MatchString(p)
				return !hit
			})
			if !hit {
				missing = append(missing, method+" "+path)
			}
		}
	}
	slices.Sort(missing)
	return missing, nil
}
