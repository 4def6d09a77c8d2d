package domain

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// BenchmarkDecideExecute is Decide of one execute (open mode) by a
// consumer with 20 policies of the four types (all passing, the worst
// case: every one is evaluated) and a ledger holding a day of spend: the
// request's checks, the exact amount, policy.Evaluate and the event.
func BenchmarkDecideExecute(b *testing.B) {
	for _, n := range []int{0, 20} {
		b.Run("policies="+strconv.Itoa(n), func(b *testing.B) {
			g := newBenchExecGate(b, n)
			r := json.RawMessage(`{"item":"espresso","amount":"2.50","notes":"no sugar"}`)
			h, err := RequestHashOf(r)
			if err != nil {
				b.Fatal(err)
			}
			cmd := &Command{Type: CmdExecute, Request: RequestID{Source: "http", ID: "bench"}, AgentID: g.agent, TokenHash: tokenHash("buyer"),
				Execute: &ExecuteRequest{BusinessID: "shop", Request: r, RequestHash: h}}
			env := Env{Now: g.now, Seq: g.seq + 1, Partition: 3}
			if ev := Decide(g.s, env, cmd); ev.Type != EvExecuteDecided || ev.Transaction.Status != TxExecuting {
				b.Fatalf("the benchmark's execute: %s %+v %+v", ev.Type, ev.Error, ev.Transaction)
			}
			b.ReportAllocs()
			for b.Loop() {
				Decide(g.s, env, cmd)
			}
		})
	}
}

// newBenchExecGate is an execGate whose consumer has n policies (cycling
// through the four types, each passing the benchmark's execute) and a
// day of spend in its ledger.
func newBenchExecGate(b *testing.B, n int) *execGate {
	g := &execGate{gate: newGate(b)}
	g.agent = g.register("buyer", "autonomous", nil, Limits{}, Permissions{})
	g.exec(&Command{Type: CmdBusiness, Principal: "org_1", Business: &BusinessChange{Op: OpCreate, Business: Business{ID: "shop", Name: "Shop",
		Categories: []string{"food", "retail"}, Endpoint: "https://shop.example", Currency: "USD"}}})
	for i := range n {
		id := "p" + strconv.Itoa(i)
		var p policy.Policy
		switch i % 4 {
		case 0:
			p = policy.Policy{ID: id, Type: policy.TypeSpending, Spending: &policy.Spending{PerTransactionCents: 100_000, DailyCents: 1_000_000,
				WeeklyCents: 5_000_000, MonthlyCents: 20_000_000}}
		case 1:
			p = policy.Policy{ID: id, Type: policy.TypeCategory, Category: &policy.Category{Mode: policy.ModeBlock, Categories: []string{"gambling", "adult"}}}
		case 2:
			p = policy.Policy{ID: id, Type: policy.TypeConfirmation, Confirmation: &policy.Confirmation{AboveCents: 1_000_000}}
		default:
			p = policy.Policy{ID: id, Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{TimeZone: "Europe/Paris",
				Windows: []policy.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "00:00", End: "24:00"}}}}
		}
		if ev := g.exec(&Command{Type: CmdPolicy, Principal: "org_1", Policy: &PolicyChange{Op: OpCreate, Policy: p}}); ev.Type != EvPolicyChanged {
			b.Fatalf("policy %s: %v", id, ev.Error)
		}
	}
	for i := range 200 {
		g.now = g.now.Add(7 * time.Minute)
		r := json.RawMessage(`{"amount_cents":` + strconv.Itoa(100+i) + `}`)
		h, _ := RequestHashOf(r)
		ev := g.exec(&Command{Type: CmdExecute, AgentID: g.agent, TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "shop", Request: r, RequestHash: h}})
		if ev.Type != EvExecuteDecided {
			b.Fatalf("spend %d: %v", i, ev.Error)
		}
		g.exec(&Command{Type: CmdExecuteOutcome, Request: RequestID{Source: "agentgate/adapter", ID: ev.Transaction.ID}, Outcome: &ExecuteOutcome{TransactionID: ev.Transaction.ID, Status: "ok"}})
	}
	return g
}
