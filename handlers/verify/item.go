package verify

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/strictjson"
	"github.com/agentgate/agentgate/handlers/fair"
	"github.com/agentgate/agentgate/schemas"
)

// schemaProblem maps the violations of a request to one §8 problem: a
// missing member is REQ-002, a query over the length limit REQ-004, an
// unknown type REQ-005, anything else REQ-001. All violations are listed
// in details, sorted.
func schemaProblem(vs []schemas.Violation) *Problem {
	if len(vs) == 0 {
		return nil
	}
	list := make([]any, len(vs))
	for i, v := range vs {
		m := map[string]any{"instance_location": v.InstanceLocation, "keyword": v.Keyword, "message": v.Message}
		list[i] = m
	}
	details := map[string]any{"violations": list}
	// The most specific code wins, whichever violation carries it.
	for _, v := range vs {
		if v.Keyword == "maxLength" && strings.HasSuffix(v.InstanceLocation, "/query") {
			details["field"] = v.InstanceLocation
			details["max_length"] = engines.MaxQueryBytes
			return newProblem(domain.CodeTooLong, details, "query too long: at most %d characters (QWED protocol v1.0 §5.1)", engines.MaxQueryBytes)
		}
	}
	for _, v := range vs {
		if v.Keyword == "required" {
			details["field"] = v.InstanceLocation
			details["missing"] = v.Missing
			return newProblem(domain.CodeMissingField, details, "missing required field %s", strings.Join(quoteAll(v.Missing), ", "))
		}
	}
	for _, v := range vs {
		if v.Keyword == "enum" && strings.HasSuffix(v.InstanceLocation, "/type") {
			details["field"] = v.InstanceLocation
			details["supported"] = append(slices.Clone(EngineIDs), "natural_language")
			return newProblem(domain.CodeUnsupportedType, details, "unsupported verification type: %s", v.Message)
		}
	}
	details["field"] = vs[0].InstanceLocation
	return newProblem(domain.CodeInvalidRequest, details, "invalid request format at %q: %s", vs[0].InstanceLocation, vs[0].Message)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "'" + s + "'"
	}
	return out
}

// problemResult is an item answered with a problem, without an engine.
func problemResult(p *Problem, engine string) *Response {
	return &Response{Status: p.Status, Engine: engine, Error: errorBody(p.Code, p.Message, p.Details),
		Metadata: &Metadata{ProtocolVersion: ProtocolVersion}}
}

// runItem answers one validated request. defaults are the batch options
// an item does not set itself.
func (s *Service) runItem(ctx context.Context, req *request, digest string, defaults itemOptions) *itemResult {
	start := s.cfg.Clock()
	typ := typeOf(req)
	opts := req.Options
	if opts.TimeoutMS == nil {
		opts.TimeoutMS = defaults.TimeoutMS
	}
	if opts.IncludeProof == nil {
		opts.IncludeProof = defaults.IncludeProof
	}
	if opts.IncludeAttestation == nil {
		opts.IncludeAttestation = defaults.IncludeAttestation
	}
	resp, version := s.answer(ctx, req, typ, opts)
	if resp.Metadata == nil {
		resp.Metadata = &Metadata{ProtocolVersion: ProtocolVersion}
	}
	resp.Metadata.EngineVersion = version
	resp.Metadata.LatencyMS = millis(s.cfg.Clock().Sub(start))
	r := &itemResult{resp: resp}
	r.item = domain.QWEDItem{
		RequestDigest: digest, Type: typ, Engine: resp.Engine, EngineVersion: version,
		Status: string(resp.Status), OutcomeDigest: outcomeDigest(resp),
		Attest: opts.IncludeAttestation != nil && *opts.IncludeAttestation,
	}
	if resp.Error != nil {
		r.item.Code = resp.Error.Code
	}
	return r
}

