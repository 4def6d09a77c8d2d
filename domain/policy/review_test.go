package policy

import (
	"encoding/json"
	"testing"
	"time"
)

// TestReview_HeldCountsInEveryWindowUntilUnheld: an amount held (a
// transaction pending approval or queued) counts in the daily, weekly and
// monthly totals of its scope whatever its age, until Unhold; a clone
// shares no hold; the JSON form keeps it.
func TestReview_HeldCountsInEveryWindowUntilUnheld(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var l Ledger
	l.Hold("a1", "shop", 300)
	l.Hold("a1", "shop", 200)
	l.Hold("a2", "bar", 7)
	l.Reserve("a1", "shop", at, 40)
	for _, now := range []time.Time{at, at.Add(40 * Day)} {
		got := l.Totals(now, []string{"a1"}, "shop")
		want := int64(500)
		if now == at {
			want = 540
		}
		if got.Day != want || got.Week != want || got.Month != want {
			t.Fatalf("at %s: %+v, want %d in every window", now, got, want)
		}
	}
	if got := l.Totals(at, nil, ""); got.Day != 547 {
		t.Fatalf("every scope: %+v", got)
	}
	c := l.Clone()
	b, err := json.Marshal(&l)
	if err != nil {
		t.Fatal(err)
	}
	var back Ledger
	if err := json.Unmarshal(b, &back); err != nil || back.Totals(at, nil, "").Day != 547 {
		t.Fatalf("decoded %s: %v %+v", b, err, back.Totals(at, nil, ""))
	}
	l.Unhold("a1", "shop", 500)
	l.Unhold("a2", "bar", 1000) // never below zero
	if len(l.Held) != 0 || l.Totals(at, nil, "").Day != 40 {
		t.Fatalf("after unhold: %+v %+v", l.Held, l.Totals(at, nil, ""))
	}
	if c.Totals(at, nil, "").Day != 547 {
		t.Fatal("the clone shares the holds")
	}
}
