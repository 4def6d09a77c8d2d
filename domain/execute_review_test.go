package domain

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// TestReview_AmountMemberInAnotherCase: a business decoding the request
// with Go's encoding/json (or any case-insensitive reader) matches member
// names without regard to case, Unicode simple folding included
// ("amount_centſ" is "amount_cents" to it): such a member would be the
// amount the business charges while the gate reads none (0) or another
// one, past every spending policy and the strict ceiling. Any member whose
// name folds to amount or amount_cents without being it is refused.
func TestReview_AmountMemberInAnotherCase(t *testing.T) {
	for _, c := range []struct{ body, field string }{
		{`{"AMOUNT_CENTS":99999}`, "request.amount_cents"},
		{`{"amount_cents":1,"Amount_Cents":5}`, "request.amount_cents"},
		{`{"amount_cent\u017f":77}`, "request.amount_cents"},
		{`{"Amount":"12"}`, "request.amount"},
		{`{"amount":"0.01","AMOUNT":"99"}`, "request.amount"},
	} {
		got, err := executeAmount([]byte(c.body), "USD")
		if err == nil || err.Code != CodeInvalidRequest || err.Details["field"] != c.field {
			t.Errorf("%s = %d, %+v; want a refusal of %s", c.body, got, err, c.field)
		}
	}
	g := newExecGate(t, ExecuteModeOpen, 100)
	refused(t, g.execute("shop", `{"Amount_Cents":5000}`, ""), CodeInvalidRequest, "")
	if len(g.s.Exec.Open) != 0 {
		t.Fatal("a refused amount opened a transaction")
	}
	// Members that merely resemble them are not amounts.
	for _, body := range []string{`{"amounts":5}`, `{"amount_cents_max":5}`, `{"total_amount":5}`} {
		if got, err := executeAmount([]byte(body), "USD"); err != nil || got != 0 {
			t.Errorf("%s = %d, %v; want 0", body, got, err)
		}
	}
}

// TestReview_SpendCountsFromWhenTheBusinessIsCalled: a transaction held
// for the consumer's approval, or queued until a window opens, calls the
// business when it is approved or released, possibly days after it was
// decided. Its amount must count in the rolling totals from then, not only
// from its decision: else a daily limit of 1000 lets 1000 approved after
// 23h50 and 1000 more 12 minutes later reach the business (2000 within
// 24 hours), and two queued executes released together spend twice the
// limit in the same minute.
func TestReview_SpendCountsFromWhenTheBusinessIsCalled(t *testing.T) {
	t.Run("approved", func(t *testing.T) {
		g := newExecGate(t, ExecuteModeOpen, 100)
		g.setPolicy(spendCap("daily", 1000, policy.OnExceedBlock))
		g.setPolicy(policy.Policy{ID: "ask", Type: policy.TypeConfirmation, Confirmation: &policy.Confirmation{AboveCents: 500}})
		ev := g.execute("shop", `{"amount_cents":1000}`, "")
		if ev.Transaction.Status != TxPendingApproval {
			t.Fatalf("decided %+v", ev.Transaction)
		}
		g.now = t0.Add(23*time.Hour + 50*time.Minute)
		ap := g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: ev.Transaction.ID, Approve: true}})
		if ap.Transaction == nil || ap.Transaction.Status != TxExecuting {
			t.Fatalf("approval %+v %+v", ap.Error, ap.Transaction)
		}
		g.now = t0.Add(24*time.Hour + 2*time.Minute)
		if ev := g.execute("shop", `{"amount_cents":400}`, ""); ev.Transaction == nil || ev.Transaction.Status != TxPendingApproval && ev.Transaction.Status != TxBlocked {
			t.Fatalf("12 minutes after 1000 went to the business: %+v", ev.Transaction)
		}
		if ev := g.execute("shop", `{"amount_cents":400}`, ""); ev.Transaction == nil || ev.Transaction.Status != TxBlocked {
			t.Fatalf("12 minutes after 1000 went to the business, 400 more: %+v", ev.Transaction)
		}
		// The approved transaction fails: its amount comes back from where
		// it counts now.
		g.outcome(ExecuteOutcome{TransactionID: ev.Transaction.ID, Error: "timeout"})
		if tot := g.s.Exec.Consumers["org_1"].Ledger.Totals(g.now, nil, ""); tot.Day != 0 || tot.Month != 0 {
			t.Fatalf("after the failure the ledger holds %+v", tot)
		}
		executing(t, g.execute("shop", `{"amount_cents":400}`, ""))
	})
	t.Run("released", func(t *testing.T) {
		g := newExecGate(t, ExecuteModeOpen, 100)
		g.setPolicy(spendCap("daily", 1000, policy.OnExceedBlock))
		g.setPolicy(policy.Policy{ID: "sundays", Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{TimeZone: "UTC",
			Windows: []policy.Window{{Days: []string{"sun"}, Start: "10:00", End: "11:00"}}, Outside: policy.OutsideQueue}})
		first := g.execute("shop", `{"amount_cents":1000}`, "") // Monday 09:00: queued until Sunday 10:00
		if first.Transaction.Status != TxQueued {
			t.Fatalf("decided %+v", first.Transaction)
		}
		g.now = *first.Transaction.ReleaseAt
		tick := g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: "sun"}})
		if tick == nil || len(tick.Timers.Released) != 1 {
			t.Fatalf("tick %+v", tick)
		}
		g.now = g.now.Add(time.Minute)
		if ev := g.execute("shop", `{"amount_cents":1000}`, ""); ev.Transaction == nil || ev.Transaction.Status != TxBlocked {
			t.Fatalf("a minute after 1000 went to the business, 1000 more: %+v", ev.Transaction)
		}
	})
}

