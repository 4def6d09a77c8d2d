package client_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
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
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{})...)
	if err != nil {
		t.Fatal(err)
	}
	g := gatetest.StartWith(t, embedded.Options{
		DataDir: t.TempDir(), AdminKey: adminKey, Logger: logger,
		Verifier: verify.NewActionVerifier(reg, 0), AttestationTTL: attest.DefaultAttestationTTL,
	})
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
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
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
