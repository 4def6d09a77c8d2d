package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines/sql"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/notify"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/schemas/openapi"
	"github.com/agentgate/agentgate/streams"
)

// testAdminKey is the admin API key of every test gate.
const testAdminKey = "qwed_admin_test"

// testClock is a manual clock shared by the worker and the API.
type testClock = gatetest.Clock

// testGate is a real gate (Pebble log, projections, keyring) in a temp dir
// behind the API on a real socket.
type testGate struct {
	t      testing.TB
	gate   *embedded.Gate
	srv    *httptest.Server
	client *http.Client
	clock  *testClock
	reg    *prometheus.Registry
	stop   func()
}

// gateOptions tune newTestGate.
type gateOptions struct {
	// reports serves compliance reports (Config.Log, SignTreeHead).
	reports bool
	// noWorker leaves the worker stopped (requests wait for it).
	noWorker bool
	// requestTimeout overrides Config.RequestTimeout.
	requestTimeout time.Duration
	// maxBodyBytes overrides Config.MaxBodyBytes.
	maxBodyBytes int64
	// verifyRate is Config.VerifyRateLimit.
	verifyRate RateLimit
	// refusals is Config.RefusalLimit.
	refusals RefusalLimit
	// dataDir (default: a new t.TempDir()), fs (embedded.Options.FS, with
	// a 1 MiB reserve) and logOut (default: discarded) for disk tests.
	dataDir string
	fs      vfs.FS
	logOut  io.Writer
	// noVerifier opens the gate without an engine Verifier: every action
	// is decided by the rules alone and no engine is consulted (the
	// request-path benchmark measures the path without engine time).
	noVerifier bool
	// a2a is the gate's A2A configuration (nil: the defaults); its
	// max_payload_size_bytes is also Config.A2AMaxPayloadBytes.
	a2a *domain.A2AConfig
	// a2aRate is Config.A2ARateLimit.
	a2aRate RateLimit
	// webhookRate is Config.WebhookRateLimit.
	webhookRate RateLimit
	// principalRate is Config.PrincipalWriteRateLimit.
	principalRate RateLimit
	// execute is the gate's execute configuration (nil: the defaults).
	execute *domain.ExecuteConfig
	// executeRate is Config.ExecuteRateLimit.
	executeRate RateLimit
	// executeMode is Config.ExecuteMode (the mode of execute).
	executeMode string
	// webhooks runs a webhook runner beside the worker, as serve does
	// (woken by each committed batch), reaching loopback receivers
	// (serve's --webhook-allow-private).
	webhooks bool
}

