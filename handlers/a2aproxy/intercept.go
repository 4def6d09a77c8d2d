package a2aproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentgate/agentgate/domain/a2a"
)

// InterceptPath is the gate's endpoint an Interceptor built by InProcess
// serves AgentMessages to.
const InterceptPath = "/a2a/intercept"

// Interceptor decides one AgentMessage on the caller's credentials, as
// POST /a2a/intercept does: the verdict is recorded before Intercept
// returns it. An error means no answer was had from the gate (nothing was
// decided, or its answer was lost): the message is not forwarded.
type Interceptor interface {
	Intercept(ctx context.Context, in *Intercept) (*Outcome, error)
}

// Intercept is one AgentMessage to decide.
type Intercept struct {
	// Credentials are the caller's credential headers (X-API-Key,
	// Authorization), nothing else.
	Credentials http.Header
	// RemoteAddr is the caller's address (the gate's edge limits).
	RemoteAddr string
	// Key is the Idempotency-Key: a retry with the same key and message
	// gets the recorded verdict, never a second one.
	Key     string
	Message *a2a.Message
}

// Outcome is the gate's answer to an Intercept: the HTTP status and body
// POST /a2a/intercept answers.
type Outcome struct {
	Status int
	// Body is the verdict {"status","reason","engine_used",...} when the
	// gate decided, else the error body {"error": {"code","message",
	// "details"}}.
	Body []byte
	// RetryAfter is the Retry-After header of a rate-limited verdict.
	RetryAfter string
}

// verdictStatus is the part of a verdict the proxy reads.
type verdictStatus struct {
	Status a2a.Status `json:"status"`
	Reason string     `json:"reason"`
}

// errorBody is the gate's error body.
type errorBody struct {
	Error json.RawMessage `json:"error"`
}

// verdict returns the verdict of o, or ok false when o is a refusal (the
// gate answered an error body).
func (o *Outcome) verdict() (v verdictStatus, ok bool) {
	if o.Status != http.StatusOK && o.Status != http.StatusTooManyRequests {
		return v, false
	}
	if err := json.Unmarshal(o.Body, &v); err != nil || v.Status == "" {
		return v, false
	}
	return v, true
}

// refusal returns the gate's error object of a refusal ({"code","message",
// "details"}), or the whole body when it is not an error body.
func (o *Outcome) refusal() json.RawMessage {
	var e errorBody
	if json.Unmarshal(o.Body, &e) == nil && len(e.Error) > 0 {
		return e.Error
	}
	if json.Valid(o.Body) {
		return bytes.TrimSpace(o.Body)
	}
	return nil
}

// InProcess returns the Interceptor that serves each AgentMessage to h,
// the gate's HTTP API, as POST InterceptPath in the same process: the
// endpoint's own authentication, limits, decision and recording, with no
// rule of its own and no socket.
func InProcess(h http.Handler) Interceptor { return handlerInterceptor{h} }

type handlerInterceptor struct{ h http.Handler }

// Intercept implements Interceptor.
func (hi handlerInterceptor) Intercept(ctx context.Context, in *Intercept) (*Outcome, error) {
	body, err := json.Marshal(in.Message)
	if err != nil {
		return nil, fmt.Errorf("encoding the AgentMessage: %w", err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, InterceptPath, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building the intercept request: %w", err)
	}
	for k, vs := range in.Credentials {
		r.Header[k] = vs
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", in.Key)
	r.RemoteAddr = in.RemoteAddr
	rec := &recorder{h: http.Header{}}
	hi.h.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &Outcome{Status: rec.status, Body: rec.body.Bytes(), RetryAfter: rec.h.Get("Retry-After")}, nil
}

// recorder is the http.ResponseWriter of an in-process intercept.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
