package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults of the HTTP client (the same in the Python and TypeScript SDKs).
const (
	// DefaultURL is the gate's address when NewHTTP gets none and
	// AGENTGATE_URL is unset: `make run`'s gate.
	DefaultURL = "http://127.0.0.1:8080"
	// URLEnv names the environment variable NewHTTP reads the address from.
	URLEnv = "AGENTGATE_URL"
	// APIKeyEnv names the environment variable NewHTTP reads the API key
	// from when it is given neither an API key nor an agent token.
	APIKeyEnv = "AGENTGATE_API_KEY"
	// DefaultHTTPTimeout bounds one attempt of a call.
	DefaultHTTPTimeout = 10 * time.Second
	// DefaultMaxRetries is how many times a failed attempt is retried.
	DefaultMaxRetries = 2
	// MaxResponseBytes bounds a response body the client reads (a
	// compliance report of a long-lived agent included).
	MaxResponseBytes = 64 << 20
	// maxRetryWait caps one wait between attempts, a Retry-After included.
	maxRetryWait = 30 * time.Second
	// backoffBase and backoffCap shape the exponential backoff without a
	// Retry-After: base·2^attempt, capped, with jitter in its upper half.
	backoffBase = 200 * time.Millisecond
	backoffCap  = 5 * time.Second
)

// HTTPClient calls the gate's HTTP API (README "HTTP API"). It is safe for
// concurrent use; its connections are kept alive by its *http.Client.
//
// Every method takes a context that bounds the whole call, retries
// included. A write carries an Idempotency-Key, one per logical call (the
// caller's, set with WithIdempotencyKey, or a fresh random one) reused on
// each of its retries, so a retried write is decided once: the gate
// answers a repeated key with the recorded answer. An attempt is retried
// on a connection error, 408, 502, 503, 504, and a 429 that is a refusal
// (not a BUDGET_EXCEEDED decision or a rate-limited A2A verdict, which are
// results); Retry-After is honoured (up to 30 s), otherwise the wait is an
// exponential backoff with jitter capped at 5 s.
//
// A refusal is returned as an *APIError carrying the gate's code; the
// decisions of verify calls (APPROVED, CORRECTED, PENDING, DENIED,
// BUDGET_EXCEEDED) are results, whatever their HTTP status. Credentials
// are sent in headers only (X-API-Key, Authorization: Bearer) and never
// appear in an error.
type HTTPClient struct {
	base       *url.URL
	hc         *http.Client
	apiKey     string
	agentToken string
	timeout    time.Duration
	maxRetries int
}

// HTTPOption configures an HTTPClient (NewHTTP).
type HTTPOption func(*HTTPClient)

// WithAPIKey sets the principal or admin API key, sent as X-API-Key.
func WithAPIKey(key string) HTTPOption { return func(c *HTTPClient) { c.apiKey = key } }

// WithAgentToken sets the agent token, sent as "Authorization: Bearer" on
// the agent endpoints (verify, tools, executions, trust, the agent's
// reads); the API key, if any, is sent on the others.
func WithAgentToken(token string) HTTPOption { return func(c *HTTPClient) { c.agentToken = token } }

