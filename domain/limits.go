package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Limits JSON. Input accepts two spellings of the same limits, in one
// object or mixed:
//
//   - the flat form of the QWED-Agent spec v1.1 §3.1 (max_daily_cost_usd, max_per_request_cost_usd,
//     max_requests_per_hour, max_requests_per_day, max_tokens_per_request,
//     max_daily_tokens, max_tool_calls_per_hour, max_high_risk_calls_per_day);
//   - the nested form of the QWED-Agent spec v1.1 §6.1 (cost.max_daily_usd, cost.max_per_request_usd,
//     requests.max_per_hour, requests.max_per_day, tokens.max_per_request,
//     tokens.max_daily, tools.max_calls_per_hour, tools.high_risk_calls_remaining,
//     the last being the per-day high-risk limit).
//
// The current_* members of §6.1 are read-only figures and are ignored on
// input. Any other member is an error, and so is one limit given twice.
// Output (MarshalJSON, the default struct encoding) is always flat.

// limitField names one limit and where it is stored.
type limitField struct {
	flat   string
	group  string
	nested string
	usd    bool
	get    func(l *Limits) any
}

var limitFields = []limitField{
	{"max_daily_cost_usd", "cost", "max_daily_usd", true, func(l *Limits) any { return &l.MaxDailyCost }},
	{"max_per_request_cost_usd", "cost", "max_per_request_usd", true, func(l *Limits) any { return &l.MaxPerRequestCost }},
	{"max_requests_per_hour", "requests", "max_per_hour", false, func(l *Limits) any { return &l.MaxRequestsPerHour }},
	{"max_requests_per_day", "requests", "max_per_day", false, func(l *Limits) any { return &l.MaxRequestsPerDay }},
	{"max_tokens_per_request", "tokens", "max_per_request", false, func(l *Limits) any { return &l.MaxTokensPerRequest }},
	{"max_daily_tokens", "tokens", "max_daily", false, func(l *Limits) any { return &l.MaxDailyTokens }},
	{"max_tool_calls_per_hour", "tools", "max_calls_per_hour", false, func(l *Limits) any { return &l.MaxToolCallsPerHour }},
	{"max_high_risk_calls_per_day", "tools", "high_risk_calls_remaining", false, func(l *Limits) any { return &l.MaxHighRiskCallsDay }},
}

// ignoredNested are the read-only members of §6.1, accepted and ignored.
var ignoredNested = map[string]bool{
	"cost.current_daily_usd": true,
	"requests.current_hour":  true,
	"requests.current_day":   true,
	"tokens.current_daily":   true,
	"tools.current_hour":     true,
}

// UnmarshalJSON decodes the flat or the nested form (see above). null
// leaves the limits unchanged. Errors name the offending member.
func (l *Limits) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("decoding budget: %w", err)
	}
	var out Limits
	seen := map[string]string{}
	set := func(f *limitField, name string, raw json.RawMessage) error {
		if prev, dup := seen[f.flat]; dup {
			return fmt.Errorf("decoding budget: %s given twice (also as %s)", name, prev)
		}
		seen[f.flat] = name
		if err := json.Unmarshal(raw, f.get(&out)); err != nil {
			return fmt.Errorf("decoding budget member %s: %w", name, err)
		}
		return nil
	}
	for _, key := range sortedKeys(top) {
		raw := top[key]
		if f := flatField(key); f != nil {
			if err := set(f, key, raw); err != nil {
				return err
			}
			continue
		}
		if !isLimitGroup(key) {
			return fmt.Errorf("decoding budget: unknown member %q", key)
		}
		if string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		var group map[string]json.RawMessage
		if err := json.Unmarshal(raw, &group); err != nil {
			return fmt.Errorf("decoding budget member %s: %w", key, err)
		}
		for _, sub := range sortedKeys(group) {
			name := key + "." + sub
			if ignoredNested[name] {
				continue
			}
			f := nestedField(key, sub)
			if f == nil {
				return fmt.Errorf("decoding budget: unknown member %q", name)
			}
			if err := set(f, name, group[sub]); err != nil {
				return err
			}
		}
	}
	*l = out
	return nil
}

// MarshalJSON encodes the flat form; limits that are not set are omitted.
func (l Limits) MarshalJSON() ([]byte, error) {
	type flat Limits // no methods: the struct tags apply
	return json.Marshal(flat(l))
}

func flatField(key string) *limitField {
	for i := range limitFields {
		if limitFields[i].flat == key {
			return &limitFields[i]
		}
	}
	return nil
}

func nestedField(group, key string) *limitField {
	for i := range limitFields {
		if limitFields[i].group == group && limitFields[i].nested == key {
			return &limitFields[i]
		}
	}
	return nil
}

