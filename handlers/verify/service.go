package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/jcs"
	"github.com/agentgate/agentgate/handlers/fair"
	"github.com/agentgate/agentgate/schemas"
	"github.com/agentgate/agentgate/streams"
)

var sprintf = fmt.Sprintf

// Named limits and defaults of the service.
const (
	// DefaultTimeout is options.timeout_ms's default (§5.1).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxParallel is a batch's default max_parallel (§5.3).
	DefaultMaxParallel = 10
	// MaxParallel bounds the goroutines of one batch whatever max_parallel
	// says (the schema allows up to MaxBatchItems).
	MaxParallel = 16
	// MaxBatchItems is the batch request schema's maxItems.
	MaxBatchItems = domain.MaxQWEDItems
	// DefaultRecordTimeout bounds the wait for the gate to record a call.
	DefaultRecordTimeout = 10 * time.Second
	// JWKSPath is where the attestation keys are published.
	JWKSPath = "/.well-known/jwks.json"
)

// Gate records calls: *handlers.Worker implements it.
type Gate interface {
	Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error)
}

// Config configures a Service. Registry and Gate are required.
type Config struct {
	// Registry holds the engines.
	Registry *Registry
	// Gate records every call (QWED protocol v1.0 §10.4) and signs attestations.
	Gate Gate
	// Clock measures latency (never recorded or signed); nil is time.Now.
	Clock func() time.Time
	// Logger logs failures; nil is slog.Default().
	Logger *slog.Logger
	// RecordTimeout bounds the wait for the gate; 0 is
	// DefaultRecordTimeout.
	RecordTimeout time.Duration
}

// Service is the QWED protocol service; safe for concurrent use.
type Service struct {
	cfg Config
	reg *Registry
	log *slog.Logger
}

// New returns the service of cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Registry == nil || cfg.Gate == nil {
		return nil, errors.New("creating the verify service: Config.Registry and Config.Gate are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RecordTimeout <= 0 {
		cfg.RecordTimeout = DefaultRecordTimeout
	}
	return &Service{cfg: cfg, reg: cfg.Registry, log: cfg.Logger}, nil
}

// Registry returns the service's engines.
func (s *Service) Registry() *Registry { return s.reg }

// Call is one POST /verify request (or qwed.verify CloudEvent).
type Call struct {
	// Body is the JSON body (§5.1 or §5.3).
	Body []byte
	// Version is the QWED-Protocol-Version header ("" when absent).
	Version string
	// Principal is the authenticated principal (domain.AdminPrincipal for
	// the admin key); the transport authenticates.
	Principal string
	// Request identifies the call for the log (retries with the same
	// RequestID get the recorded attestations); it is scoped by Principal
	// when recorded.
	Request domain.RequestID
}

// Answer is the response to a call.
type Answer struct {
	// Status is the HTTP status.
	Status int
	// Body is the JSON response (§6.1, §6.4 or a §8.4 error).
	Body []byte
	// Rejection is set when the call was refused with a client error (4xx)
	// before it was recorded: the transport records it as a rejection.
	Rejection *domain.Error
	// RetryAfter, when set, is the Retry-After of a single request
	// refused because its principal's queue for the engine was full (503,
	// QWED-SYS-002).
	RetryAfter time.Duration
}

