package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// MaxRateClients bounds the principals whose buckets the verify limiter
// keeps; past it, idle (full) buckets are dropped, and when none is idle a
// new principal is refused until one is (fail closed).
const MaxRateClients = 65536

// RateLimit bounds the QWED protocol's verifications (POST /verify and the
// qwed.verify CloudEvent), as QWED protocol v1.0 §10.3 asks: a token bucket per
// principal and one shared by all, each with its burst allowance. A
// request over either is refused with QWED-AUTH-004 (429) and a
// Retry-After header. The zero value sets no limit.
//
// Refusals are counted in /metrics (agentgate_http_requests_total, code
// 429), not recorded in the log: recording
// each request of a flood would turn the limiter into a write amplifier.
// Rate limiting is a property of the edge, not of a decision, so a replay
// of the log never needs it. Config.A2ARateLimit applies the same buckets
// to POST /a2a/intercept, keyed by the credential (a principal, or an
// agent token's hash) rather than the principal alone.
type RateLimit struct {
	// PerPrincipal is the sustained rate per principal, in requests per
	// second (0: none).
	PerPrincipal float64
	// Burst is how many requests a principal may send at once (0: the
	// rate rounded up, at least 1).
	Burst int
	// Global is the sustained rate of all principals together (0: none).
	Global float64
	// GlobalBurst is the global burst (0: the global rate rounded up).
	GlobalBurst int
}

func (r RateLimit) enabled() bool { return r.PerPrincipal > 0 || r.Global > 0 }

func burstOf(rate float64, burst int) float64 {
	if burst > 0 {
		return float64(burst)
	}
	return math.Max(1, math.Ceil(rate))
}

// bucket is a token bucket: tokens refill at rate per second up to size.
type bucket struct {
	tokens float64
	last   time.Time
}

// take refills b to now and takes one token; otherwise it returns how long
// until one is there.
func (b *bucket) take(now time.Time, rate, size float64) (bool, time.Duration) {
	b.refill(now, rate, size)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, b.wait(rate)
}

// refill adds the tokens earned since the last refill, up to size.
func (b *bucket) refill(now time.Time, rate, size float64) {
	if el := now.Sub(b.last); el > 0 {
		b.tokens = math.Min(size, b.tokens+el.Seconds()*rate)
		b.last = now
	}
}

// wait is how long until b holds a whole token.
func (b *bucket) wait(rate float64) time.Duration {
	return time.Duration(math.Ceil((1 - b.tokens) / rate * float64(time.Second)))
}

// limiter applies a RateLimit; safe for concurrent use.
type limiter struct {
	cfg     RateLimit
	mu      sync.Mutex
	global  bucket
	clients map[string]*bucket
}

func newLimiter(cfg RateLimit, now time.Time) *limiter {
	return &limiter{cfg: cfg, clients: map[string]*bucket{},
		global: bucket{tokens: burstOf(cfg.Global, cfg.GlobalBurst), last: now}}
}

// allow takes a token for principal at now, or returns the refusal with the
// time after which a retry can succeed.
func (l *limiter) allow(principal string, now time.Time) (*apiError, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cfg
	if c.PerPrincipal > 0 {
		size := burstOf(c.PerPrincipal, c.Burst)
		b := l.clients[principal]
		if b == nil {
			if len(l.clients) >= MaxRateClients {
				l.evictIdle(now, size)
			}
			if len(l.clients) >= MaxRateClients {
				return rateLimited("principals", float64(MaxRateClients), time.Second), time.Second
			}
			b = &bucket{tokens: size, last: now}
			l.clients[principal] = b
		}
		// Check without taking first, so that a request the global bucket
		// refuses does not spend the principal's token.
		probe := *b
		if ok, wait := probe.take(now, c.PerPrincipal, size); !ok {
			*b = probe
			return rateLimited("per_principal", c.PerPrincipal, wait), wait
		}
		if c.Global > 0 {
			if ok, wait := l.global.take(now, c.Global, burstOf(c.Global, c.GlobalBurst)); !ok {
				return rateLimited("global", c.Global, wait), wait
			}
		}
		*b = probe
		return nil, 0
	}
	if ok, wait := l.global.take(now, c.Global, burstOf(c.Global, c.GlobalBurst)); !ok {
		return rateLimited("global", c.Global, wait), wait
	}
	return nil, 0
}

// evictIdle drops the buckets that have refilled to their size: forgetting
// them changes nothing.
func (l *limiter) evictIdle(now time.Time, size float64) {
	for p, b := range l.clients {
		if b.tokens+now.Sub(b.last).Seconds()*l.cfg.PerPrincipal >= size {
			delete(l.clients, p)
		}
	}
}

func rateLimited(scope string, rate float64, wait time.Duration) *apiError {
	e := failure(domain.CodeRateLimited, "rate limit exceeded (%s, %g requests/s): retry in %d ms", scope, rate, wait.Milliseconds())
	e.err.Details = map[string]any{"scope": scope, "limit_per_second": rate, "retry_after_ms": wait.Milliseconds()}
	return e
}

// limit applies the verify rate limit to principal: nil when allowed;
// otherwise the refusal, with Retry-After set on w.
func (a *api) limit(w http.ResponseWriter, principal string) *apiError {
	if a.limiter == nil {
		return nil
	}
	e, wait := a.limiter.allow(principal, a.cfg.Clock())
	if e != nil {
		writeRetryAfter(w, wait)
	}
	return e
}

// writeRetryAfter sets the Retry-After header to wait, in whole seconds
// rounded up.
func writeRetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
}
