package a2a

import (
	"math"
	"time"
)

// The bounds of a token bucket's rate and burst: Take clamps them into
// [1, Max] (the gate's configuration refuses values outside them).
const (
	// MaxRatePerMinute bounds the refill rate of a pair's bucket.
	MaxRatePerMinute = 1_000_000
	// MaxBurst bounds a pair's bucket capacity.
	MaxBurst = 1_000_000
	// DefaultRatePerMinute and DefaultBurst are QWED A2A's defaults: 60
	// messages a minute per pair, all of them at once.
	DefaultRatePerMinute = 60
	DefaultBurst         = 60
)

// TokenUnit is one token in Bucket.Spent's units: a bucket refilled at r
// tokens a minute regains r units a nanosecond, so refills are exact in
// integers (a token is a minute's worth of nanoseconds).
const TokenUnit = int64(time.Minute)

// Bucket is the token bucket of one sender→receiver pair (QWED A2A "Trust
// Boundary": a token bucket, not a fixed window). It is a value in the
// decided state and its snapshot: two integers, no clock, no floats. The
// zero Bucket is full.
//
// Spent counts the tokens taken and not yet refilled, in TokenUnit units
// (0 = full); Last is the time of the last refill, in Unix nanoseconds.
// Keeping what is spent rather than what is left makes the zero value full
// and keeps a bucket meaningful when the configured burst changes.
type Bucket struct {
	Spent int64 `json:"spent"`
	Last  int64 `json:"last"`
}

// clampRate bounds rate and burst to [1, Max].
func clampRate(rate, burst int64) (int64, int64) {
	return min(max(rate, 1), MaxRatePerMinute), min(max(burst, 1), MaxBurst)
}

// refill credits the bucket for the time from Last to now at rate tokens
// a minute. A now before Last refills nothing and keeps Last (a decision
// time never runs backwards in the log, but a replayed or skewed time
// must not mint tokens nor panic).
func (b *Bucket) refill(now, rate int64) {
	if now <= b.Last {
		return
	}
	elapsed := now - b.Last
	b.Last = now
	if b.Spent <= 0 {
		b.Spent = 0
		return
	}
	// elapsed*rate may overflow; past Spent/rate nanoseconds the bucket
	// is full anyway.
	if elapsed >= b.Spent/rate+1 {
		b.Spent = 0
		return
	}
	b.Spent = max(b.Spent-elapsed*rate, 0)
}

// Take refills the bucket to now (the decision time, Env.Now; never a
// clock) at ratePerMinute tokens a minute, up to burst tokens, then takes
// one token: ok when there was one. Otherwise the bucket is left as
// refilled and retryAfter is how long from now until a token is back (at
// least one nanosecond; exact: a Take at now+retryAfter succeeds, one a
// nanosecond earlier does not). rate and burst are clamped to [1, MaxRatePerMinute] and
// [1, MaxBurst]. Integer arithmetic only; Take never panics.
func (b *Bucket) Take(now time.Time, ratePerMinute, burst int64) (ok bool, retryAfter time.Duration) {
	rate, burst := clampRate(ratePerMinute, burst)
	n := now.UnixNano()
	b.refill(n, rate)
	capacity := burst * TokenUnit
	if b.Spent+TokenUnit <= capacity {
		b.Spent += TokenUnit
		return true, 0
	}
	// Tokens come back from Last on, which is later than now when now
	// ran backwards.
	deficit := b.Spent + TokenUnit - capacity
	wait := (deficit + rate - 1) / rate
	if n < b.Last {
		// Saturating: a now centuries before Last overflows.
		if back := b.Last - n; back < 0 || wait > math.MaxInt64-back {
			wait = math.MaxInt64
		} else {
			wait += back
		}
	}
	return false, time.Duration(max(wait, 1))
}

// Idle reports whether the bucket has not been refilled for at least
// after as of now: such a pair's bucket may be evicted (QWED A2A evicts
// pairs idle for 5 minutes; an evicted bucket comes back full). A now
// before Last is not idle.
func (b *Bucket) Idle(now time.Time, after time.Duration) bool {
	n := now.UnixNano()
	return n >= b.Last && n-b.Last >= int64(after)
}

// Full reports whether the bucket, refilled to now at ratePerMinute
// (clamped as in Take), holds all its tokens. The gate evicts an idle pair
// only when its bucket is also full: an evicted bucket comes back full, so
// evicting a full one changes no decision.
func (b *Bucket) Full(now time.Time, ratePerMinute int64) bool {
	c := *b
	rate, _ := clampRate(ratePerMinute, 1)
	c.refill(now.UnixNano(), rate)
	return c.Spent <= 0
}
