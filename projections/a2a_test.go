package projections

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// a2aSigner signs A2A attestations with a fixed, claim-bound string (the
// projections only carry them); it refuses the receiver "unsignable", so
// that a verdict of status error is recorded.
type a2aSigner struct{}

func (a2aSigner) Sign(domain.AttestationClaims) (string, error) {
	return "", errors.New("no action signer")
}

func (a2aSigner) SignA2A(c a2a.Claims) (string, error) {
	if c.Receiver == "unsignable" {
		return "", errors.New("refused")
	}
	return "att." + c.TraceID + "." + string(c.Verdict), nil
}

// doSigned is do with the A2A signer.
func (g *testGate) doSigned(cmd *domain.Command) *domain.Event {
	g.t.Helper()
	ev := domain.Decide(g.st, domain.Env{Now: g.now, Seq: g.seq + 1, Signer: a2aSigner{}}, cmd)
	if ev == nil {
		g.t.Fatalf("no event for %s", cmd.Type)
	}
	g.add(ev)
	return ev
}

func (g *testGate) boundary(principal, op, agent, sender, receiver string) {
	g.t.Helper()
	ev := g.doSigned(&domain.Command{Type: domain.CmdA2ABoundary, Principal: principal,
		Request:     domain.RequestID{Source: "test", ID: fmt.Sprint("b", g.seq)},
		A2ABoundary: &domain.A2ABoundaryChange{Op: op, Agent: agent, Sender: sender, Receiver: receiver}})
	if ev.Type != domain.EvA2ABoundaryChanged {
		g.t.Fatalf("boundary change %s %s refused: %+v", op, agent, ev.Error)
	}
}

func (g *testGate) message(principal, sender, receiver string, pt a2a.PayloadType, payload string) *domain.A2AVerdict {
	g.t.Helper()
	ev := g.doSigned(&domain.Command{Type: domain.CmdA2AMessage, Principal: principal,
		Request: domain.RequestID{Source: "test", ID: fmt.Sprint("m", g.seq)},
		A2A:     &a2a.Message{SenderAgentID: sender, ReceiverAgentID: receiver, PayloadType: pt, Payload: json.RawMessage(payload)}})
	if ev.A2AVerdict == nil {
		g.t.Fatalf("message %s -> %s refused: %+v", sender, receiver, ev.Error)
	}
	return ev.A2AVerdict
}

func (g *testGate) configureA2A(c domain.A2AConfig) {
	g.t.Helper()
	cfg := domain.DefaultConfig()
	cfg.A2A = &c
	ev := g.doSigned(&domain.Command{Type: domain.CmdConfigure, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "test", ID: "configure"}, Configure: &domain.Configure{Config: cfg}})
	if ev.Error != nil {
		g.t.Fatalf("configuring: %+v", ev.Error)
	}
}

// a2aWorkload records boundary changes of two principals and the admin
// and verdicts of every status under them, including buckets that go idle
// and are evicted, and returns the events' tally.
func a2aWorkload(t *testing.T, g *testGate) *A2ATally {
	t.Helper()
	c := domain.DefaultA2AConfig()
	c.Burst, c.RatePerMinute = 2, 1
	g.configureA2A(c)
	for _, a := range []string{"alice", "bob", "carol", "unsignable"} {
		g.boundary("org_1", domain.A2AOpTrust, a, "", "")
	}
	g.boundary("org_2", domain.A2AOpTrust, "alice", "", "")
	g.boundary("org_2", domain.A2AOpTrust, "zed", "", "")
	g.boundary(domain.AdminPrincipal, domain.A2AOpTrust, "dave", "", "")
	g.boundary(domain.AdminPrincipal, domain.A2AOpBlock, "mallory", "", "")
	g.boundary("org_1", domain.A2AOpBlockPair, "", "bob", "carol")
	g.boundary("org_1", domain.A2AOpTrust, "erin", "", "")
	g.boundary("org_1", domain.A2AOpUntrust, "erin", "", "")
	g.boundary("org_1", domain.A2AOpBlock, "trent", "", "")
	g.boundary("org_1", domain.A2AOpUnblock, "trent", "", "")

	want := map[a2a.Status]int{}
	note := func(v *domain.A2AVerdict) { want[v.Status]++ }
	note(g.message("org_1", "alice", "bob", a2a.PayloadGeneral, `{"m":1}`))
	note(g.message("org_1", "alice", "bob", a2a.PayloadFinancial,
		`{"data":{"claimed_total":999.99,"line_items":[{"description":"w","amount":50,"quantity":2}]}}`))
	note(g.message("org_1", "alice", "bob", a2a.PayloadGeneral, `{"m":3}`)) // the bucket is empty
	note(g.message("org_1", "bob", "carol", a2a.PayloadGeneral, `{}`))      // the pair is blocked
	note(g.message("org_1", "alice", "mallory", a2a.PayloadGeneral, `{}`))  // blocked gate-wide
	note(g.message("org_1", "alice", "unsignable", a2a.PayloadGeneral, `{}`))
	note(g.message("org_2", "alice", "zed", a2a.PayloadDataQuery, `{"q":"x"}`))
	note(g.message(domain.AdminPrincipal, "dave", "dave", a2a.PayloadGeneral, `{}`))
	g.now = g.now.Add(10 * time.Minute) // every bucket goes idle
	note(g.message("org_2", "zed", "alice", a2a.PayloadGeneral, `{}`))
	for _, s := range []a2a.Status{a2a.StatusForwarded, a2a.StatusBlocked, a2a.StatusRateLimited, a2a.StatusError} {
		if want[s] == 0 {
			t.Fatalf("the workload recorded no verdict of status %s (%v)", s, want)
		}
	}
	var tally A2ATally
	for _, ev := range g.allEvents {
		tally.Add(ev)
	}
	return &tally
}

