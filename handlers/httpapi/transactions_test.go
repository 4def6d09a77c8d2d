package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

var txRequests atomic.Int64

// txSubmit submits cmd straight to the gate's worker (the path the
// execute endpoints and the adapter take once the command is built) and
// returns its event.
func (g *testGate) txSubmit(cmd *domain.Command) *domain.Event {
	g.t.Helper()
	cmd.Request = domain.RequestID{Source: "tx-reads-test", ID: fmt.Sprint("r", txRequests.Add(1))}
	ev, err := g.gate.Worker.Submit(context.Background(), cmd)
	if err != nil {
		g.t.Fatalf("submitting %s: %v", cmd.Type, err)
	}
	return ev
}

// txBusiness registers a business (the admin's).
func (g *testGate) txBusiness(id string, cats ...string) {
	g.t.Helper()
	ev := g.txSubmit(&domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Business: &domain.BusinessChange{
		Op: domain.OpCreate, Business: domain.Business{ID: id, Name: id, Categories: cats, Endpoint: "http://127.0.0.1:9/" + id, Currency: "USD"}}})
	if ev.Type != domain.EvBusinessChanged {
		g.t.Fatalf("creating business %s: %+v", id, ev.Error)
	}
}

// txExecute executes cents at business as ag and returns the transaction;
// with status set, the business's outcome is recorded as that status.
func (g *testGate) txExecute(ag agent, business string, cents int, status string) domain.Transaction {
	g.t.Helper()
	body := fmt.Sprintf(`{"amount_cents":%d,"item":"n%d"}`, cents, txRequests.Load())
	h, err := domain.RequestHashOf([]byte(body))
	if err != nil {
		g.t.Fatal(err)
	}
	ev := g.txSubmit(&domain.Command{Type: domain.CmdExecute, AgentID: ag.id, TokenHash: command.HashSecret(ag.token),
		Execute: &domain.ExecuteRequest{BusinessID: business, Request: []byte(body), RequestHash: h}})
	if ev.Type != domain.EvExecuteDecided || ev.Transaction == nil {
		g.t.Fatalf("executing at %s: %s %+v", business, ev.Type, ev.Error)
	}
	if status != "" {
		out := g.txSubmit(&domain.Command{Type: domain.CmdExecuteOutcome, Outcome: &domain.ExecuteOutcome{
			TransactionID: ev.Transaction.ID, HTTPStatus: 200, Status: status, Data: []byte(`{"ok":true}`)}})
		if out.Type != domain.EvExecuteCompleted {
			g.t.Fatalf("recording the outcome of %s: %s %+v", ev.Transaction.ID, out.Type, out.Error)
		}
		return *out.Transaction
	}
	return *ev.Transaction
}

// txIDs reads the ids of a transactions page.
func txIDs(t *testing.T, r response) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var ids []string
	for _, x := range r.json(t)["transactions"].([]any) {
		ids = append(ids, x.(map[string]any)["transaction_id"].(string))
	}
	return ids
}

