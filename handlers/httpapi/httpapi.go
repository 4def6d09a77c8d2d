package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// Named limits and defaults of the API.
const (
	// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes
	// is zero (1 MiB).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultRequestTimeout bounds the wait for the gate's answer when
	// Config.RequestTimeout is zero.
	DefaultRequestTimeout = 10 * time.Second
	// MaxIdempotencyKeyBytes bounds the Idempotency-Key header.
	MaxIdempotencyKeyBytes = 200
	// MaxPathIDBytes bounds an identifier in the path (agent, tool,
	// approval, principal).
	MaxPathIDBytes = 256
	// DefaultListLimit is the page size of GET /approvals and GET
	// /agents/{id}/activity without a limit parameter.
	DefaultListLimit = 100
	// MaxListLimit is the largest accepted limit parameter.
	MaxListLimit = projections.MaxActivityLimit
	// DefaultActivityPeriod is how far before "to" an activity query
	// without "from" starts.
	DefaultActivityPeriod = 30 * 24 * time.Hour
	// MaxActivityPeriod bounds the period of one activity query.
	MaxActivityPeriod = 366 * 24 * time.Hour
	// recordTimeout bounds the recording of a rejection.
	recordTimeout = 5 * time.Second
)

// Gate decides commands. *handlers.Worker implements it: Submit returns the
// event recorded for the command (a new one once it is durably in the
// log, or the one recorded earlier for the same RequestID), or
// handlers.ErrUnavailable, or the context's error.
type Gate interface {
	Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error)
}

// agentHistory is where an agent's history is read from, for one read.
type agentHistory struct {
	// Log holds the agent's events; Partition is its partition number.
	Log       streams.Log
	Partition int32
	// Snapshots is the projection store of the agent's time-travel
	// snapshots; nil: the fold starts at the log's first event.
	Snapshots *projections.Store
	// Release is called when the read is done.
	Release func()
}

