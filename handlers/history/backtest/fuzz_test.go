package backtest_test

import (
	"slices"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/backtest"
)

// FuzzChangesJSON: a changes file is user input. Parsing never panics; an
// accepted file names only settable keys, once each, sorted, and applies
// to an agent without panicking.
func FuzzChangesJSON(f *testing.F) {
	f.Add([]byte(`{"budget.max_daily_usd": 50, "trust_level": "supervised", "permissions.blocked_tools": ["a","b"]}`))
	f.Add([]byte(`{"budget.max_requests_per_hour": 100000, "budget.max_daily_cost_usd": "1e-3"}`))
	f.Add([]byte(`{"nope": 1}`))
	f.Add([]byte(`[]`))
	names := []string{}
	for _, k := range backtest.Keys() {
		names = append(names, k.Name)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c backtest.Changes
		if err := c.ParseJSON(data); err != nil {
			return
		}
		for i, s := range c.Settings {
			if !slices.Contains(names, s.Key) {
				t.Fatalf("accepted key %q", s.Key)
			}
			if i > 0 && c.Settings[i-1].Key >= s.Key {
				t.Fatalf("settings not sorted or repeated: %+v", c.Settings)
			}
		}
		var a domain.Agent
		c.Apply(&a)
	})
}
