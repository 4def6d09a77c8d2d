package adapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/jcs"
	"github.com/agentgate/agentgate/handlers/attest"
)

// seen is what a test business saw of one attempt.
type seen struct {
	body     []byte
	key      string
	decision string
	ctype    string
}

// business is a test business: it records every attempt and answers with
// the function the test gives.
type business struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []seen
}

func newBusiness(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *business {
	t.Helper()
	b := &business{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.calls = append(b.calls, seen{body: body, key: r.Header.Get(HeaderIdempotencyKey),
			decision: r.Header.Get(HeaderDecision), ctype: r.Header.Get("Content-Type")})
		n := len(b.calls)
		b.mu.Unlock()
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		answer(n, w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *business) seen() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.calls...)
}

func answerJSON(status int, body string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func testKeyring(t *testing.T) *attest.Keyring {
	t.Helper()
	kr, err := attest.OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// fastCaller retries quickly: the pauses are not what the tests check.
func fastCaller(t *testing.T, kr *attest.Keyring, mod func(*CallerConfig)) *Caller {
	t.Helper()
	cfg := CallerConfig{Keyring: kr, NodeID: "node_t", Backoff: time.Millisecond, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewCaller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const testRequest = `{"sku":"book-42","amount_cents":1250,"note":"é"}`

func requestHash(t *testing.T, body []byte) string {
	t.Helper()
	canon, err := jcs.Transform(body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func testCall(t *testing.T, endpoint string) Call {
	t.Helper()
	return Call{
		Endpoint: endpoint, Request: json.RawMessage(testRequest),
		Decision: attest.ExecuteDecision{TransactionID: "tx_00112233445566778899aabb", Consumer: "acme", AgentID: "agent_1",
			BusinessID: "books", AmountCents: 1250, Currency: "USD", RequestHash: requestHash(t, []byte(testRequest))},
		DecidedAt: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC),
	}
}

// Issue 14: the call POSTs the execute's request as JSON with the
// transaction ID as Idempotency-Key and the signed decision, which the
// business verifies with the gate's JWKS and whose request hash is the
// body's; the business's {status, data} is the result.
func TestCallCarriesKeyAndVerifiableDecision(t *testing.T) {
	kr := testKeyring(t)
	b := newBusiness(t, answerJSON(200, `{"status":"completed","data":{"order":"o-1", "total": 1250},"extra":true}`))
	call := testCall(t, b.srv.URL+"/execute")
	res, err := fastCaller(t, kr, nil).Do(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted || res.HTTPStatus != 200 || string(res.Data) != `{"order":"o-1","total":1250}` || res.Attempts != 1 || res.Error != "" {
		t.Fatalf("result %+v", res)
	}
	got := b.seen()
	if len(got) != 1 {
		t.Fatalf("%d calls", len(got))
	}
	if string(got[0].body) != testRequest || got[0].key != call.Decision.TransactionID || got[0].ctype != "application/json" {
		t.Fatalf("the business saw %+v", got[0])
	}
	set, err := attest.ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := set.VerifyExecute(got[0].decision, call.DecidedAt.Add(time.Minute))
	if err != nil {
		t.Fatalf("the decision does not verify: %v", err)
	}
	if claims.Subject != got[0].key || claims.Audience != "books" || claims.Execute.RequestHash != requestHash(t, got[0].body) ||
		claims.Execute.AmountCents != 1250 || claims.Execute.Consumer != "acme" || claims.Execute.AgentID != "agent_1" ||
		claims.Execute.DecidedAt != "2026-11-26T08:00:00Z" {
		t.Fatalf("claims %+v", claims)
	}
}

// A 5xx, a 429 (with Retry-After) and a dropped connection are retried,
// each attempt with the same key and the same decision token.
func TestCallRetriesTransientFailures(t *testing.T) {
	kr := testKeyring(t)
	b := newBusiness(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case 3:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			answerJSON(201, `{"status":"accepted"}`)(n, w, r)
		}
	})
	res, err := fastCaller(t, kr, nil).Do(context.Background(), testCall(t, b.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	// net/http itself resends a request with an Idempotency-Key once when
	// a reused connection drops before any answer: the dropped one may
	// count as one of the caller's attempts or not.
	if res.Status != "accepted" || res.HTTPStatus != 201 || res.Attempts < 3 || res.Data != nil {
		t.Fatalf("result %+v", res)
	}
	got := b.seen()
	if len(got) != 4 {
		t.Fatalf("%d attempts, want 4", len(got))
	}
	for i, s := range got {
		if s.key != got[0].key || s.decision != got[0].decision || string(s.body) != testRequest {
			t.Fatalf("attempt %d differs from the first: %+v", i+1, s)
		}
	}
}

// After every attempt failed, the call is failed with the last status;
// a refusal (4xx), a redirect, an unreadable or oversized answer and a
// pending_confirmation without its token fail at once, not retried.
func TestCallFailures(t *testing.T) {
	kr := testKeyring(t)
	other := newBusiness(t, answerJSON(200, `{}`))
	cases := []struct {
		name     string
		answer   func(int, http.ResponseWriter, *http.Request)
		attempts int
		status   int
		errText  string
	}{
		{"5xx every time", answerJSON(502, `bad gateway`), 3, 502, "answered 502"},
		{"4xx", answerJSON(422, `{"status":"invalid"}`), 1, 422, "answered 422"},
		{"redirect", func(_ int, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.srv.URL, http.StatusFound)
		}, 1, 302, "answered 302"},
		{"not JSON", answerJSON(200, `<html>ok</html>`), 1, 200, "decoding"},
		{"not an object", answerJSON(200, `["completed"]`), 1, 200, "decoding"},
		{"two values", answerJSON(200, `{"status":"completed"} {}`), 1, 200, "after the JSON object"},
		{"too large", answerJSON(200, `{"data":"`+strings.Repeat("x", MaxResponseBytes)+`"}`), 1, 200, "exceeds"},
		{"data too large", answerJSON(200, `{"data":"`+strings.Repeat("x", MaxDataBytes)+`"}`), 1, 200, "data exceeds"},
		{"status not text", answerJSON(200, `{"status":7}`), 1, 200, "decoding"},
		{"status control char", answerJSON(200, `{"status":"ok\n"}`), 1, 200, "printable"},
		{"pending without token", answerJSON(200, `{"status":"pending_confirmation"}`), 1, 200, "confirmationToken"},
		{"token without pending", answerJSON(200, `{"status":"completed","confirmationToken":"c1"}`), 1, 200, "confirmationToken"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBusiness(t, tc.answer)
			res, err := fastCaller(t, kr, func(c *CallerConfig) { c.Attempts = 3 }).Do(context.Background(), testCall(t, b.srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusFailed || res.HTTPStatus != tc.status || res.Attempts != tc.attempts ||
				!strings.Contains(res.Error, tc.errText) || res.Data != nil || len(b.seen()) != tc.attempts {
				t.Fatalf("result %+v after %d calls", res, len(b.seen()))
			}
		})
	}
	if n := len(other.seen()); n != 0 {
		t.Fatalf("a redirect was followed: %d calls to its target", n)
	}
}

// §2.6: a business's pending_confirmation answer carries its token.
func TestCallPendingConfirmation(t *testing.T) {
	b := newBusiness(t, answerJSON(200, `{"status":"pending_confirmation","confirmationToken":"conf-123","data":{"reason":"3-D Secure"}}`))
	res, err := fastCaller(t, testKeyring(t), nil).Do(context.Background(), testCall(t, b.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusPendingConfirmation || res.ConfirmationToken != "conf-123" || string(res.Data) != `{"reason":"3-D Secure"}` {
		t.Fatalf("result %+v", res)
	}
}

// An empty successful answer is completed with no data.
func TestCallEmptyAnswer(t *testing.T) {
	b := newBusiness(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	res, err := fastCaller(t, testKeyring(t), nil).Do(context.Background(), testCall(t, b.srv.URL))
	if err != nil || res.Status != StatusCompleted || res.HTTPStatus != 204 || res.Data != nil {
		t.Fatalf("result %+v, %v", res, err)
	}
}

// An attempt that outlives the timeout is retried, then failed; the
// business saw every attempt.
//
// The business holds each attempt until the caller gives it up, so every
// attempt ends at the timeout. The timeout leaves a loaded machine time
// to hand each request to the business (with 50 ms, one attempt in ~50
// timed out before the business saw it at load 20 on 2 cores), and the
// test waits for the business to have seen both attempts, since the
// caller may give one up before the business's goroutine records it.
func TestCallTimeout(t *testing.T) {
	arrived := make(chan struct{}, 2)
	b := newBusiness(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	res, err := fastCaller(t, testKeyring(t), func(c *CallerConfig) { c.Timeout = time.Second; c.Attempts = 2 }).
		Do(context.Background(), testCall(t, b.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.HTTPStatus != 0 || res.Attempts != 2 || !strings.Contains(res.Error, "deadline") {
		t.Fatalf("result %+v after %d calls", res, len(b.seen()))
	}
	for i := range 2 {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("the business saw %d of 2 attempts", i)
		}
	}
	if n := len(b.seen()); n != 2 {
		t.Fatalf("the business saw %d attempts, want 2", n)
	}
}

// When the caller's context ends during a call (the gate stops), there is
// no result: the transaction stays executing and is called again by
// whoever resumes it.
func TestCallCancelledHasNoResult(t *testing.T) {
	entered := make(chan struct{})
	b := newBusiness(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := fastCaller(t, testKeyring(t), nil).Do(ctx, testCall(t, b.srv.URL))
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// An endpoint that is not an absolute http(s) URL fails without a dial.
func TestCallRefusesNonHTTPEndpoints(t *testing.T) {
	c := fastCaller(t, testKeyring(t), nil)
	for _, ep := range []string{"ftp://example.com/x", "file:///etc/passwd", "/relative", "gopher://h:70/", "http:opaque", "http:///nohost", "%zz"} {
		res, err := c.Do(context.Background(), testCall(t, ep))
		if err != nil || res.Status != StatusFailed || res.Attempts != 0 || res.HTTPStatus != 0 {
			t.Errorf("%q: %+v, %v", ep, res, err)
		}
	}
	res, _ := c.Do(context.Background(), testCall(t, "http://user:secret@127.0.0.1:1/x?y"))
	if res.Status != StatusFailed || strings.Contains(res.Error, "secret") {
		t.Fatalf("a credential in the endpoint reached the error: %+v", res)
	}
}

// The network policy: link-local (cloud metadata), unspecified and
// multicast addresses are always refused; loopback and private ones only
// with DenyPrivate, which refuses a loopback business at the dial, once
// (not retried).
func TestNetworkPolicy(t *testing.T) {
	open, strict := NetworkPolicy{}, NetworkPolicy{DenyPrivate: true}
	for _, tc := range []struct {
		addr         string
		open, strict bool
	}{
		{"93.184.216.34", true, true},
		{"2606:4700::1111", true, true},
		{"127.0.0.1", true, false},
		{"::1", true, false},
		{"10.1.2.3", true, false},
		{"172.16.0.1", true, false},
		{"192.168.1.1", true, false},
		{"100.64.0.1", true, false},
		{"fd00::1", true, false},
		{"169.254.169.254", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"255.255.255.255", false, false},
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := open.Allowed(a) == nil; got != tc.open {
			t.Errorf("default policy, %s: allowed %v, want %v", tc.addr, got, tc.open)
		}
		if got := strict.Allowed(a) == nil; got != tc.strict {
			t.Errorf("DenyPrivate, %s: allowed %v, want %v", tc.addr, got, tc.strict)
		}
	}
	var hits atomic.Int32
	b := newBusiness(t, func(_ int, w http.ResponseWriter, _ *http.Request) { hits.Add(1) })
	res, err := fastCaller(t, testKeyring(t), func(c *CallerConfig) { c.Network = strict }).Do(context.Background(), testCall(t, b.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.Attempts != 1 || !strings.Contains(res.Error, "loopback") || hits.Load() != 0 {
		t.Fatalf("result %+v, %d hits", res, hits.Load())
	}
}

// A decision that cannot be signed is never sent (fail closed).
func TestCallUnsignableDecisionIsNotSent(t *testing.T) {
	b := newBusiness(t, answerJSON(200, `{}`))
	call := testCall(t, b.srv.URL)
	call.Decision.Consumer = ""
	res, err := fastCaller(t, testKeyring(t), nil).Do(context.Background(), call)
	if err != nil || res.Status != StatusFailed || len(b.seen()) != 0 {
		t.Fatalf("result %+v, %v, %d calls", res, err, len(b.seen()))
	}
}
