package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentgate/agentgate/handlers/attest"
)

// Named limits and defaults of a business call.
const (
	// DefaultCallTimeout bounds one attempt: connecting, sending the
	// request and reading the whole answer.
	DefaultCallTimeout = 10 * time.Second
	// DefaultAttempts is how many times a call is tried before it is
	// recorded as failed: the first attempt and three retries.
	DefaultAttempts = 4
	// DefaultBackoff is the pause before the first retry; each next pause
	// doubles, up to MaxBackoff.
	DefaultBackoff = 250 * time.Millisecond
	// MaxBackoff bounds one pause between attempts, including a business's
	// Retry-After.
	MaxBackoff = 5 * time.Second
	// MaxResponseBytes bounds the answer read from a business: the data the
	// gate records (64 KiB) and its envelope. A longer answer is a failed
	// call; it is never recorded in part.
	MaxResponseBytes = 64<<10 + 4<<10
	// MaxDataBytes bounds the business's data recorded with the outcome.
	MaxDataBytes = 64 << 10
	// MaxStatusBytes bounds the business's status.
	MaxStatusBytes = 64
	// MaxConfirmationTokenBytes bounds a §2.6 confirmation token a business
	// answers with.
	MaxConfirmationTokenBytes = 512
	// MaxErrorBytes bounds the reason recorded with a failed outcome.
	MaxErrorBytes = 512
)

// The headers of a business call.
const (
	// HeaderIdempotencyKey carries the transaction ID: every attempt of
	// one transaction's call, before and after a restart, carries the same
	// key, so a business that honours it performs the transaction once.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderDecision carries the execute decision, a compact JWS
	// (attest.ExecuteTyp) the business verifies with the gate's JWKS.
	HeaderDecision = "X-Agentgate-Decision"
)

// The statuses of a call's result.
const (
	// StatusCompleted is the status of an answer without one.
	StatusCompleted = "completed"
	// StatusFailed is the status of a call that failed: no usable answer
	// after every attempt, or an answer refusing the call.
	StatusFailed = "failed"
	// StatusPendingConfirmation is a business's §2.6 answer: the agent
	// completes the transaction with a second execute carrying the
	// confirmation token in its request body.
	StatusPendingConfirmation = "pending_confirmation"
)

// Call is one business call: what the adapter sends for one transaction
// that became executing.
type Call struct {
	// Endpoint is the absolute http(s) URL the business registered.
	Endpoint string
	// Request is the execute's request, a JSON object: the call's body.
	Request json.RawMessage
	// Decision names the transaction (its ID is the Idempotency-Key) and
	// is what X-Agentgate-Decision signs; DecidedAt is when it became
	// executing.
	Decision  attest.ExecuteDecision
	DecidedAt time.Time
}

// Result is a call's outcome, as the adapter records it.
type Result struct {
	// HTTPStatus is the status of the last answer (0: none came).
	HTTPStatus int
	// Status is the business's status (StatusCompleted when a successful
	// answer gives none), or StatusFailed.
	Status string
	// Data is the business's data (at most MaxDataBytes), nil if none.
	Data json.RawMessage
	// ConfirmationToken is the business's §2.6 token, with Status
	// StatusPendingConfirmation only.
	ConfirmationToken string
	// Error says why a call failed ("" otherwise).
	Error string
	// Attempts is how many attempts were made.
	Attempts int
}

// CallerConfig configures a Caller.
type CallerConfig struct {
	// Keyring signs the decisions as node NodeID (attest.SignExecute).
	Keyring *attest.Keyring
	NodeID  string
	// Timeout bounds one attempt (0: DefaultCallTimeout).
	Timeout time.Duration
	// Attempts is the most attempts of one call (0: DefaultAttempts).
	Attempts int
	// Backoff is the pause before the first retry (0: DefaultBackoff).
	Backoff time.Duration
	// Network is the policy of the addresses a call may reach (see
	// NetworkPolicy); the zero value allows public, private and loopback
	// addresses and refuses the rest.
	Network NetworkPolicy
	// Transport, if set, replaces the HTTP transport the network policy
	// builds (tests); redirects are never followed either way.
	Transport http.RoundTripper
	// UserAgent is the User-Agent header ("" : "agentgate-adapter").
	UserAgent string
}

