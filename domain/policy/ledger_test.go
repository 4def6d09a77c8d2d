package policy

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 30, 0, time.UTC) // a Monday

// TestLedger_RollingBoundaries pins the precision: a spend counts from its
// time on, until between the window and the window plus one bucket after.
func TestLedger_RollingBoundaries(t *testing.T) {
	var l Ledger
	l.Reserve("a", "b", t0, 100) // minute bucket 10:00:00, hour bucket 10:00
	cases := []struct {
		at               time.Time
		day, week, month int64
	}{
		{t0, 100, 100, 100},
		{t0.Add(-time.Second), 100, 100, 100}, // the bucket started before: conservative
		{t0.Add(Day - 31*time.Second), 100, 100, 100},
		{t0.Add(Day), 100, 100, 100},                  // 10:00:30 next day: bucket 10:00:00-10:01:00 overlaps (10:00:30, ...]
		{t0.Add(Day + 29*time.Second), 100, 100, 100}, // 10:00:59
		{t0.Add(Day + 30*time.Second), 0, 100, 100},   // 10:01:00: the bucket ends at the window's start
		{t0.Add(Week + 59*time.Minute + 29*time.Second), 0, 100, 100},
		{t0.Add(Week + 59*time.Minute + 30*time.Second), 0, 0, 100},
		{t0.Add(Month + 59*time.Minute + 29*time.Second), 0, 0, 100},
		{t0.Add(Month + 59*time.Minute + 30*time.Second), 0, 0, 0},
	}
	for _, c := range cases {
		got := l.Totals(c.at, nil, "")
		if got != (Totals{c.day, c.week, c.month}) {
			t.Errorf("at %s: %+v, want day %d week %d month %d", c.at, got, c.day, c.week, c.month)
		}
	}
}

// TestLedger_NeverUnderCounts checks, against an exact list of spends,
// that every total is at least the exact rolling sum and over it only by
// spends of the bucket before the window.
func TestLedger_NeverUnderCounts(t *testing.T) {
	var l Ledger
	type spend struct {
		at    time.Time
		cents int64
	}
	var all []spend
	at := t0
	for i := 0; i < 3000; i++ {
		at = at.Add(time.Duration(i*7919%3600+1) * time.Second)
		c := int64(i%97 + 1)
		l.Reserve("a", "b", at, c)
		all = append(all, spend{at, c})
		if i%50 != 0 {
			continue
		}
		for _, w := range []struct {
			d, width time.Duration
			get      func(Totals) int64
		}{{Day, time.Minute, func(t Totals) int64 { return t.Day }}, {Week, time.Hour, func(t Totals) int64 { return t.Week }}, {Month, time.Hour, func(t Totals) int64 { return t.Month }}} {
			var exact, loose int64
			for _, s := range all {
				if s.at.After(at.Add(-w.d)) {
					exact += s.cents
				}
				if s.at.After(at.Add(-w.d - w.width)) {
					loose += s.cents
				}
			}
			got := w.get(l.Totals(at, nil, ""))
			if got < exact || got > loose {
				t.Fatalf("step %d window %s: total %d, exact %d, bound %d", i, w.d, got, exact, loose)
			}
		}
	}
	a := l.Accounts[0]
	if len(a.Minutes) > 1441 || len(a.Hours) > 721 {
		t.Fatalf("buckets kept: %d minutes, %d hours", len(a.Minutes), len(a.Hours))
	}
}

// TestLedger_Scopes sums a group's accounts and a business's.
func TestLedger_Scopes(t *testing.T) {
	var l Ledger
	l.Reserve("a1", "shop", t0, 1)
	l.Reserve("a2", "shop", t0, 10)
	l.Reserve("a3", "shop", t0, 100)
	l.Reserve("a1", "bank", t0, 1000)
	for _, c := range []struct {
		agents   []string
		business string
		want     int64
	}{{nil, "", 1111}, {[]string{"a1"}, "", 1001}, {[]string{"a1", "a2"}, "", 1011}, {nil, "shop", 111}, {[]string{"a1", "a3"}, "shop", 101}, {[]string{"zz"}, "", 0}} {
		if got := l.Totals(t0, c.agents, c.business).Day; got != c.want {
			t.Errorf("%v %q: %d, want %d", c.agents, c.business, got, c.want)
		}
	}
}

