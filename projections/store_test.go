package projections

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

// testGate decides commands against an in-memory state and projects every
// event into a real Pebble store, the way the worker does.
type testGate struct {
	t       *testing.T
	st      *domain.State
	store   *Store
	now     time.Time
	seq     uint64
	pending Fold
	batch   int // events per Apply; 1 applies each event on its own
	// keepEvents makes do keep every event in allEvents.
	keepEvents bool
	allEvents  []*domain.Event
}

func newTestGate(t *testing.T, batch int) *testGate {
	t.Helper()
	return newTestGateWith(t, batch, Options{})
}

// newTestGateWith is newTestGate on a store opened with o.
func newTestGateWith(t *testing.T, batch int, o Options) *testGate {
	t.Helper()
	s, err := OpenWith(t.TempDir(), o)
	if err != nil {
		t.Fatalf("opening store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing store: %v", err)
		}
	})
	return &testGate{t: t, st: domain.NewState(), store: s,
		now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), batch: batch}
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

var testTokenHash = hashHex("qwed_agent_test")

// do decides cmd, folds its event and projects it (at once, or when the
// batch is full), returning the event.
func (g *testGate) do(cmd *domain.Command) *domain.Event {
	g.t.Helper()
	ev := domain.Decide(g.st, domain.Env{Now: g.now, Seq: g.seq + 1}, cmd)
	if ev == nil {
		return nil
	}
	g.add(ev)
	return ev
}

// add folds ev and projects it (at once, or when the batch is full).
func (g *testGate) add(ev *domain.Event) {
	g.seq = ev.Seq
	if g.keepEvents {
		g.allEvents = append(g.allEvents, ev)
	}
	g.pending.Add(g.st, ev)
	if g.pending.Len() >= g.batch {
		g.flush()
	}
}

func (g *testGate) flush() {
	g.t.Helper()
	if g.pending.Len() == 0 {
		return
	}
	if err := g.store.Apply(g.st, &g.pending, Checkpoint{Seq: g.seq, Hash: fmt.Sprint("h", g.seq), Time: g.now}); err != nil {
		g.t.Fatalf("applying: %v", err)
	}
	g.pending = Fold{}
}

func (g *testGate) register(id string, trust int, budget domain.Limits) string {
	g.t.Helper()
	tl := domain.TrustLevel(trust)
	ev := g.do(&domain.Command{
		Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "test", ID: "reg-" + id},
		Register: &domain.RegisterAgent{
			Agent:      domain.AgentInfo{Name: "bot-" + id, Type: "autonomous", PrincipalID: "org_1"},
			Budget:     budget,
			TrustLevel: &tl,
			TokenHash:  testTokenHash,
		},
	})
	if ev.Registered == nil {
		g.t.Fatalf("registration refused: %+v", ev.Error)
	}
	return ev.Registered.AgentID
}

func (g *testGate) verify(agent, req, conv string, step int, act domain.Action) *domain.Event {
	g.t.Helper()
	ev := g.do(&domain.Command{
		Type: domain.CmdVerifyAction, AgentID: agent, TokenHash: testTokenHash,
		Request: domain.RequestID{Source: "test", ID: req},
		Verify: &domain.VerifyAction{Action: act,
			Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(fmt.Sprint(step))}},
	})
	if ev == nil || ev.Decided == nil {
		g.t.Fatalf("verify %s: no decision: %+v", req, ev)
	}
	return ev
}

func calc(q string, cost domain.USD) domain.Action {
	return domain.Action{Type: "calculate", Query: q, EstimatedCost: cost}
}

func stateJSON(t *testing.T, st *domain.State) []byte {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatalf("encoding state: %v", err)
	}
	return b
}

// assertLoadStateEqual pins the contract of LoadState: the state loaded
// from the projections is the worker's in-memory state.
func (g *testGate) assertLoadStateEqual() {
	g.t.Helper()
	g.flush()
	got, err := g.store.LoadState()
	if err != nil {
		g.t.Fatalf("loading state: %v", err)
	}
	want, have := stateJSON(g.t, g.st), stateJSON(g.t, got)
	if !bytes.Equal(want, have) {
		g.t.Fatalf("LoadState differs from the in-memory state:\n got %.2000s\nwant %.2000s", have, want)
	}
}

