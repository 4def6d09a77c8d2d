package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/streams/cehttp"
)

// verifyWriteSlack is added to the longest timeout_ms (§5.1: 300 s) for the
// write deadline of POST /verify, which outlives the server's WriteTimeout.
const verifyWriteSlack = 15 * time.Second

// verifyWriteDeadline is how long POST /verify may take to answer.
const verifyWriteDeadline = 300*time.Second + verifyWriteSlack

// qwedService returns the protocol service of cfg: cfg.Verify, or one over
// the built-in engines recording through cfg.Gate.
func qwedService(cfg *Config) *verify.Service {
	if cfg.Verify != nil {
		return cfg.Verify
	}
	reg, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{})...)
	if err != nil {
		// The built-in list is fixed at build time; TestBuiltinRegistry
		// pins that it registers.
		panic("httpapi.New: " + err.Error())
	}
	s, err := verify.New(verify.Config{Registry: reg, Gate: cfg.Gate, Logger: cfg.Logger, Clock: cfg.Clock})
	if err != nil {
		panic("httpapi.New: " + err.Error())
	}
	return s
}

// postVerify serves POST /verify (QWED protocol v1.0 §5, §6): principal API key
// required (X-API-Key), QWED-Protocol-Version negotiated, every answer a
// §6.1/§6.4 body or a §8.4 error body.
func (a *api) postVerify(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(verifyWriteDeadline))
	c := newCall(r)
	buf := a.getBuf()
	defer a.putBuf(buf)
	e := readBody(w, r, a.cfg.MaxBodyBytes, buf)
	c.body = buf.Bytes()
	var id domain.RequestID
	if e == nil {
		id, e = requestID(r)
	}
	if e == nil {
		c.creds, e = a.credentials(r, true, false)
	}
	if e == nil {
		e = a.limit(w, c.creds.Principal)
	}
	if e != nil {
		a.verifyRefused(ctx, w, c, e)
		return
	}
	ans := a.qwed.Verify(ctx, verify.Call{Body: c.body, Version: r.Header.Get(verify.VersionHeader), Principal: c.creds.Principal, Request: id})
	a.verifyAnswered(ctx, c, ans)
	w.Header().Set(verify.VersionHeader, verify.ProtocolVersion)
	setRetryAfter(w, ans)
	writeJSON(w, ans.Status, ans.Body)
}

// setRetryAfter sets the Retry-After of an answer refused for a full
// engine queue.
func setRetryAfter(w http.ResponseWriter, ans verify.Answer) {
	if ans.RetryAfter > 0 {
		writeRetryAfter(w, ans.RetryAfter)
	}
}

// verifyRefused answers a transport refusal of POST /verify as a §8.4 body,
// recording it like every refusal.
func (a *api) verifyRefused(ctx context.Context, w http.ResponseWriter, c *call, e *apiError) {
	if e.record {
		a.record(ctx, c, e)
	}
	ans := verify.ErrorAnswer(e.err.Code, e.err.Details, "%s", e.err.Message)
	w.Header().Set(verify.VersionHeader, verify.ProtocolVersion)
	writeJSON(w, e.status, ans.Body)
}

// verifyAnswered records the rejection an answer carries.
func (a *api) verifyAnswered(ctx context.Context, c *call, ans verify.Answer) {
	if ans.Rejection != nil {
		a.record(ctx, c, &apiError{status: ans.Status, err: *ans.Rejection, record: true})
	}
}

// getEngines serves GET /engines: each engine's capabilities document
// (QWED protocol v1.0 §4.2).
func (a *api) getEngines(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set(verify.VersionHeader, verify.ProtocolVersion)
	writeJSON(w, http.StatusOK, a.qwed.EnginesDocument())
}

// verifyEvent decides a qwed.verify CloudEvent: its data is the body of
// POST /verify, its source and id the request id, the X-API-Key header of
// POST /events the principal; the reply's data is POST /verify's answer.
func (a *api) verifyEvent(w http.ResponseWriter, r *http.Request, c *call, ce cehttp.Event) (int, []byte) {
	ctx := r.Context()
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		a.record(ctx, c, e)
		return e.status, verify.ErrorAnswer(e.err.Code, e.err.Details, "%s", e.err.Message).Body
	}
	if e = a.limit(w, c.creds.Principal); e != nil {
		return e.status, verify.ErrorAnswer(e.err.Code, e.err.Details, "%s", e.err.Message).Body
	}
	ans := a.qwed.Verify(ctx, verify.Call{Body: ce.Data, Version: r.Header.Get(verify.VersionHeader),
		Principal: c.creds.Principal, Request: domain.RequestID{Source: ce.Source, ID: ce.ID}})
	a.verifyAnswered(ctx, c, ans)
	setRetryAfter(w, ans)
	return ans.Status, ans.Body
}
