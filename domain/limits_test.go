package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSeed000_3_1_And_6_1_LimitsJSON pins the two budget spellings: the flat
// form of the QWED-Agent spec v1.1 §3.1, the nested form of §6.1, their mixture, and the
// errors; the encoding is always flat.
func TestSeed000_3_1_And_6_1_LimitsJSON(t *testing.T) {
	full := Limits{MaxDailyCost: 100 * MicrosPerUSD, MaxPerRequestCost: MicrosPerUSD, MaxRequestsPerHour: 1000,
		MaxRequestsPerDay: 10000, MaxTokensPerRequest: 4096, MaxDailyTokens: 1000000, MaxToolCallsPerHour: 100, MaxHighRiskCallsDay: 5}
	cases := []struct {
		name, in string
		want     Limits
		err      string
	}{
		{"seed 000 §3.1 flat", `{"max_daily_cost_usd": 100.00, "max_requests_per_hour": 1000, "max_tokens_per_request": 4096}`,
			Limits{MaxDailyCost: 100 * MicrosPerUSD, MaxRequestsPerHour: 1000, MaxTokensPerRequest: 4096}, ""},
		{"seed 000 §6.1 nested verbatim", `{"cost": {"max_daily_usd": 100.00, "max_per_request_usd": 1.00, "current_daily_usd": 10.50},
			"requests": {"max_per_hour": 1000, "max_per_day": 10000, "current_hour": 42, "current_day": 350},
			"tokens": {"max_per_request": 4096, "max_daily": 1000000, "current_daily": 50000},
			"tools": {"max_calls_per_hour": 100, "high_risk_calls_remaining": 5}}`, full, ""},
		{"every flat member", `{"max_daily_cost_usd":100,"max_per_request_cost_usd":1,"max_requests_per_hour":1000,
			"max_requests_per_day":10000,"max_tokens_per_request":4096,"max_daily_tokens":1000000,
			"max_tool_calls_per_hour":100,"max_high_risk_calls_per_day":5}`, full, ""},
		{"mixed", `{"max_daily_cost_usd": 2, "tokens": {"max_daily": 7}}`, Limits{MaxDailyCost: 2 * MicrosPerUSD, MaxDailyTokens: 7}, ""},
		{"empty", `{}`, Limits{}, ""},
		{"null group", `{"cost": null}`, Limits{}, ""},
		{"unknown flat member", `{"max_daily_cost": 1}`, Limits{}, `unknown member "max_daily_cost"`},
		{"unknown nested member", `{"cost": {"max_weekly_usd": 1}}`, Limits{}, `unknown member "cost.max_weekly_usd"`},
		{"twice", `{"max_daily_cost_usd": 1, "cost": {"max_daily_usd": 2}}`, Limits{}, "given twice"},
		{"negative money", `{"max_daily_cost_usd": -1}`, Limits{MaxDailyCost: -MicrosPerUSD}, ""},
		{"not a number", `{"requests": {"max_per_hour": "many"}}`, Limits{}, "requests.max_per_hour"},
		{"fraction", `{"max_requests_per_hour": 1.5}`, Limits{}, "max_requests_per_hour"},
		{"not an object", `[1]`, Limits{}, "decoding budget"},
	}
	for _, c := range cases {
		var got Limits
		err := json.Unmarshal([]byte(c.in), &got)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"max_daily_cost_usd":100,"max_per_request_cost_usd":1,"max_requests_per_hour":1000,"max_requests_per_day":10000,` +
		`"max_tokens_per_request":4096,"max_daily_tokens":1000000,"max_tool_calls_per_hour":100,"max_high_risk_calls_per_day":5}`
	if string(b) != want {
		t.Fatalf("encoding:\n%s\nwant\n%s", b, want)
	}
	var back Limits
	if err := json.Unmarshal(b, &back); err != nil || back != full {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

// TestSeed000_6_1_BudgetView pins the nested status of GET /agents/{id}/budget.
func TestSeed000_6_1_BudgetView(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{MaxDailyCost: 100 * MicrosPerUSD, MaxRequestsPerHour: 1000,
		MaxRequestsPerDay: 10000, MaxDailyTokens: 1000000, MaxHighRiskCallsDay: 5}, Permissions{})
	cmd := verifyCmd(id, "a", "c", "1", "calculate", "1")
	cmd.Verify.Action.EstimatedCost = 10_500_000
	cmd.Verify.Action.EstimatedTokens = 50000
	g.exec(cmd)
	g.now = g.now.Add(10 * time.Minute)
	g.exec(verifyCmd(id, "a", "c", "2", "write_file", "x"))
	view := g.s.Agents[id].BudgetView(g.now)
	b, _ := json.Marshal(view)
	want := `{"cost":{"max_daily_usd":100,"current_daily_usd":10.5,"reset_at":"2026-03-03T00:00:00Z"},` +
		`"requests":{"max_per_hour":1000,"max_per_day":10000,"current_hour":2,"current_day":2,"hour_reset_at":"2026-03-02T10:00:00Z","day_reset_at":"2026-03-03T00:00:00Z"},` +
		`"tokens":{"max_daily":1000000,"current_daily":50000,"reset_at":"2026-03-03T00:00:00Z"},` +
		`"tools":{"max_high_risk_calls_per_day":5,"high_risk_calls_remaining":4,"high_risk_calls_today":1}}`
	if string(b) != want {
		t.Fatalf("view:\n%s\nwant\n%s", b, want)
	}
	// The next day reads zero; the view does not modify the agent.
	next := g.s.Agents[id].BudgetView(g.now.Add(24 * time.Hour))
	if next.Cost.CurrentDailyUSD != 0 || next.Requests.CurrentDay != 0 || next.Requests.CurrentHour == nil || *next.Requests.CurrentHour != 0 {
		t.Fatalf("next day: %+v", next)
	}
	if g.s.Agents[id].Usage.DailyRequests != 2 {
		t.Fatal("BudgetView modified the agent")
	}
}

// Issue 17 item 11: an hourly count is shown when the agent has the
// hourly limit it is kept for (0 included), and omitted without one: it
// read current_hour 0 after a tool call when no tool limit was set.
func TestBudgetViewHourlyCountsOnlyWithALimit(t *testing.T) {
	g := newGate(t)
	none := g.register("a", "trusted", nil, Limits{}, Permissions{})
	g.exec(verifyCmd(none, "a", "c", "1", "calculate", "1"))
	b, _ := json.Marshal(g.s.Agents[none].BudgetView(g.now))
	if strings.Contains(string(b), "current_hour") {
		t.Errorf("no hourly limit, yet an hourly count: %s", b)
	}
	limited := g.register("b", "trusted", nil, Limits{MaxRequestsPerHour: 10, MaxToolCallsPerHour: 10}, Permissions{})
	v := g.s.Agents[limited].BudgetView(g.now)
	if v.Requests.CurrentHour == nil || *v.Requests.CurrentHour != 0 || v.Tools.CurrentHour == nil || *v.Tools.CurrentHour != 0 {
		t.Errorf("hourly limits, no count: %+v %+v", v.Requests, v.Tools)
	}
}

// FuzzLimitsJSON: decoding never panics, and whatever decodes re-encodes
// to the flat form, which decodes to the same limits.
func FuzzLimitsJSON(f *testing.F) {
	f.Add(`{"max_daily_cost_usd":1}`)
	f.Add(`{"cost":{"max_daily_usd":1,"current_daily_usd":3},"tools":{"high_risk_calls_remaining":2}}`)
	f.Add(`{"requests":null}`)
	f.Fuzz(func(t *testing.T, s string) {
		var l Limits
		if json.Unmarshal([]byte(s), &l) != nil {
			return
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("encoding %+v: %v", l, err)
		}
		var back Limits
		if err := json.Unmarshal(b, &back); err != nil || back != l {
			t.Fatalf("round trip of %s: %+v %v", b, back, err)
		}
	})
}