// Response is a verification response (§6.1); in a batch, ID names the
// item.
type Response struct {
	ID          string          `json:"id,omitempty"`
	Status      engines.Status  `json:"status"`
	Verified    bool            `json:"verified"`
	Engine      string          `json:"engine,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Proof       json.RawMessage `json:"proof,omitempty"`
	Attestation *Attestation    `json:"attestation,omitempty"`
	Error       *ErrorBody      `json:"error,omitempty"`
	Metadata    *Metadata       `json:"metadata,omitempty"`
}

// Metadata is a response's metadata (§6.1).
type Metadata struct {
	RequestID       string  `json:"request_id,omitempty"`
	CorrelationID   string  `json:"correlation_id,omitempty"`
	TraceID         string  `json:"trace_id,omitempty"`
	LatencyMS       float64 `json:"latency_ms"`
	EngineVersion   string  `json:"engine_version,omitempty"`
	ProtocolVersion string  `json:"protocol_version"`
	// VerificationID and Seq name the call's record in the gate's log.
	VerificationID string `json:"verification_id,omitempty"`
	Seq            uint64 `json:"seq,omitempty"`
}

// Attestation is a response's attestation (§6.1): an ES256 JWT signed by
// the gate, verifiable offline against JWKSURI, whose claims bind
// RequestDigest to OutcomeDigest and to the log position.
type Attestation struct {
	Format         string `json:"format"`
	Algorithm      string `json:"alg"`
	Token          string `json:"token"`
	VerificationID string `json:"verification_id"`
	Seq            uint64 `json:"seq"`
	RequestDigest  string `json:"request_digest"`
	OutcomeDigest  string `json:"outcome_digest"`
	JWKSURI        string `json:"jwks_uri"`
}

// BatchResponse is a batch response (§6.4).
type BatchResponse struct {
	Batch    bool          `json:"batch"`
	JobID    string        `json:"job_id"`
	Status   string        `json:"status"`
	Summary  Summary       `json:"summary"`
	Items    []*Response   `json:"items"`
	Metadata BatchMetadata `json:"metadata"`
}

// Summary is a batch summary (§6.4).
type Summary struct {
	Total       int         `json:"total"`
	Verified    int         `json:"verified"`
	Failed      int         `json:"failed"`
	Skipped     int         `json:"skipped"`
	SuccessRate json.Number `json:"success_rate"`
}

// BatchMetadata is a batch response's metadata.
type BatchMetadata struct {
	RequestID       string  `json:"request_id,omitempty"`
	TotalLatencyMS  float64 `json:"total_latency_ms"`
	ProtocolVersion string  `json:"protocol_version"`
	VerificationID  string  `json:"verification_id,omitempty"`
	Seq             uint64  `json:"seq,omitempty"`
}

// errorResponse is the body of a refused call (§8.4).
func errorResponse(p *Problem) Answer {
	body, _ := json.Marshal(&Response{
		Status: p.Status, Verified: false,
		Error:    errorBody(p.Code, p.Message, p.Details),
		Metadata: &Metadata{ProtocolVersion: ProtocolVersion},
	})
	a := Answer{Status: httpStatus(p.Status, p.Code), Body: body}
	if a.Status < 500 {
		a.Rejection = &domain.Error{Code: p.Code, Message: p.Message, Details: p.Details}
	}
	return a
}

// ErrorAnswer renders a problem as a §8.4 body with the code's status;
// Rejection is set for the client's errors (4xx), which the transport
// records.
func ErrorAnswer(code domain.Code, details map[string]any, format string, args ...any) Answer {
	return errorResponse(newProblem(code, details, format, args...))
}

// options of one item.
type itemOptions struct {
	TimeoutMS          *int64 `json:"timeout_ms"`
	IncludeProof       *bool  `json:"include_proof"`
	IncludeAttestation *bool  `json:"include_attestation"`
}

type requestMetadata struct {
	RequestID     string `json:"request_id"`
	CorrelationID string `json:"correlation_id"`
	TraceID       string `json:"trace_id"`
}

// request is a §5.1 request, validated.
type request struct {
	Query    string          `json:"query"`
	Type     string          `json:"type"`
	Params   json.RawMessage `json:"params"`
	Options  itemOptions     `json:"options"`
	Metadata requestMetadata `json:"metadata"`
}

// batchRequest is a §5.3 request, validated.
type batchRequest struct {
	Items   []json.RawMessage `json:"items"`
	Options struct {
		MaxParallel *int `json:"max_parallel"`
		FailFast    bool `json:"fail_fast"`
		itemOptions
	} `json:"options"`
	Metadata requestMetadata `json:"metadata"`
}

// Verify answers one call. It never panics on any body. Its engines run in
// the turn of c.Principal (fair.Tenant) on the registry's queues.
func (s *Service) Verify(ctx context.Context, c Call) Answer {
	start := s.cfg.Clock()
	ctx = fair.WithTenant(ctx, fair.Tenant{Principal: c.Principal})
	if p := Negotiate(c.Version); p != nil {
		return errorResponse(p)
	}
	if c.Principal == "" {
		return ErrorAnswer(domain.CodeMissingAPIKey, map[string]any{"header": "X-API-Key"}, "missing API key: send it in the X-API-Key header")
	}
	doc, err := schemas.Decode(c.Body)
	if err != nil {
		return ErrorAnswer(domain.CodeInvalidRequest, nil, "the body is not a JSON document: %v", err)
	}
	if m, ok := doc.(map[string]any); ok && m["batch"] != nil {
		if b, _ := m["batch"].(bool); b {
			return s.batch(ctx, c, doc, start)
		}
	}
	if p := strictProblem(c.Body, schemas.Request(), ""); p != nil {
		return errorResponse(p)
	}
	if p := schemaProblem(schemas.Request().Validate(doc)); p != nil {
		return errorResponse(p)
	}
	var req request
	if err := json.Unmarshal(c.Body, &req); err != nil {
		return ErrorAnswer(domain.CodeInvalidRequest, nil, "decoding the request: %v", err)
	}
	digest, err := digestOf(c.Body)
	if err != nil {
		return ErrorAnswer(domain.CodeInvalidRequest, nil, "the request is not I-JSON (RFC 7493): %v", err)
	}
	res := s.runItem(ctx, &req, digest, itemOptions{})
	ev, p := s.record(ctx, c, false, []*itemResult{res})
	if p != nil {
		return errorResponse(p)
	}
	s.finish(res, ev, 0, &req.Metadata)
	res.resp.Metadata.LatencyMS = millis(s.cfg.Clock().Sub(start))
	body, err := json.Marshal(res.resp)
	if err != nil {
		s.log.Error("encoding a verify response", "err", err)
		return ErrorAnswer(domain.CodeInternal, nil, "encoding the response failed")
	}
	a := Answer{Status: httpStatus(res.resp.Status, errCode(res.resp)), Body: body}
	if errCode(res.resp) == domain.CodeUnavailable {
		a.RetryAfter = s.reg.retryAfter
	}
	return a
}

func errCode(r *Response) domain.Code {
	if r.Error == nil {
		return ""
	}
	return domain.Code(r.Error.Code)
}

// batch answers a §5.3 request.
func (s *Service) batch(ctx context.Context, c Call, doc any, start time.Time) Answer {
	if p := strictProblem(c.Body, schemas.BatchRequest(), ""); p != nil {
		return errorResponse(p)
	}
	if p := schemaProblem(schemas.BatchRequest().Validate(doc)); p != nil {
		return errorResponse(p)
	}
	var b batchRequest
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return ErrorAnswer(domain.CodeInvalidRequest, nil, "decoding the batch: %v", err)
	}
	reqs := make([]request, len(b.Items))
	digests := make([]string, len(b.Items))
	for i, raw := range b.Items {
		if err := json.Unmarshal(raw, &reqs[i]); err != nil {
			return ErrorAnswer(domain.CodeInvalidRequest, map[string]any{"field": "/items/" + strconv.Itoa(i)}, "decoding item %d: %v", i, err)
		}
		d, err := digestOf(raw)
		if err != nil {
			return ErrorAnswer(domain.CodeInvalidRequest, map[string]any{"field": "/items/" + strconv.Itoa(i)}, "item %d is not I-JSON (RFC 7493): %v", i, err)
		}
		digests[i] = d
	}
	parallel := DefaultMaxParallel
	if b.Options.MaxParallel != nil {
		parallel = *b.Options.MaxParallel
	}
	results := s.runBatch(ctx, reqs, digests, b.Options.itemOptions, min(parallel, MaxParallel), b.Options.FailFast)
	ev, p := s.record(ctx, c, true, results)
	if p != nil {
		return errorResponse(p)
	}
	out := BatchResponse{Batch: true, Status: "completed", Items: make([]*Response, len(results)),
		Metadata: BatchMetadata{RequestID: b.Metadata.RequestID, ProtocolVersion: ProtocolVersion}}
	if ev != nil && ev.QWEDVerified != nil {
		out.JobID = "batch_" + ev.QWEDVerified.VerificationID
		out.Metadata.VerificationID, out.Metadata.Seq = ev.QWEDVerified.VerificationID, ev.Seq
	}
	sum := &out.Summary
	sum.Total = len(results)
	for i, r := range results {
		s.finish(r, ev, i, &reqs[i].Metadata)
		r.resp.ID = strconv.Itoa(i)
		out.Items[i] = r.resp
		switch {
		case r.resp.Status == domain.StatusSkipped:
			sum.Skipped++
			out.Status = "failed_fast"
		case r.resp.Verified:
			sum.Verified++
		default:
			sum.Failed++
		}
	}
	sum.SuccessRate = successRate(sum.Verified, sum.Total)
	out.Metadata.TotalLatencyMS = millis(s.cfg.Clock().Sub(start))
	body, err := json.Marshal(&out)
	if err != nil {
		s.log.Error("encoding a batch response", "err", err)
		return ErrorAnswer(domain.CodeInternal, nil, "encoding the response failed")
	}
	return Answer{Status: 200, Body: body}
}

// successRate is 100*verified/total with one decimal, rounded half up.
func successRate(verified, total int) json.Number {
	if total == 0 {
		return "0"
	}
	tenths := (verified*1000*2 + total) / (2 * total)
	s := strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10)
	if tenths%10 == 0 {
		s = strconv.Itoa(tenths / 10)
	}
	return json.Number(s)
}

// millis renders a duration in milliseconds with microsecond precision.
func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// digestOf is the hex SHA-256 of the RFC 8785 form of a JSON document.
func digestOf(raw []byte) (string, error) {
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// runBatch runs the items, at most parallel at a time; with failFast the
// results after the first item that is not VERIFIED are SKIPPED.
func (s *Service) runBatch(ctx context.Context, reqs []request, digests []string, defaults itemOptions, parallel int, failFast bool) []*itemResult {
	n := len(reqs)
	results := make([]*itemResult, n)
	if parallel < 1 {
		parallel = 1
	}
	var (
		mu      sync.Mutex
		cut     = n // the first item, in order, that is not verified
		cancels = make([]context.CancelFunc, n)
		next    int
		wg      sync.WaitGroup
	)
	take := func() (int, context.Context, bool) {
		mu.Lock()
		defer mu.Unlock()
		if failFast && next > cut {
			next = n // everything left is past the cut
		}
		if next >= n {
			return 0, nil, false
		}
		i := next
		next++
		ictx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		return i, ictx, true
	}
	done := func(i int, r *itemResult) {
		mu.Lock()
		defer mu.Unlock()
		results[i] = r
		cancels[i]()
		if failFast && !r.resp.Verified && i < cut {
			cut = i
			for j := i + 1; j < n; j++ {
				if cancels[j] != nil {
					cancels[j]()
				}
			}
		}
	}
	for range min(parallel, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ictx, ok := take()
				if !ok {
					return
				}
				done(i, s.runItem(ictx, &reqs[i], digests[i], defaults))
			}
		}()
	}
	wg.Wait()
	if failFast {
		for i := cut + 1; i < n; i++ {
			results[i] = skipped(digests[i], &reqs[i])
		}
	}
	return results
}

// itemResult is one answered item: its response (without attestation and
// log metadata) and its record.
type itemResult struct {
	resp *Response
	item domain.QWEDItem
}

// skipped is the result of an item a fail_fast batch did not answer.
func skipped(digest string, req *request) *itemResult {
	r := &itemResult{resp: &Response{Status: domain.StatusSkipped, Metadata: &Metadata{ProtocolVersion: ProtocolVersion}}}
	r.item = domain.QWEDItem{RequestDigest: digest, Type: typeOf(req), Status: domain.StatusSkipped}
	r.item.OutcomeDigest = outcomeDigest(r.resp)
	return r
}

func typeOf(req *request) string {
	if req.Type == "" {
		return "natural_language"
	}
	return req.Type
}

// record submits the call's record to the gate and checks that the
// recorded command is this call's (a reused request id is a conflict).
func (s *Service) record(ctx context.Context, c Call, batch bool, results []*itemResult) (*domain.Event, *Problem) {
	q := &domain.QWEDVerify{Batch: batch, Items: make([]domain.QWEDItem, len(results))}
	for i, r := range results {
		q.Items[i] = r.item
	}
	// The request id is the principal's own (issue 11): another principal
	// reusing it is another request.
	id := c.Request
	id.Scope = domain.RequestScope(c.Principal, "")
	cmd := &domain.Command{Type: domain.CmdQWEDVerify, Request: id, Principal: c.Principal, QWEDVerify: q}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RecordTimeout)
	defer cancel()
	ev, err := s.cfg.Gate.Submit(rctx, cmd)
	switch {
	case errors.Is(err, streams.ErrNoSpace):
		// Not logged per request: the worker logs the refusals.
		return nil, newProblem(domain.CodeStorageFull, nil, "the gate's disk is full: the verification was not recorded; retry with the same Idempotency-Key once space is freed")
	case err != nil:
		s.log.Warn("recording a verification", "err", err)
		return nil, newProblem(domain.CodeUnavailable, nil, "the gate did not record the verification: retry with the same Idempotency-Key")
	case ev == nil:
		return nil, newProblem(domain.CodeInternal, nil, "the gate recorded nothing for the verification")
	case ev.Type == domain.EvCommandRejected && ev.Error != nil:
		return nil, newProblem(ev.Error.Code, ev.Error.Details, "%s", ev.Error.Message)
	case ev.Type != domain.EvQWEDVerified || ev.QWEDVerified == nil || len(ev.QWEDVerified.Attestations) != len(results):
		return nil, newProblem(domain.CodeConflict, map[string]any{"request_id": c.Request.ID},
			"the request id %q was already used by a different request", c.Request.ID)
	}
	if rec := ev.Command; rec == nil || rec.Principal != c.Principal || !sameRecord(rec.QWEDVerify, q) {
		return nil, newProblem(domain.CodeConflict, map[string]any{"request_id": c.Request.ID},
			"the request id %q was already used by a different request", c.Request.ID)
	}
	return ev, nil
}

func sameRecord(a, b *domain.QWEDVerify) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// finish adds the log position and the attestation of item i to r.
func (s *Service) finish(r *itemResult, ev *domain.Event, i int, md *requestMetadata) {
	m := r.resp.Metadata
	if m == nil {
		m = &Metadata{ProtocolVersion: ProtocolVersion}
		r.resp.Metadata = m
	}
	m.RequestID, m.CorrelationID, m.TraceID = md.RequestID, md.CorrelationID, md.TraceID
	if ev == nil || ev.QWEDVerified == nil {
		return
	}
	v := ev.QWEDVerified
	m.VerificationID, m.Seq = v.VerificationID, ev.Seq
	if m.RequestID == "" {
		m.RequestID = v.VerificationID
	}
	if i < len(v.Attestations) && v.Attestations[i] != "" {
		r.resp.Attestation = &Attestation{
			Format: "jwt", Algorithm: "ES256", Token: v.Attestations[i], VerificationID: v.VerificationID, Seq: ev.Seq,
			RequestDigest: r.item.RequestDigest, OutcomeDigest: r.item.OutcomeDigest, JWKSURI: JWKSPath,
		}
	}
}

func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// EnginesDocument is the body of GET /engines: the protocol version, the
// versions a client may ask for, and each engine's capabilities document
// (§4.2) in the order of §4.1.
func (s *Service) EnginesDocument() []byte {
	b, err := json.Marshal(struct {
		ProtocolVersion   string                 `json:"protocol_version"`
		SupportedVersions []string               `json:"supported_versions"`
		Engines           []engines.Capabilities `json:"engines"`
	}{ProtocolVersion, SupportedVersions, s.reg.Capabilities()})
	if err != nil {
		// Capabilities hold strings, numbers and booleans; a document that
		// cannot be encoded is an engine bug, answered as an empty list.
		s.log.Error("encoding the engines document", "err", err)
		b, _ = json.Marshal(map[string]any{"protocol_version": ProtocolVersion, "supported_versions": SupportedVersions, "engines": []any{}})
	}
	return b
}