func TestApplyLoadStateRoundTrip(t *testing.T) {
	for _, batch := range []int{1, 7} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			g := newTestGate(t, batch)
			a := g.register("a", 3, domain.Limits{})
			sup := g.register("s", 1, domain.Limits{MaxDailyCost: 10 * domain.MicrosPerUSD})
			for i := 1; i <= 20; i++ {
				ev := g.verify(a, fmt.Sprint("v", i), fmt.Sprint("c", i%3), i/3+1, calc(fmt.Sprint(i, "+1"), 10_000))
				if ev.Decided.Decision != domain.Approved {
					t.Fatalf("decision %d: %s", i, ev.Decided.Decision)
				}
				if i%4 == 0 {
					g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: a, TokenHash: testTokenHash,
						Request:   domain.RequestID{Source: "test", ID: fmt.Sprint("x", i)},
						Execution: &domain.LogExecution{ActionID: ev.Decided.ActionID, Success: true, CostUSD: 5000, Tokens: 3}})
				}
				g.now = g.now.Add(7 * time.Minute)
			}
			p := g.verify(sup, "p1", "c", 1, domain.Action{Type: "send_email", Target: "bob", EstimatedCost: 2 * domain.MicrosPerUSD})
			if p.Decided.Decision != domain.Pending {
				t.Fatalf("supervised send_email: %s", p.Decided.Decision)
			}
			g.verify(sup, "p2", "c", 2, domain.Action{Type: "api_call", Target: "crm", EstimatedCost: domain.MicrosPerUSD})
			g.do(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1",
				Request: domain.RequestID{Source: "test", ID: "r1"},
				Resolve: &domain.ResolveApproval{ApprovalID: p.Decided.ActionID, Approve: true}})
			g.now = g.now.Add(48 * time.Hour)
			g.do(&domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}})
			g.assertLoadStateEqual()
			if len(g.st.Agents[a].LoggedActions) == 0 {
				t.Fatalf("no logged actions recorded: the round trip did not cover LoggedActions")
			}
			ck, err := g.store.Checkpoint()
			if err != nil || ck.Seq != g.seq {
				t.Fatalf("checkpoint %+v, %v; want seq %d", ck, err, g.seq)
			}
		})
	}
}

// TestConversationEvictedIsDeleted pins ActionDecided.ConversationEvicted:
// the projections drop the evicted conversation so that LoadState equals
// the folded state.
func TestConversationEvictedIsDeleted(t *testing.T) {
	g := newTestGate(t, 500)
	a := g.register("a", 3, domain.Limits{})
	for i := 0; i < domain.MaxConversations; i++ {
		g.verify(a, fmt.Sprint("v", i), fmt.Sprint("c", i), 1, calc("1+1", 0))
		g.now = g.now.Add(time.Millisecond)
	}
	g.flush()
	ev := g.verify(a, "over", "new", 1, calc("1+1", 0))
	if ev.Decided.ConversationEvicted != "c0" {
		t.Fatalf("evicted %q, want c0", ev.Decided.ConversationEvicted)
	}
	g.flush()
	if _, err := g.store.Conversation(a, "c0"); err != ErrNotFound {
		t.Fatalf("evicted conversation still projected: %v", err)
	}
	if _, err := g.store.Conversation(a, "new"); err != nil {
		t.Fatalf("new conversation: %v", err)
	}
	// Evicted and brought back within one batch: the conversation stays.
	g.batch = 10
	g.verify(a, "over2", "new2", 1, calc("1+1", 0))
	g.verify(a, "back", "c1", 2, calc("1+1", 0))
	g.assertLoadStateEqual()
}

// allActivities pages through an agent's activities with limit, checking
// the paging contract on the way.
func allActivities(t *testing.T, s *Store, agent string, from, to time.Time, limit int) []Activity {
	t.Helper()
	var out []Activity
	var after uint64
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			t.Fatalf("paging does not end")
		}
		p, err := s.Activity(agent, from, to, after, limit, 0)
		if err != nil {
			t.Fatalf("reading activity: %v", err)
		}
		if len(p.Activities) > limit {
			t.Fatalf("page of %d over limit %d", len(p.Activities), limit)
		}
		for _, a := range p.Activities {
			if a.Seq <= after {
				t.Fatalf("activity seq %d not after %d", a.Seq, after)
			}
			after = a.Seq
		}
		out = append(out, p.Activities...)
		if p.NextAfterSeq == 0 {
			return out
		}
		if p.NextAfterSeq != after {
			t.Fatalf("next_after_seq %d, last seq of the page %d", p.NextAfterSeq, after)
		}
	}
}

