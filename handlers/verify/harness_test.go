package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/fair"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/handlers/verify/z3pool"
	"github.com/agentgate/agentgate/schemas/openapi"
	"github.com/agentgate/agentgate/streams"
)

const adminKey = "qwed_admin_verify_test"

// server is a real gate (Pebble log, projections, keyring) in a temp dir
// with the HTTP API on a real socket, its protocol service over the given
// engines, and the worker attaching their verdicts to verify_action.
type server struct {
	t      testing.TB
	gate   *embedded.Gate
	reg    *verify.Registry
	svc    *verify.Service
	srv    *httptest.Server
	client *http.Client
	stop   func()
}

func newServer(t testing.TB, es ...engines.Engine) *server {
	t.Helper()
	return newServerWith(t, fair.Config{}, es...)
}

// newServerWith is newServer with the engines' queues configured by q.
func newServerWith(t testing.TB, q fair.Config, es ...engines.Engine) *server {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := verify.NewRegistryWith(q, es...)
	if err != nil {
		t.Fatal(err)
	}
	g, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: adminKey, Logger: logger,
		Verifier: verify.NewActionVerifier(reg, 0)})
	if err != nil {
		t.Fatalf("opening gate: %v", err)
	}
	svc, err := verify.New(verify.Config{Registry: reg, Gate: g.Worker, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Worker.Run(ctx) }()
	h := httpapi.New(httpapi.Config{Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash, JWKS: g.Keyring.JWKS,
		Logger: logger, Verify: svc})
	srv := httptest.NewServer(openapi.Hook(t, h))
	s := &server{t: t, gate: g, reg: reg, svc: svc, srv: srv, client: srv.Client()}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			srv.Close()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
			if err := g.Close(); err != nil && !errors.Is(err, streams.ErrClosed) {
				t.Errorf("closing gate: %v", err)
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decoding %d %q: %v", r.status, r.body, err)
	}
	return m
}

func (r reply) code(t testing.TB) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (s *server) do(method, path string, h map[string]string, body string) reply {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// verify posts body to /verify with the admin key and extra headers.
func (s *server) verify(body string, h ...string) reply {
	s.t.Helper()
	hs := map[string]string{"X-API-Key": adminKey}
	for i := 0; i+1 < len(h); i += 2 {
		hs[h[i]] = h[i+1]
	}
	return s.do("POST", "/verify", hs, body)
}

// scripted is an engine whose answers the test writes: it exercises the
// service's own mechanisms (routing, timeouts, panics, batches) with
// every status of §6.2, independently of what the real engines decide.
type scripted struct {
	id     string
	answer func(ctx context.Context, req engines.Request) engines.Outcome
}

func (e *scripted) Capabilities() engines.Capabilities {
	return engines.Capabilities{EngineID: e.id, Name: "scripted " + e.id, Version: "0.0.1",
		Capabilities: map[string]any{"scripted": true}, InputTypes: []string{"expression"}, OutputTypes: []string{"verification_result"}}
}

func (e *scripted) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	return e.answer(ctx, req)
}

// byQuery answers from a table: query -> outcome (UNSUPPORTED otherwise).
func byQuery(id string, table map[string]engines.Outcome) *scripted {
	return &scripted{id: id, answer: func(ctx context.Context, req engines.Request) engines.Outcome {
		if o, ok := table[req.Query]; ok {
			return o
		}
		if d, err := time.ParseDuration(req.Query); err == nil {
			select {
			case <-time.After(d):
				return engines.Outcome{Status: engines.Verified, Result: map[string]any{"slept": req.Query}}
			case <-ctx.Done():
				return engines.Outcome{Status: engines.Timeout, Err: &engines.Problem{Code: "QWED-ENG-003", Message: "canceled"}}
			}
		}
		return engines.Outcome{Status: engines.Unsupported, Err: &engines.Problem{Code: "QWED-REQ-005", Message: "not scripted"}}
	}}
}

// The z3 pool shared by the package's tests, started on first use and
// closed by TestMain.
var (
	z3Once sync.Once
	z3Pool *z3pool.Pool
	z3Err  error
)

// solver is the package's z3 pool. Full conformance needs the logic
// engine, so a machine without z3 fails the test rather than skipping it
// (.ci/run installs the Debian package).
func solver(t testing.TB) *z3pool.Pool {
	t.Helper()
	z3Once.Do(func() {
		z3Pool, z3Err = z3pool.New(z3pool.Config{Size: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	})
	if z3Err != nil {
		t.Fatalf("starting z3 for the logic engine (apt-get install z3): %v", z3Err)
	}
	return z3Pool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if z3Pool != nil {
		z3Pool.Close()
	}
	os.Exit(code)
}
