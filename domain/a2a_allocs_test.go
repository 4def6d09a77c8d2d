//go:build !race

package domain

import "testing"

// TestDecideA2A_Allocs pins the allocations of deciding a forwarded A2A
// message (issue 13: at most 2): the event co-allocated with its verdict,
// and the payload digest's string; finance_guard's totals are not
// allocated when the verdict does not record them. (Under the race
// detector sync.Pool drops items at random, hence the build tag.)
func TestDecideA2A_Allocs(t *testing.T) {
	for _, c := range a2aHotCases(t) {
		if n := testing.AllocsPerRun(200, func() { Decide(c.g.s, c.env, c.cmd) }); n > 2 {
			t.Errorf("%s: Decide allocates %v times per message, want at most 2", c.name, n)
		}
	}
}
