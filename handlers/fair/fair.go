package fair

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	// DefaultMaxPrincipals is how many principals a Scheduler knows at
	// once.
	DefaultMaxPrincipals = 1024
	// DefaultRetryAfter is the retry hint of a refusal.
	DefaultRetryAfter = time.Second
)

// Tenant is who a request is for: the principal (the API key's, or the
// agent's owner) and, for an agent's action, the agent.
type Tenant struct {
	Principal string
	Agent     string
}

type tenantKey struct{}

// WithTenant returns ctx carrying t.
func WithTenant(ctx context.Context, t Tenant) context.Context {
	return context.WithValue(ctx, tenantKey{}, t)
}

// TenantOf returns the tenant ctx carries (the zero Tenant, the anonymous
// one, when none).
func TenantOf(ctx context.Context) Tenant {
	t, _ := ctx.Value(tenantKey{}).(Tenant)
	return t
}

// Config configures a Scheduler.
type Config struct {
	// Slots is how many requests hold a slot at once (default
	// runtime.GOMAXPROCS(0)).
	Slots int
	// PrincipalQueue is how many requests of one principal may wait for a
	// slot (default 4*Slots).
	PrincipalQueue int
	// MaxPrincipals is how many principals the Scheduler knows at once
	// (default DefaultMaxPrincipals).
	MaxPrincipals int
	// RetryAfter is the retry hint of a refusal (default
	// DefaultRetryAfter).
	RetryAfter time.Duration
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Slots <= 0 {
		c.Slots = runtime.GOMAXPROCS(0)
	}
	if c.PrincipalQueue <= 0 {
		c.PrincipalQueue = 4 * c.Slots
	}
	if c.MaxPrincipals <= 0 {
		c.MaxPrincipals = DefaultMaxPrincipals
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	return c
}

// ErrBusy is what a refusal of Acquire wraps.
var ErrBusy = errors.New("fair queue full")

// BusyError is a refusal of Acquire: the principal's queue is full, or
// every principal the Scheduler can know is waiting.
type BusyError struct {
	// Principal is the refused principal.
	Principal string
	// Waiting is how many of its requests wait (0 when the refusal is for
	// the number of principals).
	Waiting int
	// RetryAfter is when to try again.
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	if e.Waiting == 0 {
		return fmt.Sprintf("too many principals waiting: retry after %v", e.RetryAfter)
	}
	return fmt.Sprintf("%d requests of this principal wait already: retry after %v", e.Waiting, e.RetryAfter)
}

// Is makes a BusyError match ErrBusy.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Scheduler hands out Config.Slots slots fairly (see the package doc). It
// is safe for concurrent use.
type Scheduler struct {
	cfg     Config
	mu      sync.Mutex
	free    int
	waiting int
	top     level // principals; each one's sub level holds its agents
}

// New returns a Scheduler of cfg (zero fields take their defaults).
func New(cfg Config) *Scheduler {
	cfg = cfg.WithDefaults()
	return &Scheduler{cfg: cfg, free: cfg.Slots, top: level{flows: map[string]*flow{}}}
}

// Config returns the Scheduler's configuration, defaults filled in.
func (s *Scheduler) Config() Config { return s.cfg }

// waiter is one request waiting for a slot.
type waiter struct {
	ready   chan struct{} // closed when granted
	granted bool
}

// Acquire waits for a slot for t and returns the function that gives it
// back (call it once; later calls do nothing). It refuses at once with a
// *BusyError when t's principal has Config.PrincipalQueue requests
// waiting, or when it is new and the Scheduler knows as many principals
// as it may; it answers ctx's error if ctx ends first.
func (s *Scheduler) Acquire(ctx context.Context, t Tenant) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	p, ok := s.top.get(t.Principal, s.cfg.MaxPrincipals)
	if !ok {
		s.mu.Unlock()
		return nil, &BusyError{Principal: t.Principal, RetryAfter: s.cfg.RetryAfter}
	}
	if s.free > 0 {
		// No one waits (a slot that frees goes to a waiter first): served
		// now, and counted in its principal's and agent's rounds.
		a, _ := p.sub.get(t.Agent, s.cfg.PrincipalQueue) // none of p's agents waits
		p.sub.enter(a)
		s.top.enter(p)
		p.sub.serve(a)
		s.top.serve(p)
		s.free--
		s.mu.Unlock()
		return s.releaser(), nil
	}
	if p.waiting >= s.cfg.PrincipalQueue {
		n := p.waiting
		s.mu.Unlock()
		return nil, &BusyError{Principal: t.Principal, Waiting: n, RetryAfter: s.cfg.RetryAfter}
	}
	// Fewer than PrincipalQueue agents of p wait: there is room for one
	// more.
	a, _ := p.sub.get(t.Agent, s.cfg.PrincipalQueue)
	w := &waiter{ready: make(chan struct{})}
	a.ws = append(a.ws, w)
	p.sub.enter(a)
	s.top.enter(p)
	s.waiting++
	s.mu.Unlock()

	select {
	case <-w.ready:
		return s.releaser(), nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted {
		s.mu.Unlock()
		s.release() // granted as ctx ended: pass it on
		return nil, ctx.Err()
	}
	// p and a wait (w does), so neither was forgotten.
	i := slices.Index(a.ws, w)
	a.ws = slices.Delete(a.ws, i, i+1)
	p.sub.leave(a)
	s.top.leave(p)
	s.waiting--
	s.mu.Unlock()
	return nil, ctx.Err()
}

func (s *Scheduler) releaser() func() {
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			s.release()
		}
	}
}

