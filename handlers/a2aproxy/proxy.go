package a2aproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// PathPrefix is where the proxied agents are served: PathPrefix+NAME.
const PathPrefix = "/a2a/proxy/"

// Limits and defaults of the proxy.
const (
	// DefaultTimeout bounds a forward of SendMessage to the upstream (the
	// whole answer) when Config.Timeout is zero. It is shorter than the
	// HTTP server's write timeout, so the caller gets CodeUpstream rather
	// than a cut connection.
	DefaultTimeout = 10 * time.Second
	// DefaultStreamTimeout bounds a forwarded SendStreamingMessage stream
	// when Config.StreamTimeout is zero.
	DefaultStreamTimeout = 5 * time.Minute
	// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is
	// zero: the gate's default AgentMessage payload limit (1 MiB) and
	// EnvelopeBytes.
	DefaultMaxBodyBytes = a2a.DefaultMaxPayloadBytes + EnvelopeBytes
	// EnvelopeBytes is the room a request body has beyond the payload
	// limit: the JSON-RPC envelope and the message's other members.
	EnvelopeBytes = 64 << 10
	// DefaultMaxResponseBytes bounds an upstream's answer to SendMessage
	// (and the bytes of one stream) when Config.MaxResponseBytes is zero.
	DefaultMaxResponseBytes = 4 << 20
	// MaxUpstreams bounds the configured upstreams.
	MaxUpstreams = 64
)

// nameRE is an upstream's name: one path segment.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Upstream is an A2A agent the gate fronts, named by the operator.
type Upstream struct {
	// Name is the path segment (PathPrefix+Name) and the receiver_agent_id
	// of every message sent to it.
	Name string
	// URL is the agent's base URL: its card is at URL+CardPath.
	URL *url.URL
}

