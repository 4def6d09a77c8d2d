package httpapi

import (
	"context"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Refused requests are rate-limited at the edge (issue 11).
//
// Every request the gate refuses (400, 401, 403, 404, 413: a malformed
// body, a bad credential, an unknown agent or route) costs its client
// address a token of a bucket; an address whose bucket is empty gets 429
// (QWED-AUTH-004) with Retry-After on every endpoint, before anything is
// read or recorded, until the bucket refills. A global bucket bounds the
// refusals of all addresses together: once it is empty, addresses that
// were refused lately are turned away too, while an address with a clean
// record (a full bucket) is still served, so that a flood from many
// addresses does not lock honest clients out. A decision that denies an
// action (DENIED, a tool not allowed) is not a refusal: it was decided on
// an authenticated request.

// MaxRefusalAddresses bounds the client addresses whose refusal buckets
// are kept. Past it, buckets that have refilled are forgotten (at most one
// scan a second); while none has, the addresses that do not fit share one
// bucket.
const MaxRefusalAddresses = 65536

// RefusalLimit bounds refused requests per client address (IPv4 address,
// IPv6 /64) and overall. The zero value sets no limit.
type RefusalLimit struct {
	// PerAddress is the sustained rate of refusals per client address,
	// per second (0: none).
	PerAddress float64
	// Burst is how many refusals an address may get before it is limited
	// (0: the rate rounded up, at least 1).
	Burst int
	// Global is the sustained rate of refusals of all addresses together
	// (0: none).
	Global float64
	// GlobalBurst is the global burst (0: the global rate rounded up).
	GlobalBurst int
}

func (r RefusalLimit) enabled() bool { return r.PerAddress > 0 || r.Global > 0 }

// refusalLimiter applies a RefusalLimit; safe for concurrent use.
type refusalLimiter struct {
	cfg        RefusalLimit
	size       float64 // per-address bucket size
	globalSize float64
	mu         sync.Mutex
	global     bucket
	addrs      map[string]*bucket
	overflow   bucket    // the addresses the table has no room for
	nextScan   time.Time // no eviction scan before
}

func newRefusalLimiter(cfg RefusalLimit, now time.Time) *refusalLimiter {
	l := &refusalLimiter{cfg: cfg, addrs: map[string]*bucket{},
		size: burstOf(cfg.PerAddress, cfg.Burst), globalSize: burstOf(cfg.Global, cfg.GlobalBurst)}
	l.global = bucket{tokens: l.globalSize, last: now}
	l.overflow = bucket{tokens: l.size, last: now}
	return l
}

// admit decides whether addr may be served at now: nil, or the refusal
// and how long until a retry can pass. It takes no token: only a refusal
// does (charge).
func (l *refusalLimiter) admit(addr string, now time.Time) (*apiError, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cfg
	clean := true
	if c.PerAddress > 0 {
		b := l.addrs[addr]
		if b == nil && len(l.addrs) >= MaxRefusalAddresses {
			b = &l.overflow
		}
		if b != nil {
			b.refill(now, c.PerAddress, l.size)
			if b.tokens < 1 {
				return refusalsLimited("refusals_per_address", c.PerAddress, b.wait(c.PerAddress))
			}
			clean = b.tokens >= l.size && b != &l.overflow
		}
	}
	if c.Global > 0 {
		l.global.refill(now, c.Global, l.globalSize)
		if l.global.tokens < 1 && (!clean || c.PerAddress <= 0) {
			return refusalsLimited("refusals_global", c.Global, l.global.wait(c.Global))
		}
	}
	return nil, 0
}

// charge takes a token from addr's bucket and the global one for a
// request refused at now. A bucket may fall below zero (requests admitted
// together and refused together), down to minus its size: the address
// then waits longer.
func (l *refusalLimiter) charge(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cfg
	if c.PerAddress > 0 {
		b := l.addrs[addr]
		if b == nil {
			if len(l.addrs) >= MaxRefusalAddresses && !now.Before(l.nextScan) {
				l.evictFull(now)
			}
			if len(l.addrs) < MaxRefusalAddresses {
				b = &bucket{tokens: l.size, last: now}
				l.addrs[addr] = b
			} else {
				b = &l.overflow
			}
		}
		b.refill(now, c.PerAddress, l.size)
		b.tokens = math.Max(b.tokens-1, -l.size)
	}
	if c.Global > 0 {
		l.global.refill(now, c.Global, l.globalSize)
		l.global.tokens = math.Max(l.global.tokens-1, -l.globalSize)
	}
}

// evictFull forgets the buckets that have refilled (forgetting them
// changes nothing); a scan that frees nothing is not repeated for a
// second, so that addresses that do not fit cannot make every refusal
// scan the table.
func (l *refusalLimiter) evictFull(now time.Time) {
	for a, b := range l.addrs {
		if b.tokens+now.Sub(b.last).Seconds()*l.cfg.PerAddress >= l.size {
			delete(l.addrs, a)
		}
	}
	if len(l.addrs) >= MaxRefusalAddresses {
		l.nextScan = now.Add(time.Second)
	}
}

func refusalsLimited(scope string, rate float64, wait time.Duration) (*apiError, time.Duration) {
	e := failure(domain.CodeRateLimited, "too many refused requests (%s, %g per second): retry in %d ms", scope, rate, wait.Milliseconds())
	e.err.Details = map[string]any{"scope": scope, "limit_per_second": rate, "retry_after_ms": wait.Milliseconds()}
	return e, wait
}

// clientAddr is the key of a request's client (clientPrefix). Forwarding
// headers are not trusted: the peer's address is the client.
func clientAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return clientPrefix(ap.Addr()).String()
}

// refusedStatus reports whether status answers a refused request.
func refusedStatus(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusRequestEntityTooLarge, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// outcome is what the edge learns from a handler about its request.
type outcome struct{ decided bool }

type outcomeKey struct{}

// markDecided tells the edge that the request was decided (an event other
// than a refusal answers it): its status, even 403, is not a refusal.
func markDecided(ctx context.Context) {
	if o, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		o.decided = true
	}
}

// serveLimited serves r under the refusal limit: a client over it is
// answered 429 without anything else; a refused request is charged.
func (a *api) serveLimited(w http.ResponseWriter, r *http.Request) {
	addr := clientAddr(r)
	if e, wait := a.refusals.admit(addr, a.cfg.Clock()); e != nil {
		a.m.instrument("refused", func(w http.ResponseWriter, _ *http.Request) {
			writeRetryAfter(w, wait)
			writeJSON(w, e.status, e.body())
		})(w, r)
		return
	}
	o := new(outcome)
	sw := &statusWriter{ResponseWriter: w}
	a.route(sw, r.WithContext(context.WithValue(r.Context(), outcomeKey{}, o)))
	if refusedStatus(sw.status) && !o.decided {
		a.refusals.charge(addr, a.cfg.Clock())
	}
}
