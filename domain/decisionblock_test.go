package domain

import (
	"encoding/json"
	"testing"
	"unsafe"
)

// TestDecisionBlockSizeClass pins the size of the block Decide allocates
// per verify decision: Go puts an 8-byte header before a pointerful
// object over 512 bytes, so a block of at most 1,016 bytes is served from
// the 1,024-byte size class and one of 1,017 from the 1,152-byte class
// (+128 B/op on every decision). A field added to Event, ActionDecided,
// Verification or the block must be paid for elsewhere in the block (see
// decisionBlock) or this bound raised knowingly, with the benchmark's B/op
// (docs/benchmarks.md).
func TestDecisionBlockSizeClass(t *testing.T) {
	const class, header = 1024, 8
	if n := unsafe.Sizeof(decisionBlock{}); n+header > class {
		t.Fatalf("decisionBlock is %d bytes: with the %d-byte malloc header it leaves the %d-byte size class "+
			"for the next (1,152), +128 B per decision; shrink the block by %d bytes", n, header, class, n+header-class)
	}
}

// TestDecisionBlockHoldsTheChecks: the decisions of
// BenchmarkDecideVerifyAction (the user guide's example body, and the
// same with intent, tokens and parameters) keep their passed checks in the
// block's array, so shrinking it costs them no allocation.
func TestDecisionBlockHoldsTheChecks(t *testing.T) {
	g := newGate(t)
	g.signer = nil
	id := g.register("bench", "trusted", nil, Limits{MaxDailyCost: 1000 * MicrosPerUSD, MaxRequestsPerHour: 100_000,
		MaxRequestsPerDay: 1_000_000, MaxDailyTokens: 1 << 40}, Permissions{AllowedEngines: []string{"math", "sql"}})
	full := verifyCmd(id, "bench", "conv_7", "1", "calculate", "2+2")
	full.Verify.Action.EstimatedTokens = 150
	full.Verify.Action.Parameters = json.RawMessage(`{"precision":2,"mode":"exact"}`)
	full.Verify.Context.UserIntent = "add two numbers"
	for _, cmd := range []*Command{verifyCmd(id, "bench", "conv_1", "1", "calculate", "2+2"), full} {
		ev := g.exec(cmd)
		if decision(ev) != Approved {
			t.Fatalf("decision %s %v", decision(ev), ev.Error)
		}
		block := (*decisionBlock)(unsafe.Pointer(ev))
		got := ev.Decided.Verification.ChecksPassed
		if len(got) == 0 || &got[0] != &block.checks[0] {
			t.Fatalf("%s: the %d passed checks %v left the block's array of %d", cmd.Verify.Context.ConversationID,
				len(got), got, len(block.checks))
		}
	}
}
