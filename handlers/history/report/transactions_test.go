package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
)

// seedExecutes records executes of agent A through the gate (one the
// business completed, one still executing, one after the period) and one
// of another agent of the same principal.
func seedExecutes(t *testing.T) (*history, []string) {
	t.Helper()
	dir := t.TempDir()
	g, must := startSeedGate(t, dir, day1.Add(8*time.Hour))
	a := must(seedlog.Register("a", "org_p", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	b := must(seedlog.Register("b", "org_p", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	n := 0
	req := func() domain.RequestID { n++; return domain.RequestID{Source: "tx-report", ID: itoa(n)} }
	if ev := must(&domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Request: req(), Business: &domain.BusinessChange{
		Op: domain.OpCreate, Business: domain.Business{ID: "shop", Name: "Shop", Categories: []string{"food"}, Endpoint: "http://127.0.0.1:9/", Currency: "EUR"}}}); ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %+v", ev.Error)
	}
	exec := func(agent string, cents int) string {
		body := []byte(`{"amount_cents":` + itoa(cents) + `}`)
		h, err := domain.RequestHashOf(body)
		if err != nil {
			t.Fatal(err)
		}
		ev := must(&domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: command.HashSecret(seedlog.Token), Request: req(),
			Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: body, RequestHash: h}})
		if ev.Transaction == nil {
			t.Fatalf("execute: %s %+v", ev.Type, ev.Error)
		}
		return ev.Transaction.ID
	}
	ids := []string{exec(a, 1250), exec(a, 300)}
	if ev := must(&domain.Command{Type: domain.CmdExecuteOutcome, Request: req(), Outcome: &domain.ExecuteOutcome{
		TransactionID: ids[0], HTTPStatus: 200, Status: "ok"}}); ev.Type != domain.EvExecuteCompleted {
		t.Fatalf("outcome: %+v", ev.Error)
	}
	exec(b, 999)
	g.At(day4)
	exec(a, 77)
	h := &history{dir: dir, a: a, jwks: g.Keyring.JWKS()}
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	h.sign = signerOf(t, dir)
	return h, ids
}

// The compliance report lists the agent's executes of the period with
// their statuses and totals, in JSON, CSV and PDF, and nothing of another
// agent; the bundle carries them and fails when they are edited.
func TestComplianceReportListsTheAgentsTransactions(t *testing.T) {
	h, ids := seedExecutes(t)
	rep := build(t, h.dir, report.Options{AgentID: h.a, From: day1, To: day2})
	x := rep.Transactions
	if x == nil || len(x.List) != 2 || x.List[0].ID != ids[0] || x.List[1].ID != ids[1] || x.Truncated {
		t.Fatalf("transactions %+v", x)
	}
	if x.List[0].Status != domain.TxCompleted || x.List[1].Status != domain.TxExecuting {
		t.Fatalf("statuses %s, %s", x.List[0].Status, x.List[1].Status)
	}
	if a := x.Totals.Amounts; x.Totals.Count != 2 || len(a) != 1 || a[0].Currency != "EUR" || a[0].SpentCents != 1250 || a[0].PendingCents != 300 {
		t.Fatalf("totals %+v", x.Totals)
	}
	js, cs, pdf := renderAll(t, rep)
	for _, s := range []string{`"transactions": {`, `"spent_cents": 1250`, ids[1]} {
		if !bytes.Contains(js, []byte(s)) {
			t.Errorf("the JSON lacks %s", s)
		}
	}
	for _, s := range []string{"transactions,,list[0].status,string,completed", "transactions,,totals.count,number,2"} {
		if !bytes.Contains(cs, []byte(s)) {
			t.Errorf("the CSV lacks %s", s)
		}
	}
	text := pdfText(t, pdf, filepath.Join(t.TempDir(), "r.pdf"))
	for _, s := range []string{"Executes through the gate", ids[0], "completed", "1250 EUR"} {
		if !strings.Contains(text, s) {
			t.Errorf("the PDF text lacks %q", s)
		}
	}
	if quiet := build(t, h.dir, report.Options{AgentID: h.a, From: day2, To: day4}); quiet.Transactions != nil {
		t.Fatalf("a period without executes has transactions: %+v", quiet.Transactions)
	}

	raw := writeBundle(t, h, report.Options{AgentID: h.a, From: day1, To: day2})
	if chk := verifyBundle(t, raw); !chk.OK() {
		t.Fatalf("bundle: %+v", chk)
	}
	edited := bytes.Replace(raw, []byte(`"spent_cents": 1250`), []byte(`"spent_cents": 125`), 1)
	if bytes.Equal(edited, raw) {
		t.Fatal("the bundle's report has no spent_cents to edit")
	}
	if chk := verifyBundle(t, edited); chk.OK() {
		t.Fatal("a bundle whose transactions were edited verified")
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
}