// TestA2AStateRoundTripsThroughTheStore pins that LoadState restores the
// A2A state (boundaries, token buckets in LRU order, evictions) exactly
// as folded, batch by batch or in one batch, and that the verdict counters
// are those of the log.
func TestA2AStateRoundTripsThroughTheStore(t *testing.T) {
	for _, batch := range []int{1, 5, 1 << 20} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			g := newTestGate(t, batch)
			g.keepEvents = true
			tally := a2aWorkload(t, g)
			g.assertLoadStateEqual()
			if n := len(g.st.A2A.Buckets); n != 1 {
				t.Fatalf("%d buckets after the idle ones were evicted, want 1", n)
			}
			if n := countKeys(t, g.store, tA2ABucket); n != 1 {
				t.Fatalf("%d bucket keys stored, want 1 (the evicted ones deleted)", n)
			}
			checkCounts(t, g.store, tally)
		})
	}
}

// checkCounts compares the store's counters with tally's.
func checkCounts(t *testing.T, s *Store, tally *A2ATally) {
	t.Helper()
	gate, err := s.A2AGateCounts()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gate, tally.Gate) {
		t.Errorf("gate counts %+v, want %+v", gate, tally.Gate)
	}
	for b, want := range tally.Boundaries {
		got, err := s.A2ACountsOf(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, *want) {
			t.Errorf("counts of %q: %+v, want %+v", b, got, *want)
		}
		pairs, next, err := s.A2APairs(b, nil, MaxA2APairsPerPrincipal)
		if err != nil || next != nil {
			t.Fatalf("pairs of %q: next %v, %v", b, next, err)
		}
		if len(pairs) != len(tally.PairCounts[b]) {
			t.Errorf("%d pairs of %q, want %d", len(pairs), b, len(tally.PairCounts[b]))
		}
		for _, p := range pairs {
			if w := tally.PairCounts[b][[2]string{p.Sender, p.Receiver}]; w == nil || *w != p.StatusCounts {
				t.Errorf("pair %s -> %s of %q: %+v, want %+v", p.Sender, p.Receiver, b, p.StatusCounts, w)
			}
		}
	}
}