// Config configures the API. Gate and Store are required.
type Config struct {
	// Gate decides the commands (the partition worker).
	Gate Gate
	// Store is the read side (agents, approvals, activity, API keys).
	Store *projections.Store
	// AdminKeyHash is the hex SHA-256 of the admin API key; "" disables
	// the admin key.
	AdminKeyHash string
	// JWKS returns the attestation keys (GET /.well-known/jwks.json); nil
	// serves an empty key set.
	JWKS func() []byte
	// Registry receives the API's metrics and is served on /metrics; nil
	// uses a new registry.
	Registry *prometheus.Registry
	// Logger logs failures (never a token or a key); nil is slog.Default().
	Logger *slog.Logger
	// Clock is the time for budget views and activity periods; nil is
	// time.Now.
	Clock func() time.Time
	// MaxBodyBytes bounds request bodies; 0 is DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RequestTimeout bounds the wait for the gate; 0 is
	// DefaultRequestTimeout. Past it the answer is QWED-ENG-003 (504): the
	// command may still be decided, and a retry with the same
	// Idempotency-Key gets its recorded answer.
	RequestTimeout time.Duration
	// Log is the event log GET /agents/{id}/compliance-report and
	// GET /agents/{id}/state read (read only), with Store's time-travel
	// snapshots. Without Log and History those endpoints answer QWED
	// unavailable.
	Log streams.Log
	// History, if set, replaces Log for those two endpoints: it opens, for
	// one read, the log that holds an agent's history, read only, and
	// returns it with its partition number; the API closes it when the
	// read is done, and reads no snapshots. Kafka mode opens the agent's
	// events partition (kafkagate.PartitionHistory).
	History func(ctx context.Context, agentID string) (lg streams.Log, partition int32, err error)
	// SignTreeHead signs the tree head of a compliance bundle (format=json
	// of the compliance report); without it format=json answers QWED
	// unavailable.
	SignTreeHead report.SignTree
	// MaxConcurrentReports bounds the compliance reports rendered at once
	// (each reads the agent's partition of the log from its start); 0 is
	// DefaultMaxConcurrentReports. Past it the answer is 503 QWED-SYS-002
	// with Retry-After.
	MaxConcurrentReports int
	// Verify is the QWED protocol service of POST /verify, GET /engines and
	// the qwed.verify CloudEvent; nil builds one over the built-in engines
	// that records through Gate.
	Verify *verify.Service
	// CatchUp, if set, is called when an API key, an agent or an approval
	// is not in Store, before answering so: it returns once Store holds
	// every write acknowledged before the call (nil) or gives up (an
	// error), and the lookup is tried once more. Kafka mode sets it
	// (kafkagate.ReadModel.CatchUp), so that what another instance has
	// just written is found here too.
	CatchUp func(ctx context.Context) error
	// VerifyRateLimit bounds POST /verify and qwed.verify per principal
	// and overall (QWED protocol v1.0 §10.3); the zero value sets no limit.
	VerifyRateLimit RateLimit
	// RefusalLimit bounds refused requests per client address and overall
	// on every endpoint (edge.go); the zero value sets no limit.
	RefusalLimit RefusalLimit
	// A2AMaxPayloadBytes is the gate's max_payload_size_bytes (QWED A2A):
	// the body of POST /a2a/intercept is refused (413 QWED-REQ-004, before
	// more of it is read) past it plus a2a.MaxEnvelopeBytes; 0 is
	// a2a.DefaultMaxPayloadBytes.
	A2AMaxPayloadBytes int64
	// A2ARateLimit bounds POST /a2a/intercept and the boundary writes
	// (on their paths and on POST /events) per credential (a principal's
	// API key, an agent token) and overall, before the command is decided (the trust boundary's own token bucket per
	// agent pair is a decision, recorded); the zero value sets no limit.
	A2ARateLimit RateLimit
	// WebhookRateLimit bounds the webhook writes (POST /webhooks, PUT and
	// DELETE /webhooks/{id}) per API key and overall, before they are
	// decided; the zero value sets no limit.
	WebhookRateLimit RateLimit
	// PrincipalWriteRateLimit bounds the principal-scoped writes (PUT
	// /principals/{id}/tools and /permissions, POST
	// /principals/{id}/keys/{key_id}/rotate, DELETE
	// /principals/{id}/keys/{key_id}) per API key and overall, before the
	// command is built: over it QWED-AUTH-004 (429, Retry-After), nothing
	// recorded. The zero value sets no limit.
	PrincipalWriteRateLimit RateLimit
	// ExecuteRateLimit bounds the writes of the consumer policy engine
	// (POST /agp/execute/prepare, POST /agp/execute, the business and
	// policy changes; on their paths and as CloudEvents on POST /events)
	// per credential (a principal's API key, an agent token) and overall,
	// before the command is built: over it QWED-AUTH-004 (429,
	// Retry-After), nothing recorded. The zero value sets no limit.
	ExecuteRateLimit RateLimit
	// ExecuteMode is the gate's execute policy mode
	// (domain.ExecuteConfig.Mode, as serve configured it): in confirm and
	// strict, an execute whose body does not decode is refused as the
	// Agent Policy Engine spec §2.4 orders it (QWED-EXEC-001 without a
	// confirmation token, QWED-EXEC-006 with one); "" is open.
	ExecuteMode string
}

// api is the handler New returns.
type api struct {
	cfg      Config
	keys     command.Keys // the admin key and the keys in Store
	log      *slog.Logger
	m        *metrics
	mux      *http.ServeMux
	bufs     sync.Pool
	qwed     *verify.Service
	limiter  *limiter        // nil: no verify rate limit
	refusals *refusalLimiter // nil: no refusal limit
	reports  chan struct{}   // one token per report being rendered
	// rendering counts the reports being rendered per tenant (the agent's
	// principal): one tenant holds at most reportShare of them.
	renderMu  sync.Mutex
	rendering map[string]int
	// a2aLimiter is the A2A edge limit (Config.A2ARateLimit); nil: none.
	a2aLimiter *limiter
	// webhookLimiter is Config.WebhookRateLimit's; nil: none.
	webhookLimiter *limiter
	// principalLimiter is Config.PrincipalWriteRateLimit's; nil: none.
	principalLimiter *limiter
	// execLimiter is the consumer policy engine's edge limit
	// (Config.ExecuteRateLimit); nil: none.
	execLimiter *limiter
	// patterns are the registered routes ("METHOD /path"), in order: the
	// OpenAPI document's tests hold it to them.
	patterns []string
}

