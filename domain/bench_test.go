package domain

import (
	"encoding/json"
	"strconv"
	"testing"
)

// BenchmarkDecideVerifyAction measures one approved verify_action on a warm
// state: a registered trusted agent with a hundred conversations, a
// calculate action at a fresh step each iteration (so the decision is
// always APPROVED), no attestation. Decide only: the state is not changed.
func BenchmarkDecideVerifyAction(b *testing.B) {
	g := newGate(b)
	g.signer = nil
	id := g.register("bench", "trusted", nil, Limits{MaxDailyCost: 1000 * MicrosPerUSD, MaxRequestsPerHour: 100_000,
		MaxRequestsPerDay: 1_000_000, MaxDailyTokens: 1 << 40}, Permissions{AllowedEngines: []string{"math", "sql"}})
	for i := 0; i < 100; i++ {
		ev := g.exec(verifyCmd(id, "bench", "conv_"+strconv.Itoa(i), "1", "calculate", "1+"+strconv.Itoa(i)))
		if decision(ev) != Approved {
			b.Fatalf("warm-up: %v", ev.Error)
		}
	}
	steps := make([]json.Number, 49)
	for i := range steps {
		steps[i] = json.Number(strconv.Itoa(i + 2))
	}
	cmd := verifyCmd(id, "bench", "conv_7", "2", "calculate", "2+2")
	cmd.Request = RequestID{Source: "bench", ID: "r"}
	cmd.Verify.Action.EstimatedTokens = 150
	cmd.Verify.Context.UserIntent = "add two numbers"
	env := Env{Now: g.now, Seq: 1000, Partition: 1}
	if ev := Decide(g.s, env, cmd); decision(ev) != Approved {
		b.Fatalf("decision %s %v", decision(ev), ev.Error)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd.Verify.Context.StepNumber = steps[i%len(steps)]
		ev := Decide(g.s, env, cmd)
		if ev.Decided.Decision != Approved {
			b.Fatal(ev.Decided.Decision)
		}
	}
}
