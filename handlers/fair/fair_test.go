package fair_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/handlers/fair"
)

// grant is the outcome of one Acquire.
type grant struct {
	name    string
	release func()
	err     error
}

// queue starts an Acquire for t and waits until it waits (or has an
// answer); its outcome arrives on out, named name.
func queue(t *testing.T, s *fair.Scheduler, ctx context.Context, tn fair.Tenant, name string, out chan<- grant) {
	t.Helper()
	before := s.Waiting()
	answered := make(chan struct{})
	go func() {
		rel, err := s.Acquire(ctx, tn)
		close(answered)
		out <- grant{name, rel, err}
	}()
	for s.Waiting() == before {
		select {
		case <-answered:
			return
		default:
			runtime.Gosched()
		}
	}
}

// next returns the next grant (failing past a generous bound: a grant
// that never comes is the failure, the bound only ends the test).
func next(t *testing.T, out <-chan grant) grant {
	t.Helper()
	select {
	case g := <-out:
		return g
	case <-time.After(10 * time.Second):
		t.Fatal("no grant")
		return grant{}
	}
}

// turns gives back the turn rel holds and the k turns after it, in
// order, calling then with each one's name; it returns the names and the
// last turn's release.
func turns(t *testing.T, rel func(), out <-chan grant, k int, then func(name string)) ([]string, func()) {
	t.Helper()
	var order []string
	for range k {
		rel()
		g := next(t, out)
		if g.err != nil {
			t.Fatalf("%s: %v", g.name, g.err)
		}
		order = append(order, g.name)
		rel = g.release
		if then != nil {
			then(g.name)
		}
	}
	return order, rel
}

func hold(t *testing.T, s *fair.Scheduler, tn fair.Tenant) func() {
	t.Helper()
	rel, err := s.Acquire(context.Background(), tn)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

var (
	a = fair.Tenant{Principal: "org_a", Agent: "x"}
	b = fair.Tenant{Principal: "org_b", Agent: "y"}
)

// Issue 11 item 7: a principal that floods the slots does not make a new
// principal wait for its queue: the new one gets the next slot that frees.
func TestIssue11_NewPrincipalIsServedAfterOneRelease(t *testing.T) {
	s := fair.New(fair.Config{Slots: 1, PrincipalQueue: 8})
	out := make(chan grant, 16)
	rel := hold(t, s, a)
	for i := range 5 {
		queue(t, s, context.Background(), a, fmt.Sprintf("a%d", i), out)
	}
	queue(t, s, context.Background(), b, "b", out)
	order, rel := turns(t, rel, out, 6, nil)
	rel()
	if got := fmt.Sprint(order); got != "[b a0 a1 a2 a3 a4]" {
		t.Fatalf("grants %s, want b first", got)
	}
	if s.Waiting() != 0 || s.Running() != 0 {
		t.Fatalf("waiting %d running %d", s.Waiting(), s.Running())
	}
}

// A principal past its queue is refused at once, with the hint; another
// principal still queues, and is served next.
func TestIssue11_PrincipalOverItsQueueIsRefusedAlone(t *testing.T) {
	s := fair.New(fair.Config{Slots: 1, PrincipalQueue: 3, RetryAfter: 2 * time.Second})
	out := make(chan grant, 16)
	rel := hold(t, s, a)
	for i := range 3 {
		queue(t, s, context.Background(), a, fmt.Sprintf("a%d", i), out)
	}
	_, err := s.Acquire(context.Background(), a)
	var busy *fair.BusyError
	if !errors.Is(err, fair.ErrBusy) || !errors.As(err, &busy) || busy.Waiting != 3 || busy.RetryAfter != 2*time.Second || busy.Principal != "org_a" {
		t.Fatalf("the fourth waiting request of org_a: %v, want a BusyError", err)
	}
	queue(t, s, context.Background(), b, "b", out)
	if s.Waiting() != 4 {
		t.Fatalf("waiting %d, want 4 (org_b queued beside org_a's 3)", s.Waiting())
	}
	rel()
	if g := next(t, out); g.name != "b" || g.err != nil {
		t.Fatalf("after one release: %s %v, want b", g.name, g.err)
	} else {
		g.release()
	}
	for range 3 {
		g := next(t, out)
		g.release()
	}
}

// The agents of one principal share its turns the same way.
func TestIssue11_AgentsOfAPrincipalShareItsTurns(t *testing.T) {
	s := fair.New(fair.Config{Slots: 1, PrincipalQueue: 8})
	out := make(chan grant, 16)
	rel := hold(t, s, a)
	for i := range 4 {
		queue(t, s, context.Background(), a, fmt.Sprintf("x%d", i), out)
	}
	queue(t, s, context.Background(), fair.Tenant{Principal: "org_a", Agent: "z"}, "z", out)
	order, rel := turns(t, rel, out, 5, nil)
	rel()
	if got := fmt.Sprint(order); got != "[z x0 x1 x2 x3]" {
		t.Fatalf("grants %s, want z first", got)
	}
}

// A principal that asks again right after being served waits its turn:
// two principals alternate whether one floods or asks one at a time.
func TestIssue11_AskingOneAtATimeGainsNothing(t *testing.T) {
	s := fair.New(fair.Config{Slots: 1, PrincipalQueue: 8})
	out := make(chan grant, 16)
	rel := hold(t, s, a)
	for i := range 4 {
		queue(t, s, context.Background(), a, fmt.Sprintf("a%d", i), out)
	}
	queue(t, s, context.Background(), b, "b0", out)
	bs := 1
	order, rel := turns(t, rel, out, 7, func(name string) {
		if name[0] == 'b' && bs < 4 {
			// b asks again as soon as it is served.
			queue(t, s, context.Background(), b, fmt.Sprintf("b%d", bs), out)
			bs++
		}
	})
	rel()
	if got := fmt.Sprint(order); got != "[b0 a0 b1 a1 b2 a2 b3]" {
		t.Fatalf("grants %s, want a and b alternating", got)
	}
	g := next(t, out)
	g.release()
}

// A waiter whose context ends leaves its queue; a release goes to the next.
func TestCancelledWaiterLeavesItsQueue(t *testing.T) {
	s := fair.New(fair.Config{Slots: 1})
	out := make(chan grant, 4)
	rel := hold(t, s, a)
	ctx, cancel := context.WithCancel(context.Background())
	queue(t, s, ctx, b, "b", out)
	queue(t, s, context.Background(), a, "a", out)
	cancel()
	if g := next(t, out); g.name != "b" || !errors.Is(g.err, context.Canceled) {
		t.Fatalf("%s %v, want b cancelled", g.name, g.err)
	}
	if s.Waiting() != 1 {
		t.Fatalf("waiting %d, want 1", s.Waiting())
	}
	rel()
	g := next(t, out)
	if g.name != "a" || g.err != nil {
		t.Fatalf("%s %v", g.name, g.err)
	}
	g.release()
	g.release() // a second call does nothing
	if s.Running() != 0 || s.Waiting() != 0 {
		t.Fatalf("running %d waiting %d", s.Running(), s.Waiting())
	}
	if _, err := s.Acquire(ctx, a); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context: %v", err)
	}
}

