package policy

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// The bounds and parameters of Analyze.
const (
	// MaxAnalyzedSpends bounds the spends one analysis reads (the caller
	// pages the rest away: the most recent are the ones that matter).
	MaxAnalyzedSpends = 10_000
	// MaxTrendDays bounds the days of a trend.
	MaxTrendDays = 400

	// AnomalyScore is the robust z-score above which a value is flagged
	// (Iglewicz and Hoaglin's 3.5).
	AnomalyScore = 3.5
	// HistoryDays is how many of an agent's previous days a day is
	// compared with, and MinHistoryDays how many it needs at least.
	HistoryDays    = 28
	MinHistoryDays = 7
	// HistoryAmounts is how many of an agent's previous transactions an
	// amount is compared with, and MinHistoryAmounts how many it needs.
	HistoryAmounts    = 100
	MinHistoryAmounts = 10

	// The kinds of Anomaly.
	AnomalyAmount     = "amount"
	AnomalyDailySpend = "daily_spend"
	AnomalyDailyRate  = "daily_rate"
)

// Spend is one transaction as the analytics read it: one that reserved
// spend (executing, pending, queued or completed ones; not the blocked,
// denied, expired or failed).
type Spend struct {
	TransactionID string    `json:"transaction_id"`
	At            time.Time `json:"at"`
	AgentID       string    `json:"agent_id"`
	BusinessID    string    `json:"business_id"`
	AmountCents   int64     `json:"amount_cents"`
}

// TrendPoint is the spend of one day or one week.
type TrendPoint struct {
	// Start is the period's first instant (midnight of a day, or of a
	// Monday, in the analysis's zone).
	Start time.Time `json:"start"`
	Cents int64     `json:"cents"`
	Count int       `json:"count"`
}

// Anomaly is a value far above its agent's own history.
type Anomaly struct {
	Kind    string `json:"kind"`
	AgentID string `json:"agent_id"`
	// TransactionID is the transaction of an amount anomaly; Day the day
	// of a daily one.
	TransactionID string    `json:"transaction_id,omitempty"`
	Day           time.Time `json:"day,omitzero"`
	// Value is the amount, the day's spend (cents) or its count of
	// transactions; Median the median of the history it was compared with;
	// Score its robust z-score (two decimals).
	Value  int64   `json:"value"`
	Median float64 `json:"median"`
	Score  float64 `json:"score"`
}

// Recommendation is a spending policy for one agent: the tightest limits
// that, replayed over the history with the gate's own ledger, block none
// of the agent's ordinary transactions, and the anomalous ones they block.
type Recommendation struct {
	AgentID string `json:"agent_id"`
	Policy  Policy `json:"policy"`
	// Blocks are the anomalous transactions the policy would have blocked,
	// Misses those it would have let through (too small to tell apart).
	Blocks []string `json:"blocks,omitempty"`
	Misses []string `json:"misses,omitempty"`
}

// Analysis is the analytics of a consumer's spends.
type Analysis struct {
	Daily           []TrendPoint     `json:"daily"`
	Weekly          []TrendPoint     `json:"weekly"`
	Anomalies       []Anomaly        `json:"anomalies"`
	Recommendations []Recommendation `json:"recommendations"`
	// Truncated says spends past MaxAnalyzedSpends were left out (the
	// oldest).
	Truncated bool `json:"truncated,omitempty"`
}

// LoadZone returns an IANA time zone from the package's embedded
// database ("" is UTC).
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	return zone(name)
}

