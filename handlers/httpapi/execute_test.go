package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

// testBusiness is a real business endpoint on a local socket (the
// adapter POSTs an execute's request to it): it counts the calls per
// Idempotency-Key and answers {"status": "completed", "data": {...}}.
type testBusiness struct {
	t   testing.TB
	srv *httptest.Server
	mu  sync.Mutex
	// calls counts the calls per Idempotency-Key; cents sums the
	// amount_cents of the first call of each key.
	calls map[string]int
	cents int64
}

func newTestBusiness(t testing.TB) *testBusiness {
	t.Helper()
	b := &testBusiness{t: t, calls: map[string]int{}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *testBusiness) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		AmountCents int64 `json:"amount_cents"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	b.mu.Lock()
	if b.calls[key] == 0 {
		b.cents += req.AmountCents
	}
	b.calls[key]++
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"status":"completed","data":{"order_id":%q}}`, key)
}

// total returns the calls made and the cents of the distinct calls.
func (b *testBusiness) total() (calls int, cents int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range b.calls {
		calls += n
	}
	return calls, b.cents
}

// Seed 004's §2.4 messages, verbatim.
const (
	msgMissing   = "Execute confirmation required. Provide x-confirmation-token header."
	msgInvalid   = "Invalid confirmation token."
	msgExpired   = "Confirmation token expired. Prepare a new token."
	msgMismatch  = "Confirmation token does not match this execute request."
	msgUnparsed  = "Unable to validate confirmation token for execute payload."
	msgAmountFmt = "Execute amount exceeds policy limit (%d cents)."
)

// execGate is a test gate in the execute policy mode with a consumer
// (org_a) that has an agent and a business (shop) served by a
// testBusiness.
type execGate struct {
	*testGate
	biz   *testBusiness
	key   string
	agent agent
}

func newExecGate(t testing.TB, mode string, maxCents int64) *execGate {
	t.Helper()
	c := domain.DefaultExecuteConfig()
	c.Mode, c.MaxAmountCents = mode, maxCents
	g := newTestGate(t, gateOptions{execute: &c, executeMode: mode})
	eg := &execGate{testGate: g, biz: newTestBusiness(t), key: g.issueKey("org_a")}
	eg.agent = g.register(eg.key, "org_a", 2, nil)
	eg.addBusiness(eg.key, "shop", eg.biz.srv.URL, "retail")
	return eg
}

// addBusiness registers a business with key (USD).
func (g *testGate) addBusiness(key, id, endpoint string, categories ...string) {
	g.t.Helper()
	if categories == nil {
		categories = []string{}
	}
	r := g.do("POST", "/businesses", apiKey(key), map[string]any{
		"id": id, "name": "Shop " + id, "categories": categories, "endpoint": endpoint, "currency": "USD"})
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		g.t.Fatalf("registering business %s: %d %s", id, r.status, r.body)
	}
}

// execBody is an execute's or a prepare's body.
func execBody(business string, cents int64, extra string) string {
	return fmt.Sprintf(`{"businessId":%q,"request":{"item":"coffee%s","amount_cents":%d}}`, business, extra, cents)
}

// prepare prepares an execute as ag and returns the confirmation token.
func (g *testGate) prepare(ag agent, body string) string {
	g.t.Helper()
	r := g.do("POST", "/agp/execute/prepare", agentH(ag), body)
	if r.status != http.StatusOK {
		g.t.Fatalf("prepare: %d %s", r.status, r.body)
	}
	m := r.json(g.t)
	tok, _ := m["confirmationToken"].(string)
	if tok == "" || m["expiresAt"] == nil || m["summary"] == nil {
		g.t.Fatalf("prepare answer %s, want confirmationToken, expiresAt, summary", r.body)
	}
	return tok
}

// agentH are the headers that authenticate ag and name it.
func agentH(ag agent) hdr { return hdr{"Authorization": "Bearer " + ag.token, "X-Agent-ID": ag.id} }

// execute executes as ag with the confirmation token tok ("": none).
func (g *testGate) execute(ag agent, tok, body string) response {
	g.t.Helper()
	h := agentH(ag)
	if tok != "" {
		h["X-Confirmation-Token"] = tok
	}
	return g.do("POST", "/agp/execute", h, body)
}