// Caller makes business calls over HTTP: one POST of the request per
// attempt, with the Idempotency-Key and the signed decision, retried with
// backoff on transport errors, timeouts, 408, 429 and 5xx.
type Caller struct {
	cfg    CallerConfig
	client *http.Client
}

// NewCaller returns a Caller.
func NewCaller(cfg CallerConfig) (*Caller, error) {
	if cfg.Keyring == nil || cfg.NodeID == "" {
		return nil, errors.New("adapter: a keyring and a node ID are required to sign decisions")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultCallTimeout
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "agentgate-adapter"
	}
	tr := cfg.Transport
	if tr == nil {
		tr = cfg.Network.transport()
	}
	return &Caller{cfg: cfg, client: &http.Client{
		Transport: tr,
		// A redirect is the business's answer, never followed: following
		// it would send the decision, and the consumer's request, to an
		// address nobody registered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// errPermanent marks an attempt's failure that no retry can mend.
var errPermanent = errors.New("not retried")

// Do makes the call: up to the configured attempts, pausing between them
// with exponential backoff. It returns the result to record, or ctx's
// error when ctx ends first (nothing is recorded then: the call is made
// again, with the same key, by whoever resumes the transaction).
func (c *Caller) Do(ctx context.Context, call Call) (Result, error) {
	if err := checkEndpoint(call.Endpoint); err != nil {
		return failed(0, 0, err), nil
	}
	token, err := c.cfg.Keyring.SignExecute(c.cfg.NodeID, call.Decision, call.DecidedAt)
	if err != nil {
		// Fail closed: no call leaves without its decision.
		return failed(0, 0, err), nil
	}
	wait := c.cfg.Backoff
	var last error
	status := 0
	for attempt := 1; ; attempt++ {
		res, retryAfter, err := c.attempt(ctx, call, token)
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if err == nil {
			res.Attempts = attempt
			return res, nil
		}
		last, status = err, res.HTTPStatus
		if errors.Is(err, errPermanent) || attempt >= c.cfg.Attempts {
			return failed(status, attempt, last), nil
		}
		pause := min(max(wait, retryAfter), MaxBackoff)
		wait = min(2*wait, MaxBackoff)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return Result{}, ctx.Err()
		case <-t.C:
		}
	}
}

// failed is the result of a failed call.
func failed(status, attempts int, err error) Result {
	// The reason is recorded: valid UTF-8 without control or format
	// characters, which Decide refuses in an outcome.
	msg := strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(err.Error(), "?"))
	if len(msg) > MaxErrorBytes {
		msg = msg[:MaxErrorBytes]
		for !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
	}
	return Result{HTTPStatus: status, Status: StatusFailed, Error: msg, Attempts: attempts}
}

// checkEndpoint refuses an endpoint that is not an absolute http(s) URL
// with a host.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return errors.New("the business is no longer in the registry")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("parsing the business endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("the business endpoint %q is not an absolute http(s) URL", redact(u))
	}
	return nil
}

// redact is u without its user information, for messages.
func redact(u *url.URL) string {
	v := *u
	v.User = nil
	return v.String()
}

