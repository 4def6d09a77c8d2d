package policy

import (
	"strconv"
	"testing"
	"time"
)

// benchSet is 20 policies of mixed types, as a consumer with several
// agents and businesses might set them: 8 spending limits (all agents, one
// agent, a group, a business, an override, a shadow one), 4 category
// restrictions, 4 confirmation rules, 4 time windows (two zones).
func benchSet(t testing.TB) *Set {
	docs := []string{
		`{"id":"s01","type":"spending","scope":{},"spending":{"per_transaction_cents":50000,"daily_cents":100000,"weekly_cents":300000,"monthly_cents":1000000}}`,
		`{"id":"s02","type":"spending","scope":{"agents":["a1"]},"spending":{"daily_cents":80000}}`,
		`{"id":"s03","type":"spending","scope":{"agents":["a1","a2","a3"]},"spending":{"weekly_cents":200000,"on_exceed":"confirm"}}`,
		`{"id":"s04","type":"spending","scope":{"business_id":"shop"},"spending":{"daily_cents":60000,"on_exceed":"notify"}}`,
		`{"id":"s05","type":"spending","scope":{"business_id":"travel"},"override":true,"spending":{"per_transaction_cents":200000}}`,
		`{"id":"s06","type":"spending","scope":{},"shadow":true,"spending":{"daily_cents":50000}}`,
		`{"id":"s07","type":"spending","scope":{"agents":["a2"]},"spending":{"monthly_cents":900000}}`,
		`{"id":"s08","type":"spending","scope":{"agents":["a1"],"business_id":"shop"},"spending":{"per_transaction_cents":40000}}`,
		`{"id":"c01","type":"category","scope":{},"category":{"mode":"block","categories":["adult","gambling","weapons"]}}`,
		`{"id":"c02","type":"category","scope":{"agents":["a1"]},"category":{"mode":"allow","categories":["food","groceries","travel"]}}`,
		`{"id":"c03","type":"category","scope":{"business_id":"casino"},"category":{"mode":"block","categories":["gambling"]}}`,
		`{"id":"c04","type":"category","scope":{},"shadow":true,"category":{"mode":"allow","categories":["food"]}}`,
		`{"id":"k01","type":"confirmation","scope":{},"confirmation":{"above_cents":90000}}`,
		`{"id":"k02","type":"confirmation","scope":{"agents":["a9"]},"confirmation":{"always":true}}`,
		`{"id":"k03","type":"confirmation","scope":{},"confirmation":{"first_time_business":true}}`,
		`{"id":"k04","type":"confirmation","scope":{"business_id":"bank"},"confirmation":{"always":true}}`,
		`{"id":"w01","type":"time_window","scope":{},"time_window":{"time_zone":"Europe/Paris","windows":[{"days":["mon","tue","wed","thu","fri"],"start":"07:00","end":"23:00"},{"days":["sat","sun"],"start":"09:00","end":"20:00"}],"outside":"queue"}}`,
		`{"id":"w02","type":"time_window","scope":{"agents":["a1"]},"time_window":{"time_zone":"America/New_York","windows":[{"days":["mon","tue","wed","thu","fri","sat","sun"],"start":"00:00","end":"24:00"}]}}`,
		`{"id":"w03","type":"time_window","scope":{"business_id":"bank"},"time_window":{"time_zone":"Europe/Paris","windows":[{"days":["mon","tue","wed","thu","fri"],"start":"09:00","end":"17:00"}]}}`,
		`{"id":"w04","type":"time_window","scope":{},"shadow":true,"time_window":{"time_zone":"UTC","windows":[{"days":["mon"],"start":"00:00","end":"08:00"}]}}`,
	}
	return mustSet(t, docs...)
}

// benchLedger is a month of spend of 4 agents at 4 businesses: 2,000
// executes, one every 20 minutes.
func benchLedger() *Ledger {
	l := &Ledger{}
	agents := []string{"a1", "a2", "a3", "a4"}
	businesses := []string{"bank", "shop", "travel", "food-co"}
	for i := 0; i < 2000; i++ {
		at := t0.Add(-Month + time.Duration(i)*20*time.Minute)
		l.Reserve(agents[i%4], businesses[i/4%4], at, int64(100+i%500))
	}
	return l
}

// BenchmarkEvaluate20 is one execute against 20 mixed policies and a
// month of history (the figure: at most 3 µs).
func BenchmarkEvaluate20(b *testing.B) {
	s, l := benchSet(b), benchLedger()
	x := Input{Now: t0, AgentID: "a1", BusinessID: "shop", Categories: []string{"food", "groceries"}, AmountCents: 2500}
	if out := Evaluate(s, l, x); out.Verdict != Pass || len(out.Findings) != 1 {
		b.Fatalf("the benchmark's execute: %+v", out)
	}
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(s, l, x)
	}
}

// BenchmarkEvaluate20Queued is the same execute outside the window of
// w01 (queued: the release time is computed).
func BenchmarkEvaluate20Queued(b *testing.B) {
	s, l := benchSet(b), benchLedger()
	x := Input{Now: time.Date(2026, 3, 2, 23, 30, 0, 0, time.UTC), AgentID: "a1", BusinessID: "shop", Categories: []string{"food"}, AmountCents: 2500}
	if out := Evaluate(s, l, x); out.Verdict != Queue {
		b.Fatalf("the benchmark's execute: %+v", out)
	}
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(s, l, x)
	}
}

// BenchmarkLedgerReserve is one reservation in a month-old ledger.
func BenchmarkLedgerReserve(b *testing.B) {
	l := benchLedger()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		l.Reserve("a"+strconv.Itoa(i%4+1), "shop", t0.Add(time.Duration(i)*time.Second), 10)
	}
}

// TestEvaluate_PassAllocatesNothing: an execute every policy passes
// allocates nothing (the benchmark's set without its shadow window, whose
// finding is the benchmark's only allocation).
func TestEvaluate_PassAllocatesNothing(t *testing.T) {
	s, l := benchSet(t), benchLedger()
	s.Delete("w04", 2)
	x := Input{Now: t0, AgentID: "a1", BusinessID: "shop", Categories: []string{"food", "groceries"}, AmountCents: 2500}
	if out := Evaluate(s, l, x); out.Verdict != Pass || len(out.Findings) != 0 {
		t.Fatalf("%+v", out)
	}
	if n := testing.AllocsPerRun(100, func() { Evaluate(s, l, x) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