// TestTransactionReadsAreTheConsumers reads transactions, one and a page
// at a time, under every filter and credential: a consumer's key reads
// its own transactions and no other consumer's (another's id is not
// found, naming another consumer is forbidden), the admin names the
// consumer it reads, newest first, paged with an opaque cursor.
func TestTransactionReadsAreTheConsumers(t *testing.T) {
	g := withLog(t, newTestGate(t, gateOptions{}))
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a1, a2 := g.register(keyA, "org_a", 1, nil), g.register(keyA, "org_a", 1, nil)
	b1 := g.register(keyB, "org_b", 1, nil)
	g.txBusiness("shop", "food")
	g.txBusiness("air", "travel")
	t1 := g.txExecute(a1, "shop", 500, "ok")
	g.clock.Advance(60e9)
	t2 := g.txExecute(a2, "air", 1200, "")
	tb := g.txExecute(b1, "shop", 300, "ok")

	list := func(key, query string) response { return g.do("GET", "/transactions"+query, apiKey(key), nil) }
	if got := txIDs(t, list(keyA, "")); len(got) != 2 || got[0] != t2.ID || got[1] != t1.ID {
		t.Fatalf("org_a's transactions %v, want [%s %s]", got, t2.ID, t1.ID)
	}
	if got := txIDs(t, list(keyB, "")); len(got) != 1 || got[0] != tb.ID {
		t.Fatalf("org_b's transactions %v", got)
	}
	for q, want := range map[string]string{
		"?agent=" + a1.id: t1.ID, "?status=executing": t2.ID, "?category=travel": t2.ID, "?business=shop": t1.ID,
		"?status=completed&category=food": t1.ID, "?from=2026-03-02T10:00:30Z": t2.ID, "?to=2026-03-02T10:00:30Z": t1.ID,
	} {
		if got := txIDs(t, list(keyA, q)); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %v, want [%s]", q, got, want)
		}
	}
	// Paged one at a time.
	r := list(keyA, "?limit=1")
	next, _ := r.json(t)["next_after"].(string)
	if got := txIDs(t, r); len(got) != 1 || got[0] != t2.ID || next == "" {
		t.Fatalf("first page %v, next %q", got, next)
	}
	r = list(keyA, "?limit=1&after="+url.QueryEscape(next))
	if got := txIDs(t, r); len(got) != 1 || got[0] != t1.ID || r.json(t)["next_after"] != nil {
		t.Fatalf("second page %v: %s", got, r.body)
	}

	// One transaction: the consumer's own; another's is not found.
	if r := g.do("GET", "/transactions/"+t1.ID, apiKey(keyA), nil); r.status != http.StatusOK || r.json(t)["status"] != domain.TxCompleted ||
		r.json(t)["business_status"] != "ok" {
		t.Fatalf("reading %s: %d %s", t1.ID, r.status, r.body)
	}
	if r := g.do("GET", "/transactions/"+tb.ID, apiKey(keyA), nil); r.status != http.StatusNotFound {
		t.Fatalf("org_a reading org_b's transaction: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/transactions/"+tb.ID, apiKey(testAdminKey), nil); r.status != http.StatusOK {
		t.Fatalf("the admin reading a transaction: %d %s", r.status, r.body)
	}
	// As of its decision (time travel): still executing then.
	decided := fmt.Sprint(g.do("GET", "/transactions/"+t1.ID, apiKey(keyA), nil).json(t)["seq"])
	if r := g.do("GET", "/transactions/"+t1.ID+"?at_seq="+decided, apiKey(keyA), nil); r.status != http.StatusOK ||
		r.json(t)["status"] != domain.TxExecuting || fmt.Sprint(r.json(t)["at_seq"]) != decided {
		t.Fatalf("reading %s at seq %s: %d %s", t1.ID, decided, r.status, r.body)
	}
	for _, c := range []struct {
		key, query string
		status     int
	}{
		{keyB, "?at_seq=" + decided, http.StatusNotFound},
		{keyA, "?at_seq=1", http.StatusNotFound},
		{keyA, "?at_seq=99999", http.StatusBadRequest},
		{keyA, "?at_seq=0", http.StatusBadRequest},
		{keyA, "?at_seq=3&at_time=2026-03-02T10:00:00Z", http.StatusBadRequest},
		{testAdminKey, "?at_seq=" + decided, http.StatusBadRequest},
	} {
		if r := g.do("GET", "/transactions/"+t1.ID+c.query, apiKey(c.key), nil); r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.query, r.status, r.body, c.status)
		}
	}
	if r := g.do("GET", "/transactions/"+t1.ID+"?consumer=org_a&at_time=2026-03-02T10:05:00Z", apiKey(testAdminKey), nil); r.status != http.StatusOK ||
		r.json(t)["status"] != domain.TxCompleted {
		t.Fatalf("the admin reading the present through at_time: %d %s", r.status, r.body)
	}

	// Credentials and scope.
	for _, c := range []struct {
		key, query string
		status     int
		code       domain.Code
	}{
		{"", "", http.StatusUnauthorized, domain.CodeMissingAPIKey},
		{"nope", "", http.StatusUnauthorized, domain.CodeInvalidAPIKey},
		{keyA, "?consumer=org_b", http.StatusForbidden, domain.CodeForbidden},
		{testAdminKey, "", http.StatusBadRequest, domain.CodeMissingField},
		{keyA, "?status=lost", http.StatusBadRequest, domain.CodeInvalidRequest},
		{keyA, "?after=xyz", http.StatusBadRequest, domain.CodeInvalidRequest},
		{keyA, "?limit=0", http.StatusBadRequest, domain.CodeInvalidRequest},
		{keyA, "?from=2026-03-03&to=2026-03-02", http.StatusBadRequest, domain.CodeInvalidRequest},
		{keyA, "?agent=a&agent=b", http.StatusBadRequest, domain.CodeInvalidRequest},
		{keyA, "?period=day", http.StatusBadRequest, domain.CodeInvalidRequest},
	} {
		h := hdr{}
		if c.key != "" {
			h = apiKey(c.key)
		}
		r := g.do("GET", "/transactions"+c.query, h, nil)
		if r.status != c.status || r.errorCode(t) != string(c.code) {
			t.Errorf("key %q%s: %d %s, want %d %s", c.key, c.query, r.status, r.body, c.status, c.code)
		}
	}
	if got := txIDs(t, list(testAdminKey, "?consumer=org_b")); len(got) != 1 || got[0] != tb.ID {
		t.Fatalf("the admin reading org_b: %v", got)
	}
}

