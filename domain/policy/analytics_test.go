package policy

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"
)

// history is 30 days of an ordinary agent: three purchases a day around
// 300 cents, at 09:00, 13:00 and 18:00 UTC, from 2026-03-01.
func history(agent string) []Spend {
	var out []Spend
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for d := range 30 {
		for k, h := range []int{9, 13, 18} {
			out = append(out, Spend{TransactionID: agent + "-" + strconv.Itoa(d) + "-" + strconv.Itoa(k), AgentID: agent, BusinessID: "shop",
				At: start.Add(time.Duration(d)*Day + time.Duration(h)*time.Hour), AmountCents: int64(250 + (d*37+k*53)%100)})
		}
	}
	return out
}

func kinds(as []Anomaly) map[string][]string {
	out := map[string][]string{}
	for _, a := range as {
		key := a.TransactionID
		if key == "" {
			key = a.Day.Format(time.DateOnly)
		}
		out[a.Kind] = append(out[a.Kind], a.AgentID+"/"+key)
	}
	return out
}

var (
	march = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	april = time.Date(2026, 4, 5, 0, 0, 0, 0, time.UTC)
)

// TestAnalyze_Ordinary: a steady agent is flagged nowhere and its
// recommendation blocks nothing.
func TestAnalyze_Ordinary(t *testing.T) {
	a := Analyze(history("a1"), time.UTC, march, april)
	if len(a.Anomalies) != 0 {
		t.Fatalf("anomalies in a steady history: %+v", a.Anomalies)
	}
	if len(a.Recommendations) != 1 || len(a.Recommendations[0].Blocks) != 0 || len(a.Recommendations[0].Misses) != 0 {
		t.Fatalf("%+v", a.Recommendations)
	}
	sp := a.Recommendations[0].Policy.Spending
	// the daily total counts a spend up to a minute past 24 hours: the
	// 09:00 purchase of the day before is still counted at 09:00
	if sp.PerTransactionCents != 349 || sp.DailyCents < 4*250 || sp.DailyCents > 4*349 {
		t.Fatalf("limits %+v", sp)
	}
	p := a.Recommendations[0].Policy
	if pr := Validate(&p); pr != nil {
		t.Fatalf("the recommendation is no valid policy: %v", pr)
	}
}

// TestAnalyze_Anomalies: a large purchase, a day of large spend and a day
// of many purchases are each flagged for the agent that made them only;
// the recommendation blocks none of the ordinary transactions, and the
// anomalies a limit can tell apart.
func TestAnalyze_Anomalies(t *testing.T) {
	spends := append(history("a1"), history("a2")...)
	spends = append(spends,
		Spend{TransactionID: "big", AgentID: "a1", BusinessID: "shop", At: march.Add(20*Day + 15*time.Hour), AmountCents: 40_000},
	)
	for k := range 25 { // a2 on day 25: 25 more small purchases
		spends = append(spends, Spend{TransactionID: "burst-" + strconv.Itoa(k), AgentID: "a2", BusinessID: "shop",
			At: march.Add(25*Day + 20*time.Hour + time.Duration(k)*time.Minute), AmountCents: 300})
	}
	a := Analyze(spends, time.UTC, march, april)
	k := kinds(a.Anomalies)
	if !slices.Equal(k[AnomalyAmount], []string{"a1/big"}) ||
		!slices.Equal(k[AnomalyDailySpend], []string{"a1/2026-03-21", "a2/2026-03-26"}) ||
		!slices.Equal(k[AnomalyDailyRate], []string{"a2/2026-03-26"}) || len(a.Anomalies) != 4 {
		t.Fatalf("%v", k)
	}
	for _, an := range a.Anomalies {
		if an.Score <= AnomalyScore || an.Median <= 0 {
			t.Errorf("%+v", an)
		}
	}
	if len(a.Recommendations) != 2 {
		t.Fatalf("%+v", a.Recommendations)
	}
	for _, r := range a.Recommendations {
		// Replay the agent's transactions under the recommendation: only
		// anomalous transactions are blocked.
		set := &Set{Policies: []Policy{r.Policy}}
		var l Ledger
		var blocked []string
		for _, s := range sortedSpends(spends) {
			if s.AgentID != r.AgentID {
				continue
			}
			out := Evaluate(set, &l, Input{Now: s.At, AgentID: s.AgentID, BusinessID: s.BusinessID, AmountCents: s.AmountCents})
			if out.Verdict == Pass {
				l.Reserve(s.AgentID, s.BusinessID, s.At, s.AmountCents)
			} else {
				blocked = append(blocked, s.TransactionID)
			}
		}
		if !slices.Equal(blocked, r.Blocks) {
			t.Errorf("%s: replay blocks %v, the recommendation says %v", r.AgentID, blocked, r.Blocks)
		}
		// a1's large purchase is over the per-transaction cap; a2's burst
		// of small purchases is not separable by a rolling limit that
		// blocks none of the next morning's ordinary purchases (what
		// passed of the burst would still count): it is all missed.
		if r.AgentID == "a1" && !slices.Equal(r.Blocks, []string{"big"}) || r.AgentID == "a2" && (len(r.Blocks) != 0 || len(r.Misses) != 28) {
			t.Errorf("%s: blocks %v misses %v", r.AgentID, r.Blocks, r.Misses)
		}
		for _, id := range blocked {
			if id != "big" && (len(id) < 6 || id[:6] != "burst-") && !onDay(spends, id, march.Add(25*Day)) {
				t.Errorf("%s: an ordinary transaction %s is blocked", r.AgentID, id)
			}
		}
	}
}