func TestActivityPagingAndPeriodSummary(t *testing.T) {
	g := newTestGate(t, 5)
	a := g.register("a", 3, domain.Limits{})
	other := g.register("b", 3, domain.Limits{})
	start := g.now
	var n int
	// Three and a half days of activity, every 47 minutes, some executed.
	for g.now.Before(start.Add(84 * time.Hour)) {
		n++
		ev := g.verify(a, fmt.Sprint("v", n), fmt.Sprint("c", n/40), n%40+1, calc(fmt.Sprint(n, "*2"), domain.USD(n)*1000))
		if n%3 == 0 {
			g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: a, TokenHash: testTokenHash,
				Request:   domain.RequestID{Source: "test", ID: fmt.Sprint("x", n)},
				Execution: &domain.LogExecution{ActionID: ev.Decided.ActionID, Success: true, CostUSD: 777, Tokens: int64(n)}})
		}
		g.verify(other, fmt.Sprint("o", n), "c", n, calc("1+1", 0))
		g.now = g.now.Add(47 * time.Minute)
	}
	g.flush()
	far := start.Add(-24 * time.Hour)
	end := start.Add(10 * 24 * time.Hour)
	all := allActivities(t, g.store, a, far, end, 1000)
	if len(all) != n {
		t.Fatalf("%d activities, want %d", len(all), n)
	}
	for _, limit := range []int{1, 7, 50} {
		paged := allActivities(t, g.store, a, far, end, limit)
		if len(paged) != n || paged[n-1].Seq != all[n-1].Seq {
			t.Fatalf("limit %d: %d activities, want %d", limit, len(paged), n)
		}
	}
	for i, act := range all {
		if act.AgentID != a || (i > 0 && act.Seq <= all[i-1].Seq) {
			t.Fatalf("activity %d: agent %s seq %d out of order", i, act.AgentID, act.Seq)
		}
		if (i+1)%3 == 0 && (!act.Cost.Actual || act.Cost.USD != 777 || act.Execution == nil) {
			t.Fatalf("executed activity %d: cost %+v execution %+v", i, act.Cost, act.Execution)
		}
	}
	day := func(d int) time.Time { return time.Date(2026, 3, 2+d, 0, 0, 0, 0, time.UTC) }
	ranges := [][2]time.Time{
		{far, end},                         // whole days only, and empty ones
		{day(0), day(1)},                   // one whole day
		{start.Add(time.Hour), day(1)},     // a partial day
		{start.Add(3 * time.Hour), day(3)}, // partial + whole days
		{day(1), start.Add(70 * time.Hour)},
		{start.Add(5 * time.Hour), start.Add(80 * time.Hour)}, // partial at both edges
		{start.Add(2 * time.Hour), start.Add(2*time.Hour + 30*time.Minute)},
		{day(2), day(2)}, // empty
		{day(2), day(1)}, // inverted
	}
	for _, r := range ranges {
		var want Summary
		for i := range all {
			if !all[i].Timestamp.Before(r[0]) && all[i].Timestamp.Before(r[1]) {
				want.Count(all[i].Decision, all[i].Cost)
			}
		}
		p, err := g.store.Activity(a, r[0], r[1], 0, 1, 0)
		if err != nil {
			t.Fatalf("activity %v: %v", r, err)
		}
		if p.Summary != want {
			t.Fatalf("summary of [%s, %s): got %+v, want %+v", r[0], r[1], p.Summary, want)
		}
	}
	var whole Summary
	for i := range all {
		whole.Count(all[i].Decision, all[i].Cost)
	}
	if whole.TotalActions != int64(n) || whole.TotalTokens == 0 || whole.TotalCostUSD == 0 {
		t.Fatalf("brute-force summary %+v does not cover the executions", whole)
	}
}