// expectRefusal checks a §2.4 refusal: 403, the seed's message verbatim,
// the code beside it.
func expectRefusal(t testing.TB, r response, code domain.Code, msg string) {
	t.Helper()
	if r.status != http.StatusForbidden {
		t.Fatalf("status %d %s, want 403 %s", r.status, r.body, code)
	}
	e := errorOf(t, r.body)
	if e.Code != code || e.Message != msg {
		t.Fatalf("error %s %q, want %s %q", e.Code, e.Message, code, msg)
	}
}

// addPolicy creates a policy with key and returns the answer's body.
func (g *testGate) addPolicy(key string, p map[string]any) map[string]any {
	g.t.Helper()
	r := g.do("POST", "/policies", apiKey(key), p)
	if r.status != http.StatusCreated {
		g.t.Fatalf("creating policy %v: %d %s", p["id"], r.status, r.body)
	}
	return r.json(g.t)
}

// Agent Policy Engine spec §2.4: every refusal, 403 with the seed's
// message verbatim and the gate's code beside it; nothing executed, the
// token not consumed by a refused execute
// (TestSeed004_TokenOutlivesRefusals).
func TestSeed004_Refusals(t *testing.T) {
	g := newExecGate(t, domain.ExecuteModeStrict, 100)
	other := g.register(g.key, "org_a", 2, nil)
	keyB := g.issueKey("org_b")
	agentB := g.register(keyB, "org_b", 2, nil)
	g.addBusiness(g.key, "shop2", g.biz.srv.URL)
	body := execBody("shop", 50, "")
	tok := g.prepare(g.agent, body)

	expectRefusal(t, g.execute(g.agent, "", body), domain.CodeExecConfirmationRequired, msgMissing)
	expectRefusal(t, g.execute(g.agent, "ct_made_up", body), domain.CodeExecTokenInvalid, msgInvalid)
	expectRefusal(t, g.execute(g.agent, tok, execBody("shop", 50, "-other")), domain.CodeExecTokenMismatch, msgMismatch)
	expectRefusal(t, g.execute(g.agent, tok, execBody("shop2", 50, "")), domain.CodeExecTokenMismatch, msgMismatch)
	expectRefusal(t, g.execute(agentB, tok, body), domain.CodeExecTokenMismatch, msgMismatch)
	_ = other
	expectRefusal(t, g.execute(g.agent, tok, `{"businessId":"shop","request":`), domain.CodeExecUnparseable, msgUnparsed)
	big := execBody("shop", 101, "")
	expectRefusal(t, g.execute(g.agent, g.prepare(g.agent, big), big), domain.CodeExecAmountExceeded, fmt.Sprintf(msgAmountFmt, 100))

	// Expired: the worker's clock cleans an expired token at its next tick
	// (every second of real time), after which the token is unknown
	// (QWED-EXEC-002). An attempt that a tick overtook, as the log shows,
	// is made again with a new token.
	for attempt := 0; ; attempt++ {
		expiring := execBody("shop", 60, fmt.Sprintf("-late-%d", attempt))
		late := g.prepare(g.agent, expiring)
		before := g.head()
		g.clock.Advance(5*time.Minute + time.Second)
		r := g.execute(g.agent, late, expiring)
		if r.status == http.StatusForbidden && errorOf(t, r.body).Code == domain.CodeExecTokenInvalid && attempt < 3 && g.tokenExpiredAfter(before, late) {
			continue
		}
		expectRefusal(t, r, domain.CodeExecTokenExpired, msgExpired)
		break
	}
	if calls, _ := g.biz.total(); calls != 0 {
		t.Fatalf("the business got %d calls, want none", calls)
	}
}

// tokenExpiredAfter reports whether an execute.timers event after seq
// expired the confirmation token tok.
func (g *testGate) tokenExpiredAfter(seq uint64, tok string) bool {
	h := command.HashSecret(tok)
	for _, ev := range g.events(seq) {
		if ev.Timers != nil && slices.Contains(ev.Timers.TokensExpired, h) {
			return true
		}
	}
	return false
}