func onDay(spends []Spend, id string, day time.Time) bool {
	for _, s := range spends {
		if s.TransactionID == id {
			return !s.At.Before(day) && s.At.Before(day.Add(Day))
		}
	}
	return false
}

func sortedSpends(in []Spend) []Spend {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(x, y Spend) int {
		if c := x.At.Compare(y.At); c != 0 {
			return c
		}
		if x.TransactionID < y.TransactionID {
			return -1
		}
		return 1
	})
	return out
}

// TestAnalyze_ShortHistory: too little history flags nothing; a constant
// history is scaled by a tenth of its value, so a small step is no flag.
func TestAnalyze_ShortHistory(t *testing.T) {
	short := history("a1")[:15] // 5 days: under MinHistoryDays, and amounts vary
	short = append(short, Spend{TransactionID: "x", AgentID: "a1", At: march.Add(5*Day + 10*time.Hour), AmountCents: 100_000})
	a := Analyze(short, time.UTC, march, april)
	for _, an := range a.Anomalies {
		if an.Kind != AnomalyAmount {
			t.Fatalf("a daily flag with 5 days of history: %+v", an)
		}
	}
	var flat []Spend
	for i := range 12 {
		flat = append(flat, Spend{TransactionID: "f" + strconv.Itoa(i), AgentID: "a", At: march.Add(time.Duration(i) * time.Hour), AmountCents: 500})
	}
	flat = append(flat, Spend{TransactionID: "g", AgentID: "a", At: march.Add(13 * time.Hour), AmountCents: 549})
	flat = append(flat, Spend{TransactionID: "h", AgentID: "a", At: march.Add(14 * time.Hour), AmountCents: 5000})
	a = Analyze(flat, time.UTC, march, april)
	// the scale of a constant history of 500 is 50: 549 scores 0.66, 5000 60.7
	if len(a.Anomalies) != 1 || a.Anomalies[0].TransactionID != "h" || a.Anomalies[0].Score != 60.71 {
		t.Fatalf("%+v", a.Anomalies)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Fatalf("the analysis must encode: %v", err)
	}
}

// TestAnalyze_Trends: days zero-filled in the zone's calendar (a DST day
// of Paris has 23 hours), weeks from Monday; the input's order does not
// matter.
func TestAnalyze_Trends(t *testing.T) {
	paris, err := LoadZone("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 27, 0, 0, 0, 0, paris) // a Friday
	to := time.Date(2026, 4, 1, 0, 0, 0, 0, paris)
	spends := []Spend{
		{TransactionID: "a", AgentID: "x", At: time.Date(2026, 3, 29, 23, 30, 0, 0, time.UTC), AmountCents: 100}, // Monday 01:30 in Paris
		{TransactionID: "b", AgentID: "x", At: time.Date(2026, 3, 28, 22, 30, 0, 0, time.UTC), AmountCents: 7},   // Saturday 23:30 in Paris
		{TransactionID: "c", AgentID: "x", At: time.Date(2026, 3, 26, 23, 30, 0, 0, time.UTC), AmountCents: 5},   // Friday 00:30 in Paris
		{TransactionID: "d", AgentID: "x", At: time.Date(2026, 3, 31, 22, 30, 0, 0, time.UTC), AmountCents: 9},   // Wednesday: outside
	}
	a := Analyze(spends, paris, from, to)
	var got []int64
	for _, p := range a.Daily {
		got = append(got, p.Cents)
	}
	if !slices.Equal(got, []int64{5, 7, 0, 100, 0}) || !a.Daily[2].Start.Equal(time.Date(2026, 3, 29, 0, 0, 0, 0, paris)) {
		t.Fatalf("daily %v %v", got, a.Daily)
	}
	if len(a.Weekly) != 2 || a.Weekly[0].Cents != 12 || a.Weekly[0].Count != 2 || a.Weekly[1].Cents != 100 ||
		!a.Weekly[1].Start.Equal(time.Date(2026, 3, 30, 0, 0, 0, 0, paris)) {
		t.Fatalf("weekly %+v", a.Weekly)
	}
	rev := slices.Clone(spends)
	slices.Reverse(rev)
	b := Analyze(rev, paris, from, to)
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) != string(y) {
		t.Fatalf("the order of the input changed the analysis\n%s\n%s", x, y)
	}
}

// TestAnalyze_ReachedBefore: a value the agent's history already holds is
// not outside it, however high its score: the second purchase of 5,000
// after ten of 100 and a first of 5,000 is no anomaly, the first is.
func TestAnalyze_ReachedBefore(t *testing.T) {
	var ss []Spend
	for i := range 10 {
		ss = append(ss, Spend{TransactionID: "s" + strconv.Itoa(i), AgentID: "a", At: march.Add(time.Duration(i) * time.Hour), AmountCents: 100})
	}
	ss = append(ss, Spend{TransactionID: "first", AgentID: "a", At: march.Add(10 * time.Hour), AmountCents: 5000},
		Spend{TransactionID: "again", AgentID: "a", At: march.Add(11 * time.Hour), AmountCents: 5000})
	a := Analyze(ss, time.UTC, march, april)
	if k := kinds(a.Anomalies); len(a.Anomalies) != 1 || !slices.Equal(k[AnomalyAmount], []string{"a/first"}) {
		t.Fatalf("%+v", a.Anomalies)
	}
}