// New returns the HTTP API over cfg.Gate and cfg.Store. It panics when
// either is nil (a wiring error, not an input error).
func New(cfg Config) http.Handler {
	if cfg.Gate == nil || cfg.Store == nil {
		panic("httpapi.New: Config.Gate and Config.Store are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.MaxConcurrentReports <= 0 {
		cfg.MaxConcurrentReports = DefaultMaxConcurrentReports
	}
	a := &api{reports: make(chan struct{}, cfg.MaxConcurrentReports), cfg: cfg, log: cfg.Logger, m: newMetrics(cfg.Registry), mux: http.NewServeMux()}
	register(cfg.Registry, newA2ACollector(cfg.Store))
	a.keys = command.NewKeys(cfg.AdminKeyHash, cfg.Store, a.catchUp)
	a.bufs.New = func() any { return new(bytes.Buffer) }
	a.qwed = qwedService(&cfg)
	if cfg.VerifyRateLimit.enabled() {
		a.limiter = newLimiter(cfg.VerifyRateLimit, cfg.Clock())
	}
	if cfg.RefusalLimit.enabled() {
		a.refusals = newRefusalLimiter(cfg.RefusalLimit, cfg.Clock())
	}
	if cfg.A2ARateLimit.enabled() {
		a.a2aLimiter = newLimiter(cfg.A2ARateLimit, cfg.Clock())
	}
	if cfg.WebhookRateLimit.enabled() {
		a.webhookLimiter = newLimiter(cfg.WebhookRateLimit, cfg.Clock())
	}
	if cfg.PrincipalWriteRateLimit.enabled() {
		a.principalLimiter = newLimiter(cfg.PrincipalWriteRateLimit, cfg.Clock())
	}
	if cfg.ExecuteRateLimit.enabled() {
		a.execLimiter = newLimiter(cfg.ExecuteRateLimit, cfg.Clock())
	}
	a.routes()
	return a
}

// routes registers every endpoint.
func (a *api) routes() {
	a.handle("POST /agents/register", a.write(command.RegisterAgent, nil))
	a.handle("GET /agents/{id}", a.getAgent)
	a.handle("GET /agents/{id}/budget", a.getBudget)
	a.handle("GET /agents/{id}/activity", a.getActivity)
	a.handle("GET /agents/{id}/state", a.getState)
	a.handle("GET /agents/{id}/compliance-report", a.getComplianceReport)
	a.handle("POST /agents/{id}/verify", a.write(command.VerifyAction, agentPath))
	a.handle("POST /agents/{id}/tools/{tool}", a.write(command.VerifyToolCall, agentPath))
	a.handle("POST /agents/{id}/executions", a.write(command.LogExecution, agentPath))
	a.handle("POST /agents/{id}/trust", a.write(command.RequestTrust, agentPath))
	a.handle("POST /agents/{id}/trust-level", a.write(command.SetTrustLevel, agentPath))
	a.handle("POST /agents/{id}/suspend", a.write(command.SuspendAgent, agentPath))
	a.handle("POST /agents/{id}/complaints", a.write(command.FileComplaint, agentPath))
	a.principalRoutes()
	a.handle("POST /agents/{id}/token/rotate", a.write(command.RotateToken, agentPath))
	a.handle("DELETE /agents/{id}/token", a.write(command.RevokeToken, agentPath))
	a.handle("GET /approvals", a.listApprovals)
	a.handle("GET /approvals/{id}", a.getApproval)
	a.handle("POST /approvals/{id}/approve", a.write(command.Approve, approvalPath))
	a.handle("POST /approvals/{id}/deny", a.write(command.Deny, approvalPath))
	a.handle("POST /events", a.events)
	a.handle("POST /verify", a.postVerify)
	a.handle("GET /engines", a.getEngines)
	a.a2aRoutes()
	a.transactionRoutes()
	a.webhookRoutes()
	a.executeRoutes()
	a.handle("GET /.well-known/jwks.json", a.jwks)
	a.handle("GET /healthz", a.healthz)
	a.handle("GET /metrics", a.m.handler.ServeHTTP)
	a.handle("GET /a2a/boundary", a.getA2ABoundary)
	a.handle("GET /a2a/metrics", a.getA2AMetrics)
	a.handle("GET /a2a/health", a.getA2AHealth)
	a.handle("GET /openapi.json", a.getOpenAPI)
}

func (a *api) handle(pattern string, h http.HandlerFunc) {
	a.patterns = append(a.patterns, pattern)
	a.mux.HandleFunc(pattern, a.m.instrument(pattern, h))
}

// ServeHTTP routes r under the refusal limit; unknown routes and methods
// get a JSON error body.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.refusals != nil {
		a.serveLimited(w, r)
		return
	}
	a.route(w, r)
}