func TestApprovalDeniedReleasesCost(t *testing.T) {
	g := newTestGate(t, 1)
	sup := g.register("s", 1, domain.Limits{MaxDailyCost: 10 * domain.MicrosPerUSD})
	p := g.verify(sup, "p", "c", 1, domain.Action{Type: "api_call", Target: "crm", EstimatedCost: 3 * domain.MicrosPerUSD})
	if p.Decided.Decision != domain.Pending {
		t.Fatalf("decision %s, want PENDING", p.Decided.Decision)
	}
	from, to := g.now.Add(-time.Hour), g.now.Add(time.Hour)
	page, err := g.store.Activity(sup, from, to, 0, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if page.Summary.TotalCostUSD != 3*domain.MicrosPerUSD || page.Summary.Pending != 1 {
		t.Fatalf("pending summary %+v", page.Summary)
	}
	g.do(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1",
		Request: domain.RequestID{Source: "test", ID: "r"},
		Resolve: &domain.ResolveApproval{ApprovalID: p.Decided.ActionID, Approve: false, Reason: "no"}})
	page, err = g.store.Activity(sup, from, to, 0, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	act := page.Activities[0]
	if page.Summary.TotalCostUSD != 0 || act.Cost != (ActivityCost{}) {
		t.Fatalf("denied approval kept its cost: summary %+v activity cost %+v", page.Summary, act.Cost)
	}
	if act.Approval == nil || act.Approval.Status != domain.ApprovalDenied || act.Approval.ResolvedAt == nil {
		t.Fatalf("activity approval %+v", act.Approval)
	}
	ap, err := g.store.Approval(p.Decided.ActionID)
	if err != nil || ap.Status != domain.ApprovalDenied {
		t.Fatalf("approval %+v, %v", ap, err)
	}
	g.assertLoadStateEqual()
}

func TestEqualDetectsADifference(t *testing.T) {
	g1, g2 := newTestGate(t, 1), newTestGate(t, 3)
	for _, g := range []*testGate{g1, g2} {
		a := g.register("a", 3, domain.Limits{})
		for i := 1; i <= 5; i++ {
			g.verify(a, fmt.Sprint("v", i), "c", i, calc("2+2", 0))
		}
		g.flush()
	}
	if d, err := Equal(g1.store, g2.store); err != nil || d != "" {
		t.Fatalf("same events, different batching: %q, %v", d, err)
	}
	g2.verify(g2.st.Agents[firstAgent(g2.st)].ID, "v6", "c", 6, calc("2+2", 0))
	g2.flush()
	d, err := Equal(g1.store, g2.store)
	if err != nil || d == "" {
		t.Fatalf("one more event not detected: %q, %v", d, err)
	}
	d2, err := Equal(g2.store, g1.store)
	if err != nil || d2 == "" {
		t.Fatalf("one more event not detected the other way: %q, %v", d2, err)
	}
}

func firstAgent(st *domain.State) string {
	for id := range st.Agents {
		return id
	}
	return ""
}

func TestKeyComponentsWithNULAndOverLong(t *testing.T) {
	// Length prefixes keep "a\x00" + "b" and "a" + "\x00b" apart, and a
	// component is never a prefix of a longer one.
	k1, k2 := key(tConv, "a\x00", "b"), key(tConv, "a", "\x00b")
	if bytes.Equal(k1, k2) {
		t.Fatalf("NUL components collide: %q", k1)
	}
	if bytes.HasPrefix(key(tAgent, "ab"), key(tAgent, "a")) {
		t.Fatalf("agent \"a\" is a key prefix of agent \"ab\"")
	}
	for _, parts := range [][2]string{{"a\x00", "b"}, {"\x00", "\x00\x00"}, {"", ""}} {
		k := key(tConv, parts[0], parts[1])
		p0, rest, ok := cutStr(k[1:])
		p1, tail, ok2 := cutStr(rest)
		if !ok || !ok2 || p0 != parts[0] || p1 != parts[1] || len(tail) != 0 {
			t.Fatalf("%q does not split back into %q", k, parts)
		}
	}
	long := strings.Repeat("x", maxKeyPart+1)
	kl := key(tAgent, long)
	p, _, ok := cutStr(kl[1:])
	if !ok || !strings.HasPrefix(p, "sha256:") || len(kl) > 100 {
		t.Fatalf("over-long component not replaced by its digest: %d bytes", len(kl))
	}
	if bytes.Equal(kl, key(tAgent, long+"y")) {
		t.Fatalf("distinct over-long components collide")
	}
	exact := strings.Repeat("x", maxKeyPart)
	if p, _, ok := cutStr(key(tAgent, exact)[1:]); !ok || p != exact {
		t.Fatalf("a component of exactly %d bytes is kept", maxKeyPart)
	}
	// A real store keeps entities with such keys apart and reads them back.
	g := newTestGate(t, 1)
	a := g.register("a", 3, domain.Limits{})
	g.verify(a, "n1", "c\x00", 1, calc("1+1", 0))
	g.verify(a, "n2", "c", 1, calc("1+1", 0))
	g.verify(a, "n3", "c", 2, calc("1+1", 0))
	cn, err := g.store.Conversation(a, "c\x00")
	if err != nil || cn.LastStep != 1 {
		t.Fatalf("NUL conversation: %+v, %v", cn, err)
	}
	c, err := g.store.Conversation(a, "c")
	if err != nil || c.LastStep != 2 {
		t.Fatalf("plain conversation: %+v, %v", c, err)
	}
	g.assertLoadStateEqual()
}

// TestOpenActionsEvictedRoundTrip pins the open actions' own keys: past
// MaxOpenActions the oldest are evicted (domain.Apply), executions close
// actions in the middle, and LoadState still equals the folded state — in
// a store with activities (the action index) and one without (the keys
// come from the state and the Fold alone).
func TestOpenActionsEvictedRoundTrip(t *testing.T) {
	t.Run("activity", func(t *testing.T) { testOpenActionsEvicted(t, Options{}) })
	t.Run("no-activity", func(t *testing.T) { testOpenActionsEvicted(t, Options{NoActivity: true, NoSnapshots: true}) })
}

func testOpenActionsEvicted(t *testing.T, o Options) {
	g := newTestGateWith(t, 300, o)
	a := g.register("a", 3, domain.Limits{})
	var ids []string
	for i := 0; i < domain.MaxOpenActions+700; i++ {
		ev := g.verify(a, fmt.Sprint("v", i), fmt.Sprint("c", i/50), i%50+1, calc(fmt.Sprint(i, "+1"), 1000))
		ids = append(ids, ev.Decided.ActionID)
		if i%97 == 50 {
			// Close an action still open (recent), and sometimes one
			// that is about to be evicted.
			id := ids[len(ids)-10]
			if i%2 == 0 && len(ids) > domain.MaxOpenActions-20 {
				id = ids[len(ids)-domain.MaxOpenActions+3]
			}
			g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: a, TokenHash: testTokenHash,
				Request:   domain.RequestID{Source: "test", ID: fmt.Sprint("x", i)},
				Execution: &domain.LogExecution{ActionID: id, Success: true, CostUSD: 500}})
		}
		if i == domain.MaxOpenActions {
			g.assertLoadStateEqual()
		}
	}
	if n := len(g.st.Agents[a].OpenOrder); n != domain.MaxOpenActions {
		t.Fatalf("%d open actions, want the bound %d", n, domain.MaxOpenActions)
	}
	g.assertLoadStateEqual()
}