// Analyze computes the analytics of spends in [from, to): daily and weekly
// spend trends (calendar days and Monday weeks of loc, zero-filled, at
// most MaxTrendDays), anomaly flags and per-agent recommendations. It is a
// pure function of its arguments: the same spends give the same analysis.
//
// The method. Each agent is compared with its own history only, by a
// robust z-score: 0.6745 × (x − median) / MAD, where median and MAD (the
// median of the absolute deviations from the median) are those of the
// agent's previous values; a value is flagged when the score is above
// AnomalyScore (3.5). Median and MAD are not moved by the outliers they
// are meant to find, as a mean and a standard deviation are. When the MAD
// is 0 (more than half the history equal), the mean absolute deviation
// stands in (σ ≈ 1.2533 × it, so the score is 0.7979 × (x − median) / it);
// and the scale is never below a tenth of the median nor below 1 (a cent,
// or one transaction), so that a nearly constant history is not flagged
// for a small step (three purchases a day, then four). A value must also
// be above the largest of its history: one the agent has reached before
// within the history is not outside it (sums of a few purchases a day are
// skewed, and the score alone flags the busier days of an irregular
// agent). Only values above the history count:
// spending less is no risk. Three values are scored: each transaction's
// amount against the agent's previous HistoryAmounts amounts (at least
// MinHistoryAmounts), and each day's spend and count of transactions
// against the agent's previous HistoryDays days (at least MinHistoryDays;
// days without a transaction count as 0 from the agent's first day).
//
// The recommendations. For each agent, the ordinary transactions are those
// not flagged, nor on a flagged day; a spending policy is looked for with
// a per-transaction cap (the largest ordinary amount) and rolling daily,
// weekly and monthly limits, replayed over the agent's transactions in
// order with a Ledger as Evaluate would check them (a blocked transaction
// reserves nothing): each limit starts at the largest total an ordinary
// transaction needs when only ordinary transactions are reserved, and is
// raised to what an ordinary transaction needs whenever an anomaly that
// passed makes one exceed it, until none does (or 32 rounds: then no
// recommendation). The policy blocks only anomalies; Blocks lists them.
func Analyze(spends []Spend, loc *time.Location, from, to time.Time) Analysis {
	if loc == nil {
		loc = time.UTC
	}
	var a Analysis
	in := make([]Spend, 0, min(len(spends), MaxAnalyzedSpends))
	for _, s := range spends {
		if !s.At.Before(from) && s.At.Before(to) {
			in = append(in, s)
		}
	}
	slices.SortStableFunc(in, func(x, y Spend) int {
		if c := x.At.Compare(y.At); c != 0 {
			return c
		}
		return cmp.Compare(x.TransactionID, y.TransactionID)
	})
	if len(in) > MaxAnalyzedSpends {
		in, a.Truncated = in[len(in)-MaxAnalyzedSpends:], true
	}
	for i := range in {
		in[i].AmountCents = max(in[i].AmountCents, 0)
	}
	a.Daily, a.Weekly = trends(in, loc, from, to)
	byAgent := map[string][]Spend{}
	var agents []string
	for _, s := range in {
		if _, ok := byAgent[s.AgentID]; !ok {
			agents = append(agents, s.AgentID)
		}
		byAgent[s.AgentID] = append(byAgent[s.AgentID], s)
	}
	slices.Sort(agents)
	a.Anomalies, a.Recommendations = []Anomaly{}, []Recommendation{}
	for _, agent := range agents {
		ss := byAgent[agent]
		flags := anomalies(agent, ss, loc)
		a.Anomalies = append(a.Anomalies, flags...)
		if r, ok := recommend(agent, ss, flags, loc); ok {
			a.Recommendations = append(a.Recommendations, r)
		}
	}
	return a
}

