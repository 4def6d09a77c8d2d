// Package adaptertest is a business endpoint for the adapter's tests (a
// test fixture: no non-test file imports it). It counts the calls it gets
// per Idempotency-Key and keeps what each carried.
package adaptertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Call is what the business got in one call.
type Call struct {
	Key      string // Idempotency-Key
	Decision string // X-Agentgate-Decision
	Body     string
}

// Business is a test business. Set Hold and Answer before the first call.
type Business struct {
	URL string
	// Hold, when set, is called before the answer with the call's number
	// for its key (1 for the first); it may block, until the call's
	// request context ends for a call the gate abandons.
	Hold func(n int, r *http.Request)
	// Answer gives the status and body of the n-th call of c.Key (nil:
	// 200 {"status":"completed","data":{"order_id":<key>}}).
	Answer func(c Call, n int) (int, string)
	// Entered receives each call's key as it arrives (buffered: 64).
	Entered chan string

	mu    sync.Mutex
	calls map[string][]Call
}

// HoldFirst is a Hold that never answers the first call of a key: it
// waits until the call's client goes away (the gate stops or dies).
func HoldFirst(n int, r *http.Request) {
	if n == 1 {
		<-r.Context().Done()
	}
}

// New starts a business, closed when the test ends.
func New(t testing.TB) *Business {
	t.Helper()
	b := &Business{Entered: make(chan string, 64), calls: map[string][]Call{}}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	b.URL = srv.URL
	return b
}

// ServeHTTP implements http.Handler.
func (b *Business) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c := Call{Key: r.Header.Get("Idempotency-Key"), Decision: r.Header.Get("X-Agentgate-Decision"), Body: string(body)}
	b.mu.Lock()
	b.calls[c.Key] = append(b.calls[c.Key], c)
	n := len(b.calls[c.Key])
	hold, answer := b.Hold, b.Answer
	b.mu.Unlock()
	b.Entered <- c.Key
	if hold != nil {
		hold(n, r)
		if r.Context().Err() != nil {
			return
		}
	}
	status, out := 200, `{"status":"completed","data":{"order_id":"`+c.Key+`"}}`
	if answer != nil {
		status, out = answer(c, n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

// Calls returns the calls of key so far.
func (b *Business) Calls(key string) []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Call(nil), b.calls[key]...)
}

// Total returns the number of calls of every key.
func (b *Business) Total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, cs := range b.calls {
		n += len(cs)
	}
	return n
}
