package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// setPolicy creates policy p for org_1 (its key) and checks it passed.
func (g *execGate) setPolicy(p policy.Policy) {
	g.t.Helper()
	ev := g.exec(&Command{Type: CmdPolicy, Principal: "org_1", Policy: &PolicyChange{Op: OpCreate, Policy: p}})
	if ev.Type != EvPolicyChanged {
		g.t.Fatalf("policy %s: %s %v", p.ID, ev.Type, ev.Error)
	}
}

func spendCap(id string, daily int64, onExceed string) policy.Policy {
	return policy.Policy{ID: id, Type: policy.TypeSpending, Spending: &policy.Spending{DailyCents: daily, OnExceed: onExceed}}
}

// TestSeed004_3_2_SpendingLimitBlocks: the consumer's daily limit is held
// against the rolling ledger of its transactions; the execute over it is
// blocked (403 QWED-POLICY-001 naming the policy and the limit), spends
// nothing, and a failed transaction gives its reservation back.
func TestSeed004_3_2_SpendingLimitBlocks(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	g.setPolicy(spendCap("daily-cap", 1000, policy.OnExceedBlock))
	first := executing(t, g.execute("shop", `{"amount_cents":600}`, ""))
	ev := g.execute("shop", `{"amount_cents":500}`, "")
	if ev.Type != EvExecuteDecided || ev.Transaction.Status != TxBlocked || code(ev) != CodePolicySpending ||
		ev.Error.Details["policy_id"] != "daily-cap" || ev.Transaction.PolicyID != "daily-cap" || ev.Transaction.Limit == "" {
		t.Fatalf("over the limit: %s %+v %+v", ev.Type, ev.Error, ev.Transaction)
	}
	if status, body := Reply(ev); status != 403 || !strings.Contains(string(mustJSON(t, body)), `"policy_id":"daily-cap"`) {
		t.Fatalf("blocked reply %d %+v", status, body)
	}
	if len(ev.Transaction.Notices) == 0 || ev.Transaction.Notices[0].Kind != NoticeBlocked {
		t.Fatalf("notices %+v", ev.Transaction.Notices)
	}
	if _, open := g.s.Exec.Open[ev.Transaction.ID]; open {
		t.Fatal("a blocked transaction is open")
	}
	executing(t, g.execute("shop", `{"amount_cents":400}`, "")) // exactly at the limit
	refusedTx := g.execute("shop", `{"amount_cents":1}`, "")
	if refusedTx.Transaction.Status != TxBlocked {
		t.Fatalf("past the limit: %+v", refusedTx.Transaction)
	}
	// The first transaction fails: its 600 cents come back.
	g.outcome(ExecuteOutcome{TransactionID: first.ID, Error: "timeout"})
	executing(t, g.execute("shop", `{"amount_cents":600}`, ""))
	// A day later the window has rolled.
	g.now = g.now.Add(24*time.Hour + time.Minute)
	executing(t, g.execute("shop", `{"amount_cents":1000}`, ""))
}

// TestSeed004_3_1_EveryPolicyType: categories block, confirmation asks
// the consumer (the approvals queue), a time window queues until it
// opens, and a shadow policy only records what it would have done.
func TestSeed004_3_1_EveryPolicyType(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	g.business("org_1", OpCreate, Business{ID: "casino", Name: "Casino", Categories: []string{"gambling"}, Endpoint: "https://casino.example", Currency: "USD"}, "")
	g.setPolicy(policy.Policy{ID: "no-gambling", Type: policy.TypeCategory, Category: &policy.Category{Mode: policy.ModeBlock, Categories: []string{"gambling"}}})
	ev := g.execute("casino", `{"amount_cents":1}`, "")
	if ev.Transaction.Status != TxBlocked || code(ev) != CodePolicyCategory {
		t.Fatalf("category: %+v %+v", ev.Transaction, ev.Error)
	}
	g.setPolicy(policy.Policy{ID: "shadow-cap", Type: policy.TypeSpending, Shadow: true, Spending: &policy.Spending{PerTransactionCents: 10}})
	ev = g.execute("shop", `{"amount_cents":50}`, "")
	tx := executing(t, ev)
	if len(tx.Findings) != 1 || !tx.Findings[0].Shadow || tx.Findings[0].Verdict != policy.Block || !strings.HasPrefix(tx.Findings[0].Message, "would have blocked") {
		t.Fatalf("shadow findings %+v", tx.Findings)
	}
	g.setPolicy(policy.Policy{ID: "big-ones", Type: policy.TypeConfirmation, Confirmation: &policy.Confirmation{AboveCents: 200}})
	ev = g.execute("shop", `{"amount_cents":300}`, "")
	if ev.Transaction.Status != TxPendingApproval || ev.Transaction.ApprovalID != ev.Transaction.ID || g.s.Approvals[ev.Transaction.ID] == nil {
		t.Fatalf("confirmation: %+v", ev.Transaction)
	}
	if status, body := Reply(ev); status != 202 || body.(ExecuteReply).ApprovalID != ev.Transaction.ID {
		t.Fatalf("pending reply %d %+v", status, body)
	}
	g.setPolicy(policy.Policy{ID: "office-hours", Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{TimeZone: "UTC",
		Windows: []policy.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "10:00", End: "17:00"}}, Outside: policy.OutsideQueue}})
	ev = g.execute("shop", `{"amount_cents":5}`, "") // t0 is Monday 09:00 UTC
	if ev.Transaction.Status != TxQueued || ev.Transaction.ReleaseAt == nil || !ev.Transaction.ReleaseAt.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("queued: %+v", ev.Transaction)
	}
	if status, body := Reply(ev); status != 202 || body.(ExecuteReply).ReleaseAt == nil {
		t.Fatalf("queued reply %d %+v", status, body)
	}
}

// TestSeed004_3_1_FirstTimeBusiness: the first execute of an agent at a
// business needs the consumer's confirmation; once approved the pair is
// known and the next one passes.
func TestSeed004_3_1_FirstTimeBusiness(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	g.setPolicy(policy.Policy{ID: "new-shops", Type: policy.TypeConfirmation, Confirmation: &policy.Confirmation{FirstTimeBusiness: true}})
	ev := g.execute("shop", `{"amount_cents":5}`, "")
	if ev.Transaction.Status != TxPendingApproval {
		t.Fatalf("first time: %+v", ev.Transaction)
	}
	g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: ev.Transaction.ID, Approve: true}})
	executing(t, g.execute("shop", `{"amount_cents":6}`, ""))
}

// TestSeed004_3_2_DeniedConfirmationSpendsNothing: a denied execute
// approval gives its reservation back.
func TestSeed004_3_2_DeniedConfirmationSpendsNothing(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	g.setPolicy(spendCap("cap", 100, policy.OnExceedConfirm))
	ev := g.execute("shop", `{"amount_cents":150}`, "")
	if ev.Transaction.Status != TxPendingApproval {
		t.Fatalf("over the limit with on_exceed confirm: %+v", ev.Transaction)
	}
	g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: ev.Transaction.ID}})
	executing(t, g.execute("shop", `{"amount_cents":100}`, ""))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