// checkpoint folds and projects a log checkpoint event (interval events)
// as the last event of its batch, as the worker appends it, and returns
// its seq.
func (g *testGate) checkpoint(interval int) uint64 {
	g.t.Helper()
	ev := &domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvLogCheckpointed,
		Checkpoint: &domain.LogCheckpoint{Seq: g.seq, Head: "h", Next: domain.CheckpointPolicy{Events: int64(interval)}}}
	g.seq = ev.Seq
	g.pending.Add(g.st, ev)
	g.flush()
	return ev.Seq
}

func (g *testGate) snapshotSeq(agent string, at uint64) uint64 {
	g.t.Helper()
	snap, err := g.store.SnapshotAt(agent, at)
	if err != nil {
		g.t.Fatalf("snapshot of %s at %d: %v", agent, at, err)
	}
	return snap.Seq
}

// An agent holding many entries is snapshotted farther apart
// (SnapshotEntriesPerInterval); a small one every SnapshotEveryCheckpoints
// intervals.
func TestLargeAgentsAreSnapshottedFartherApart(t *testing.T) {
	const interval = 10
	g := newTestGate(t, 1<<20)
	small := g.register("small", 3, domain.Limits{})
	large := g.register("large", 3, domain.Limits{})
	n := 0
	verify := func(agent string) {
		n++
		g.verify(agent, fmt.Sprint("v", n), fmt.Sprint("c", n), 1, calc(fmt.Sprint(n, "+1"), 0))
	}
	// 30 intervals' worth of entries: each approved action in a new
	// conversation holds a conversation and an open action.
	for range 30 * SnapshotEntriesPerInterval / 2 {
		verify(large)
	}
	verify(small)
	c1 := g.checkpoint(interval)
	if g.snapshotSeq(small, c1) != c1 || g.snapshotSeq(large, c1) != c1 {
		t.Fatalf("first checkpoint %d: both agents are due (registered long enough ago)", c1)
	}
	entries := len(g.st.Agents[large].Conversations) + len(g.st.Agents[large].OpenActions)
	if want := uint64(entries/SnapshotEntriesPerInterval) * interval; snapshotGap(g.st.Agents[large], interval) != want || want < 300 {
		t.Fatalf("large agent with %d entries: gap %d, want %d", entries, snapshotGap(g.st.Agents[large], interval), want)
	}
	if got := snapshotGap(g.st.Agents[small], interval); got != SnapshotEveryCheckpoints*interval {
		t.Fatalf("small agent gap %d, want %d", got, SnapshotEveryCheckpoints*interval)
	}
	// Both change; after 15 intervals only the small one is due.
	verify(large)
	for range 15 * interval {
		verify(small)
	}
	c2 := g.checkpoint(interval)
	if got := g.snapshotSeq(small, c2); got != c2 {
		t.Errorf("small agent at checkpoint %d: last snapshot %d, want %d", c2, got, c2)
	}
	if got := g.snapshotSeq(large, c2); got != c1 {
		t.Errorf("large agent at checkpoint %d: last snapshot %d, want still %d (its gap is %d events)", c2, got, c1, snapshotGap(g.st.Agents[large], interval))
	}
	// Past its own gap, the large agent is snapshotted again, as it
	// stands: the state time travel folds from.
	for uint64(g.seq)+1-c1 < snapshotGap(g.st.Agents[large], interval) {
		verify(small)
	}
	c3 := g.checkpoint(interval)
	if got := g.snapshotSeq(large, c3); got != c3 {
		t.Fatalf("large agent at checkpoint %d (%d events after its snapshot): last snapshot %d", c3, c3-c1, got)
	}
	snap, err := g.store.SnapshotAt(large, c3)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(snap.Agent.Conversations) + len(snap.Agent.OpenActions); got != entries+2 {
		t.Errorf("the snapshot holds %d entries, want %d", got, entries+2)
	}
}

