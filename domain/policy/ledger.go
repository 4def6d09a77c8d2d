package policy

import (
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"time"
)

// The rolling windows of the spending totals, and the widths of the
// buckets that count them.
const (
	Day   = 24 * time.Hour
	Week  = 7 * Day
	Month = 30 * Day

	// minuteSeconds is the width of the buckets of the daily total.
	minuteSeconds = 60
	// hourSeconds is the width of the buckets of the weekly and monthly
	// totals.
	hourSeconds = 3600

	// MaxAccounts bounds the (agent, business) accounts of one ledger;
	// past it, spend of a new pair goes to the overflow account (one more),
	// which counts toward every scope.
	MaxAccounts = 4096

	// overflowKey is the agent and business of the overflow account: no
	// id holds '*', and it sorts before every id.
	overflowKey = "*"
)

// Ledger is the rolling spend of one consumer: what each (agent, business)
// pair reserved, in buckets of time, kept for the longest window (30 days).
//
// Precision. A spend at time t is added to the one-minute bucket and the
// one-hour bucket holding t. The daily total at now sums the minute buckets
// that overlap (now-24h, now]; the weekly and monthly totals sum the hour
// buckets that overlap (now-7d, now] and (now-30d, now]. So a spend is
// counted from t on and stays counted until between 24 hours and 24 hours
// and one minute after t (daily), between 7 days and 7 days and one hour
// (weekly), between 30 days and 30 days and one hour (monthly): a total is
// never less than the exact rolling sum, and more only by spends of the
// last minute (hour) before the window. Totals saturate at math.MaxInt64,
// which every limit is below.
//
// Memory. An account holds at most 1,441 minute buckets and 721 hour
// buckets, and only those that hold spend; accounts with nothing left in
// 30 days are dropped when a new pair opens an account; at most
// MaxAccounts accounts, past which new pairs share the overflow account
// (agent and business "*"), counted in every scope's totals:
// over-counting, never under.
//
// A Ledger is a value of the events applied to it: Reserve and Release take
// the event's time, never a clock. The zero Ledger is empty.
type Ledger struct {
	// Accounts are sorted by agent, then business.
	Accounts []*Account `json:"accounts,omitempty"`
	// Held are the amounts decided but not yet sent to the business (a
	// transaction pending the consumer's approval, or queued until a
	// window opens), one entry per (agent, business), sorted like
	// Accounts. A held amount counts in every rolling total, whatever its
	// age, until it is sent (Unhold, then Reserve at the time it is sent)
	// or dropped (Unhold): a transaction queued over a weekend must not
	// leave the daily total on Sunday and reach the business on Monday
	// with the executes its absence let through. At most one entry per
	// open transaction of the consumer.
	Held []Hold `json:"held,omitempty"`
}

// Hold is what an agent's transactions waiting to be sent to one
// business hold.
type Hold struct {
	Agent    string `json:"agent"`
	Business string `json:"business"`
	Cents    int64  `json:"cents"`
}

// findHold returns the index of the hold of (agent, business), or where
// it belongs.
func (l *Ledger) findHold(agent, business string) (int, bool) {
	return slices.BinarySearchFunc(l.Held, [2]string{agent, business}, func(h Hold, k [2]string) int {
		if c := strings.Compare(h.Agent, k[0]); c != 0 {
			return c
		}
		return strings.Compare(h.Business, k[1])
	})
}

// Hold adds cents that agent's transaction at business holds until it is
// sent or dropped (see Ledger.Held). A negative or zero amount adds
// nothing.
func (l *Ledger) Hold(agent, business string, cents int64) {
	if cents <= 0 {
		return
	}
	i, ok := l.findHold(agent, business)
	if !ok {
		l.Held = slices.Insert(l.Held, i, Hold{Agent: agent, Business: business})
	}
	l.Held[i].Cents = satAdd(l.Held[i].Cents, cents)
}

// Unhold takes back cents that Hold added, never below zero; an emptied
// hold is dropped.
func (l *Ledger) Unhold(agent, business string, cents int64) {
	i, ok := l.findHold(agent, business)
	if !ok || cents <= 0 {
		return
	}
	if l.Held[i].Cents == math.MaxInt64 {
		return // saturated: what it held is unknown, keep counting it
	}
	l.Held[i].Cents -= min(cents, l.Held[i].Cents)
	if l.Held[i].Cents == 0 {
		l.Held = slices.Delete(l.Held, i, i+1)
	}
}

// Account is the spend of one agent at one business.
type Account struct {
	Agent    string `json:"agent"`
	Business string `json:"business"`
	// Minutes and Hours are the non-empty buckets, oldest first.
	Minutes []Bucket `json:"minutes,omitempty"`
	Hours   []Bucket `json:"hours,omitempty"`

	// mcum and hcum are the prefix sums of Minutes and Hours (saturating),
	// rebuilt by UnmarshalJSON.
	mcum, hcum []int64
}

// Bucket is the spend of one minute or one hour: At is the Unix second it
// starts at (a multiple of its width).
type Bucket struct {
	At    int64 `json:"at"`
	Cents int64 `json:"cents"`
}

