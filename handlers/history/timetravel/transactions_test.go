package timetravel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/timetravel"
)

// TestTransactionAtMatchesTheLiveReadSide captures each transaction from
// the live store right after every event of a gate's executes (decided,
// completed, a second one left executing, another consumer's) and
// compares TransactionAt at each seq with it: time travel shows a
// transaction exactly as the read side held it then, and never another
// consumer's.
func TestTransactionAtMatchesTheLiveReadSide(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC))
	g := gatetest.StartWith(t, embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: clock.Now})
	defer func() { g.Stop(t) }()
	n := 0
	submit := func(c *domain.Command) *domain.Event {
		n++
		c.Request = domain.RequestID{Source: "tt-tx", ID: fmt.Sprint(n)}
		return g.Submit(t, c)
	}
	agent := func(principal string) string {
		tl := domain.TrustLevel(1)
		return submit(&domain.Command{Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal, Register: &domain.RegisterAgent{
			Agent: domain.AgentInfo{Name: "tx", Type: "autonomous", PrincipalID: principal}, TrustLevel: &tl, TokenHash: command.HashSecret(gatetest.Token)}}).Registered.AgentID
	}
	a, b := agent("org_1"), agent("org_2")
	submit(&domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Business: &domain.BusinessChange{Op: domain.OpCreate,
		Business: domain.Business{ID: "shop", Name: "Shop", Endpoint: "http://127.0.0.1:9/", Currency: "USD"}}})
	type key struct {
		seq uint64
		id  string
	}
	live := map[key]string{}
	var ids []string
	capture := func(ev *domain.Event) {
		for _, id := range ids {
			for _, c := range []string{"org_1", "org_2"} {
				tx, err := g.Store.Transaction(c, id)
				if err == nil {
					j, _ := json.Marshal(tx)
					live[key{ev.Seq, c + "/" + id}] = string(j)
				}
			}
		}
	}
	exec := func(agent string, cents int) *domain.Event {
		clock.Advance(time.Minute)
		body := []byte(fmt.Sprintf(`{"amount_cents":%d}`, cents))
		h, _ := domain.RequestHashOf(body)
		ev := submit(&domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: command.HashSecret(gatetest.Token),
			Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: body, RequestHash: h}})
		ids = append(ids, ev.Transaction.ID)
		capture(ev)
		return ev
	}
	first := exec(a, 100)
	exec(b, 200)
	exec(a, 300)
	clock.Advance(time.Minute)
	capture(submit(&domain.Command{Type: domain.CmdExecuteOutcome, Outcome: &domain.ExecuteOutcome{TransactionID: first.Transaction.ID, HTTPStatus: 200, Status: "ok"}}))

	compared := 0
	for k, want := range live {
		consumer, id, _ := strings.Cut(k.id, "/")
		got, err := timetravel.TransactionAt(context.Background(), g.Log, consumer, id, k.seq)
		if err != nil {
			t.Fatalf("%s at %d: %v", k.id, k.seq, err)
		}
		j, _ := json.Marshal(got.Transaction)
		if string(j) != want {
			t.Fatalf("%s at %d:\n got %s\nlive %s", k.id, k.seq, j, want)
		}
		compared++
	}
	if compared < 8 {
		t.Fatalf("compared %d states", compared)
	}
	at, err := timetravel.TransactionAt(context.Background(), g.Log, "org_1", first.Transaction.ID, first.Seq)
	if err != nil || at.Transaction.Status != domain.TxExecuting {
		t.Fatalf("the first transaction when decided: %+v, %v", at, err)
	}
	if _, err := timetravel.TransactionAt(context.Background(), g.Log, "org_2", first.Transaction.ID, g.Log.Head().Seq); !errors.Is(err, timetravel.ErrNoTransactionAt) {
		t.Fatalf("another consumer's transaction: %v", err)
	}
	if _, err := timetravel.TransactionAt(context.Background(), g.Log, "org_1", first.Transaction.ID, first.Seq-1); !errors.Is(err, timetravel.ErrNoTransactionAt) {
		t.Fatalf("a transaction before it was decided: %v", err)
	}
}