// countKeys counts the live keys of table.
func countKeys(t *testing.T, s *Store, table byte) int {
	t.Helper()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{table}, UpperBound: []byte{table + 1}})
	if err != nil {
		t.Fatalf("reading store: %v", err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatalf("reading store: %v", err)
	}
	return n
}

// TestDeniedActionsIndexAndOpenNothing pins what a refused action leaves
// in the store: its activity, and neither an action index entry nor an
// open action (it can be neither executed nor resolved), while the store
// still loads the folded state; and that an action opened and executed in
// one batch leaves no open action either.
func TestDeniedActionsIndexAndOpenNothing(t *testing.T) {
	for _, batch := range []int{1, 16} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			g := newTestGate(t, batch)
			a := g.register("a", 3, domain.Limits{MaxRequestsPerHour: 4})
			var approved, denied []*domain.Event
			for i := 1; i <= 10; i++ {
				ev := g.verify(a, fmt.Sprint("v", i), "c", len(approved)+1, calc(fmt.Sprint(i, "+1"), 1000))
				if ev.Decided.Denied() {
					denied = append(denied, ev)
				} else {
					approved = append(approved, ev)
				}
			}
			if len(approved) != 4 || len(denied) != 6 || denied[0].Decided.Decision != domain.BudgetExceeded {
				t.Fatalf("%d approved, %d denied (first %s): want 4 and 6 budget denials", len(approved), len(denied), denied[0].Decided.Decision)
			}
			// A denied action cannot be logged; an approved one closes.
			if ev := g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: a, TokenHash: testTokenHash,
				Request:   domain.RequestID{Source: "test", ID: "xd"},
				Execution: &domain.LogExecution{ActionID: denied[0].Decided.ActionID, Success: true}}); ev.Executed != nil {
				t.Fatalf("the execution of a denied action was logged")
			}
			g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: a, TokenHash: testTokenHash,
				Request:   domain.RequestID{Source: "test", ID: "xa"},
				Execution: &domain.LogExecution{ActionID: approved[3].Decided.ActionID, Success: true, CostUSD: 700}})
			g.assertLoadStateEqual()
			if n := countKeys(t, g.store, tActionIdx); n != len(approved) {
				t.Errorf("%d action index entries, want one per approved action (%d)", n, len(approved))
			}
			if n := countKeys(t, g.store, tOpen); n != len(approved)-1 {
				t.Errorf("%d open actions stored, want %d", n, len(approved)-1)
			}
			if n := countKeys(t, g.store, tActivity); n != 10 {
				t.Errorf("%d activities, want 10", n)
			}
			page, err := g.store.Activity(a, g.now.Add(-time.Hour), g.now.Add(time.Hour), 0, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, act := range page.Activities {
				if act.ActivityID == approved[3].Decided.ActionID && (act.Execution == nil || act.Cost.USD != 700) {
					t.Errorf("executed activity %+v: execution not projected", act)
				}
			}
		})
	}
}