// Totals are a scope's rolling totals at one time, in cents.
type Totals struct {
	Day, Week, Month int64
}

// satAdd adds two non-negative amounts, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// floorTo returns the start of the bucket of width w holding Unix second s.
func floorTo(s, w int64) int64 {
	q := s / w
	if s%w != 0 && s < 0 {
		q--
	}
	return q * w
}

// find returns the account of (agent, business) and its index, or nil and
// the index where it belongs.
func (l *Ledger) find(agent, business string) (*Account, int) {
	i, ok := slices.BinarySearchFunc(l.Accounts, [2]string{agent, business}, func(a *Account, k [2]string) int {
		if c := strings.Compare(a.Agent, k[0]); c != 0 {
			return c
		}
		return strings.Compare(a.Business, k[1])
	})
	if ok {
		return l.Accounts[i], i
	}
	return nil, i
}

// Reserve adds cents spent by agent at business at time at (an event's
// time) and drops what no window counts any more. A negative or zero
// amount adds nothing.
func (l *Ledger) Reserve(agent, business string, at time.Time, cents int64) {
	if cents <= 0 {
		return
	}
	a, _ := l.find(agent, business)
	if a == nil {
		var i int
		l.prune(at)
		if len(l.Accounts) >= MaxAccounts {
			agent, business = overflowKey, overflowKey
		}
		if a, i = l.find(agent, business); a == nil {
			a = &Account{Agent: agent, Business: business}
			l.Accounts = slices.Insert(l.Accounts, i, a)
		}
	}
	s := at.Unix()
	a.Minutes, a.mcum = addBucket(a.Minutes, a.mcum, floorTo(s, minuteSeconds), cents)
	a.Hours, a.hcum = addBucket(a.Hours, a.hcum, floorTo(s, hourSeconds), cents)
	a.expire(s)
}

// Release takes back cents that Reserve added at time at (the reservation's
// time, not the release's): a transaction blocked, denied, expired or
// failed spent nothing. It never takes a bucket below zero, and takes
// nothing from buckets already dropped.
func (l *Ledger) Release(agent, business string, at time.Time, cents int64) {
	if cents <= 0 {
		return
	}
	a, _ := l.find(agent, business)
	if a == nil {
		if a, _ = l.find(overflowKey, overflowKey); a == nil {
			return
		}
	}
	s := at.Unix()
	a.Minutes, a.mcum = subBucket(a.Minutes, a.mcum, floorTo(s, minuteSeconds), cents)
	a.Hours, a.hcum = subBucket(a.Hours, a.hcum, floorTo(s, hourSeconds), cents)
}

// addBucket adds cents to the bucket starting at at, creating it in order.
func addBucket(bs []Bucket, cum []int64, at, cents int64) ([]Bucket, []int64) {
	i, ok := slices.BinarySearchFunc(bs, at, func(b Bucket, at int64) int { return cmp.Compare(b.At, at) })
	if !ok {
		bs = slices.Insert(bs, i, Bucket{At: at})
		cum = slices.Insert(cum, i, 0)
	}
	bs[i].Cents = satAdd(bs[i].Cents, cents)
	return bs, rebuild(bs, cum, i)
}

// subBucket takes cents from the bucket starting at at, dropping it when
// empty.
func subBucket(bs []Bucket, cum []int64, at, cents int64) ([]Bucket, []int64) {
	i, ok := slices.BinarySearchFunc(bs, at, func(b Bucket, at int64) int { return cmp.Compare(b.At, at) })
	if !ok {
		return bs, cum
	}
	if bs[i].Cents == math.MaxInt64 {
		return bs, cum // saturated: what it held is unknown, keep counting it
	}
	bs[i].Cents -= min(cents, bs[i].Cents)
	if bs[i].Cents == 0 {
		bs = slices.Delete(bs, i, i+1)
		cum = slices.Delete(cum, i, i+1)
	}
	return bs, rebuild(bs, cum, i)
}

// rebuild recomputes the prefix sums of bs from index i on.
func rebuild(bs []Bucket, cum []int64, i int) []int64 {
	cum = slices.Grow(cum[:min(i, len(cum))], len(bs)-min(i, len(cum)))[:len(bs)]
	for j := min(i, len(bs)); j < len(bs); j++ {
		prev := int64(0)
		if j > 0 {
			prev = cum[j-1]
		}
		cum[j] = satAdd(prev, bs[j].Cents)
	}
	return cum
}

// expire drops the buckets no window counts at Unix second now: minute
// buckets ending 24 hours or more before now, hour buckets ending 30 days
// or more before now.
func (a *Account) expire(now int64) {
	m := expired(a.Minutes, now-int64(Day/time.Second)-minuteSeconds)
	h := expired(a.Hours, now-int64(Month/time.Second)-hourSeconds)
	if m > 0 {
		a.Minutes = slices.Delete(a.Minutes, 0, m)
		a.mcum = rebuild(a.Minutes, a.mcum[:0], 0)
	}
	if h > 0 {
		a.Hours = slices.Delete(a.Hours, 0, h)
		a.hcum = rebuild(a.Hours, a.hcum[:0], 0)
	}
}