// TestTransactionSummaryTotals pins the summary: totals per period bucket,
// agent, business and category, amounts by what happened to the money
// (spent, pending, refused), only the consumer's own transactions.
func TestTransactionSummaryTotals(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a1, a2 := g.register(keyA, "org_a", 1, nil), g.register(keyA, "org_a", 1, nil)
	b1 := g.register(keyB, "org_b", 1, nil)
	g.txBusiness("shop", "food", "gifts")
	g.txBusiness("air", "travel")
	g.txExecute(a1, "shop", 500, "ok")
	g.txExecute(a1, "shop", 250, "")
	g.clock.Advance(24 * 3600e9)
	g.txExecute(a2, "air", 1200, "ok")
	g.txExecute(b1, "shop", 999, "ok")

	r := g.do("GET", "/transactions/summary?period=day&from=2026-03-01", apiKey(keyA), nil)
	if r.status != http.StatusOK {
		t.Fatalf("summary: %d %s", r.status, r.body)
	}
	m := r.json(t)
	totals := m["totals"].(map[string]any)
	amounts := totals["amounts"].([]any)[0].(map[string]any)
	if totals["count"] != 3.0 || amounts["currency"] != "USD" || amounts["spent_cents"] != 1700.0 || amounts["pending_cents"] != 250.0 {
		t.Fatalf("totals %v", totals)
	}
	days := m["by_period"].([]any)
	if len(days) != 2 || days[0].(map[string]any)["start"] != "2026-03-02T00:00:00Z" || days[0].(map[string]any)["count"] != 2.0 {
		t.Fatalf("by day %v", days)
	}
	keys := func(field string) (out []string) {
		for _, x := range m[field].([]any) {
			out = append(out, x.(map[string]any)["key"].(string))
		}
		return out
	}
	if got := keys("by_category"); fmt.Sprint(got) != "[food gifts travel]" {
		t.Errorf("categories %v", got)
	}
	if got := keys("by_business"); fmt.Sprint(got) != "[air shop]" {
		t.Errorf("businesses %v", got)
	}
	if got := keys("by_agent"); len(got) != 2 {
		t.Errorf("agents %v", got)
	}
	r = g.do("GET", "/transactions/summary?period=week&from=2026-03-01&agent="+a1.id, apiKey(keyA), nil)
	if m := r.json(t); m["totals"].(map[string]any)["count"] != 2.0 || len(m["by_period"].([]any)) != 1 {
		t.Fatalf("a1's weekly summary: %s", r.body)
	}
	r = g.do("GET", "/transactions/summary?from=2026-03-01", apiKey(keyB), nil)
	if m := r.json(t); m["totals"].(map[string]any)["count"] != 1.0 || m["consumer"] != "org_b" {
		t.Fatalf("org_b's summary: %s", r.body)
	}
	for _, q := range []string{"?period=year", "?from=2024-01-01", "?limit=5", "?consumer=org_b"} {
		r := g.do("GET", "/transactions/summary"+q, apiKey(keyA), nil)
		if r.status != http.StatusBadRequest && r.status != http.StatusForbidden {
			t.Errorf("summary%s: %d %s", q, r.status, r.body)
		}
	}
}