// TestStoreWithoutSnapshots pins Options.NoSnapshots: checkpoints write no
// snapshot (SnapshotAt finds none) while registrations are still indexed
// and the projections load the folded state; the choice is part of the
// format, so reopening with the other one rebuilds the store.
func TestStoreWithoutSnapshots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := OpenWith(dir, Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	g := &testGate{t: t, st: domain.NewState(), store: s, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), batch: 1 << 20}
	a := g.register("a", 3, domain.Limits{})
	reg := g.seq
	for i := 1; i <= 30; i++ {
		g.verify(a, fmt.Sprint("v", i), "c", i, calc(fmt.Sprint(i, "+1"), 0))
	}
	at := g.checkpoint(10)
	g.assertLoadStateEqual()
	if got, err := s.RegisteredAt(a); err != nil || got != reg {
		t.Fatalf("RegisteredAt %d %v, want %d", got, err, reg)
	}
	if snap, err := s.SnapshotAt(a, at); err != ErrNotFound {
		t.Fatalf("SnapshotAt in a store without snapshots: %+v %v, want ErrNotFound", snap, err)
	}
	for _, table := range []byte{tSnapshot, tLastSnap, tDirty} {
		if n := countKeys(t, s, table); n != 0 {
			t.Fatalf("%d keys of table %q in a store without snapshots", n, table)
		}
	}
	// With snapshots, the store is of another format: emptied, rebuilt.
	reopenRebuilt(t, s, dir, Options{})
}

// reopenRebuilt closes s and reopens the store in dir with o, which must
// be another format than s's: the store comes back empty (checkpoint
// zero), to be rebuilt from the log.
func reopenRebuilt(t *testing.T, s *Store, dir string, o Options) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ck, err := s.Checkpoint(); err != nil || ck.Seq != 0 {
		t.Fatalf("checkpoint after reopening with %+v: %+v %v, want zero (rebuild)", o, ck, err)
	}
}

// TestStoreWithoutActivity pins Options.NoActivity: no activity entry and
// no summary is written, while what a worker reads stays whole (the state
// loads equal to the folded one through executions, an approval and
// refusals; the request index answers; open actions close); the choice is
// part of the format.
func TestStoreWithoutActivity(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := OpenWith(dir, Options{NoActivity: true, NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{1, 5} {
		g := &testGate{t: t, st: domain.NewState(), store: s, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), batch: batch}
		if batch > 1 {
			// A second agent set on the same store: state carries over.
			g.st, err = s.LoadState()
			if err != nil {
				t.Fatal(err)
			}
			ck, _ := s.Checkpoint()
			g.seq = ck.Seq
		}
		a := g.register(fmt.Sprint("a", batch), 3, domain.Limits{MaxRequestsPerHour: 6})
		sup := g.register(fmt.Sprint("s", batch), 1, domain.Limits{})
		var approved []*domain.Event
		for i := 1; i <= 8; i++ {
			ev := g.verify(a, fmt.Sprint(batch, "v", i), "c", len(approved)+1, calc(fmt.Sprint(i, "+1"), 1000))
			if !ev.Decided.Denied() {
				approved = append(approved, ev)
			}
			if i%3 == 0 && !ev.Decided.Denied() {
				g.do(&domain.Command{Type: domain.CmdLogExecution, AgentID: a, TokenHash: testTokenHash,
					Request:   domain.RequestID{Source: "test", ID: fmt.Sprint(batch, "x", i)},
					Execution: &domain.LogExecution{ActionID: ev.Decided.ActionID, Success: true, CostUSD: 500}})
			}
		}
		p := g.verify(sup, fmt.Sprint(batch, "p"), "c", 1, domain.Action{Type: "send_email", Target: "bob", EstimatedCost: domain.MicrosPerUSD})
		if p.Decided.Decision != domain.Pending {
			t.Fatalf("supervised send_email: %s", p.Decided.Decision)
		}
		g.do(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1",
			Request: domain.RequestID{Source: "test", ID: fmt.Sprint(batch, "r")},
			Resolve: &domain.ResolveApproval{ApprovalID: p.Decided.ActionID, Approve: true}})
		g.assertLoadStateEqual()
		if len(approved) != 6 {
			t.Fatalf("%d approved, want 6 (then the hourly limit)", len(approved))
		}
		if seq, err := s.RequestSeq(domain.RequestID{Source: "test", ID: fmt.Sprint(batch, "v", 2)}); err != nil || seq != approved[1].Seq {
			t.Fatalf("request index: %d %v, want %d", seq, err, approved[1].Seq)
		}
	}
	for _, table := range []byte{tActivity, tSummary} {
		if n := countKeys(t, s, table); n != 0 {
			t.Fatalf("%d keys of table %q in a store without activity", n, table)
		}
	}
	// Per agent set: 6 approved actions, of which 2 executed, and the
	// approved pending one: 5 open. No action index: an open action's key
	// comes from the state (domain.OpenAction.Seq, and Fold for the ones
	// a batch closes).
	if n := countKeys(t, s, tOpen); n != 10 {
		t.Errorf("%d open actions stored, want 10", n)
	}
	if n := countKeys(t, s, tActionIdx); n != 0 {
		t.Errorf("%d action index entries, want none", n)
	}
	reopenRebuilt(t, s, dir, Options{NoSnapshots: true})
}

