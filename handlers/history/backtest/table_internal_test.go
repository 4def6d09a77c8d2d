package backtest

import "testing"

// Issue 17 item 13: "1 agent", never "1 agents".
func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 agents", 1: "1 agent", 2: "2 agents"} {
		if got := plural(n, "agent"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