// route routes r to its endpoint.
func (a *api) route(w http.ResponseWriter, r *http.Request) {
	if _, pattern := a.mux.Handler(r); pattern == "" {
		a.m.instrument("unmatched", a.unrouted)(w, r)
		return
	}
	a.mux.ServeHTTP(w, r)
}

// unrouted answers a request no route matches: 404, 405 with Allow, or the
// mux's redirect to the canonical path.
func (a *api) unrouted(w http.ResponseWriter, r *http.Request) {
	h, _ := a.mux.Handler(r)
	cw := &captureWriter{h: http.Header{}}
	h.ServeHTTP(cw, r)
	switch {
	case cw.status == http.StatusMethodNotAllowed:
		allow := cw.h.Get("Allow")
		w.Header().Set("Allow", allow)
		e := failure(domain.CodeInvalidRequest, "method %s is not allowed on %s", r.Method, r.URL.Path)
		e.err.Details = map[string]any{"allow": allow}
		writeJSON(w, http.StatusMethodNotAllowed, e.body())
	case cw.status >= 300 && cw.status < 400:
		w.Header().Set("Location", cw.h.Get("Location"))
		w.WriteHeader(cw.status)
	default:
		e := failure(domain.CodeNotFound, "no endpoint %s %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, e.body())
	}
}

// captureWriter records what the mux's own handlers answer.
type captureWriter struct {
	h      http.Header
	status int
}

func (c *captureWriter) Header() http.Header         { return c.h }
func (c *captureWriter) Write(b []byte) (int, error) { return len(b), nil }
func (c *captureWriter) WriteHeader(status int)      { c.status = status }

// credentials authenticates the X-API-Key header (required when keyRequired)
// and, when withToken, hashes a Bearer token.
func (a *api) credentials(r *http.Request, keyRequired, withToken bool) (command.Credentials, *apiError) {
	var cr command.Credentials
	if key := r.Header.Get("X-API-Key"); key != "" {
		p, e := a.principalOf(r.Context(), key)
		if e != nil {
			return cr, e
		}
		cr.Principal = p
	} else if keyRequired {
		return cr, rejected(command.HTTP.MissingKey())
	}
	if withToken {
		if tok, ok := bearer(r); ok {
			cr.TokenHash = command.HashSecret(tok)
		}
	}
	return cr, nil
}

// principalOf returns the principal of an API key (command.Keys).
func (a *api) principalOf(ctx context.Context, key string) (string, *apiError) {
	p, err := a.keys.Principal(ctx, key)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, command.ErrInvalidKey):
		return "", rejected(command.HTTP.InvalidKey())
	}
	a.log.Error("authenticating an API key", "err", err)
	return "", failure(domain.CodeUnavailable, "API keys cannot be read")
}

// caughtUp reports whether a lookup that failed with err should be tried
// again: it found nothing, and Config.CatchUp brought Store up to date.
func (a *api) caughtUp(ctx context.Context, err error) bool {
	return errors.Is(err, projections.ErrNotFound) && a.catchUp(ctx)
}

