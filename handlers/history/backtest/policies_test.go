package backtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/history/backtest"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
)

// seedExecutes records agent X of org_x executing 400 cents at a shop
// four times, an hour apart, each completed by the business, and agent
// Y of org_y once; it returns the dir, X and the seqs of X's executes.
func seedExecutes(t *testing.T) (string, string, []uint64) {
	t.Helper()
	dir := t.TempDir()
	g, err := seedlog.Start(dir, day1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Stop(); err != nil {
			t.Fatal(err)
		}
	}()
	n := 0
	must := func(cmd *domain.Command) *domain.Event {
		t.Helper()
		n++
		cmd.Request = domain.RequestID{Source: "bt-exec", ID: fmt.Sprint(n)}
		ev, err := g.Submit(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	x := must(seedlog.Register("x", "org_x", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	y := must(seedlog.Register("y", "org_y", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	if ev := must(&domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Business: &domain.BusinessChange{Op: domain.OpCreate,
		Business: domain.Business{ID: "shop", Name: "Shop", Categories: []string{"food"}, Endpoint: "http://127.0.0.1:9/", Currency: "USD"}}}); ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %+v", ev.Error)
	}
	exec := func(agent string) *domain.Event {
		body := []byte(fmt.Sprintf(`{"amount_cents":400,"n":%d}`, n))
		h, _ := domain.RequestHashOf(body)
		ev := must(&domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: command.HashSecret(seedlog.Token),
			Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: body, RequestHash: h}})
		if ev.Transaction == nil || ev.Transaction.Status != domain.TxExecuting {
			t.Fatalf("execute: %s %+v", ev.Type, ev.Error)
		}
		must(&domain.Command{Type: domain.CmdExecuteOutcome, Outcome: &domain.ExecuteOutcome{TransactionID: ev.Transaction.ID, HTTPStatus: 200, Status: "ok"}})
		return ev
	}
	var seqs []uint64
	for range 4 {
		g.At(g.Now().Add(time.Hour))
		seqs = append(seqs, exec(x).Seq)
		exec(y)
	}
	return dir, x, seqs
}

// TestBacktestPolicyChanges re-decides recorded executes under a daily
// spending limit put at the period start: the executes past the limit
// would have been blocked (the rows name the policy and the transaction,
// the totals count executes by status), the business's recorded outcome
// of a now blocked execute is refused in turn, another consumer's
// executes are not touched, and without changes every execute is
// reproduced.
func TestBacktestPolicyChanges(t *testing.T) {
	dir, x, seqs := seedExecutes(t)
	same := run(t, dir, backtest.Options{PrincipalID: "org_x", From: day1, To: day3})
	if same.Totals.Changed != 0 || same.Totals.Executes != 4 || same.Totals.RecordedExecutes[domain.TxExecuting] != 4 {
		t.Fatalf("without changes: %+v", same.Totals)
	}
	pc, err := backtest.ParsePolicyChanges([]byte(`{"put":[{"id":"cap","type":"spending","spending":{"daily_cents":1000}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, dir, backtest.Options{AgentID: x, From: day1, To: day3, Policies: pc})
	if res.PolicyChanges == nil || len(res.PolicyChanges.Put) != 1 {
		t.Fatalf("policy changes not reported: %+v", res.PolicyChanges)
	}
	if got := res.Totals.BacktestExecutes; got[domain.TxExecuting] != 2 || got[domain.TxBlocked] != 2 {
		t.Fatalf("backtest executes %v, want 2 executing and 2 blocked", got)
	}
	var blocked []uint64
	for _, r := range res.Decisions {
		if r.Command == domain.CmdExecute {
			if r.Backtest.Status != domain.TxBlocked || r.Backtest.PolicyID != "cap" || r.TransactionID == "" || r.AmountCents != 400 {
				t.Errorf("row %+v", r)
			}
			blocked = append(blocked, r.Seq)
		}
	}
	if fmt.Sprint(blocked) != fmt.Sprint(seqs[2:]) {
		t.Fatalf("blocked executes at %v, want %v", blocked, seqs[2:])
	}
	var sb strings.Builder
	if err := res.WriteTable(&sb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"policy changes: put cap (spending)", "execute blocked (policy cap)", "executes: 4; recorded executing 4; backtest blocked 2, executing 2"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, sb.String())
		}
	}
	other := run(t, dir, backtest.Options{PrincipalID: "org_y", From: day1, To: day3, Policies: pc})
	if other.Totals.Changed == 0 {
		t.Fatal("org_y's own executes were not re-decided under its changed policy")
	}
}

// TestParsePolicyChanges pins the file's checks: the gate's own policy
// decoder, no version, no id twice, no unknown member.
func TestParsePolicyChanges(t *testing.T) {
	pc, err := backtest.ParsePolicyChanges([]byte(`{"put":[{"id":"b","type":"category","category":{"mode":"block","categories":["gambling"]}},{"id":"a","type":"spending","spending":{"per_transaction_cents":50}}],"delete":["z"]}`))
	if err != nil || len(pc.Put) != 2 || pc.Put[0].ID != "a" || pc.Delete[0] != "z" {
		t.Fatalf("%+v, %v", pc, err)
	}
	for _, bad := range []struct{ file, msg string }{
		{`{"put":[{"id":"a","type":"spending","spending":{}}]}`, "put[0]"},
		{`{"put":[{"id":"a","type":"spending","spending":{"daily_cents":5},"version":3}]}`, "put[0]"},
		{`{"put":[{"id":"a","type":"spending","spending":{"daily_cents":5}}],"delete":["a"]}`, "changed twice"},
		{`{"put":[{"id":"a","type":"time_window","time_window":{"time_zone":"Mars/Base","windows":[{"days":["mon"],"start":"09:00","end":"17:00"}]}}]}`, "put[0]"},
		{`{"add":[]}`, "unknown field"},
		{`{"put":[]} {}`, "trailing data"},
	} {
		if _, err := backtest.ParsePolicyChanges([]byte(bad.file)); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: %v, want %q", bad.file, err, bad.msg)
		}
	}
}
