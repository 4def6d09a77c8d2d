package projections

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// The spending summary of a consumer's transactions (GET
// /transactions/summary): totals over a period, per period bucket (UTC
// day, ISO week from Monday, calendar month), per agent, business and
// category. Amounts are in the minor units of each transaction's currency
// and never summed across currencies.

// Summary periods.
const (
	PeriodDay   = "day"
	PeriodWeek  = "week"
	PeriodMonth = "month"
)

// MaxSummaryGroups bounds the agents, businesses and categories a summary
// lists one by one (the first in lexical order); the transactions of the
// others are counted in the dimension's Other totals.
const MaxSummaryGroups = 1000

// TxAmount is what a group of transactions amounts to in one currency:
// Spent is completed (the business took it); Pending is executing,
// pending_approval, queued or pending_confirmation (reserved against the
// limits); Refused is blocked, denied, expired or failed.
type TxAmount struct {
	Currency     string `json:"currency"`
	SpentCents   int64  `json:"spent_cents"`
	PendingCents int64  `json:"pending_cents"`
	RefusedCents int64  `json:"refused_cents"`
}

// TxTotals are the totals of a group of transactions: how many, how many
// of each status, and the amounts by currency (sorted by currency).
type TxTotals struct {
	Count    int64            `json:"count"`
	ByStatus map[string]int64 `json:"by_status"`
	Amounts  []TxAmount       `json:"amounts"`
}

// Add counts t.
func (s *TxTotals) Add(t *Transaction) {
	s.Count++
	if s.ByStatus == nil {
		s.ByStatus = map[string]int64{}
	}
	s.ByStatus[t.Status]++
	i, ok := slices.BinarySearchFunc(s.Amounts, t.Currency, func(a TxAmount, c string) int { return strings.Compare(a.Currency, c) })
	if !ok {
		s.Amounts = slices.Insert(s.Amounts, i, TxAmount{Currency: t.Currency})
	}
	a := &s.Amounts[i]
	switch TxStatusClass(t.Status) {
	case "spent":
		a.SpentCents = satAdd(a.SpentCents, t.AmountCents)
	case "pending":
		a.PendingCents = satAdd(a.PendingCents, t.AmountCents)
	default:
		a.RefusedCents = satAdd(a.RefusedCents, t.AmountCents)
	}
}

// TxStatusClass names what a status does to the money: "spent"
// (completed), "pending" (executing, pending_approval, queued,
// pending_confirmation) or "refused" (every other status).
func TxStatusClass(status string) string {
	switch status {
	case domain.TxCompleted:
		return "spent"
	case domain.TxExecuting, domain.TxPendingApproval, domain.TxQueued, domain.TxPendingConfirmation:
		return "pending"
	}
	return "refused"
}

// satAdd adds two amounts, saturating at the int64 bounds.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return 1<<63 - 1
	case a < 0 && b < 0 && s >= 0:
		return -1 << 63
	}
	return s
}

// TxBucket is the totals of one period bucket, from Start (inclusive).
type TxBucket struct {
	Start time.Time `json:"start"`
	TxTotals
}

// TxGroup is the totals of one agent, business or category.
type TxGroup struct {
	Key string `json:"key"`
	TxTotals
}

// TxSummary folds transactions into the totals of a summary. Create it
// with NewTxSummary.
type TxSummary struct {
	Period     string
	Totals     TxTotals
	buckets    map[int64]*TxTotals
	agents     map[string]*TxTotals
	businesses map[string]*TxTotals
	categories map[string]*TxTotals
}

// NewTxSummary returns an empty summary by period (day, week or month).
func NewTxSummary(period string) (*TxSummary, error) {
	switch period {
	case PeriodDay, PeriodWeek, PeriodMonth:
	default:
		return nil, fmt.Errorf("period %q is not one of day, week, month", period)
	}
	return &TxSummary{Period: period, buckets: map[int64]*TxTotals{}, agents: map[string]*TxTotals{},
		businesses: map[string]*TxTotals{}, categories: map[string]*TxTotals{}}, nil
}

