package policy

import (
	"testing"
	"time"
)

// mustSet decodes policies into a set, each at version 1.
func mustSet(t testing.TB, docs ...string) *Set {
	t.Helper()
	s := &Set{}
	for _, d := range docs {
		p, pr := Decode([]byte(d))
		if pr != nil {
			t.Fatalf("%s: %v", d, pr)
		}
		p.Version = s.NextVersion(p.ID)
		s.Put(*p)
	}
	return s
}

func in(amount int64) Input {
	return Input{Now: t0, AgentID: "a1", BusinessID: "shop", Categories: []string{"food"}, AmountCents: amount}
}

// TestEvaluate_SpendingBoundaries: a limit is reached, not exceeded, at
// exactly its amount; one cent more decides by on_exceed.
func TestEvaluate_SpendingBoundaries(t *testing.T) {
	var l Ledger
	l.Reserve("a1", "shop", t0.Add(-time.Hour), 600)
	l.Reserve("a2", "shop", t0.Add(-time.Hour), 5000) // another agent: not in scope
	cases := []struct {
		policy string
		amount int64
		want   Verdict
		limit  string
	}{
		{`"per_transaction_cents":500`, 500, Pass, ""},
		{`"per_transaction_cents":500`, 501, Block, "per_transaction 500 cents"},
		{`"daily_cents":1000`, 400, Pass, ""},
		{`"daily_cents":1000`, 401, Block, "daily 1000 cents"},
		{`"weekly_cents":700`, 101, Block, "weekly 700 cents"},
		{`"monthly_cents":700,"on_exceed":"confirm"`, 101, Confirm, "monthly 700 cents"},
		{`"daily_cents":1000,"on_exceed":"notify"`, 401, Pass, ""},
		{`"per_transaction_cents":50,"daily_cents":100`, 60, Block, "per_transaction 50 cents"},
	}
	for _, c := range cases {
		s := mustSet(t, `{"id":"p","type":"spending","scope":{"agents":["a1"]},"spending":{`+c.policy+`}}`)
		out := Evaluate(s, &l, in(c.amount))
		if out.Verdict != c.want || out.Limit != c.limit {
			t.Errorf("%s amount %d: %s %q (%s), want %s %q", c.policy, c.amount, out.Verdict, out.Limit, out.Message, c.want, c.limit)
		}
		if c.want == Block && (out.Code != CodeSpendingLimit || out.PolicyID != "p" || len(out.Notices) != 1 || out.Notices[0].Kind != NoticeBlocked) {
			t.Errorf("%s: block %+v", c.policy, out)
		}
	}
}

// TestEvaluate_NotifyOnExceed: the execute proceeds, with a finding and a
// limit_exceeded notice.
func TestEvaluate_NotifyOnExceed(t *testing.T) {
	s := mustSet(t, `{"id":"p","type":"spending","scope":{},"spending":{"daily_cents":100,"on_exceed":"notify"}}`)
	out := Evaluate(s, &Ledger{}, in(101))
	if out.Verdict != Pass || len(out.Findings) != 1 || out.Findings[0].Verdict != Notify ||
		len(out.Notices) != 1 || out.Notices[0].Kind != NoticeLimitExceeded {
		t.Fatalf("%+v", out)
	}
}

// TestEvaluate_GroupSharesOneLimit: agents of a group spend one limit;
// an agent outside it is not held by it.
func TestEvaluate_GroupSharesOneLimit(t *testing.T) {
	s := mustSet(t, `{"id":"g","type":"spending","scope":{"agents":["a1","a2"]},"spending":{"daily_cents":1000}}`)
	var l Ledger
	l.Reserve("a2", "other", t0.Add(-time.Minute), 900)
	l.Reserve("a3", "shop", t0.Add(-time.Minute), 900)
	if out := Evaluate(s, &l, in(101)); out.Verdict != Block {
		t.Fatalf("a1 after a2's 900: %+v", out)
	}
	if out := Evaluate(s, &l, in(100)); out.Verdict != Pass {
		t.Fatalf("a1 at the limit: %+v", out)
	}
	x := in(5000)
	x.AgentID = "a3"
	if out := Evaluate(s, &l, x); out.Verdict != Pass {
		t.Fatalf("a3 outside the group: %+v", out)
	}
}

// TestEvaluate_Limit80 notices the execute that crosses 80 % of a rolling
// limit, once, and not one that stays below or starts above.
func TestEvaluate_Limit80(t *testing.T) {
	s := mustSet(t, `{"id":"p","type":"spending","scope":{},"spending":{"daily_cents":1000,"weekly_cents":10000}}`)
	var l Ledger
	l.Reserve("a1", "shop", t0.Add(-time.Hour), 700)
	for _, c := range []struct {
		amount int64
		n80    int
	}{{99, 0}, {100, 1}, {300, 1}, {301, 0}} {
		out := Evaluate(s, &l, in(c.amount))
		n := 0
		for _, no := range out.Notices {
			if no.Kind == NoticeLimit80 {
				n++
			}
		}
		if n != c.n80 {
			t.Errorf("700 + %d: %d limit_80 notices, want %d (%+v)", c.amount, n, c.n80, out.Notices)
		}
	}
	l.Reserve("a1", "shop", t0.Add(-time.Hour), 100) // 800 spent: already at 80 %
	if out := Evaluate(s, &l, in(10)); len(out.Notices) != 0 {
		t.Errorf("above 80 %% already: %+v", out.Notices)
	}
}

// TestEvaluate_NoPolicies passes with nothing recorded.
func TestEvaluate_NoPolicies(t *testing.T) {
	out := Evaluate(nil, nil, in(1<<40))
	if out.Verdict != Pass || out.Findings != nil || out.Notices != nil {
		t.Fatalf("%+v", out)
	}
}

// TestEvaluate_Concurrent: the zone and period caches are shared by every
// goroutine that evaluates (the worker's Decide, the read side's
// analytics); run under -race, evaluations in parallel agree with one
// alone.
func TestEvaluate_Concurrent(t *testing.T) {
	s, l := benchSet(t), benchLedger()
	x := Input{Now: time.Date(2026, 3, 2, 23, 30, 0, 0, time.UTC), AgentID: "a1", BusinessID: "shop", Categories: []string{"food"}, AmountCents: 2500}
	want := Evaluate(s, l, x)
	done := make(chan Outcome, 8)
	for i := range 8 {
		go func() {
			y := x
			y.Now = x.Now.Add(time.Duration(i) * 200 * Day) // other periods of the zones
			Evaluate(s, l, y)
			done <- Evaluate(s, l, x)
		}()
	}
	for range 8 {
		if got := <-done; got.Verdict != want.Verdict || !got.ReleaseAt.Equal(want.ReleaseAt) {
			t.Fatalf("%+v, want %+v", got, want)
		}
	}
}