// TestReview_NoOvershootProperty: a long run of executes, approvals,
// denials, outcomes and ticks (a fixed seed), under a daily limit of 1000
// cents with confirmation above 300 and a queueing time window: whatever
// the interleaving, the amounts that reach the business (from when each is
// called: its decision, its approval or its release; a failed call gives
// its amount back) never sum past the limit within any 24 hours.
func TestReview_NoOvershootProperty(t *testing.T) {
	const limit = 1000
	g := newExecGate(t, ExecuteModeOpen, 100)
	g.setPolicy(spendCap("daily", limit, policy.OnExceedBlock))
	g.setPolicy(policy.Policy{ID: "ask", Type: policy.TypeConfirmation, Confirmation: &policy.Confirmation{AboveCents: 300}})
	g.setPolicy(policy.Policy{ID: "hours", Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{TimeZone: "Europe/Paris",
		Windows: []policy.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "08:00", End: "18:00"}}, Outside: policy.OutsideQueue}})
	type charge struct {
		at     time.Time
		amount int64
	}
	charges := map[string]charge{}
	var pending, calling []string
	amounts := map[string]int64{}
	call := func(id string, at time.Time) {
		charges[id] = charge{at, amounts[id]}
		calling = append(calling, id)
	}
	rng := rand.New(rand.NewPCG(14, 2026))
	pick := func(l *[]string) string {
		i := rng.IntN(len(*l))
		id := (*l)[i]
		*l = append((*l)[:i], (*l)[i+1:]...)
		return id
	}
	for step := range 1500 {
		g.now = g.now.Add(time.Duration(rng.IntN(120)) * time.Minute)
		switch r := rng.IntN(100); {
		case r < 55:
			ev := g.execute("shop", `{"amount_cents":`+strconv.Itoa(1+rng.IntN(400))+`}`, "")
			tx := ev.Transaction
			if tx == nil {
				t.Fatalf("step %d: %s %+v", step, ev.Type, ev.Error)
			}
			amounts[tx.ID] = tx.AmountCents
			switch tx.Status {
			case TxExecuting:
				call(tx.ID, ev.Time)
			case TxPendingApproval:
				pending = append(pending, tx.ID)
			}
		case r < 70 && len(pending) > 0:
			id := pick(&pending)
			ev := g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id, Approve: rng.IntN(10) < 7}})
			if ev.Transaction != nil && ev.Transaction.Status == TxExecuting {
				call(id, ev.Time)
			}
		case r < 85 && len(calling) > 0:
			id := pick(&calling)
			o := ExecuteOutcome{TransactionID: id, Status: "ok"}
			switch rng.IntN(10) {
			case 0:
				o = ExecuteOutcome{TransactionID: id, Error: "timeout"}
			case 1:
				o.Status = TxPendingConfirmation
			}
			if ev := g.outcome(o); ev.Type != EvExecuteCompleted {
				t.Fatalf("step %d: outcome %+v", step, ev.Error)
			} else if ev.Transaction.Status != TxCompleted {
				delete(charges, id)
			}
		default:
			g.exec(&Command{Type: CmdTick, Request: RequestID{Source: "agentgate/tick", ID: "a" + strconv.Itoa(step)}})
			if ev := g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: "e" + strconv.Itoa(step)}}); ev != nil {
				for _, id := range ev.Timers.Released {
					call(id, ev.Time)
				}
			}
		}
	}
	if len(charges) < 100 {
		t.Fatalf("only %d executes reached the business: the run tests little", len(charges))
	}
	for id, c := range charges {
		var sum int64
		for _, o := range charges {
			if !o.at.After(c.at) && o.at.After(c.at.Add(-24*time.Hour)) {
				sum += o.amount
			}
		}
		if sum > limit {
			t.Fatalf("the 24 hours up to %s (transaction %s) sent %d cents to the business, past the daily limit of %d", c.at, id, sum, limit)
		}
	}
}
