package domain

import (
	"encoding/json"
	"strconv"
	"testing"
)

// BenchmarkDecideVerifyAction measures one approved verify_action on a warm
// state: a registered trusted agent with budgets on every daily and hourly
// dimension and a hundred conversations, a calculate action at a fresh step
// each iteration (so the decision is always APPROVED), no attestation.
// Decide only: the state is not changed.
//
//	seed001: the QWED-Agent user guide's example body ({"type":"calculate","query":"2+2"},
//	         conversation_id and step_number only)
//	full:    the same with user_intent, estimated tokens and parameters
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
	run := func(b *testing.B, cmd *Command) {
		cmd.Request = RequestID{Source: "bench", ID: "r"}
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
	b.Run("seed001", func(b *testing.B) {
		run(b, verifyCmd(id, "bench", "conv_1", "2", "calculate", "2+2"))
	})
	b.Run("full", func(b *testing.B) {
		cmd := verifyCmd(id, "bench", "conv_7", "2", "calculate", "2+2")
		cmd.Verify.Action.EstimatedTokens = 150
		cmd.Verify.Action.Parameters = json.RawMessage(`{"precision":2,"mode":"exact"}`)
		cmd.Verify.Context.UserIntent = "add two numbers"
		run(b, cmd)
	})
}

// BenchmarkRequestDigests measures the digests of the two verify_action
// bodies of BenchmarkDecideVerifyAction by the fast path Decide takes and by
// the general path (raw JSON canonicalized by jcs).
func BenchmarkRequestDigests(b *testing.B) {
	seed := &VerifyAction{Action: Action{Type: "calculate", Query: "2+2"}, Context: ActionContext{ConversationID: "conv_1", StepNumber: "2"}}
	full := &VerifyAction{Action: Action{Type: "calculate", Query: "2+2", EstimatedTokens: 150,
		Parameters: json.RawMessage(`{"precision":2,"mode":"exact"}`)},
		Context: ActionContext{ConversationID: "conv_7", StepNumber: "2", UserIntent: "add two numbers"}}
	req := RequestID{Source: "bench", ID: "r"}
	for _, c := range []struct {
		name string
		v    *VerifyAction
	}{{"seed001", seed}, {"full", full}} {
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := actionDigests(c.v, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/general", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := actionDigestsGeneral(c.v, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