// newTestGate opens a gate in t.TempDir(), runs its worker and serves the
// API on an httptest server; everything is closed at the end of the test.
func newTestGate(t testing.TB, opts gateOptions) *testGate {
	t.Helper()
	clock := gatetest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	if opts.dataDir == "" {
		opts.dataDir = t.TempDir()
	}
	if opts.logOut == nil {
		opts.logOut = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(opts.logOut, nil))
	// The decision options serve starts with (domain.DefaultConfig), whose
	// SQL risk is the sql engine's class: the engine runs here in process
	// (serve runs it in engine workers); the other engines are left out,
	// so the other action types are decided by the rules alone.
	cfg := domain.DefaultConfig()
	cfg.A2A = opts.a2a
	cfg.Execute = opts.execute
	sqlEngine, err := verify.NewRegistry(sql.New())
	if err != nil {
		t.Fatal(err)
	}
	gopts := embedded.Options{DataDir: opts.dataDir, AdminKey: testAdminKey, Clock: clock.Now, Logger: logger, Config: &cfg,
		Verifier: verify.NewActionVerifier(sqlEngine, 0)}
	if opts.noVerifier {
		gopts.Verifier = nil
	}
	if opts.fs != nil {
		gopts.FS, gopts.MinFreeBytes = opts.fs, 1<<20
	}
	// The adapter runner calls the businesses of executes after their
	// commit point, as serve runs it: it follows the committed batches.
	var runner *adapter.Runner
	var hooks *notify.Runner
	gopts.OnBatch = func(evs []*domain.Event, _ time.Duration) {
		if runner != nil {
			runner.Observe(evs)
		}
		if hooks != nil {
			hooks.Wake()
		}
	}
	g, err := embedded.OpenGate(gopts)
	if err != nil {
		t.Fatalf("opening gate: %v", err)
	}
	caller, err := adapter.NewCaller(adapter.CallerConfig{Keyring: g.Keyring, NodeID: g.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	if runner, err = adapter.NewRunner(adapter.RunnerConfig{Caller: caller, Gate: g.Worker,
		Source: adapter.LogSource{State: g.Store, Log: g.Log}, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	if opts.webhooks {
		if hooks, err = notify.New(notify.Config{Gate: g.Worker, Store: g.Store, Sign: g.Keyring.SignWebhook,
			AllowPrivate: true, Clock: clock.Now, Interval: 20 * time.Millisecond, Logger: logger}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	runnerDone := make(chan struct{})
	if opts.noWorker {
		done <- nil
		close(runnerDone)
	} else {
		go func() { done <- g.Worker.Run(ctx) }()
		go func() {
			hooksDone := make(chan struct{})
			go func() {
				if hooks != nil {
					_ = hooks.Run(ctx)
				}
				close(hooksDone)
			}()
			_ = runner.Run(ctx)
			<-hooksDone
			close(runnerDone)
		}()
		// The worker records the configuration (gate.configured on a new
		// log) before any request: a no-op tick returns after it, so a
		// test's first g.head() is not raced by it. (A gate that cannot
		// write, as on a full disk, answers it with an error: nothing to
		// wait for then.)
		settle := &domain.Command{Type: domain.CmdTick, Request: domain.RequestID{Source: "test", ID: "settle"}, Tick: &domain.Tick{}}
		_, _ = g.Worker.Submit(ctx, settle)
	}
	reg := prometheus.NewRegistry()
	var reportLog streams.Log
	var signTreeHead func(attest.TreeHeadClaims) (string, error)
	if opts.reports {
		reportLog = g.Log
		signTreeHead = func(c attest.TreeHeadClaims) (string, error) { return g.Keyring.SignTreeHead(g.NodeID, c) }
	}
	h := New(Config{
		Log: reportLog, SignTreeHead: signTreeHead,
		Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash, JWKS: g.Keyring.JWKS,
		Registry: reg, Logger: logger, Clock: clock.Now,
		RequestTimeout: opts.requestTimeout, MaxBodyBytes: opts.maxBodyBytes, VerifyRateLimit: opts.verifyRate,
		RefusalLimit: opts.refusals, A2AMaxPayloadBytes: cfg.A2ASettings().MaxPayloadSizeBytes, A2ARateLimit: opts.a2aRate,
		WebhookRateLimit: opts.webhookRate, PrincipalWriteRateLimit: opts.principalRate,
		ExecuteRateLimit: opts.executeRate, ExecuteMode: opts.executeMode,
	})
	srv := httptest.NewServer(openapi.Hook(t, h))
	tg := &testGate{t: t, gate: g, srv: srv, client: srv.Client(), clock: clock, reg: reg}
	var once sync.Once
	tg.stop = func() {
		once.Do(func() {
			srv.Close()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
			<-runnerDone
			if _, bench := t.(*testing.B); !bench {
				checkEventSchema(t, g.Log)
			}
			if err := g.Close(); err != nil && !errors.Is(err, streams.ErrClosed) {
				t.Errorf("closing gate: %v", err)
			}
		})
	}
	t.Cleanup(tg.stop)
	return tg
}

// response is one HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic map.
func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decoding response %d %q: %v", r.status, r.body, err)
	}
	return m
}

// errorCode returns error.code of an error body ("" when absent).
func (r response) errorCode(t testing.TB) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// hdr is a request's headers as name/value pairs.
type hdr map[string]string

func apiKey(k string) hdr { return hdr{"X-API-Key": k} }
func bearerH(tok string) hdr {
	return hdr{"Authorization": "Bearer " + tok}
}

// do sends one request; body is a string, []byte or a value to encode.
func (g *testGate) do(method, path string, h hdr, body any) response {
	g.t.Helper()
	return g.doWith(g.client, method, path, h, body)
}

// doWith sends one request with client c.
func (g *testGate) doWith(c *http.Client, method, path string, h hdr, body any) response {
	g.t.Helper()
	var sent []byte
	switch b := body.(type) {
	case nil:
	case string:
		sent = []byte(b)
	case []byte:
		sent = b
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			g.t.Fatalf("encoding request: %v", err)
		}
		sent = enc
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(sent)
	}
	req, err := http.NewRequest(method, g.srv.URL+path, rd)
	if err != nil {
		g.t.Fatalf("building request: %v", err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatalf("reading %s %s: %v", method, path, err)
	}
	checkSchemas(g.t, req, sent, resp.StatusCode, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// head returns the log's last seq.
func (g *testGate) head() uint64 { return g.gate.Log.Head().Seq }

// events returns the events after seq, in log order.
func (g *testGate) events(after uint64) []*domain.Event {
	g.t.Helper()
	var out []*domain.Event
	err := g.gate.Log.Read(context.Background(), after+1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return err
		}
		out = append(out, ev)
		return nil
	})
	if err != nil {
		g.t.Fatalf("reading the log: %v", err)
	}
	return out
}

// records returns the raw payloads after seq.
func (g *testGate) records(after uint64) [][]byte {
	g.t.Helper()
	var out [][]byte
	err := g.gate.Log.Read(context.Background(), after+1, func(r streams.Record) error {
		out = append(out, bytes.Clone(r.Payload))
		return nil
	})
	if err != nil {
		g.t.Fatalf("reading the log: %v", err)
	}
	return out
}

// issueKey issues an API key for principal with the admin key.
func (g *testGate) issueKey(principal string) string {
	g.t.Helper()
	r := g.do("POST", "/principals/"+principal+"/keys", apiKey(testAdminKey), nil)
	if r.status != http.StatusCreated {
		g.t.Fatalf("issuing key for %s: %d %s", principal, r.status, r.body)
	}
	k, _ := r.json(g.t)["api_key"].(string)
	if k == "" {
		g.t.Fatalf("issuing key for %s: no api_key in %s", principal, r.body)
	}
	return k
}

// agent is a registered test agent.
type agent struct {
	id, token, key, principal string
}

// register registers an agent of principal (with its key) at trust level
// trust and the budget given (nil: none).
func (g *testGate) register(key, principal string, trust int, budget map[string]any) agent {
	g.t.Helper()
	body := map[string]any{
		"agent":       map[string]any{"name": "bot", "type": "autonomous", "principal_id": principal},
		"permissions": map[string]any{},
		"trust_level": trust,
	}
	if budget != nil {
		body["budget"] = budget
	}
	r := g.do("POST", "/agents/register", apiKey(key), body)
	if r.status != http.StatusCreated {
		g.t.Fatalf("registering an agent: %d %s", r.status, r.body)
	}
	m := r.json(g.t)
	id, _ := m["agent_id"].(string)
	tok, _ := m["agent_token"].(string)
	if id == "" || tok == "" {
		g.t.Fatalf("registration reply lacks agent_id or agent_token: %s", r.body)
	}
	return agent{id: id, token: tok, key: key, principal: principal}
}

// verifyReq is a verify_action body.
func verifyReq(typ, query, conv string, step int) map[string]any {
	return map[string]any{
		"action":  map[string]any{"type": typ, "query": query},
		"context": map[string]any{"conversation_id": conv, "step_number": step},
	}
}

// expectRejected checks that the log grew by exactly one command.rejected
// record with code after seq, holding no body text marker.
func (g *testGate) expectRejected(after uint64, code domain.Code, marker string) *domain.Event {
	g.t.Helper()
	evs := g.events(after)
	if len(evs) != 1 {
		types := make([]string, len(evs))
		for i, ev := range evs {
			types[i] = string(ev.Type)
		}
		g.t.Fatalf("log after seq %d holds %d events %v, want exactly one command.rejected", after, len(evs), types)
	}
	ev := evs[0]
	if ev.Type != domain.EvCommandRejected || ev.Error == nil || ev.Error.Code != code {
		g.t.Fatalf("log event is %s %+v, want command.rejected %s", ev.Type, ev.Error, code)
	}
	if ev.Command == nil || ev.Command.Type != domain.CmdRejectRequest || ev.Command.Reject == nil {
		g.t.Fatalf("rejection record holds command %+v, want a RejectRequest", ev.Command)
	}
	if marker != "" {
		for _, rec := range g.records(after) {
			if bytes.Contains(rec, []byte(marker)) {
				g.t.Fatalf("the log record holds the rejected body (marker %q): %s", marker, rec)
			}
		}
	}
	return ev
}

// errorOf decodes an error body strictly: exactly {"error": {code, message, details?}}.
func errorOf(t testing.TB, b []byte) domain.Error {
	t.Helper()
	var body struct {
		Error *domain.Error `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Error == nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("not an error body (%v): %s", err, b)
	}
	return *body.Error
}