// TestIssue11_8_PagesByBytes: with a byte budget that one item fills, the
// activity and the approvals (the admin's listing and a principal's) are
// read one item a page, each once, by following the next cursor; a
// budget smaller than one item still returns that item.
func TestIssue11_8_PagesByBytes(t *testing.T) {
	g := newTestGate(t, 1)
	sup := g.register("s", 1, domain.Limits{})
	const n = 4
	for step := 1; step <= n; step++ {
		p := g.verify(sup, "p"+strconv.Itoa(step), "c", step, domain.Action{Type: "api_call", Target: "crm" + strconv.Itoa(step)})
		if p.Decided.Decision != domain.Pending {
			t.Fatalf("decision %s, want PENDING", p.Decided.Decision)
		}
	}
	from, to := g.now.Add(-time.Hour), g.now.Add(time.Hour)
	seqs, after := map[uint64]bool{}, uint64(0)
	for pages := 1; ; pages++ {
		page, err := g.store.Activity(sup, from, to, after, 1000, 1)
		if err != nil || len(page.Activities) != 1 {
			t.Fatalf("activity page %d: %d items, %v", pages, len(page.Activities), err)
		}
		seqs[page.Activities[0].Seq] = true
		if page.NextAfterSeq == 0 {
			if pages != n || len(seqs) != n {
				t.Fatalf("%d activities in %d pages, want %d", len(seqs), pages, n)
			}
			break
		}
		after = page.NextAfterSeq
	}
	for _, principal := range []string{domain.AdminPrincipal, "org_1"} {
		ids, next := map[string]bool{}, ""
		for pages := 1; ; pages++ {
			list, nx, err := g.store.Approvals(principal, domain.ApprovalPending, next, 1000, 1)
			if err != nil || len(list) != 1 || ids[list[0].ID] {
				t.Fatalf("%s approvals page %d: %+v %v", principal, pages, list, err)
			}
			ids[list[0].ID] = true
			if nx == "" {
				if len(ids) != n {
					t.Fatalf("%s: %d approvals, want %d", principal, len(ids), n)
				}
				break
			}
			next = nx
		}
		all, nx, err := g.store.Approvals(principal, "", "", 1000, 0)
		if err != nil || len(all) != n || nx != "" {
			t.Fatalf("%s: one page of the default budget: %d, next %q, %v", principal, len(all), nx, err)
		}
	}
}

// Issue 17 item 11: a PENDING action counts as pending until its approval
// is resolved, then as approved or denied, in the stored daily summaries
// (a whole-day period) as in the scanned ones (a part of a day).
func TestResolvedApprovalLeavesPending(t *testing.T) {
	g := newTestGate(t, 1)
	sup := g.register("s", 1, domain.Limits{MaxDailyCost: 10 * domain.MicrosPerUSD})
	resolve := func(conv string, approve bool) {
		p := g.verify(sup, "p"+conv, conv, 1, domain.Action{Type: "api_call", Target: "crm", EstimatedCost: domain.MicrosPerUSD})
		if p.Decided.Decision != domain.Pending {
			t.Fatalf("decision %s, want PENDING", p.Decided.Decision)
		}
		g.do(&domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1",
			Request: domain.RequestID{Source: "test", ID: "r" + conv},
			Resolve: &domain.ResolveApproval{ApprovalID: p.Decided.ActionID, Approve: approve, Reason: "r"}})
	}
	resolve("c1", true)
	resolve("c2", false)
	g.verify(sup, "pc3", "c3", 1, domain.Action{Type: "api_call", Target: "crm", EstimatedCost: domain.MicrosPerUSD})
	day := g.now.UTC().Truncate(24 * time.Hour)
	for _, period := range [][2]time.Time{{day, day.Add(24 * time.Hour)}, {g.now.Add(-time.Hour), g.now.Add(time.Hour)}} {
		page, err := g.store.Activity(sup, period[0], period[1], 0, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s := page.Summary; s.TotalActions != 3 || s.Pending != 1 || s.Approved != 1 || s.Denied != 1 {
			t.Errorf("%v: summary %+v, want 3 actions: 1 pending, 1 approved, 1 denied", period, s)
		}
	}
	g.assertLoadStateEqual()
}