// TestTransactionAnalyticsFlagsAnAnomaly pins GET /transactions/analytics
// on a consumer's history: daily spends, then one far above the agent's
// own: the day's trend shows it, it is flagged, the recommended limits
// block it (and are handed back as a backtest policy file), and another
// consumer sees none of it.
func TestTransactionAnalyticsFlagsAnAnomaly(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a1 := g.register(keyA, "org_a", 1, nil)
	g.txBusiness("shop", "food")
	for i := range 20 {
		g.txExecute(a1, "shop", 500+10*(i%3), "ok")
		g.clock.Advance(24 * 3600e9)
	}
	big := g.txExecute(a1, "shop", 90000, "ok")
	g.clock.Advance(3600e9)

	r := g.do("GET", "/transactions/analytics?from=2026-03-01&to=2026-03-31", apiKey(keyA), nil)
	if r.status != http.StatusOK {
		t.Fatalf("analytics: %d %s", r.status, r.body)
	}
	m := r.json(t)
	if m["currency"] != "USD" || m["time_zone"] != "UTC" || len(m["daily"].([]any)) != 30 {
		t.Fatalf("analytics %s", r.body)
	}
	flagged := false
	for _, x := range m["anomalies"].([]any) {
		an := x.(map[string]any)
		flagged = flagged || (an["kind"] == "amount" && an["transaction_id"] == big.ID)
	}
	if !flagged {
		t.Fatalf("the 900 USD execute is not flagged: %v", m["anomalies"])
	}
	recs := m["recommendations"].([]any)
	if len(recs) != 1 || fmt.Sprint(recs[0].(map[string]any)["blocks"]) != "["+big.ID+"]" {
		t.Fatalf("recommendations %v", recs)
	}
	if put := m["backtest_policy_file"].(map[string]any)["put"].([]any); len(put) != 1 {
		t.Fatalf("backtest policy file %v", m["backtest_policy_file"])
	}
	r = g.do("GET", "/transactions/analytics?from=2026-03-01&to=2026-03-31", apiKey(keyB), nil)
	if m := r.json(t); r.status != http.StatusOK || len(m["anomalies"].([]any)) != 0 || m["consumer"] != "org_b" {
		t.Fatalf("org_b's analytics: %d %s", r.status, r.body)
	}
	for _, q := range []string{"?time_zone=Mars/Base", "?currency=usd", "?limit=3", "?status=completed", "?consumer=org_b"} {
		r := g.do("GET", "/transactions/analytics"+q, apiKey(keyA), nil)
		if r.status != http.StatusBadRequest && r.status != http.StatusForbidden {
			t.Errorf("analytics%s: %d %s", q, r.status, r.body)
		}
	}
	if r := g.do("GET", "/transactions/analytics?time_zone=Europe/Paris&consumer=org_a", apiKey(testAdminKey), nil); r.status != http.StatusOK {
		t.Errorf("the admin's analytics of org_a: %d %s", r.status, r.body)
	}
}