// WithTimeout bounds each attempt of a call (DefaultHTTPTimeout; 0 keeps
// it). The context bounds the whole call.
func WithTimeout(d time.Duration) HTTPOption {
	return func(c *HTTPClient) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithMaxRetries sets how many times a failed attempt is retried
// (DefaultMaxRetries; 0 disables retries, negative keeps the default).
func WithMaxRetries(n int) HTTPOption {
	return func(c *HTTPClient) {
		if n >= 0 {
			c.maxRetries = n
		}
	}
}

// WithHTTPClient sets the *http.Client (its Transport's keep-alive pool,
// proxies, TLS settings); nil keeps http.DefaultClient. The client uses
// a copy whose CheckRedirect follows no redirect.
func WithHTTPClient(hc *http.Client) HTTPOption {
	return func(c *HTTPClient) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// NewHTTP returns a client of the gate at baseURL ("" is the AGENTGATE_URL
// environment variable, else DefaultURL). The URL must be http or https
// with a host and no user information, query or fragment. Without
// WithAPIKey and WithAgentToken the API key is AGENTGATE_API_KEY's, if
// set (as the Python SDK does).
func NewHTTP(baseURL string, opts ...HTTPOption) (*HTTPClient, error) {
	if baseURL == "" {
		baseURL = os.Getenv(URLEnv)
	}
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, errors.New("parsing the gate's URL: not a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("parsing the gate's URL: scheme %q is not http or https", u.Scheme)
	case u.Host == "":
		return nil, errors.New("parsing the gate's URL: no host")
	case u.User != nil:
		return nil, errors.New("parsing the gate's URL: user information is not accepted (use WithAPIKey)")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("parsing the gate's URL: a query or fragment is not accepted")
	}
	c := &HTTPClient{base: u, hc: http.DefaultClient, timeout: DefaultHTTPTimeout, maxRetries: DefaultMaxRetries}
	for _, o := range opts {
		o(c)
	}
	if c.apiKey == "" && c.agentToken == "" {
		c.apiKey = os.Getenv(APIKeyEnv)
	}
	// No redirect is followed: net/http would forward X-API-Key (and a
	// 307's body) to whatever host a redirect names. The 3xx is the
	// call's *APIError. A copy, so the caller's *http.Client is unchanged
	// (its Transport, and so its connection pool, is shared).
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c, nil
}

// BaseURL returns the gate's address the client calls.
func (c *HTTPClient) BaseURL() string { return c.base.String() }

// String describes the client without its credentials.
func (c *HTTPClient) String() string {
	return fmt.Sprintf("client.HTTPClient{%s, api key set: %t, agent token set: %t}", c.base, c.apiKey != "", c.agentToken != "")
}

// GoString is String, so that %#v does not print the credentials either.
func (c *HTTPClient) GoString() string { return c.String() }

// WithAgent returns a copy of c that sends token on the agent endpoints.
func (c *HTTPClient) WithAgent(token string) *HTTPClient {
	cp := *c
	cp.agentToken = token
	return &cp
}

type idemKey struct{}

// WithIdempotencyKey returns ctx carrying the Idempotency-Key for the next
// write made with it (at most 200 bytes): sending the same write again
// with the same key, even from another process, gets the recorded answer
// instead of a second decision. Without it each call draws a fresh key.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKey{}, key)
}

// auth says which credential a call sends.
type auth int

const (
	// authKey sends the API key.
	authKey auth = iota
	// authAgent sends the agent token when set, else the API key.
	authAgent
	// authNone sends nothing (health, JWKS, engines).
	authNone
)

// request is one logical call.
type request struct {
	method string
	// path is the escaped path; route names the endpoint in errors
	// ("POST /agents/{id}/verify"; Do's is its path, without the query).
	path, route string
	query       url.Values
	body        any
	auth        auth
	// header adds headers (X-Confirmation-Token).
	header http.Header
}

// response is the answer of the last attempt.
type response struct {
	status int
	header http.Header
	body   []byte
	// requestID is the Idempotency-Key the write was sent with.
	requestID string
}

// Do calls any endpoint of the gate: method and path (escaped, with its
// query), in encoded as the JSON body when non-nil, the answer decoded
// into out when non-nil (a *[]byte receives the raw body). It sends the
// API key, or, when the client has one and the path is under /agents/,
// the agent token. A status of 400 or more is an *APIError.
func (c *HTTPClient) Do(ctx context.Context, method, path string, in, out any) error {
	p, q, _ := strings.Cut(path, "?")
	query, err := url.ParseQuery(q)
	if err != nil {
		return fmt.Errorf("parsing the query of %s %s: %w", method, p, err)
	}
	a := authKey
	if strings.HasPrefix(p, "/agents/") {
		a = authAgent
	}
	resp, err := c.send(ctx, request{method: method, path: p, route: method + " " + p, query: query, body: in, auth: a})
	if err != nil {
		return err
	}
	return resp.decode(out)
}

// callFor sends r and returns its successful answer decoded as a T.
func callFor[T any](ctx context.Context, c *HTTPClient, r request) (*T, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := resp.decode(out); err != nil {
		return nil, err
	}
	return out, nil
}

// resultFor sends r and returns its answer decoded as a T when it is a
// result, whatever its status: a 2xx, or a body whose member is a
// non-empty string (a decision's "decision", a verdict's "status"); any
// other answer is the *APIError of a refusal.
func resultFor[T any](ctx context.Context, c *HTTPClient, r request, member string) (*T, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status >= 300 && (resp.status < 400 || !isResult(resp.body, member)) {
		return nil, resp.apiError()
	}
	out := new(T)
	if err := json.Unmarshal(resp.body, out); err != nil {
		return nil, fmt.Errorf("decoding the answer of %s (%d): %w", r.route, resp.status, err)
	}
	return out, nil
}

// isResult reports whether body is a JSON object whose member is a
// non-empty string.
func isResult(body []byte, member string) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil {
		return false
	}
	var s string
	return json.Unmarshal(probe[member], &s) == nil && s != ""
}

// rawFor sends r and returns its successful answer's bytes.
func rawFor(ctx context.Context, c *HTTPClient, r request) ([]byte, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := resp.decode(nil); err != nil {
		return nil, err
	}
	return resp.body, nil
}

// decode decodes a 2xx answer into out (a *[]byte gets the raw body), or
// returns the *APIError of any other.
func (r *response) decode(out any) error {
	if r.status >= 300 { // a redirect is not followed (NewHTTP): a refusal
		return r.apiError()
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = r.body
		return nil
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return fmt.Errorf("decoding the gate's answer (%d): %w", r.status, err)
	}
	return nil
}