// ParseUpstream parses the operator's NAME=URL (an http or https URL with
// no credentials, query or fragment).
func ParseUpstream(s string) (Upstream, error) {
	name, raw, ok := strings.Cut(s, "=")
	if !ok || !nameRE.MatchString(name) {
		return Upstream{}, fmt.Errorf("upstream %q: want NAME=URL, NAME of 1 to 64 letters, digits, '.', '_' or '-'", s)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return Upstream{}, fmt.Errorf("upstream %s: %w", name, err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return Upstream{}, fmt.Errorf("upstream %s: %q is not an http or https URL", name, raw)
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return Upstream{}, fmt.Errorf("upstream %s: the URL takes no credentials, query or fragment", name)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return Upstream{Name: name, URL: u}, nil
}

// Config configures the proxy. Upstreams and Interceptor are required.
type Config struct {
	Upstreams []Upstream
	// Interceptor decides each part (InProcess over the gate's HTTP API).
	Interceptor Interceptor
	// PublicURL is the gate's URL as callers reach it (the rewritten
	// cards' interfaces); "" is the scheme and Host of each card request.
	PublicURL string
	// Timeout bounds a forward of SendMessage; 0 is DefaultTimeout.
	Timeout time.Duration
	// StreamTimeout bounds a forwarded stream; 0 is DefaultStreamTimeout.
	StreamTimeout time.Duration
	// CardTTL is how long a fetched card is served; 0 is DefaultCardTTL.
	CardTTL time.Duration
	// MaxBodyBytes bounds a request; 0 is DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxResponseBytes bounds an upstream's answer; 0 is
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Client calls the upstreams; nil is a client of its own that never
	// follows redirects nor uses proxies from the environment.
	Client *http.Client
	// Logger logs each forward's outcome; nil is slog.Default().
	Logger *slog.Logger
	// Clock is the card cache's time; nil is time.Now.
	Clock func() time.Time
}

// Proxy serves the proxied agents (New).
type Proxy struct {
	cfg       Config
	log       *slog.Logger
	client    *http.Client
	upstreams map[string]*upstream
	memo      *memo
}

type upstream struct {
	Upstream
	cards cardCache
}

// New returns the proxy of cfg, or an error for a configuration it cannot
// serve (no interceptor, duplicate or too many upstreams, a bad PublicURL).
func New(cfg Config) (*Proxy, error) {
	if cfg.Interceptor == nil {
		return nil, errors.New("a2aproxy: Config.Interceptor is required")
	}
	if len(cfg.Upstreams) > MaxUpstreams {
		return nil, fmt.Errorf("a2aproxy: at most %d upstreams, got %d", MaxUpstreams, len(cfg.Upstreams))
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return nil, fmt.Errorf("a2aproxy: public URL %q is not an http or https URL", cfg.PublicURL)
		}
		cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.StreamTimeout <= 0 {
		cfg.StreamTimeout = DefaultStreamTimeout
	}
	if cfg.CardTTL <= 0 {
		cfg.CardTTL = DefaultCardTTL
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	p := &Proxy{cfg: cfg, log: cfg.Logger, client: cfg.Client, upstreams: map[string]*upstream{}, memo: newMemo()}
	if p.client == nil {
		p.client = newClient()
	}
	for _, u := range cfg.Upstreams {
		if u.URL == nil || !nameRE.MatchString(u.Name) {
			return nil, fmt.Errorf("a2aproxy: upstream %q has no URL or a bad name", u.Name)
		}
		if _, dup := p.upstreams[u.Name]; dup {
			return nil, fmt.Errorf("a2aproxy: upstream %s is configured twice", u.Name)
		}
		p.upstreams[u.Name] = &upstream{Upstream: u}
	}
	return p, nil
}

// newClient returns the client that calls upstreams: only the addresses
// the operator configured (no proxy from the environment, no redirects).
func newClient() *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 0, // bounded by each request's context
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wrap returns a handler that serves PathPrefix with p and every other
// path with next (the gate's API).
func Wrap(p *Proxy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, PathPrefix) {
			p.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves PathPrefix+NAME (JSON-RPC) and its cards.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, PathPrefix), "/")
	u := p.upstreams[name]
	if u == nil {
		writeGateError(w, http.StatusNotFound, domain.CodeNotFound, fmt.Sprintf("no proxied agent %q", truncate(name, 64)))
		return
	}
	switch {
	case rest == CardPath || rest == OldCardPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeGateError(w, http.StatusMethodNotAllowed, domain.CodeInvalidRequest, "the Agent Card is read with GET")
			return
		}
		p.serveCard(w, r, u)
	case rest == "":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeGateError(w, http.StatusMethodNotAllowed, domain.CodeInvalidRequest, "A2A JSON-RPC requests are POSTed")
			return
		}
		p.serveRPC(w, r, u)
	default:
		writeGateError(w, http.StatusNotFound, domain.CodeNotFound, fmt.Sprintf("no endpoint %s %s", r.Method, truncate(r.URL.Path, 128)))
	}
}

// serveCard answers the upstream's rewritten card.
func (p *Proxy) serveCard(w http.ResponseWriter, r *http.Request, u *upstream) {
	c, err := u.get(r.Context(), p)
	if err != nil {
		writeGateError(w, http.StatusBadGateway, domain.CodeUnavailable, fmt.Sprintf("the Agent Card of %s cannot be fetched", u.Name))
		return
	}
	body, err := c.rewrite(p.gateURL(r, u))
	if err != nil {
		p.log.Error("rewriting an Agent Card", "upstream", u.Name, "err", err)
		writeGateError(w, http.StatusInternalServerError, domain.CodeInternal, "the Agent Card cannot be rewritten")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// gateURL is the proxy path of u as the caller reaches it.
func (p *Proxy) gateURL(r *http.Request, u *upstream) string {
	base := p.cfg.PublicURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + PathPrefix + u.Name
}

// serveRPC serves one JSON-RPC request.
func (p *Proxy) serveRPC(w http.ResponseWriter, r *http.Request, u *upstream) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nullID, rpcErrorf(CodeInvalidRequest, "the request is larger than %d bytes", p.cfg.MaxBodyBytes))
			return
		}
		writeRPCError(w, http.StatusBadRequest, nullID, rpcErrorf(CodeParseError, "reading the request: %v", err))
		return
	}
	req, e := decodeRequest(body)
	if e != nil {
		writeRPCError(w, http.StatusOK, req.ID, e)
		return
	}
	creds := credentials(r.Header)
	if status, e := p.intercept(r, u, req, creds); e != nil {
		writeRPCError(w, status, req.ID, e)
		return
	}
	p.forward(w, r, u, req, memoKey(u.Name, req.MessageID, creds), body)
}