// expired returns how many buckets start at or before cut: those that a
// window starting after cut+width no longer overlaps.
func expired(bs []Bucket, cut int64) int {
	lo, hi := 0, len(bs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bs[m].At <= cut {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// prune drops the accounts that hold nothing any window counts at time at.
func (l *Ledger) prune(at time.Time) {
	s := at.Unix()
	l.Accounts = slices.DeleteFunc(l.Accounts, func(a *Account) bool {
		a.expire(s)
		return len(a.Minutes) == 0 && len(a.Hours) == 0
	})
}

// since returns the sum of the buckets of bs starting after cut, from the
// prefix sums cum.
func since(bs []Bucket, cum []int64, cut int64) int64 {
	n := len(bs)
	if n == 0 || bs[n-1].At <= cut {
		return 0
	}
	if cum[n-1] == math.MaxInt64 {
		return math.MaxInt64
	}
	i := expired(bs, cut)
	if i == 0 {
		return cum[n-1]
	}
	return cum[n-1] - cum[i-1]
}

// totals returns the account's rolling totals at Unix second now.
func (a *Account) totals(now int64) Totals {
	return Totals{
		Day:   since(a.Minutes, a.mcum, now-int64(Day/time.Second)-minuteSeconds),
		Week:  since(a.Hours, a.hcum, now-int64(Week/time.Second)-hourSeconds),
		Month: since(a.Hours, a.hcum, now-int64(Month/time.Second)-hourSeconds),
	}
}

// Totals returns the rolling totals at time now of the spend of agents
// (nil: every agent) at business ("": every business), held amounts
// included; the overflow account counts in every scope. The ledger is only read.
func (l *Ledger) Totals(now time.Time, agents []string, business string) Totals {
	var c totalsCache
	return c.scope(l, now.Unix(), agents, business)
}

// totalsCache holds each account's totals at one time, computed on first
// use, so that the policies of one evaluation read each account once (the
// first 16 accounts' on the stack).
type totalsCache struct {
	done  bool
	buf   [16]Totals
	extra []Totals
}

// scope sums the cached totals of the accounts in the scope.
func (c *totalsCache) scope(l *Ledger, now int64, agents []string, business string) Totals {
	var t Totals
	if l == nil {
		return t
	}
	if !c.done {
		c.done = true
		for i, a := range l.Accounts {
			if i < len(c.buf) {
				c.buf[i] = a.totals(now)
			} else {
				c.extra = append(c.extra, a.totals(now))
			}
		}
	}
	for i, a := range l.Accounts {
		if a.Agent != overflowKey {
			if business != "" && a.Business != business {
				continue
			}
			if agents != nil && !contains(agents, a.Agent) {
				continue
			}
		}
		var at Totals
		if i < len(c.buf) {
			at = c.buf[i]
		} else {
			at = c.extra[i-len(c.buf)]
		}
		t.Day, t.Week, t.Month = satAdd(t.Day, at.Day), satAdd(t.Week, at.Week), satAdd(t.Month, at.Month)
	}
	for _, h := range l.Held {
		if business != "" && h.Business != business || agents != nil && !contains(agents, h.Agent) {
			continue
		}
		t.Day, t.Week, t.Month = satAdd(t.Day, h.Cents), satAdd(t.Week, h.Cents), satAdd(t.Month, h.Cents)
	}
	return t
}

// contains reports whether the sorted s holds v.
func contains(s []string, v string) bool {
	if len(s) <= 8 {
		return slices.Contains(s, v)
	}
	_, ok := slices.BinarySearch(s, v)
	return ok
}

// Clone returns a deep copy of l (nil for nil).
func (l *Ledger) Clone() *Ledger {
	if l == nil {
		return nil
	}
	c := &Ledger{Accounts: make([]*Account, len(l.Accounts)), Held: slices.Clone(l.Held)}
	for i, a := range l.Accounts {
		c.Accounts[i] = &Account{Agent: a.Agent, Business: a.Business,
			Minutes: slices.Clone(a.Minutes), Hours: slices.Clone(a.Hours),
			mcum: slices.Clone(a.mcum), hcum: slices.Clone(a.hcum)}
	}
	return c
}

var errBuckets = errors.New("reading a ledger account: buckets must hold a positive amount, in order of time")

// UnmarshalJSON reads an account and rebuilds its prefix sums; buckets out
// of order, repeated or holding a negative amount are refused.
func (a *Account) UnmarshalJSON(data []byte) error {
	type plain Account
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	for _, bs := range [][]Bucket{p.Minutes, p.Hours} {
		for i, b := range bs {
			if b.Cents <= 0 || i > 0 && bs[i-1].At >= b.At {
				return errBuckets
			}
		}
	}
	*a = Account(p)
	a.mcum = rebuild(a.Minutes, nil, 0)
	a.hcum = rebuild(a.Hours, nil, 0)
	return nil
}
