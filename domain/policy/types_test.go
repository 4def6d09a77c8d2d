package policy

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEvaluate_Category: an allowlist needs one of its categories (a
// business with none is refused), a blocklist refuses any of its own.
func TestEvaluate_Category(t *testing.T) {
	allow := mustSet(t, `{"id":"c","type":"category","scope":{},"category":{"mode":"allow","categories":["food","travel"]}}`)
	block := mustSet(t, `{"id":"c","type":"category","scope":{},"category":{"mode":"block","categories":["gambling"]}}`)
	for _, c := range []struct {
		set  *Set
		cats []string
		want Verdict
	}{
		{allow, []string{"food"}, Pass},
		{allow, []string{"casino", "travel"}, Pass},
		{allow, []string{"casino"}, Block},
		{allow, nil, Block},
		{block, []string{"food"}, Pass},
		{block, nil, Pass},
		{block, []string{"food", "gambling"}, Block},
	} {
		x := in(10)
		x.Categories = c.cats
		out := Evaluate(c.set, nil, x)
		if out.Verdict != c.want {
			t.Errorf("%s %v: %s (%s)", c.set.Policies[0].Category.Mode, c.cats, out.Verdict, out.Message)
		}
		if c.want == Block && (out.Code != CodeCategory || !strings.HasPrefix(out.Limit, c.set.Policies[0].Category.Mode+" ")) {
			t.Errorf("%v: %+v", c.cats, out)
		}
	}
}

// TestEvaluate_Confirmation: always, strictly above an amount, the first
// time with a business.
func TestEvaluate_Confirmation(t *testing.T) {
	for _, c := range []struct {
		rule      string
		amount    int64
		firstTime bool
		want      Verdict
		limit     string
	}{
		{`"always":true`, 0, false, Confirm, "always"},
		{`"above_cents":500`, 500, false, Pass, ""},
		{`"above_cents":500`, 501, false, Confirm, "above 500 cents"},
		{`"first_time_business":true`, 1, false, Pass, ""},
		{`"first_time_business":true`, 1, true, Confirm, "first time with a business"},
	} {
		s := mustSet(t, `{"id":"k","type":"confirmation","scope":{},"confirmation":{`+c.rule+`}}`)
		x := in(c.amount)
		x.FirstTime = c.firstTime
		out := Evaluate(s, nil, x)
		if out.Verdict != c.want || out.Limit != c.limit || out.Code != "" {
			t.Errorf("%s %d %v: %+v", c.rule, c.amount, c.firstTime, out)
		}
		if c.want == Confirm && (len(out.Notices) != 1 || out.Notices[0].Kind != NoticeConfirmNeeded) {
			t.Errorf("%s: notices %+v", c.rule, out.Notices)
		}
	}
}

func window(zone, windows, outside string) string {
	return `{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"` + zone + `","windows":` + windows + `,"outside":"` + outside + `"}}`
}

// TestEvaluate_TimeWindowBoundaries: a window holds its start, not its end.
func TestEvaluate_TimeWindowBoundaries(t *testing.T) {
	s := mustSet(t, window("Europe/Paris", `[{"days":["mon","tue","wed","thu","fri"],"start":"09:00","end":"17:30"}]`, "block"))
	paris, _ := zone("Europe/Paris")
	for _, c := range []struct {
		local string
		want  Verdict
	}{
		{"2026-03-02 08:59:59", Block}, // Monday
		{"2026-03-02 09:00:00", Pass},
		{"2026-03-02 17:29:59", Pass},
		{"2026-03-02 17:30:00", Block},
		{"2026-03-07 12:00:00", Block}, // Saturday
	} {
		now, err := time.ParseInLocation(time.DateTime, c.local, paris)
		if err != nil {
			t.Fatal(err)
		}
		x := in(1)
		x.Now = now
		out := Evaluate(s, nil, x)
		if out.Verdict != c.want {
			t.Errorf("%s: %s", c.local, out.Verdict)
		}
		if c.want == Block && (out.Code != CodeTimeWindow || out.Limit != "mon,tue,wed,thu,fri 09:00-17:30 Europe/Paris") {
			t.Errorf("%s: %+v", c.local, out)
		}
	}
}

// TestEvaluate_QueueReleaseAt pins ReleaseAt, across weekends and the
// daylight-saving changes of Paris and New York.
func TestEvaluate_QueueReleaseAt(t *testing.T) {
	for _, c := range []struct {
		name, zone, windows string
		now, want           string // RFC 3339
	}{
		{"before opening", "Europe/Paris", `[{"days":["mon"],"start":"09:00","end":"17:30"}]`,
			"2026-03-02T07:00:00Z", "2026-03-02T08:00:00Z"},
		{"after closing: next week", "Europe/Paris", `[{"days":["mon"],"start":"09:00","end":"17:30"}]`,
			"2026-03-02T16:30:00Z", "2026-03-09T08:00:00Z"},
		{"friday evening to monday", "UTC", `[{"days":["mon","tue","wed","thu","fri"],"start":"09:00","end":"17:00"}]`,
			"2026-03-06T17:00:00Z", "2026-03-09T09:00:00Z"},
		{"sub-second now", "UTC", `[{"days":["mon"],"start":"09:00","end":"17:00"}]`,
			"2026-03-02T08:59:59.5Z", "2026-03-02T09:00:00Z"},
		// Paris springs forward on 2026-03-29 at 02:00 CET (01:00 UTC) to 03:00 CEST.
		{"spring forward: a start in the gap opens at the jump", "Europe/Paris", `[{"days":["sun"],"start":"02:30","end":"04:00"}]`,
			"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"},
		{"spring forward: a window inside the gap waits a week", "Europe/Paris", `[{"days":["sun"],"start":"02:00","end":"02:30"}]`,
			"2026-03-29T00:00:00Z", "2026-04-05T00:00:00Z"},
		{"spring forward: the offset changes across the night", "Europe/Paris", `[{"days":["mon"],"start":"09:00","end":"10:00"}]`,
			"2026-03-28T12:00:00Z", "2026-03-30T07:00:00Z"},
		// Paris falls back on 2026-10-25 at 03:00 CEST (01:00 UTC) to 02:00 CET: 02:00-03:00 happens twice.
		{"fall back: the first of two 02:30s", "Europe/Paris", `[{"days":["sun"],"start":"02:30","end":"05:00"}]`,
			"2026-10-24T22:00:00Z", "2026-10-25T00:30:00Z"},
		{"fall back: between the two 02:30s the window is open", "Europe/Paris", `[{"days":["sun"],"start":"02:30","end":"02:45"}]`,
			"2026-10-25T00:50:00Z", "2026-10-25T01:30:00Z"},
		// New York springs forward on 2026-03-08 at 02:00 EST (07:00 UTC).
		{"new york spring forward", "America/New_York", `[{"days":["sun"],"start":"02:15","end":"03:30"}]`,
			"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"},
		{"half-hour zone", "Asia/Kolkata", `[{"days":["tue"],"start":"00:00","end":"01:00"}]`,
			"2026-03-02T12:00:00Z", "2026-03-02T18:30:00Z"},
	} {
		s := mustSet(t, window(c.zone, c.windows, "queue"))
		now, _ := time.Parse(time.RFC3339Nano, c.now)
		want, _ := time.Parse(time.RFC3339, c.want)
		x := in(1)
		x.Now = now
		out := Evaluate(s, nil, x)
		if out.Verdict != Queue || !out.ReleaseAt.Equal(want) {
			t.Errorf("%s: %s release %s, want %s (%s)", c.name, out.Verdict, out.ReleaseAt.Format(time.RFC3339), c.want, out.Message)
			continue
		}
		if out.ReleaseAt.Location() != time.UTC || len(out.Notices) != 1 || out.Notices[0].Kind != NoticeQueued {
			t.Errorf("%s: %+v", c.name, out)
		}
		if x.Now = out.ReleaseAt; Evaluate(s, nil, x).Verdict != Pass {
			t.Errorf("%s: not open at the release time", c.name)
		}
		if x.Now = out.ReleaseAt.Add(-time.Second); !x.Now.Before(now) && Evaluate(s, nil, x).Verdict == Pass {
			t.Errorf("%s: open a second before the release time", c.name)
		}
	}
}

// TestEvaluate_QueueBruteForce checks ReleaseAt against a scan of every
// minute (the wall clock of these zones changes state only at minute
// boundaries) for windows and times drawn from a fixed seed, across a
// year of zone transitions.
func TestEvaluate_QueueBruteForce(t *testing.T) {
	zones := []string{"Europe/Paris", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata", "UTC"}
	seed := uint64(0x9e3779b97f4a7c15)
	next := func(n int) int { // splitmix64
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return int((z ^ z>>31) % uint64(n))
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 400; i++ {
		day := dayNames[next(7)]
		start := next(24*60 - 1)
		end := start + 1 + next(min(180, 24*60-start))
		clock := func(m int) string {
			return string([]byte{byte('0' + m/600), byte('0' + m/60%10), ':', byte('0' + m%60/10), byte('0' + m%10)})
		}
		z := zones[next(len(zones))]
		s := mustSet(t, window(z, `[{"days":["`+day+`"],"start":"`+clock(start)+`","end":"`+clock(end)+`"}]`, "queue"))
		now := base.Add(time.Duration(next(365*24*60)) * time.Minute).Add(time.Duration(next(60)) * time.Second)
		x := in(1)
		x.Now = now
		out := Evaluate(s, nil, x)
		loc0, _ := zone(z)
		if out.Verdict == Pass != openByIn(s.Policies[0].TimeWindow, loc0, now) {
			t.Fatalf("%s at %s: %s, but the oracle says open=%v", z, now, out.Verdict, !(out.Verdict == Pass))
		}
		if out.Verdict == Pass {
			continue
		}
		var want time.Time
		loc, _ := zone(z)
		for m := now.Truncate(time.Minute).Add(time.Minute); m.Before(now.Add(9 * Day)); m = m.Add(time.Minute) {
			if openByIn(s.Policies[0].TimeWindow, loc, m) {
				want = m
				break
			}
		}
		if want.IsZero() {
			if out.Verdict != Block {
				t.Errorf("%s %s %s-%s at %s: %s, never open", z, day, clock(start), clock(end), now, out.Verdict)
			}
			continue
		}
		if out.Verdict != Queue || !out.ReleaseAt.Equal(want) {
			t.Errorf("%s %s %s-%s at %s: %s %s, want %s", z, day, clock(start), clock(end), now, out.Verdict, out.ReleaseAt, want)
		}
	}
}

// openByIn is the oracle of the brute-force test: the wall clock read by
// the standard library's time.In.
func openByIn(w *TimeWindow, loc *time.Location, t time.Time) bool {
	l := t.In(loc)
	mins := l.Hour()*60 + l.Minute()
	for _, win := range w.Windows {
		if slices.Contains(win.Days, dayNames[l.Weekday()]) && mins >= parseClock(win.Start) && mins < parseClock(win.End) {
			return true
		}
	}
	return false
}

// TestEvaluate_QueueJoint: two queueing windows release when both are
// open; windows that never meet block.
func TestEvaluate_QueueJoint(t *testing.T) {
	s := mustSet(t, window("UTC", `[{"days":["mon"],"start":"09:00","end":"12:00"}]`, "queue"),
		strings.Replace(window("Europe/Paris", `[{"days":["mon"],"start":"11:30","end":"18:00"}]`, "queue"), `"id":"w"`, `"id":"w2"`, 1))
	x := in(1)
	x.Now = time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	out := Evaluate(s, nil, x)
	if want := time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC); out.Verdict != Queue || !out.ReleaseAt.Equal(want) {
		t.Fatalf("%s %s, want %s", out.Verdict, out.ReleaseAt, want)
	}
	s = mustSet(t, window("UTC", `[{"days":["mon"],"start":"09:00","end":"10:00"}]`, "queue"),
		strings.Replace(window("UTC", `[{"days":["tue"],"start":"09:00","end":"10:00"}]`, "queue"), `"id":"w"`, `"id":"w2"`, 1))
	if out := Evaluate(s, nil, x); out.Verdict != Block || out.Code != CodeTimeWindow || !out.ReleaseAt.IsZero() {
		t.Fatalf("disjoint windows: %+v", out)
	}
}

// TestEvaluate_Precedence: block > confirm > queue > pass; among equals
// the first policy by id decides; every non-pass verdict is a finding.
func TestEvaluate_Precedence(t *testing.T) {
	blockCat := `{"id":"a-cat","type":"category","scope":{},"category":{"mode":"block","categories":["food"]}}`
	confirm := `{"id":"b-conf","type":"confirmation","scope":{},"confirmation":{"always":true}}`
	queue := `{"id":"c-win","type":"time_window","scope":{},"time_window":{"time_zone":"UTC","windows":[{"days":["sun"],"start":"00:00","end":"01:00"}],"outside":"queue"}}`
	confirm2 := `{"id":"d-conf","type":"confirmation","scope":{},"confirmation":{"above_cents":1}}`
	for _, c := range []struct {
		docs   []string
		want   Verdict
		policy string
	}{
		{[]string{blockCat, confirm, queue}, Block, "a-cat"},
		{[]string{confirm, queue}, Confirm, "b-conf"},
		{[]string{queue, confirm2, confirm}, Confirm, "b-conf"},
		{[]string{queue}, Queue, "c-win"},
	} {
		out := Evaluate(mustSet(t, c.docs...), nil, in(10))
		if out.Verdict != c.want || out.PolicyID != c.policy || len(out.Findings) != len(c.docs) {
			t.Errorf("%d policies: %s by %s with %d findings, want %s by %s", len(c.docs), out.Verdict, out.PolicyID, len(out.Findings), c.want, c.policy)
		}
		if out.Notices[0].PolicyID != c.policy {
			t.Errorf("first notice %+v", out.Notices[0])
		}
	}
}

// TestEvaluate_Shadow: a shadow policy is recorded ("would have
// blocked") and changes neither the verdict nor the notices; a shadow
// override replaces nothing.
func TestEvaluate_Shadow(t *testing.T) {
	s := mustSet(t,
		`{"id":"s","type":"spending","scope":{},"shadow":true,"spending":{"per_transaction_cents":5}}`,
		`{"id":"t","type":"spending","scope":{"business_id":"shop"},"shadow":true,"override":true,"spending":{"per_transaction_cents":1000}}`,
		`{"id":"u","type":"spending","scope":{},"spending":{"per_transaction_cents":100,"daily_cents":110}}`)
	out := Evaluate(s, nil, in(50))
	if out.Verdict != Pass || len(out.Findings) != 1 || !out.Findings[0].Shadow || out.Findings[0].Verdict != Block ||
		!strings.HasPrefix(out.Findings[0].Message, "would have blocked: ") || len(out.Notices) != 0 {
		t.Fatalf("%+v", out)
	}
	// the shadow override did not lift u's cap of 100
	if out := Evaluate(s, nil, in(101)); out.Verdict != Block || out.PolicyID != "u" {
		t.Fatalf("%+v", out)
	}
	// a shadow limit reached is no limit_80 notice; u's is
	out = Evaluate(s, nil, in(90))
	if len(out.Notices) != 1 || out.Notices[0].PolicyID != "u" || out.Notices[0].Kind != NoticeLimit80 {
		t.Fatalf("%+v", out.Notices)
	}
}

// TestEvaluate_Overrides: an override at a business replaces the global
// policies of its type there (raising or lowering), stacks with other
// overrides, and leaves other businesses and types alone; a plain
// business-scoped policy stacks with the global one.
func TestEvaluate_Overrides(t *testing.T) {
	global := `{"id":"global","type":"spending","scope":{},"spending":{"per_transaction_cents":1000,"daily_cents":2500}}`
	raise := `{"id":"raise","type":"spending","scope":{"business_id":"trusted"},"override":true,"spending":{"per_transaction_cents":5000}}`
	lower := `{"id":"lower","type":"spending","scope":{"business_id":"risky"},"override":true,"spending":{"per_transaction_cents":100}}`
	plain := `{"id":"plain","type":"spending","scope":{"business_id":"shop"},"spending":{"per_transaction_cents":300}}`
	agentOnly := `{"id":"raise-a2","type":"spending","scope":{"agents":["a2"],"business_id":"shop"},"override":true,"spending":{"per_transaction_cents":9000}}`
	cat := `{"id":"cat","type":"category","scope":{},"category":{"mode":"block","categories":["food"]}}`
	s := mustSet(t, global, raise, lower, plain, agentOnly, cat)
	var l Ledger
	l.Reserve("a1", "trusted", t0.Add(-time.Hour), 1900)
	for _, c := range []struct {
		agent, business string
		amount          int64
		cats            []string
		want            Verdict
		policy          string
	}{
		{"a1", "trusted", 3000, nil, Pass, ""},               // raised; and global's daily is not checked there
		{"a1", "trusted", 5001, nil, Block, "raise"},         // the override's own cap
		{"a1", "other", 700, nil, Block, "global"},           // spend at trusted counts in the global daily total
		{"a1", "risky", 101, nil, Block, "lower"},            // lowered
		{"a1", "risky", 100, []string{"food"}, Block, "cat"}, // other types are not overridden
		{"a1", "shop", 301, nil, Block, "plain"},             // plain business policy stacks: the tighter wins
		{"a2", "shop", 5000, nil, Pass, ""},                  // an override for a2 at shop replaces global and plain
		{"a1", "shop", 100, nil, Pass, ""},
	} {
		x := in(c.amount)
		x.AgentID, x.BusinessID, x.Categories = c.agent, c.business, c.cats
		out := Evaluate(s, &l, x)
		if out.Verdict != c.want || out.PolicyID != c.policy {
			t.Errorf("%s at %s %d: %s by %q (%s), want %s by %q", c.agent, c.business, c.amount, out.Verdict, out.PolicyID, out.Message, c.want, c.policy)
		}
	}
}

// TestEvaluate_Deterministic: the same input gives the same outcome, and
// Evaluate reads its arguments only (the set and ledger are unchanged).
func TestEvaluate_Deterministic(t *testing.T) {
	s, l := benchSet(t), benchLedger()
	before, lb := s.Clone(), l.Clone()
	x := in(250)
	a, b := Evaluate(s, l, x), Evaluate(s, l, x)
	if a.Verdict != b.Verdict || !slices.Equal(a.Findings, b.Findings) || !slices.Equal(a.Notices, b.Notices) {
		t.Fatal("two outcomes")
	}
	if !slices.EqualFunc(s.Policies, before.Policies, func(p, q Policy) bool { return p.ID == q.ID && p.Version == q.Version }) ||
		l.Totals(t0, nil, "") != lb.Totals(t0, nil, "") {
		t.Fatal("Evaluate changed its arguments")
	}
}