func isLimitGroup(key string) bool {
	return key == "cost" || key == "requests" || key == "tokens" || key == "tools"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validate checks the limits of a registration; the error names the flat member.
func (l *Limits) validate() *Error {
	ints := []struct {
		name string
		v    int64
		max  int64
	}{
		{"budget.max_requests_per_hour", l.MaxRequestsPerHour, MaxHourlyLimit},
		{"budget.max_requests_per_day", l.MaxRequestsPerDay, 0},
		{"budget.max_tokens_per_request", l.MaxTokensPerRequest, 0},
		{"budget.max_daily_tokens", l.MaxDailyTokens, 0},
		{"budget.max_tool_calls_per_hour", l.MaxToolCallsPerHour, MaxHourlyLimit},
		{"budget.max_high_risk_calls_per_day", l.MaxHighRiskCallsDay, 0},
	}
	if l.MaxDailyCost < 0 || l.MaxDailyCost > maxUSD {
		return fieldError(CodeInvalidRequest, "budget.max_daily_cost_usd", "must be between 0 and %s", maxUSD)
	}
	if l.MaxPerRequestCost < 0 || l.MaxPerRequestCost > maxUSD {
		return fieldError(CodeInvalidRequest, "budget.max_per_request_cost_usd", "must be between 0 and %s", maxUSD)
	}
	for _, f := range ints {
		if f.v < 0 {
			return fieldError(CodeInvalidRequest, f.name, "must not be negative")
		}
		if f.max > 0 && f.v > f.max {
			return fieldError(CodeInvalidRequest, f.name, "must be at most %d", f.max)
		}
	}
	return nil
}

// BudgetStatus is the reply of GET /agents/{id}/budget: the nested shape of
// QWED-Agent spec v1.1 §6.1 with the current figures. A max_* member is omitted when the
// agent has no limit on that dimension.
type BudgetStatus struct {
	Cost     CostStatus    `json:"cost"`
	Requests RequestStatus `json:"requests"`
	Tokens   TokenStatus   `json:"tokens"`
	Tools    ToolStatus    `json:"tools"`
}

// CostStatus is the cost part of BudgetStatus.
type CostStatus struct {
	MaxDailyUSD      USD       `json:"max_daily_usd,omitempty"`
	MaxPerRequestUSD USD       `json:"max_per_request_usd,omitempty"`
	CurrentDailyUSD  USD       `json:"current_daily_usd"`
	ResetAt          time.Time `json:"reset_at"`
}

// RequestStatus is the requests part of BudgetStatus. CurrentHour, the
// requests of the sliding hour, is present only when the agent has an
// hourly limit: the window is kept only then, and a 0 would claim a count
// that is not kept.
type RequestStatus struct {
	MaxPerHour  int64      `json:"max_per_hour,omitempty"`
	MaxPerDay   int64      `json:"max_per_day,omitempty"`
	CurrentHour *int64     `json:"current_hour,omitempty"`
	CurrentDay  int64      `json:"current_day"`
	HourResetAt *time.Time `json:"hour_reset_at,omitempty"`
	DayResetAt  time.Time  `json:"day_reset_at"`
}

// TokenStatus is the tokens part of BudgetStatus.
type TokenStatus struct {
	MaxPerRequest int64     `json:"max_per_request,omitempty"`
	MaxDaily      int64     `json:"max_daily,omitempty"`
	CurrentDaily  int64     `json:"current_daily"`
	ResetAt       time.Time `json:"reset_at"`
}

// ToolStatus is the tools part of BudgetStatus. CurrentHour, the tool calls
// of the sliding hour, is present only when the agent has an hourly tool
// call limit (as RequestStatus.CurrentHour); HighRiskCallsRemaining only
// when it has a high-risk limit.
type ToolStatus struct {
	MaxCallsPerHour        int64      `json:"max_calls_per_hour,omitempty"`
	CurrentHour            *int64     `json:"current_hour,omitempty"`
	HourResetAt            *time.Time `json:"hour_reset_at,omitempty"`
	MaxHighRiskCallsPerDay int64      `json:"max_high_risk_calls_per_day,omitempty"`
	HighRiskCallsRemaining *int64     `json:"high_risk_calls_remaining,omitempty"`
	HighRiskCallsToday     int64      `json:"high_risk_calls_today"`
}

// hourWindow is the count of a sliding-hour window at now and, when it is
// not empty, when its oldest entry leaves it.
func hourWindow(w []time.Time, now time.Time) (*int64, *time.Time) {
	n, oldest := windowCount(w, now)
	if n == 0 {
		return &n, nil
	}
	r := oldest.Add(time.Hour)
	return &n, &r
}

// BudgetView renders the agent's budget at now (QWED-Agent spec v1.1 §6.1): limits,
// today's figures (zero when the last activity was on an earlier UTC day),
// the sliding-hour counts and when each window resets. It does not modify
// the agent.
func (a *Agent) BudgetView(now time.Time) BudgetStatus {
	now = now.UTC()
	u := usageAt(&a.Usage, now)
	midnight := nextMidnight(now)
	b := a.Budget
	st := BudgetStatus{
		Cost: CostStatus{
			MaxDailyUSD: b.MaxDailyCost, MaxPerRequestUSD: b.MaxPerRequestCost,
			CurrentDailyUSD: u.cost, ResetAt: midnight,
		},
		Requests: RequestStatus{
			MaxPerHour: b.MaxRequestsPerHour, MaxPerDay: b.MaxRequestsPerDay,
			CurrentDay: u.requests, DayResetAt: midnight,
		},
		Tokens: TokenStatus{
			MaxPerRequest: b.MaxTokensPerRequest, MaxDaily: b.MaxDailyTokens,
			CurrentDaily: u.tokens, ResetAt: midnight,
		},
		Tools: ToolStatus{
			MaxCallsPerHour: b.MaxToolCallsPerHour, MaxHighRiskCallsPerDay: b.MaxHighRiskCallsDay,
			HighRiskCallsToday: u.highRisk,
		},
	}
	if b.MaxRequestsPerHour > 0 {
		st.Requests.CurrentHour, st.Requests.HourResetAt = hourWindow(a.Usage.HourlyRequests, now)
	}
	if b.MaxToolCallsPerHour > 0 {
		st.Tools.CurrentHour, st.Tools.HourResetAt = hourWindow(a.Usage.HourlyToolCalls, now)
	}
	if b.MaxHighRiskCallsDay > 0 {
		left := max(b.MaxHighRiskCallsDay-u.highRisk, 0)
		st.Tools.HighRiskCallsRemaining = &left
	}
	return st
}