// BucketStart returns the start of the period bucket holding t: its UTC
// day, the Monday of its ISO week, or the first of its month.
func BucketStart(period string, t time.Time) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch period {
	case PeriodWeek:
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case PeriodMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return d
}

func group(m map[string]*TxTotals, k string) *TxTotals {
	g := m[k]
	if g == nil {
		g = &TxTotals{}
		m[k] = g
	}
	return g
}

// Add counts t (in its bucket, its agent, its business and each of its
// categories).
func (s *TxSummary) Add(t *Transaction) {
	s.Totals.Add(t)
	b := BucketStart(s.Period, t.CreatedAt).Unix()
	tt := s.buckets[b]
	if tt == nil {
		tt = &TxTotals{}
		s.buckets[b] = tt
	}
	tt.Add(t)
	group(s.agents, t.AgentID).Add(t)
	group(s.businesses, t.BusinessID).Add(t)
	for _, c := range t.Categories {
		group(s.categories, c).Add(t)
	}
}

// TxSummaryView is a summary as answered: every list sorted (buckets by
// start, groups by key), so equal transactions give equal bytes.
type TxSummaryView struct {
	Period     string     `json:"period"`
	Totals     TxTotals   `json:"totals"`
	ByPeriod   []TxBucket `json:"by_period"`
	ByAgent    []TxGroup  `json:"by_agent"`
	ByBusiness []TxGroup  `json:"by_business"`
	ByCategory []TxGroup  `json:"by_category"`
	// OtherAgents, OtherBusinesses and OtherCategories count the
	// transactions of the groups past MaxSummaryGroups (nil when none).
	OtherAgents     *TxTotals `json:"other_agents,omitempty"`
	OtherBusinesses *TxTotals `json:"other_businesses,omitempty"`
	OtherCategories *TxTotals `json:"other_categories,omitempty"`
}

// View renders the summary.
func (s *TxSummary) View() TxSummaryView {
	v := TxSummaryView{Period: s.Period, Totals: s.Totals, ByPeriod: []TxBucket{}}
	if v.Totals.ByStatus == nil {
		v.Totals.ByStatus, v.Totals.Amounts = map[string]int64{}, []TxAmount{}
	}
	starts := make([]int64, 0, len(s.buckets))
	for b := range s.buckets {
		starts = append(starts, b)
	}
	slices.Sort(starts)
	for _, b := range starts {
		v.ByPeriod = append(v.ByPeriod, TxBucket{Start: time.Unix(b, 0).UTC(), TxTotals: *s.buckets[b]})
	}
	v.ByAgent, v.OtherAgents = groups(s.agents)
	v.ByBusiness, v.OtherBusinesses = groups(s.businesses)
	v.ByCategory, v.OtherCategories = groups(s.categories)
	return v
}

// groups lists m by key, the first MaxSummaryGroups one by one and the
// totals of the others together.
func groups(m map[string]*TxTotals) ([]TxGroup, *TxTotals) {
	out := []TxGroup{}
	var other *TxTotals
	for i, k := range sortedKeys(m) {
		if i < MaxSummaryGroups {
			out = append(out, TxGroup{Key: k, TxTotals: *m[k]})
			continue
		}
		if other == nil {
			other = &TxTotals{ByStatus: map[string]int64{}}
		}
		g := m[k]
		other.Count += g.Count
		for st, n := range g.ByStatus {
			other.ByStatus[st] += n
		}
		for _, a := range g.Amounts {
			i, ok := slices.BinarySearchFunc(other.Amounts, a.Currency, func(x TxAmount, c string) int { return strings.Compare(x.Currency, c) })
			if !ok {
				other.Amounts = slices.Insert(other.Amounts, i, TxAmount{Currency: a.Currency})
			}
			o := &other.Amounts[i]
			o.SpentCents, o.PendingCents, o.RefusedCents = satAdd(o.SpentCents, a.SpentCents), satAdd(o.PendingCents, a.PendingCents), satAdd(o.RefusedCents, a.RefusedCents)
		}
	}
	return out, other
}
