package domain

import (
	"sort"
	"time"
)

// Budgets (QWED-Agent spec v1.1 §6; docs/ARCHITECTURE.md, "Where the
// specifications disagree"). Daily counters belong to a UTC day and read as zero
// once the day has changed; hourly counters are exact sliding windows over
// (now-1h, now]. A request whose declared cost or tokens would cross a limit is
// refused before it is spent: no overshoot.

// dayOf returns the days since the Unix epoch of t, in UTC.
func dayOf(t time.Time) int64 {
	return floorDiv(t.Unix(), 86400)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// nextMidnight returns the next 00:00 UTC strictly after t.
func nextMidnight(t time.Time) time.Time {
	return time.Unix((dayOf(t)+1)*86400, 0).UTC()
}

// dailyUsage is today's view of the daily counters.
type dailyUsage struct {
	cost     USD
	requests int64
	tokens   int64
	highRisk int64
}

// usageAt returns the daily counters as they stand at now: zero when they
// belong to an earlier day.
func usageAt(u *Usage, now time.Time) dailyUsage {
	if u.Day != dayOf(now) {
		return dailyUsage{}
	}
	return dailyUsage{cost: u.DailyCost, requests: u.DailyRequests, tokens: u.DailyTokens, highRisk: u.DailyHighRisk}
}

// windowStart returns the index of the first time in w inside the sliding
// hour ending at now, i.e. strictly after now-1h. w is sorted ascending.
func windowStart(w []time.Time, now time.Time) int {
	cut := now.Add(-time.Hour)
	// Pruning on every decision keeps the window mostly live: when its
	// oldest time is inside, so is everything (w is sorted).
	if len(w) == 0 || w[0].After(cut) {
		return 0
	}
	return sort.Search(len(w), func(i int) bool { return w[i].After(cut) })
}

// windowCount returns how many times of w fall in (now-1h, now] and the
// oldest of them.
func windowCount(w []time.Time, now time.Time) (int64, time.Time) {
	i := windowStart(w, now)
	if i == len(w) {
		return 0, time.Time{}
	}
	return int64(len(w) - i), w[i]
}

// Budget limit names, as reported in details.limit_name.
const (
	limitPerRequestCost = "max_per_request_cost_usd"
	limitDailyCost      = "max_daily_cost_usd"
	limitHourlyRequests = "max_requests_per_hour"
	limitDailyRequests  = "max_requests_per_day"
	limitRequestTokens  = "max_tokens_per_request"
	limitDailyTokens    = "max_daily_tokens"
	limitHourlyTools    = "max_tool_calls_per_hour"
	limitHighRisk       = "max_high_risk_calls_per_day"
)

// budgetRequest is what one admitted decision would consume.
type budgetRequest struct {
	cost     USD
	tokens   int64
	tool     bool
	highRisk bool
}

// checkBudget applies the limits in the order of docs/ARCHITECTURE.md ("Where
// the specifications disagree") and returns the first one crossed, or nil. Every
// error's details hold limit, current and reset_at (QWED-Agent spec v1.1 §6.3);
// for a per-request limit current is the request's own figure and reset_at is
// null: waiting does not help.
func checkBudget(a *Agent, now time.Time, r budgetRequest) *Error {
	b := &a.Budget
	u := usageAt(&a.Usage, now)
	if b.MaxPerRequestCost > 0 && r.cost > b.MaxPerRequestCost {
		return budgetError(CodeBudgetCost, "Per-request cost limit exceeded", limitPerRequestCost,
			b.MaxPerRequestCost, r.cost, r.cost, nil)
	}
	if b.MaxDailyCost > 0 && u.cost+r.cost > b.MaxDailyCost {
		return budgetError(CodeBudgetCost, "Daily cost limit exceeded", limitDailyCost,
			b.MaxDailyCost, u.cost, r.cost, midnightPtr(now))
	}
	if b.MaxRequestsPerHour > 0 {
		if n, oldest := windowCount(a.Usage.HourlyRequests, now); n >= b.MaxRequestsPerHour {
			reset := oldest.Add(time.Hour)
			return budgetError(CodeBudgetRate, "Hourly request limit exceeded", limitHourlyRequests,
				b.MaxRequestsPerHour, n, int64(1), &reset)
		}
	}
	if b.MaxRequestsPerDay > 0 && u.requests >= b.MaxRequestsPerDay {
		return budgetError(CodeBudgetRate, "Daily request limit exceeded", limitDailyRequests,
			b.MaxRequestsPerDay, u.requests, int64(1), midnightPtr(now))
	}
	if b.MaxTokensPerRequest > 0 && r.tokens > b.MaxTokensPerRequest {
		return budgetError(CodeBudgetTokens, "Per-request token limit exceeded", limitRequestTokens,
			b.MaxTokensPerRequest, r.tokens, r.tokens, nil)
	}
	if b.MaxDailyTokens > 0 && u.tokens+r.tokens > b.MaxDailyTokens {
		return budgetError(CodeBudgetTokens, "Daily token limit exceeded", limitDailyTokens,
			b.MaxDailyTokens, u.tokens, r.tokens, midnightPtr(now))
	}
	if r.tool && b.MaxToolCallsPerHour > 0 {
		if n, oldest := windowCount(a.Usage.HourlyToolCalls, now); n >= b.MaxToolCallsPerHour {
			reset := oldest.Add(time.Hour)
			return budgetError(CodeBudgetRate, "Hourly tool call limit exceeded", limitHourlyTools,
				b.MaxToolCallsPerHour, n, int64(1), &reset)
		}
	}
	if r.highRisk && b.MaxHighRiskCallsDay > 0 && u.highRisk >= b.MaxHighRiskCallsDay {
		return budgetError(CodeBudgetRate, "Daily high-risk call limit exceeded", limitHighRisk,
			b.MaxHighRiskCallsDay, u.highRisk, int64(1), midnightPtr(now))
	}
	return nil
}

func midnightPtr(now time.Time) *time.Time {
	m := nextMidnight(now)
	return &m
}

// budgetError builds a BUDGET-00x error; limit, current and requested are
// all USD or all int64 so that details encode as money or counts.
func budgetError(code Code, msg, name string, limit, current, requested any, reset *time.Time) *Error {
	d := map[string]any{
		"limit_name": name,
		"limit":      limit,
		"requested":  requested,
	}
	d["current"] = current
	if reset != nil {
		d["reset_at"] = reset.UTC().Format(time.RFC3339)
	} else {
		// A per-request limit never resets: the request itself is over it.
		d["reset_at"] = nil
	}
	return &Error{Code: code, Message: msg, Details: d}
}

// remainingFigures is the storage the pointers of a BudgetRemaining point to.
type remainingFigures struct {
	cost                                   USD
	hourReq, dayReq, tokens, tools, highRk int64
}

// remaining computes budget_remaining for the agent at now, after a
// decision that consumed r (admitted) or nothing (admitted false). The
// figures are stored in vals.
func remaining(a *Agent, now time.Time, r budgetRequest, admitted bool, vals *remainingFigures) BudgetRemaining {
	b := &a.Budget
	u := usageAt(&a.Usage, now)
	var hourReq, hourTools int64
	if b.MaxRequestsPerHour > 0 {
		hourReq, _ = windowCount(a.Usage.HourlyRequests, now)
	}
	if b.MaxToolCallsPerHour > 0 {
		hourTools, _ = windowCount(a.Usage.HourlyToolCalls, now)
	}
	if admitted {
		u.cost += r.cost
		u.tokens += r.tokens
		u.requests++
		hourReq++
		if r.tool {
			hourTools++
		}
		if r.highRisk {
			u.highRisk++
		}
	}
	var out BudgetRemaining
	if b.MaxDailyCost > 0 {
		vals.cost = max(b.MaxDailyCost-u.cost, 0)
		out.DailyCost = &vals.cost
	}
	if b.MaxRequestsPerHour > 0 {
		vals.hourReq = max(b.MaxRequestsPerHour-hourReq, 0)
		out.HourlyRequests = &vals.hourReq
	}
	if b.MaxRequestsPerDay > 0 {
		vals.dayReq = max(b.MaxRequestsPerDay-u.requests, 0)
		out.DailyRequests = &vals.dayReq
	}
	if b.MaxDailyTokens > 0 {
		vals.tokens = max(b.MaxDailyTokens-u.tokens, 0)
		out.DailyTokens = &vals.tokens
	}
	if b.MaxToolCallsPerHour > 0 {
		vals.tools = max(b.MaxToolCallsPerHour-hourTools, 0)
		out.HourlyTools = &vals.tools
	}
	if b.MaxHighRiskCallsDay > 0 {
		vals.highRk = max(b.MaxHighRiskCallsDay-u.highRisk, 0)
		out.HighRiskCalls = &vals.highRk
	}
	return out
}