// The principals known are bounded: idle ones are forgotten to make room,
// and a new principal is refused only when every known one waits.
func TestPrincipalsAreBounded(t *testing.T) {
	s := fair.New(fair.Config{Slots: 1, MaxPrincipals: 2})
	out := make(chan grant, 4)
	rel := hold(t, s, fair.Tenant{Principal: "p0"})
	queue(t, s, context.Background(), fair.Tenant{Principal: "p1"}, "p1", out)
	queue(t, s, context.Background(), fair.Tenant{Principal: "p2"}, "p2", out) // p0 (idle) is forgotten
	_, err := s.Acquire(context.Background(), fair.Tenant{Principal: "p3"})
	var busy *fair.BusyError
	if !errors.As(err, &busy) || busy.Waiting != 0 {
		t.Fatalf("a third waiting principal: %v, want refused", err)
	}
	_, rel = turns(t, rel, out, 2, nil)
	rel()
	if n := s.Principals(); n > 2 {
		t.Fatalf("%d principals known, at most 2", n)
	}
	// Many principals one after another: the memory stays bounded.
	for i := range 100 {
		hold(t, s, fair.Tenant{Principal: fmt.Sprintf("q%d", i)})()
	}
	if n := s.Principals(); n > 2 {
		t.Fatalf("%d principals known, at most 2", n)
	}
}

// Many goroutines of many tenants, some cancelling: never more than Slots
// at once, and everything is answered and given back.
func TestSchedulerUnderLoad(t *testing.T) {
	const slots = 3
	s := fair.New(fair.Config{Slots: slots, PrincipalQueue: 16, MaxPrincipals: 8})
	var running, peak atomic.Int64
	var wg sync.WaitGroup
	var granted, refused, cancelled atomic.Int64
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 200 {
				tn := fair.Tenant{Principal: fmt.Sprintf("p%d", r.IntN(12)), Agent: fmt.Sprintf("a%d", r.IntN(3))}
				ctx, cancel := context.WithCancel(context.Background())
				if r.IntN(8) == 0 {
					cancel()
				}
				rel, err := s.Acquire(ctx, tn)
				cancel()
				switch {
				case errors.Is(err, fair.ErrBusy):
					refused.Add(1)
					continue
				case err != nil:
					cancelled.Add(1)
					continue
				}
				granted.Add(1)
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				runtime.Gosched()
				running.Add(-1)
				rel()
			}
		}()
	}
	wg.Wait()
	if peak.Load() > slots {
		t.Fatalf("%d held at once, at most %d", peak.Load(), slots)
	}
	if granted.Load()+refused.Load()+cancelled.Load() != 24*200 || granted.Load() == 0 {
		t.Fatalf("granted %d refused %d cancelled %d", granted.Load(), refused.Load(), cancelled.Load())
	}
	if s.Running() != 0 || s.Waiting() != 0 || s.Principals() > 8 {
		t.Fatalf("running %d waiting %d principals %d", s.Running(), s.Waiting(), s.Principals())
	}
}

func TestTenantTravelsInTheContext(t *testing.T) {
	if got := fair.TenantOf(context.Background()); got != (fair.Tenant{}) {
		t.Fatalf("%+v", got)
	}
	ctx := fair.WithTenant(context.Background(), a)
	if got := fair.TenantOf(ctx); got != a {
		t.Fatalf("%+v", got)
	}
}

// BenchmarkAcquireRelease is the cost a scheduler adds to an engine call
// when its slots are free (the common case): one turn taken and given
// back, principals and agents taking turns.
func BenchmarkAcquireRelease(b *testing.B) {
	s := fair.New(fair.Config{Slots: 8})
	tenants := make([]fair.Tenant, 64)
	for i := range tenants {
		tenants[i] = fair.Tenant{Principal: fmt.Sprintf("p%d", i%16), Agent: fmt.Sprintf("a%d", i)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rel, err := s.Acquire(ctx, tenants[i%len(tenants)])
		if err != nil {
			b.Fatal(err)
		}
		rel()
		i++
	}
}