// send sends r, retrying as the HTTPClient documentation says, and
// returns the last answer (any status) or the error that ended the call.
func (c *HTTPClient) send(ctx context.Context, r request) (*response, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("encoding the body of %s: %w", r.route, err)
		}
	}
	key := ""
	if r.method != http.MethodGet && r.method != http.MethodHead {
		key, _ = ctx.Value(idemKey{}).(string)
		if key == "" {
			key = newIdempotencyKey()
		}
	}
	target := c.base.String() + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.attempt(ctx, r, target, body, key)
		if err == nil && !retryable(resp) || attempt >= c.maxRetries {
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		var retryAfter string
		if resp != nil {
			retryAfter = resp.header.Get("Retry-After")
		}
		wait, ok := retryWait(retryAfter, attempt)
		if !ok {
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
		if dl, has := ctx.Deadline(); has && time.Until(dl) < wait {
			if err != nil {
				return nil, err
			}
			return resp, nil // the wait would outlive the call: answer now
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &ConnectionError{Route: r.route, Err: ctx.Err()}
		case <-t.C:
		}
	}
}

// attempt sends one attempt of r. A transport failure is a
// *ConnectionError (never the URL's query or a credential).
func (c *HTTPClient) attempt(ctx context.Context, r request, target string, body []byte, key string) (*response, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, r.method, target, rd)
	if err != nil {
		return nil, &ConnectionError{Route: r.route, Err: errors.New("building the request")}
	}
	h := req.Header
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "agentgate-go-client")
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	for k, v := range r.header {
		h[k] = v
	}
	switch {
	case r.auth == authNone:
	case r.auth == authAgent && c.agentToken != "":
		h.Set("Authorization", "Bearer "+c.agentToken)
	case c.apiKey != "":
		h.Set("X-API-Key", c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &ConnectionError{Route: r.route, Err: transportCause(err, ctx, actx)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, &ConnectionError{Route: r.route, Err: transportCause(err, ctx, actx)}
	}
	if len(b) > MaxResponseBytes {
		return nil, fmt.Errorf("reading the answer of %s: longer than %d bytes", r.route, MaxResponseBytes)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b, requestID: key}, nil
}

// transportCause is the cause of a failed attempt without the URL that
// *url.Error carries: the call's context error, the attempt's timeout
// (ErrAttemptTimeout), or the network error.
func transportCause(err error, ctx, actx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case actx.Err() != nil:
		return ErrAttemptTimeout
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryable reports whether an answer is worth another attempt: a
// transient status whose body is not a result (a BUDGET_EXCEEDED decision
// at 429, a rate-limited A2A verdict, a QWED protocol TIMEOUT outcome at
// 504 are the answers; retrying them with their key would replay them).
func retryable(r *response) bool {
	if r == nil {
		return true // a connection error
	}
	switch r.status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return !isAnswer(r.body)
	}
	return false
}

// isAnswer reports whether body is one of the gate's results rather than
// a refusal: a JSON object with a decision, a CloudEvent or a JSON-RPC
// answer, a status other than the QWED protocol's ERROR, or no error
// member at all. A refusal is
// {"error": {…}} (and the protocol's {"status": "ERROR", …, "error": {…}});
// a body that is not a JSON object (a proxy's page) is not an answer.
func isAnswer(body []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil || probe == nil {
		return false
	}
	if isResult(body, "decision") {
		return true
	}
	for _, envelope := range []string{"specversion", "jsonrpc"} {
		if _, ok := probe[envelope]; ok {
			return true // a reply CloudEvent, a JSON-RPC answer
		}
	}
	var status string
	if json.Unmarshal(probe["status"], &status) == nil && status != "" && status != "ERROR" {
		return true
	}
	e, ok := probe["error"]
	return !ok || string(e) == "null"
}

// retryWait returns the wait before the next attempt: Retry-After (delay
// seconds or an HTTP date) when given, else the backoff of attempt. It
// reports false when Retry-After asks for more than maxRetryWait.
func retryWait(retryAfter string, attempt int) (time.Duration, bool) {
	if retryAfter != "" {
		var d time.Duration
		if s, err := strconv.ParseInt(strings.TrimSpace(retryAfter), 10, 64); err == nil && s >= 0 {
			d = time.Duration(min(s, int64(maxRetryWait/time.Second)+1)) * time.Second
		} else if t, err := http.ParseTime(retryAfter); err == nil {
			d = max(0, time.Until(t))
		}
		if d > maxRetryWait {
			return 0, false
		}
		if d > 0 {
			return d, true
		}
	}
	d := backoffBase << min(attempt, 10)
	d = min(d, backoffCap)
	return d/2 + mrand.N(d/2+1), true
}

// newIdempotencyKey returns a fresh random Idempotency-Key.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "go-" + hex.EncodeToString(b[:])
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }
