package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// expectCompleted checks a 200 {transactionId, status: completed, data}
// answered after the business's call.
func expectCompleted(t testing.TB, r response) string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d %s, want 200 completed", r.status, r.body)
	}
	m := r.json(t)
	id, _ := m["transactionId"].(string)
	data, _ := m["data"].(map[string]any)
	if m["status"] != domain.TxCompleted || !strings.HasPrefix(id, "tx_") || data == nil || data["order_id"] != id {
		t.Fatalf("answer %s, want {transactionId, status: completed, data.order_id = transactionId}", r.body)
	}
	return id
}

// expectBlocked checks an execute a policy blocked: 403 with the policy's
// code, naming the policy and the limit.
func expectBlocked(t testing.TB, r response, code domain.Code, policyID string) {
	t.Helper()
	if r.status != http.StatusForbidden || !strings.Contains(string(r.body), `"`+policyID+`"`) {
		t.Fatalf("status %d %s, want 403 %s naming policy %s", r.status, r.body, code, policyID)
	}
	if c := r.errorCode(t); c != string(code) {
		t.Fatalf("code %s in %s, want %s", c, r.body, code)
	}
}

// waitFor polls cond (the read side, after a decision the worker's clock
// or a resolution made) for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Agent Policy Engine spec §2.1: in open mode the execute proceeds at
// once, the X-Confirmation-Token header ignored (even a bogus one), and
// the answer is the business's outcome.
func TestSeed004_OpenModeExecutes(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeOpen, 100)
	expectCompleted(t, g.execute(g.agent, "", execBody("shop", 500, "")))
	expectCompleted(t, g.execute(g.agent, "bogus", execBody("shop", 500, "-2")))
	if calls, cents := g.biz.total(); calls != 2 || cents != 1000 {
		t.Fatalf("the business got %d calls for %d cents, want 2 for 1000", calls, cents)
	}
}

// Agent Policy Engine spec §2.2: in confirm mode an execute needs the
// token its prepare minted; it is single use.
func TestSeed004_ConfirmFlow(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeConfirm, 100)
	body := execBody("shop", 500, "")
	tok := g.prepare(g.agent, body)
	expectCompleted(t, g.execute(g.agent, tok, body))
	// Consumed: the same token again is unknown.
	expectRefusal(t, g.execute(g.agent, tok, body), domain.CodeExecTokenInvalid, msgInvalid)
	if calls, _ := g.biz.total(); calls != 1 {
		t.Fatalf("the business got %d calls, want 1", calls)
	}
}

// Issue 14, bad input: a token used twice concurrently: exactly one
// execute wins, the others are refused (consumed: unknown), and the
// business is called once.
func TestSeed004_TokenUsedTwiceConcurrently(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeConfirm, 100)
	body := execBody("shop", 300, "")
	tok := g.prepare(g.agent, body)
	const n = 16
	results := make([]response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = g.execute(g.agent, tok, body) })
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		if r.status == http.StatusOK {
			expectCompleted(t, r)
			won++
			continue
		}
		expectRefusal(t, r, domain.CodeExecTokenInvalid, msgInvalid)
	}
	if calls, _ := g.biz.total(); won != 1 || calls != 1 {
		t.Fatalf("%d executes won and the business got %d calls, want exactly one", won, calls)
	}
}

// Agent Policy Engine spec §3.2: a spending policy BLOCKs an execute over
// its daily limit with a policy-violation answer naming the policy and
// the limit; the business is not called.
func TestSeed004_PolicyBlocks(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeOpen, 100)
	g.addPolicy(g.key, map[string]any{"id": "daily-10", "type": "spending", "spending": map[string]any{"daily_cents": 1000}})
	expectCompleted(t, g.execute(g.agent, "", execBody("shop", 600, "")))
	expectBlocked(t, g.execute(g.agent, "", execBody("shop", 500, "-2")), domain.CodePolicySpending, "daily-10")
	expectCompleted(t, g.execute(g.agent, "", execBody("shop", 400, "-3")))
	if calls, cents := g.biz.total(); calls != 2 || cents != 1000 {
		t.Fatalf("the business got %d calls for %d cents, want 2 for 1000", calls, cents)
	}
}

// Agent Policy Engine spec §3.2: CONFIRM puts the execute on the
// /approvals queue (202 pending_approval with its approvalId); approved,
// it executes; denied, it is not executed.
func TestSeed004_PolicyConfirmApproveAndDeny(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeOpen, 100)
	g.addPolicy(g.key, map[string]any{"id": "ask-above-5", "type": "confirmation", "confirmation": map[string]any{"above_cents": 500}})
	expectCompleted(t, g.execute(g.agent, "", execBody("shop", 500, "")))
	pending := func(extra string) (tx, approval string) {
		t.Helper()
		r := g.execute(g.agent, "", execBody("shop", 800, extra))
		m := r.json(t)
		tx, _ = m["transactionId"].(string)
		approval, _ = m["approvalId"].(string)
		if r.status != http.StatusAccepted || m["status"] != domain.TxPendingApproval || tx == "" || approval == "" {
			t.Fatalf("execute over the confirmation threshold: %d %s, want 202 pending_approval with approvalId", r.status, r.body)
		}
		return tx, approval
	}
	_, yes := pending("-yes")
	_, no := pending("-no")
	if calls, _ := g.biz.total(); calls != 1 {
		t.Fatalf("the business was called %d times before approval, want 1", calls)
	}
	if r := g.do("POST", "/approvals/"+yes+"/approve", apiKey(g.key), `{"reason":"ok"}`); r.status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	waitFor(t, "the approved execute calls the business", func() bool { c, _ := g.biz.total(); return c == 2 })
	if r := g.do("POST", "/approvals/"+no+"/deny", apiKey(g.key), `{"reason":"no"}`); r.status != http.StatusOK {
		t.Fatalf("deny: %d %s", r.status, r.body)
	}
	// The agent's retry of the denied execute is answered as recorded: no
	// new call.
	if calls, cents := g.biz.total(); calls != 2 || cents != 1300 {
		t.Fatalf("the business got %d calls for %d cents, want 2 for 1300", calls, cents)
	}
}

// Agent Policy Engine spec §3.1 (time windows): outside its window an
// execute is QUEUEd (202 queued with releaseAt) and released by the
// gate's clock when the window opens.
func TestSeed004_PolicyQueuesUntilTheWindowOpens(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeOpen, 100)
	// The test clock starts on Monday 2026-03-02 10:00 UTC.
	g.addPolicy(g.key, map[string]any{"id": "office-hours", "type": "time_window", "time_window": map[string]any{
		"time_zone": "UTC", "outside": "queue", "windows": []any{map[string]any{"days": []string{"mon"}, "start": "11:00", "end": "12:00"}}}})
	r := g.execute(g.agent, "", execBody("shop", 200, ""))
	m := r.json(t)
	if r.status != http.StatusAccepted || m["status"] != domain.TxQueued || m["releaseAt"] != "2026-03-02T11:00:00Z" {
		t.Fatalf("execute outside the window: %d %s, want 202 queued releaseAt 2026-03-02T11:00:00Z", r.status, r.body)
	}
	if calls, _ := g.biz.total(); calls != 0 {
		t.Fatalf("a queued execute called the business")
	}
	g.clock.Advance(time.Hour)
	waitFor(t, "the queued execute is released at 11:00", func() bool { c, _ := g.biz.total(); return c == 1 })
}

// Issue 14 item 8: no overshoot under concurrency: 500 concurrent
// executes against a $10 daily limit never sum past $10, and none is
// blocked that fitted (the spend that passed leaves less than the
// smallest amount blocked).
func TestSeed004_NoOvershootUnderConcurrency(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeOpen, 100)
	g.addPolicy(g.key, map[string]any{"id": "ten-dollars", "type": "spending", "spending": map[string]any{"daily_cents": 1000}})
	agents := []agent{g.agent}
	for range 9 {
		agents = append(agents, g.register(g.key, "org_a", 2, nil))
	}
	tr := &http.Transport{MaxIdleConns: 600, MaxIdleConnsPerHost: 600}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	const n = 500
	amounts := make([]int64, n)
	results := make([]response, n)
	var wg sync.WaitGroup
	for i := range n {
		amounts[i] = int64(i%7)*40 + 13 // 13 … 253 cents
		wg.Go(func() {
			results[i] = g.doWith(client, "POST", "/agp/execute", agentH(agents[i%len(agents)]),
				execBody("shop", amounts[i], fmt.Sprintf("-%d", i)))
		})
	}
	wg.Wait()
	var passed int64
	minBlocked := int64(1 << 62)
	for i, r := range results {
		switch r.status {
		case http.StatusOK:
			expectCompleted(t, r)
			passed += amounts[i]
		case http.StatusForbidden:
			expectBlocked(t, r, domain.CodePolicySpending, "ten-dollars")
			minBlocked = min(minBlocked, amounts[i])
		default:
			t.Fatalf("execute %d: %d %s", i, r.status, r.body)
		}
	}
	_, cents := g.biz.total()
	if passed > 1000 || cents != passed {
		t.Fatalf("executes passed for %d cents, the business got %d: the $10 daily limit was overshot", passed, cents)
	}
	if passed+minBlocked <= 1000 {
		t.Fatalf("%d cents passed and an execute of %d was blocked: it fitted", passed, minBlocked)
	}
}

// Agent Policy Engine spec §2.2: "consumed after successful policy
// validation": the refusals of §2.4 leave the token valid for its own
// request.
func TestSeed004_TokenOutlivesRefusals(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeStrict, 100)
	g.addBusiness(g.key, "shop2", g.biz.srv.URL)
	body := execBody("shop", 50, "")
	tok := g.prepare(g.agent, body)
	expectRefusal(t, g.execute(g.agent, tok, execBody("shop", 50, "-other")), domain.CodeExecTokenMismatch, msgMismatch)
	expectRefusal(t, g.execute(g.agent, tok, execBody("shop2", 50, "")), domain.CodeExecTokenMismatch, msgMismatch)
	expectRefusal(t, g.execute(g.agent, tok, `{"businessId":"shop","request":`), domain.CodeExecUnparseable, msgUnparsed)
	expectCompleted(t, g.execute(g.agent, tok, body))
}