// credentials returns the caller's credential headers, the only headers
// the interceptor sees.
func credentials(h http.Header) http.Header {
	c := http.Header{}
	for _, k := range []string{"X-Api-Key", "Authorization"} {
		if v := h.Values(k); len(v) > 0 {
			c[k] = v
		}
	}
	return c
}

// intercept decides every part, in order, and stops at the first that is
// not forwarded: its verdict (or refusal) is the answer, and nothing is
// forwarded.
func (p *Proxy) intercept(r *http.Request, u *upstream, req *request, creds http.Header) (int, *rpcError) {
	base := idempotencyBase(u.Name, req.MessageID)
	for i, pt := range req.Parts {
		in := &Intercept{
			Credentials: creds, RemoteAddr: r.RemoteAddr,
			Key: base + ":" + strconv.Itoa(i),
			Message: &a2a.Message{
				SenderAgentID: req.Sender, ReceiverAgentID: u.Name,
				PayloadType: pt.Type, Payload: pt.Payload,
			},
		}
		out, err := p.cfg.Interceptor.Intercept(r.Context(), in)
		if err != nil {
			p.log.Error("intercepting a proxied message", "upstream", u.Name, "message_id", req.MessageID, "part", i, "err", err)
			return http.StatusInternalServerError, gateRPCError(CodeRefused, "the gate could not decide part %d", i, domain.CodeInternal)
		}
		v, decided := out.verdict()
		if !decided {
			e := rpcErrorf(CodeRefused, "the gate refused part %d of the message: nothing was forwarded", i)
			e.Data = out.refusal()
			return out.Status, e
		}
		if v.Status == a2a.StatusForwarded {
			continue
		}
		e := rpcErrorf(CodeNotForwarded, "the gate did not forward part %d (%s): %s", i, v.Status, truncate(v.Reason, 512))
		e.Data = bytes.TrimSpace(out.Body)
		if out.RetryAfter != "" {
			e.retryAfter = out.RetryAfter
		}
		return http.StatusOK, e
	}
	return 0, nil
}

// idempotencyBase is the Idempotency-Key of a message's parts, before the
// part's index: bounded whatever the messageId's length.
func idempotencyBase(name, messageID string) string {
	h := sha256.Sum256([]byte(name + "\x00" + messageID))
	return "a2aproxy_" + hex.EncodeToString(h[:16])
}

// gateRPCError is a JSON-RPC error whose data is a gate error.
func gateRPCError(rpcCode int, format string, part int, code domain.Code) *rpcError {
	e := rpcErrorf(rpcCode, format, part)
	e.Data, _ = json.Marshal(domain.Error{Code: code, Message: e.Message, Details: map[string]any{}})
	return e
}

// upstreamError is the CodeUpstream error of a forward that failed.
func upstreamError(code domain.Code, format string, args ...any) *rpcError {
	e := rpcErrorf(CodeUpstream, format, args...)
	e.Data, _ = json.Marshal(domain.Error{Code: code, Message: e.Message, Details: map[string]any{}})
	return e
}

// writeRPCError answers a JSON-RPC error with an HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	body := errorResponse(id, e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// errorResponse is the JSON-RPC response carrying e.
func errorResponse(id json.RawMessage, e *rpcError) []byte {
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpcError       `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the error cannot be encoded"}}`)
	}
	return body
}

// writeGateError answers a gate error body (paths that are not JSON-RPC).
func writeGateError(w http.ResponseWriter, status int, code domain.Code, msg string) {
	body, _ := json.Marshal(domain.ErrorReply{Error: &domain.ReplyError{Code: code, Message: msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