// TestLedger_Release takes back a reservation at its time, never below zero.
func TestLedger_Release(t *testing.T) {
	var l Ledger
	l.Reserve("a", "b", t0, 300)
	l.Reserve("a", "b", t0.Add(2*time.Hour), 50)
	l.Release("a", "b", t0, 200)
	if got := l.Totals(t0.Add(2*time.Hour), nil, "").Day; got != 150 {
		t.Fatalf("after release: %d, want 150", got)
	}
	l.Release("a", "b", t0, 1000)
	l.Release("x", "y", t0, 1000)
	if got := l.Totals(t0.Add(2*time.Hour), nil, "").Day; got != 50 {
		t.Fatalf("after over-release: %d, want 50", got)
	}
}

// TestLedger_Saturates: totals past math.MaxInt64 stay there.
func TestLedger_Saturates(t *testing.T) {
	var l Ledger
	l.Reserve("a", "b", t0, math.MaxInt64-1)
	l.Reserve("a", "b", t0, 5)
	l.Reserve("a", "c", t0, math.MaxInt64)
	if got := l.Totals(t0, nil, ""); got.Day != math.MaxInt64 || got.Month != math.MaxInt64 {
		t.Fatalf("%+v", got)
	}
	l.Release("a", "b", t0, 10)
	if got := l.Totals(t0, []string{"a"}, "b").Day; got != math.MaxInt64 {
		t.Fatalf("a saturated bucket released to %d", got)
	}
}

// TestLedger_Overflow: past MaxAccounts, new pairs share one account that
// counts in every scope.
func TestLedger_Overflow(t *testing.T) {
	var l Ledger
	for i := 0; i < MaxAccounts+10; i++ {
		l.Reserve("agent", "biz"+itoa(i), t0, 1)
	}
	if len(l.Accounts) != MaxAccounts+1 {
		t.Fatalf("%d accounts", len(l.Accounts))
	}
	if got := l.Totals(t0, []string{"other"}, "elsewhere").Day; got != 10 {
		t.Fatalf("overflow counted %d in an unrelated scope, want 10", got)
	}
	if got := l.Totals(t0, nil, "").Day; got != MaxAccounts+10 {
		t.Fatalf("total %d", got)
	}
	// a month later the old accounts are dropped to make room
	l.Reserve("agent", "new", t0.Add(Month+2*time.Hour), 7)
	if len(l.Accounts) != 1 || l.Accounts[0].Business != "new" {
		t.Fatalf("%d accounts after a month", len(l.Accounts))
	}
}

func itoa(i int) string {
	return string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
}

// TestLedger_JSONRoundTrip: a ledger read back from its JSON has the same
// totals, and a clone shares nothing.
func TestLedger_JSONRoundTrip(t *testing.T) {
	var l Ledger
	for i := 0; i < 50; i++ {
		l.Reserve("a", "b", t0.Add(time.Duration(i)*17*time.Minute), int64(i+1))
	}
	data, err := json.Marshal(&l)
	if err != nil {
		t.Fatal(err)
	}
	var back Ledger
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(20 * time.Hour)
	if back.Totals(at, nil, "") != l.Totals(at, nil, "") {
		t.Fatalf("%+v != %+v", back.Totals(at, nil, ""), l.Totals(at, nil, ""))
	}
	c := l.Clone()
	c.Reserve("a", "b", at, 1000)
	if l.Totals(at, nil, "") == c.Totals(at, nil, "") {
		t.Fatal("the clone shares its buckets")
	}
	if err := json.Unmarshal([]byte(`{"accounts":[{"agent":"a","business":"b","minutes":[{"at":120,"cents":1},{"at":60,"cents":1}]}]}`), &back); err == nil {
		t.Fatal("buckets out of order accepted")
	}
}