// catchUp reports whether Config.CatchUp brought Store up to date.
func (a *api) catchUp(ctx context.Context) bool {
	if a.cfg.CatchUp == nil {
		return false
	}
	if err := a.cfg.CatchUp(ctx); err != nil {
		a.log.Warn("catching up the read side", "err", err)
		return false
	}
	return true
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	const scheme = "bearer "
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(v[len(scheme):])
	return tok, tok != ""
}

// submit hands cmd to the gate and maps its failures.
func (a *api) submit(ctx context.Context, cmd *domain.Command) (*domain.Event, *apiError) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	ev, err := a.cfg.Gate.Submit(ctx, cmd)
	switch {
	case err == nil && ev != nil:
		return ev, nil
	case err == nil:
		a.log.Error("submitting command", "type", cmd.Type, "err", "the gate recorded no event")
		return nil, failure(domain.CodeInternal, "the gate recorded no decision for the request")
	case errors.Is(err, streams.ErrNoSpace):
		// Not logged per request: the worker logs the refusals, a few
		// lines a minute (streams/diskspace).
		return nil, failure(domain.CodeStorageFull, "the gate's disk is full: no decision was acknowledged; retry with the same Idempotency-Key once space is freed")
	case errors.Is(err, streams.ErrTooLarge):
		// The deployment's log cannot record it (an A2A payload over
		// what a Kafka events record holds): a refusal of the request,
		// not a fault of the gate.
		return nil, reject(domain.CodeTooLong, nil, "the request is too large for the gate's log to record: %v", err)
	case errors.Is(err, handlers.ErrUnavailable):
		a.log.Warn("submitting command", "type", cmd.Type, "err", err)
		return nil, failure(domain.CodeUnavailable, "the gate is unavailable: retry with the same Idempotency-Key")
	case errors.Is(err, context.DeadlineExceeded):
		return nil, failure(domain.CodeTimeout, "no decision within %s: retry with the same Idempotency-Key", a.cfg.RequestTimeout)
	case errors.Is(err, context.Canceled):
		return nil, failure(domain.CodeUnavailable, "the request was canceled")
	}
	a.log.Error("submitting command", "type", cmd.Type, "err", err)
	return nil, failure(domain.CodeInternal, "the request could not be decided")
}

// call is what the API knows about one request while it handles it.
type call struct {
	endpoint string
	body     []byte
	creds    command.Credentials
}

func newCall(r *http.Request) *call {
	ep := r.Method + " " + r.URL.EscapedPath()
	if len(ep) > command.MaxEndpointBytes {
		ep = ep[:command.MaxEndpointBytes]
	}
	return &call{endpoint: ep}
}

// fail answers e, recording it first when it is a rejection.
func (a *api) fail(ctx context.Context, w http.ResponseWriter, c *call, e *apiError) {
	if e.record {
		a.record(ctx, c, e)
	}
	writeJSON(w, e.status, e.body())
}

// record submits the audit record of a rejection: the error code and
// details, the endpoint and the size and digest of the body read, never
// the body. It has a
// fresh request id so that a refused request does not bind its
// Idempotency-Key. A failure to record is logged; the rejection is
// answered anyway.
func (a *api) record(ctx context.Context, c *call, e *apiError) {
	cmd := command.RejectionCommand(&command.Rejection{Status: e.status, Err: e.err}, c.endpoint, c.body,
		c.creds.Principal, domain.RequestID{Source: command.HTTPSource, ID: freshID()})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if _, err := a.cfg.Gate.Submit(ctx, cmd); err != nil {
		a.log.Warn("recording a rejected request", "code", e.err.Code, "endpoint", c.endpoint, "err", err)
	}
}

func (a *api) getBuf() *bytes.Buffer { return a.bufs.Get().(*bytes.Buffer) }

func (a *api) putBuf(b *bytes.Buffer) {
	if b.Cap() > 64<<10 {
		return // do not keep large buffers alive
	}
	b.Reset()
	a.bufs.Put(b)
}