// TestA2AProjectionsRebuildIdentically pins that the A2A projections are
// a function of the log: a store rebuilt in other batches is equal key by
// key, and the counters of one store never hold another boundary's.
func TestA2AProjectionsRebuildIdentically(t *testing.T) {
	a := newTestGate(t, 1)
	a.keepEvents = true
	a2aWorkload(t, a)
	a.flush()
	b, err := Open(filepath.Join(t.TempDir(), "rebuilt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st := domain.NewState()
	for i := 0; i < len(a.allEvents); i += 4 {
		var f Fold
		for _, ev := range a.allEvents[i:min(i+4, len(a.allEvents))] {
			f.Add(st, ev)
		}
		last := f.Events()[f.Len()-1]
		if err := b.Apply(st, &f, Checkpoint{Seq: last.Seq, Hash: fmt.Sprint("h", last.Seq), Time: a.now}); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := Equal(a.store, b); err != nil || d != "" {
		t.Fatalf("the rebuilt store differs: %s %v", d, err)
	}
	org2, err := a.store.A2ACountsOf("org_2")
	if err != nil {
		t.Fatal(err)
	}
	if org2.Total() != 2 || org2.Pairs != 2 {
		t.Fatalf("org_2 counts %+v: want its own 2 verdicts of 2 pairs only", org2)
	}
	pairs, _, err := a.store.A2APairs("org_2", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p.Sender == "bob" || p.Receiver == "bob" {
			t.Fatalf("org_2 lists org_1's pair %+v", p)
		}
	}
}

// TestA2APairsAreBounded pins MaxA2APairsPerPrincipal: past it, a new
// pair's verdicts are counted in Other, the pairs kept keep counting, and
// the page of pairs is bounded and resumes where it stopped.
func TestA2APairsAreBounded(t *testing.T) {
	g := newTestGate(t, 64)
	g.keepEvents = true
	c := domain.DefaultA2AConfig()
	c.DefaultAllow = true
	g.configureA2A(c)
	n := MaxA2APairsPerPrincipal + 5
	for i := range n {
		g.message("org_1", fmt.Sprintf("s%04d", i), "r", a2a.PayloadGeneral, `{}`)
	}
	g.message("org_1", "s0000", "r", a2a.PayloadGeneral, `{}`)
	g.message("org_1", fmt.Sprintf("s%04d", n-1), "r", a2a.PayloadGeneral, `{}`)
	g.flush()
	got, err := g.store.A2ACountsOf("org_1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Pairs != MaxA2APairsPerPrincipal || got.Other.Forwarded != 6 || got.Forwarded != int64(n+2) {
		t.Fatalf("counts %+v: want %d pairs, 6 verdicts in other, %d in all", got, MaxA2APairsPerPrincipal, n+2)
	}
	if k := countKeys(t, g.store, tA2APair); k != MaxA2APairsPerPrincipal {
		t.Fatalf("%d pair keys, want %d", k, MaxA2APairsPerPrincipal)
	}
	var tally A2ATally
	for _, ev := range g.allEvents {
		tally.Add(ev)
	}
	checkCounts(t, g.store, &tally)
	var all []A2APair
	var after *[2]string
	for pages := 0; ; pages++ {
		page, next, err := g.store.A2APairs("org_1", after, 300)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 300 || pages > 4 {
			t.Fatalf("page of %d pairs (page %d)", len(page), pages)
		}
		all = append(all, page...)
		if next == nil {
			break
		}
		after = next
	}
	if len(all) != MaxA2APairsPerPrincipal || all[0].Sender != "s0000" || all[0].Forwarded != 2 {
		t.Fatalf("paged %d pairs, first %+v", len(all), all[0])
	}
}

// TestA2ABoundaryListPages pins the boundary lists: lexical order, the
// whole list's count, pages that resume after their last entry, and one
// boundary never listing another's entries.
func TestA2ABoundaryListPages(t *testing.T) {
	g := newTestGate(t, 16)
	for i := range 25 {
		g.boundary("org_1", domain.A2AOpTrust, fmt.Sprintf("agent-%02d", 24-i), "", "")
	}
	g.boundary("org_1", domain.A2AOpBlockPair, "", "a", "b")
	g.boundary("org_1", domain.A2AOpBlockPair, "", "a", "a")
	g.boundary("org_1", domain.A2AOpBlockPair, "", "ab", "a")
	g.boundary("org_2", domain.A2AOpTrust, "other", "", "")
	g.boundary("org_1", domain.A2AOpUntrust, "agent-03", "", "")
	g.flush()
	var got []string
	after := ""
	for {
		p, err := g.store.A2ABoundaryList("org_1", A2ATrustedAgents, after, 10)
		if err != nil {
			t.Fatal(err)
		}
		if p.Count != 24 || len(p.Entries) > 10 {
			t.Fatalf("page %+v: want count 24, at most 10 entries", p)
		}
		got = append(got, p.Entries...)
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if len(got) != 24 || got[0] != "agent-00" || got[3] != "agent-04" || got[23] != "agent-24" {
		t.Fatalf("trusted %v", got)
	}
	pairs, err := g.store.A2ABoundaryList("org_1", A2ABlockedPairs, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ps [][2]string
	for _, e := range pairs.Entries {
		s, r, ok := SplitA2APair(e)
		if !ok {
			t.Fatalf("entry %q is no pair", e)
		}
		ps = append(ps, [2]string{s, r})
	}
	if want := [][2]string{{"a", "a"}, {"a", "b"}, {"ab", "a"}}; !reflect.DeepEqual(ps, want) {
		t.Fatalf("pairs %v, want %v", ps, want)
	}
	for _, b := range []string{"org_3", domain.AdminPrincipal} {
		p, err := g.store.A2ABoundaryList(b, A2ATrustedAgents, "", 10)
		if err != nil || p.Count != 0 || len(p.Entries) != 0 {
			t.Fatalf("boundary %q lists %+v %v, want nothing", b, p, err)
		}
	}
	g.assertLoadStateEqual()
}

// TestA2AStoreReopens pins that a store holding A2A keys reopens and
// goes on: its first batch after the reopen loads the snapshot index,
// which once read the A2A counters' keys as its own and failed.
func TestA2AStoreReopens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &testGate{t: t, st: domain.NewState(), store: s, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), batch: 1}
	a2aWorkload(t, g)
	g.checkpoint(10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if g.store, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	defer g.store.Close()
	if g.st, err = g.store.LoadState(); err != nil {
		t.Fatal(err)
	}
	g.message("org_2", "zed", "alice", a2a.PayloadGeneral, `{}`)
	g.checkpoint(10)
	g.assertLoadStateEqual()
}