// answer routes and runs one request; it returns the response and the
// engine's version.
func (s *Service) answer(ctx context.Context, req *request, typ string, opts itemOptions) (*Response, string) {
	if proseTypes[typ] {
		if pattern, at := ScanInjection(req.Query); pattern != "" {
			p := newProblem(domain.CodePromptInjection, map[string]any{"pattern": pattern, "position": at},
				"prompt injection detected")
			return problemResult(p, "security"), ""
		}
	}
	id := typ
	if typ == "natural_language" {
		if id = NaturalLanguageRoute(req.Query); id == "" {
			return problemResult(naturalLanguageProblem(req.Query), ""), ""
		}
	}
	e, ok := s.reg.Get(id)
	if !ok {
		p := newProblem(domain.CodeEngineMissing, map[string]any{"engine": id}, "engine '%s' is not available in this verifier", id)
		return problemResult(p, id), ""
	}
	caps := e.Capabilities()
	if len(req.Params) > 0 {
		if p := s.checkParams(id, req.Params); p != nil {
			return problemResult(p, id), caps.Version
		}
	}
	timeout := DefaultTimeout
	if opts.TimeoutMS != nil {
		timeout = time.Duration(*opts.TimeoutMS) * time.Millisecond
	}
	proof := opts.IncludeProof != nil && *opts.IncludeProof
	o := runEngine(ctx, s.reg.Queue(id), e, engines.Request{Query: req.Query, Type: id, Params: req.Params, IncludeProof: proof}, timeout)
	return render(id, o, proof), caps.Version
}

// strictProblem refuses a document that another reader could take
// differently (domain/strictjson against the schema's shape: a member
// repeated at any depth, exactly or in another case, or a property of the
// schema spelled in another case) with QWED-REQ-001 naming the member by
// its JSON pointer, prefixed with at. Malformed JSON is left to the
// decoder.
func strictProblem(doc []byte, sch *schemas.Schema, at string) *Problem {
	err := strictjson.Check(doc, sch.Shape())
	if err == nil {
		return nil
	}
	var e *strictjson.Error
	if !errors.As(err, &e) || e.Kind == strictjson.KindSyntax {
		return nil
	}
	d := e.Details()
	d["field"] = at + e.Pointer
	return newProblem(domain.CodeInvalidRequest, d, "invalid request format: %s", e.Error())
}

// checkParams validates params against the engine's §5.2 schema.
func (s *Service) checkParams(engine string, params json.RawMessage) *Problem {
	sch, ok := schemas.Params(engine)
	if !ok {
		return nil
	}
	doc, err := schemas.Decode(params)
	if err != nil {
		return newProblem(domain.CodeInvalidRequest, map[string]any{"field": "/params"}, "params: %v", err)
	}
	if p := strictProblem(params, sch, "/params"); p != nil {
		return p
	}
	vs := sch.Validate(doc)
	if len(vs) == 0 {
		return nil
	}
	p := schemaProblem(vs)
	// Inside params every violation is a format error of the engine's
	// parameters (REQ-001), whatever keyword failed.
	p.Code, p.Status = domain.CodeInvalidRequest, engines.Error
	p.Details["field"] = "/params" + vs[0].InstanceLocation
	p.Message = "invalid params for engine '" + engine + "' at \"" + vs[0].InstanceLocation + "\": " + vs[0].Message
	return p
}

// runEngine runs e under timeout, in ctx's tenant's turn on q (nil: at
// once): past the timeout, or when ctx ends, the answer is TIMEOUT
// (QWED-ENG-003), the wait for the turn included; a panic is ERROR
// (QWED-ENG-002); a tenant whose queue is full is answered ERROR with
// QWED-SYS-002 at once. The turn is held until e returns, even past the
// timeout, so that at most q's slots run.
func runEngine(ctx context.Context, q *fair.Scheduler, e engines.Engine, req engines.Request, timeout time.Duration) engines.Outcome {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	release := func() {}
	if q != nil {
		rel, err := q.Acquire(ctx, fair.TenantOf(ctx))
		var busy *fair.BusyError
		switch {
		case errors.As(err, &busy):
			return busyOutcome(req.Type, busy)
		case err != nil:
			return timeoutOutcome(ctx, timeout)
		}
		release = rel
	}
	ch := make(chan engines.Outcome, 1)
	go func() {
		defer release()
		defer func() {
			if r := recover(); r != nil {
				ch <- engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: string(domain.CodeEngineFailed),
					Message: "verification failed unexpectedly: the engine failed"}}
			}
		}()
		ch <- e.Verify(ctx, req)
	}()
	select {
	case o := <-ch:
		return o
	case <-ctx.Done():
		return timeoutOutcome(ctx, timeout)
	}
}

// timeoutOutcome is the answer of a run whose ctx ended.
func timeoutOutcome(ctx context.Context, timeout time.Duration) engines.Outcome {
	msg := "verification timed out after " + timeout.String()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = "verification canceled"
	}
	return engines.Outcome{Status: engines.Timeout, Err: &engines.Problem{Code: string(domain.CodeTimeout), Message: msg,
		Details: map[string]any{"timeout_ms": timeout.Milliseconds()}}}
}