// attempt makes one attempt. A nil error is a result to record; an error
// wrapping errPermanent fails the call at once; any other is retried,
// after retryAfter at least (a business's Retry-After).
func (c *Caller) attempt(ctx context.Context, call Call, token string) (res Result, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.Endpoint, bytes.NewReader(call.Request))
	if err != nil {
		return Result{}, 0, fmt.Errorf("%w: building the request: %w", errPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set(HeaderIdempotencyKey, call.Decision.TransactionID)
	req.Header.Set(HeaderDecision, token)
	resp, err := c.client.Do(req)
	if err != nil {
		if errors.Is(err, errBlockedAddress) {
			return Result{}, 0, fmt.Errorf("%w: calling the business: %w", errPermanent, err)
		}
		return Result{}, 0, fmt.Errorf("calling the business: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	res.HTTPStatus = resp.StatusCode
	switch code := resp.StatusCode; {
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return res, parseRetryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("the business answered %d", code)
	case code < 200 || code > 299:
		return res, 0, fmt.Errorf("%w: the business answered %d", errPermanent, code)
	}
	if err != nil {
		return res, 0, fmt.Errorf("reading the business's answer: %w", err)
	}
	if len(body) > MaxResponseBytes {
		return res, 0, fmt.Errorf("%w: the business's answer exceeds %d bytes", errPermanent, MaxResponseBytes)
	}
	out, err := parseAnswer(body)
	if err != nil {
		return res, 0, fmt.Errorf("%w: %w", errPermanent, err)
	}
	out.HTTPStatus = resp.StatusCode
	return out, 0, nil
}

// answer is a business's answer body.
type answer struct {
	Status            *string         `json:"status"`
	Data              json.RawMessage `json:"data"`
	ConfirmationToken *string         `json:"confirmationToken"`
}

// parseAnswer reads a successful answer: empty (completed), or a JSON
// object {status, data, confirmationToken} whose other members are
// ignored. A status must be a string of at most MaxStatusBytes printable
// ASCII characters; pending_confirmation needs a confirmationToken of
// 1..MaxConfirmationTokenBytes printable ASCII characters, which no other
// status may carry; data is any JSON value of at most MaxDataBytes (null
// is no data).
func parseAnswer(body []byte) (Result, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Result{Status: StatusCompleted}, nil
	}
	var a answer
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&a); err != nil {
		return Result{}, fmt.Errorf("decoding the business's answer: %w", err)
	}
	if dec.More() {
		return Result{}, errors.New("decoding the business's answer: data after the JSON object")
	}
	if bytes.TrimSpace(body)[0] != '{' {
		return Result{}, errors.New("decoding the business's answer: not a JSON object")
	}
	r := Result{Status: StatusCompleted}
	if a.Status != nil {
		if !printable(*a.Status, MaxStatusBytes) {
			return Result{}, fmt.Errorf("the business's status is not 1 to %d printable ASCII characters", MaxStatusBytes)
		}
		r.Status = *a.Status
	}
	if d := bytes.TrimSpace(a.Data); len(d) > 0 && !bytes.Equal(d, []byte("null")) {
		if len(d) > MaxDataBytes {
			return Result{}, fmt.Errorf("the business's data exceeds %d bytes", MaxDataBytes)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, d); err != nil {
			return Result{}, fmt.Errorf("compacting the business's data: %w", err)
		}
		r.Data = compact.Bytes()
	}
	switch {
	case r.Status == StatusPendingConfirmation:
		if a.ConfirmationToken == nil || !printable(*a.ConfirmationToken, MaxConfirmationTokenBytes) {
			return Result{}, fmt.Errorf("the business answered %s without a confirmationToken of 1 to %d printable ASCII characters", StatusPendingConfirmation, MaxConfirmationTokenBytes)
		}
		r.ConfirmationToken = *a.ConfirmationToken
	case a.ConfirmationToken != nil:
		return Result{}, fmt.Errorf("the business answered a confirmationToken with status %q", r.Status)
	}
	return r, nil
}

// printable reports whether s is 1..max bytes of printable ASCII.
func printable(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// parseRetryAfter reads a Retry-After of delay-seconds (an HTTP date is
// ignored: it depends on the business's clock).
func parseRetryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, MaxBackoff)
}