// release gives a slot to the next waiter, or frees it.
func (s *Scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == 0 {
		s.free++
		return
	}
	p := s.top.pick()
	a := p.sub.pick()
	w := a.ws[0]
	a.ws[0] = nil
	a.ws = a.ws[1:]
	p.sub.serve(a)
	s.top.serve(p)
	s.waiting--
	w.granted = true
	close(w.ready)
}

// Waiting returns how many requests wait for a slot.
func (s *Scheduler) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// Running returns how many slots are held.
func (s *Scheduler) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Slots - s.free
}

// Principals returns how many principals the Scheduler knows (waiting, or
// remembered for the current round).
func (s *Scheduler) Principals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.top.flows)
}

// level is one level of start-time fair queuing with unit costs: the
// principals, or the agents of one principal.
type level struct {
	v      uint64 // the round of the last item served
	seq    uint64 // orders the flows of one round: who waits longest
	flows  map[string]*flow
	active []*flow // the flows with items waiting
	idle   []*flow // flows that may be idle: the ones get may forget
}

// flow is one principal or one agent.
type flow struct {
	key     string
	waiting int       // its items waiting
	round   uint64    // the round of its next item, while it waits
	seq     uint64    // when it began waiting for that round
	last    uint64    // the round of its last item served
	served  bool      // last is set
	listed  bool      // in the level's idle list
	sub     *level    // a principal's agents
	ws      []*waiter // an agent's waiters, in arrival order
}

// get returns the flow of key, creating it when there is room for it
// among max; when there is not, it forgets the idle flows whose memory no
// longer matters first, then every idle flow, and answers false when
// there is still none (all max wait). Idle flows are kept until room is
// needed: a tenant that comes back finds its flow.
func (l *level) get(key string, max int) (*flow, bool) {
	if f, ok := l.flows[key]; ok {
		return f, true
	}
	if len(l.flows) >= max {
		l.forget(false)
	}
	if len(l.flows) >= max {
		l.forget(true)
		if len(l.flows) >= max {
			return nil, false
		}
	}
	f := &flow{key: key, sub: &level{flows: map[string]*flow{}}}
	l.flows[key] = f
	l.markIdle(f)
	return f, true
}

// enter adds an item to f: a flow that starts waiting gets the current
// round, or the one after its last if that is later.
func (l *level) enter(f *flow) {
	if f.waiting == 0 {
		f.round = l.v
		if f.served && f.last+1 > f.round {
			f.round = f.last + 1
		}
		l.seq++
		f.seq = l.seq
		l.active = append(l.active, f)
	}
	f.waiting++
}

// pick returns the waiting flow whose next item has the smallest round,
// the one waiting longest among equals.
func (l *level) pick() *flow {
	best := l.active[0]
	for _, f := range l.active[1:] {
		if f.round < best.round || f.round == best.round && f.seq < best.seq {
			best = f
		}
	}
	return best
}

// serve takes f's next item: the level's round moves to it (it is the
// smallest waiting), and f's next item is of the round after.
func (l *level) serve(f *flow) {
	l.v = f.round
	f.last, f.served = f.round, true
	f.waiting--
	if f.waiting > 0 {
		f.round++
		l.seq++
		f.seq = l.seq
	} else {
		l.deactivate(f)
	}
}

// leave withdraws an item of f that was not served.
func (l *level) leave(f *flow) {
	f.waiting--
	if f.waiting == 0 {
		l.deactivate(f)
	}
}

func (l *level) deactivate(f *flow) {
	i := slices.Index(l.active, f)
	l.active = slices.Delete(l.active, i, i+1)
	l.markIdle(f)
}

func (l *level) markIdle(f *flow) {
	if !f.listed {
		f.listed = true
		l.idle = append(l.idle, f)
	}
}

// forget drops idle flows: with all, every one; otherwise those whose
// memory no longer matters (never served, or last served before the
// current round: their next item gets the current round anyway).
func (l *level) forget(all bool) {
	keep := l.idle[:0]
	for _, f := range l.idle {
		switch {
		case f.waiting > 0:
			f.listed = false // listed again when it stops waiting
		case all || !f.served || f.last < l.v:
			f.listed = false
			delete(l.flows, f.key)
		default:
			keep = append(keep, f)
		}
	}
	clear(l.idle[len(keep):])
	l.idle = keep
}