// dayOf returns midnight of t's calendar day in loc.
func dayOf(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// mondayOf returns midnight of the Monday of t's week in loc.
func mondayOf(t time.Time, loc *time.Location) time.Time {
	d := dayOf(t, loc)
	back := (int(d.Weekday()) + 6) % 7
	y, m, dd := d.Date()
	return time.Date(y, m, dd-back, 0, 0, 0, 0, loc)
}

// trends sums the spends per day and per week from from's day to the day
// before to, at most MaxTrendDays (the latest).
func trends(in []Spend, loc *time.Location, from, to time.Time) (daily, weekly []TrendPoint) {
	daily, weekly = []TrendPoint{}, []TrendPoint{}
	if !from.Before(to) {
		return daily, weekly
	}
	first, last := dayOf(from, loc), dayOf(to.Add(-time.Nanosecond), loc)
	var days []time.Time
	for d := last; !d.Before(first) && len(days) < MaxTrendDays; {
		days = append(days, d)
		y, m, dd := d.Date()
		d = time.Date(y, m, dd-1, 0, 0, 0, 0, loc)
	}
	slices.Reverse(days)
	if len(days) == 0 {
		return daily, weekly
	}
	daily = make([]TrendPoint, len(days))
	for i, d := range days {
		daily[i].Start = d
	}
	for _, s := range in {
		d := dayOf(s.At, loc)
		if i, ok := slices.BinarySearchFunc(daily, d, func(p TrendPoint, d time.Time) int { return p.Start.Compare(d) }); ok {
			daily[i].Cents = satAdd(daily[i].Cents, s.AmountCents)
			daily[i].Count++
		}
	}
	for _, p := range daily {
		w := mondayOf(p.Start, loc)
		if n := len(weekly); n == 0 || !weekly[n-1].Start.Equal(w) {
			weekly = append(weekly, TrendPoint{Start: w})
		}
		weekly[len(weekly)-1].Cents = satAdd(weekly[len(weekly)-1].Cents, p.Cents)
		weekly[len(weekly)-1].Count += p.Count
	}
	return daily, weekly
}

// robust returns the robust z-score of x against history (which it
// sorts), the history's median, and whether x is far above it: a score
// above AnomalyScore and above the history's largest value. The
// products are converted explicitly, so that no fused multiply-add rounds
// them differently on another architecture.
func robust(x int64, history []int64) (score, median float64, flagged bool) {
	slices.Sort(history)
	median = medianOf(history)
	diff := float64(x) - median
	if diff <= 0 {
		return 0, median, false
	}
	dev := make([]float64, len(history))
	var absSum float64
	for i, h := range history {
		dev[i] = math.Abs(float64(h) - median)
		absSum += dev[i]
	}
	slices.Sort(dev)
	factor, scale := 0.6745, medianOfFloats(dev) // MAD ≈ 0.6745 σ
	if scale == 0 {
		factor, scale = 0.7979, absSum/float64(len(history)) // mean absolute deviation ≈ 0.7979 σ
	}
	if floor := max(1, median/10); scale < floor {
		factor, scale = 0.6745, floor
	}
	score = float64(factor*diff) / scale
	outside := x > history[len(history)-1] // above everything the history holds
	return math.Round(float64(score*100)) / 100, median, outside && score > AnomalyScore
}

// medianOfFloats returns the median of sorted values.
func medianOfFloats(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// medianOf returns the median of sorted values (0 for none).
func medianOf(sorted []int64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return float64(sorted[n/2])
	}
	return (float64(sorted[n/2-1]) + float64(sorted[n/2])) / 2
}

// anomalies flags an agent's amounts and days (ss in time order).
func anomalies(agent string, ss []Spend, loc *time.Location) []Anomaly {
	var out []Anomaly
	hist := make([]int64, 0, HistoryAmounts)
	for i, s := range ss {
		if i >= MinHistoryAmounts {
			hist = hist[:0]
			for _, p := range ss[max(0, i-HistoryAmounts):i] {
				hist = append(hist, p.AmountCents)
			}
			if score, med, ok := robust(s.AmountCents, hist); ok {
				out = append(out, Anomaly{Kind: AnomalyAmount, AgentID: agent, TransactionID: s.TransactionID, Value: s.AmountCents, Median: med, Score: score})
			}
		}
	}
	days := dailyTotals(ss, loc)
	spend, rate := make([]int64, 0, HistoryDays), make([]int64, 0, HistoryDays)
	for i, d := range days {
		if i < MinHistoryDays {
			continue
		}
		spend, rate = spend[:0], rate[:0]
		for _, p := range days[max(0, i-HistoryDays):i] {
			spend, rate = append(spend, p.Cents), append(rate, int64(p.Count))
		}
		if score, med, ok := robust(d.Cents, spend); ok {
			out = append(out, Anomaly{Kind: AnomalyDailySpend, AgentID: agent, Day: d.Start, Value: d.Cents, Median: med, Score: score})
		}
		if score, med, ok := robust(int64(d.Count), rate); ok {
			out = append(out, Anomaly{Kind: AnomalyDailyRate, AgentID: agent, Day: d.Start, Value: int64(d.Count), Median: med, Score: score})
		}
	}
	return out
}

// dailyTotals are an agent's spend per calendar day of loc, from its first
// day to its last, days without a transaction included.
func dailyTotals(ss []Spend, loc *time.Location) []TrendPoint {
	if len(ss) == 0 {
		return nil
	}
	var days []TrendPoint
	for _, s := range ss {
		d := dayOf(s.At, loc)
		for n := len(days); n > 0 && days[n-1].Start.Before(d); n = len(days) {
			y, m, dd := days[n-1].Start.Date()
			next := time.Date(y, m, dd+1, 0, 0, 0, 0, loc)
			if next.Equal(d) {
				break
			}
			days = append(days, TrendPoint{Start: next})
		}
		if n := len(days); n == 0 || !days[n-1].Start.Equal(d) {
			days = append(days, TrendPoint{Start: d})
		}
		days[len(days)-1].Cents = satAdd(days[len(days)-1].Cents, s.AmountCents)
		days[len(days)-1].Count++
	}
	return days
}

// recommend looks for the agent's spending policy (see Analyze).
func recommend(agent string, ss []Spend, flags []Anomaly, loc *time.Location) (Recommendation, bool) {
	odd := make([]bool, len(ss))
	flaggedDays := map[int64]bool{} // by the Unix second of the day's midnight
	flaggedTx := map[string]bool{}
	for _, f := range flags {
		if f.Kind == AnomalyAmount {
			flaggedTx[f.TransactionID] = true
		} else {
			flaggedDays[f.Day.Unix()] = true
		}
	}
	var perTx int64
	for i, s := range ss {
		odd[i] = flaggedTx[s.TransactionID] || flaggedDays[dayOf(s.At, loc).Unix()]
		if !odd[i] {
			perTx = max(perTx, s.AmountCents)
		}
	}
	if perTx == 0 {
		return Recommendation{}, false // nothing ordinary to keep, or nothing spent
	}
	sp := &Spending{PerTransactionCents: min(perTx, MaxCents)}
	// Start from the totals the ordinary transactions need on their own.
	sp.DailyCents, sp.WeeklyCents, sp.MonthlyCents = needs(agent, ss, odd, nil)
	converged := false
	for round := 0; round < 32 && !converged; round++ {
		d, w, m := needs(agent, ss, odd, sp)
		converged = d <= sp.DailyCents && w <= sp.WeeklyCents && m <= sp.MonthlyCents
		sp.DailyCents, sp.WeeklyCents, sp.MonthlyCents = max(d, sp.DailyCents), max(w, sp.WeeklyCents), max(m, sp.MonthlyCents)
	}
	if !converged || sp.DailyCents > MaxCents || sp.WeeklyCents > MaxCents || sp.MonthlyCents > MaxCents {
		return Recommendation{}, false
	}
	id := "recommended." + agent
	if checkID("id", id) != nil {
		id = "recommended"
	}
	p := Policy{ID: id, Name: "Recommended limits for " + agent, Type: TypeSpending, Scope: Scope{Agents: []string{agent}}, Spending: sp}
	r := Recommendation{AgentID: agent, Policy: p}
	set := &Set{Policies: []Policy{p}}
	var l Ledger
	for i, s := range ss {
		out := Evaluate(set, &l, Input{Now: s.At, AgentID: agent, BusinessID: s.BusinessID, AmountCents: s.AmountCents})
		if out.Verdict == Pass {
			l.Reserve(agent, s.BusinessID, s.At, s.AmountCents)
		}
		if odd[i] {
			if out.Verdict == Block {
				r.Blocks = append(r.Blocks, s.TransactionID)
			} else {
				r.Misses = append(r.Misses, s.TransactionID)
			}
		}
	}
	return r, true
}

// needs replays an agent's transactions in order with a Ledger and returns
// the largest daily, weekly and monthly totals (with the transaction) an
// ordinary one needs. With sp nil only ordinary transactions are reserved;
// else those sp lets through (an odd one within sp's limits passes and
// counts, as it would at the gate).
func needs(agent string, ss []Spend, odd []bool, sp *Spending) (day, week, month int64) {
	var l Ledger
	for i, s := range ss {
		t := l.Totals(s.At, nil, "")
		with := Totals{satAdd(t.Day, s.AmountCents), satAdd(t.Week, s.AmountCents), satAdd(t.Month, s.AmountCents)}
		pass := !odd[i]
		if sp != nil && odd[i] {
			pass = s.AmountCents <= sp.PerTransactionCents && with.Day <= sp.DailyCents && with.Week <= sp.WeeklyCents && with.Month <= sp.MonthlyCents
		}
		if !odd[i] {
			day, week, month = max(day, with.Day), max(week, with.Week), max(month, with.Month)
		}
		if pass {
			l.Reserve(agent, s.BusinessID, s.At, s.AmountCents)
		}
	}
	return day, week, month
}