// busyOutcome is the answer of a run refused by the engine's queue.
func busyOutcome(engine string, busy *fair.BusyError) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: string(domain.CodeUnavailable),
		Message: "Service unavailable: the " + engine + " engine's queue is full for this principal: " + busy.Error(),
		Details: map[string]any{"engine": engine, "retry_after_s": retrySeconds(busy.RetryAfter)}}}
}

// retrySeconds is a Retry-After in whole seconds, at least 1.
func retrySeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// knownStatuses are the statuses of §6.2.
var knownStatuses = map[engines.Status]bool{
	engines.Verified: true, engines.Failed: true, engines.Corrected: true, engines.Blocked: true,
	engines.Error: true, engines.Timeout: true, engines.Unsupported: true,
}

// defaultCodes give a status without an engine error its §8 code.
var defaultCodes = map[engines.Status]domain.Code{
	engines.Error: domain.CodeEngineFailed, engines.Timeout: domain.CodeTimeout,
	engines.Unsupported: domain.CodeUnsupportedType, engines.Blocked: domain.CodeSecurityViolated,
}

// render turns an engine outcome into a response: the result and the
// proof as JSON objects (a value that is not an object is wrapped as
// {"value": …}), the correction and the findings added to the result,
// and the error with its documentation URL.
func render(engine string, o engines.Outcome, proof bool) *Response {
	if !knownStatuses[o.Status] {
		p := newProblem(domain.CodeEngineFailed, map[string]any{"status": string(o.Status)}, "the engine answered an unknown status")
		return problemResult(p, engine)
	}
	r := &Response{Status: o.Status, Verified: o.Status == engines.Verified, Engine: engine,
		Metadata: &Metadata{ProtocolVersion: ProtocolVersion}}
	var err error
	extra := map[string]any{}
	if o.Corrected != "" {
		extra["corrected"] = o.Corrected
	}
	if len(o.Findings) > 0 {
		extra["findings"] = o.Findings
	}
	if r.Result, err = object(o.Result, extra); err != nil {
		p := newProblem(domain.CodeEngineFailed, nil, "the engine's result cannot be encoded: %v", err)
		return problemResult(p, engine)
	}
	if proof && o.Proof != nil {
		if r.Proof, err = object(o.Proof, nil); err != nil {
			p := newProblem(domain.CodeEngineFailed, nil, "the engine's proof cannot be encoded: %v", err)
			return problemResult(p, engine)
		}
	}
	code := domain.Code("")
	msg, details := "", map[string]any(nil)
	if o.Err != nil {
		code, msg, details = domain.Code(o.Err.Code), o.Err.Message, o.Err.Details
	}
	if code == "" {
		code = defaultCodes[o.Status]
	}
	if code != "" {
		if msg == "" {
			msg = code.Description()
		}
		r.Error = errorBody(code, msg, details)
	}
	return r
}

// object encodes v as a JSON object with the members of extra added where
// v lacks them; nil v with no extra is absent.
func object(v any, extra map[string]any) (json.RawMessage, error) {
	if v == nil && len(extra) == 0 {
		return nil, nil
	}
	m := map[string]json.RawMessage{}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			m = map[string]json.RawMessage{"value": b}
		}
	}
	for k, x := range extra {
		if _, ok := m[k]; ok {
			continue
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		m[k] = b
	}
	return json.Marshal(m)
}

// outcomeDigest is the hex SHA-256 of the RFC 8785 form of what a
// response asserts: status, verified, engine, result, proof and error
// (not the metadata, which holds the latency, nor the attestation).
func outcomeDigest(r *Response) string {
	b, err := json.Marshal(struct {
		Status   engines.Status  `json:"status"`
		Verified bool            `json:"verified"`
		Engine   string          `json:"engine,omitempty"`
		Result   json.RawMessage `json:"result,omitempty"`
		Proof    json.RawMessage `json:"proof,omitempty"`
		Error    *ErrorBody      `json:"error,omitempty"`
	}{r.Status, r.Verified, r.Engine, r.Result, r.Proof, r.Error})
	if err == nil {
		if d, err := digestOf(b); err == nil {
			return d
		}
	}
	// An outcome that is not I-JSON (a NaN the engine let through) is
	// digested as its plain encoding: still a fixed function of it.
	return digestBytes(b)
}
