package domain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// execGate is a gate with one agent ("buyer" of org_1), one business
// ("shop", USD, owned by org_1) and the execute mode given.
type execGate struct {
	*gate
	agent string
}

func newExecGate(t *testing.T, mode string, maxCents int64) *execGate {
	t.Helper()
	g := newGate(t)
	cfg := DefaultConfig()
	cfg.Execute = &ExecuteConfig{Mode: mode, MaxAmountCents: maxCents, TokenTTL: Duration(5 * time.Minute)}
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvConfigured {
		t.Fatalf("configuring: %s %v", ev.Type, ev.Error)
	}
	eg := &execGate{gate: g, agent: g.register("buyer", "autonomous", nil, Limits{}, Permissions{})}
	eg.business("org_1", OpCreate, Business{ID: "shop", Name: "Shop", Categories: []string{"food"}, Endpoint: "https://shop.example/agp", Currency: "USD"}, "")
	return eg
}

// business sends a business change and checks its outcome (want "": it
// passes; else its refusal's code).
func (g *execGate) business(principal, op string, b Business, want Code) *Event {
	g.t.Helper()
	ev := g.exec(&Command{Type: CmdBusiness, Principal: principal, Business: &BusinessChange{Op: op, Business: b}})
	if code(ev) != want || (want == "" && ev.Type != EvBusinessChanged) {
		g.t.Fatalf("business %s %s: %s %v, want %q", op, b.ID, ev.Type, ev.Error, want)
	}
	return ev
}

// req builds an execute request body and its hash.
func req(t testing.TB, body string) (json.RawMessage, string) {
	t.Helper()
	h, err := RequestHashOf([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return json.RawMessage(body), h
}

func (g *execGate) prepare(business, body, token string) *Event {
	g.t.Helper()
	r, h := req(g.t, body)
	return g.exec(&Command{Type: CmdPrepareExecute, AgentID: g.agent, TokenHash: tokenHash("buyer"),
		Execute: &ExecuteRequest{BusinessID: business, Request: r, RequestHash: h, TokenHash: token}})
}

func (g *execGate) execute(business, body, token string) *Event {
	g.t.Helper()
	r, h := req(g.t, body)
	return g.exec(&Command{Type: CmdExecute, AgentID: g.agent, TokenHash: tokenHash("buyer"),
		Execute: &ExecuteRequest{BusinessID: business, Request: r, RequestHash: h, TokenHash: token}})
}

func (g *execGate) outcome(o ExecuteOutcome) *Event {
	g.t.Helper()
	return g.exec(&Command{Type: CmdExecuteOutcome, Request: RequestID{Source: "agentgate/adapter", ID: o.TransactionID + "/" + o.Status},
		Outcome: &o})
}

// refused checks that ev is a command.rejected with code and, when msg is
// set, exactly that message.
func refused(t *testing.T, ev *Event, c Code, msg string) {
	t.Helper()
	if ev == nil || ev.Type != EvCommandRejected || code(ev) != c || (msg != "" && ev.Error.Message != msg) {
		t.Fatalf("got %v %+v, want a refusal %s %q", ev.Type, ev.Error, c, msg)
	}
}

// executing checks that ev decided a transaction executing.
func executing(t *testing.T, ev *Event) *Transaction {
	t.Helper()
	if ev == nil || ev.Type != EvExecuteDecided || ev.Transaction == nil || ev.Transaction.Status != TxExecuting || ev.Error != nil {
		t.Fatalf("got %v %+v %+v, want an executing transaction", ev.Type, ev.Error, ev.Transaction)
	}
	return ev.Transaction
}

// TestSeed004_2_1_OpenIgnoresTheHeader: in mode open an execute proceeds
// without a token, and a token it carries is neither checked nor consumed.
func TestSeed004_2_1_OpenIgnoresTheHeader(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	tx := executing(t, g.execute("shop", `{"amount_cents":5000,"item":"x"}`, ""))
	if tx.AmountCents != 5000 || tx.Consumer != "org_1" || tx.AgentID != g.agent || tx.Currency != "USD" ||
		!strings.HasPrefix(tx.ID, "tx_") || len(tx.ID) != 27 || tx.CreatedAt != g.now {
		t.Fatalf("transaction %+v", tx)
	}
	tok := tokenHash("tok-1")
	if ev := g.prepare("shop", `{"amount_cents":1}`, tok); ev.Type != EvExecutePrepared {
		t.Fatalf("prepare: %s %v", ev.Type, ev.Error)
	}
	ev := g.execute("shop", `{"amount_cents":2}`, tok) // another request: ignored in open mode
	executing(t, ev)
	if ev.Prepared != nil || g.s.Exec.Tokens[tok] == nil {
		t.Fatalf("mode open consumed the token")
	}
	executing(t, g.execute("shop", `{}`, tokenHash("never-prepared")))
}

// TestSeed004_2_2_ConfirmationTokenFlow: prepare then execute with the
// token; the token is single use and bound to the business, the request
// (its RFC 8785 form: member order and spacing do not matter) and the
// consumer.
func TestSeed004_2_2_ConfirmationTokenFlow(t *testing.T) {
	g := newExecGate(t, ExecuteModeConfirm, 100)
	tok := tokenHash("tok-1")
	ev := g.prepare("shop", `{"item":"tea","amount":"12.5"}`, tok)
	if ev.Type != EvExecutePrepared || ev.Prepared.TokenHash != tok || ev.Prepared.Summary != "Shop: 12.50 USD" ||
		!ev.Prepared.ExpiresAt.Equal(g.now.Add(5*time.Minute)) || ev.Prepared.Consumer != "org_1" {
		t.Fatalf("prepare: %s %v %+v", ev.Type, ev.Error, ev.Prepared)
	}
	status, body := Reply(ev)
	b, _ := json.Marshal(body)
	if status != 200 || !bytes.Contains(b, []byte(`"summary":"Shop: 12.50 USD"`)) || !bytes.Contains(b, []byte(`"expiresAt":`)) {
		t.Fatalf("prepare reply %d %s", status, b)
	}
	ev = g.execute("shop", `{ "amount": "12.5", "item": "tea" }`, tok)
	executing(t, ev)
	if ev.Prepared == nil || ev.Prepared.TokenHash != tok || g.s.Exec.Tokens[tok] != nil || g.s.Exec.Consumers["org_1"].Tokens != 0 {
		t.Fatalf("the token was not consumed: %+v", g.s.Exec.Tokens)
	}
	refused(t, g.execute("shop", `{"amount":"12.5","item":"tea"}`, tok), CodeExecTokenInvalid, MsgExecTokenInvalid)
}

// TestSeed004_2_4_Refusals: each row of §2.4's table, its status, its
// exact message, and nothing consumed: the token still works afterwards.
func TestSeed004_2_4_Refusals(t *testing.T) {
	const body = `{"amount_cents":150,"item":"tea"}`
	cases := []struct {
		name, mode string
		run        func(g *execGate, tok string) *Event
		code       Code
		msg        string
	}{
		{"missing token", ExecuteModeConfirm, func(g *execGate, _ string) *Event { return g.execute("shop", body, "") },
			CodeExecConfirmationRequired, "Execute confirmation required. Provide x-confirmation-token header."},
		{"invalid token", ExecuteModeConfirm, func(g *execGate, _ string) *Event { return g.execute("shop", body, tokenHash("guess")) },
			CodeExecTokenInvalid, "Invalid confirmation token."},
		{"expired token", ExecuteModeConfirm, func(g *execGate, tok string) *Event {
			g.now = g.now.Add(5 * time.Minute)
			return g.execute("shop", body, tok)
		}, CodeExecTokenExpired, "Confirmation token expired. Prepare a new token."},
		{"other request", ExecuteModeConfirm, func(g *execGate, tok string) *Event {
			return g.execute("shop", `{"amount_cents":151,"item":"tea"}`, tok)
		},
			CodeExecTokenMismatch, "Confirmation token does not match this execute request."},
		{"other business", ExecuteModeConfirm, func(g *execGate, tok string) *Event {
			g.business("org_1", OpCreate, Business{ID: "shop2", Name: "Shop 2", Endpoint: "https://shop2.example", Currency: "USD"}, "")
			return g.execute("shop2", body, tok)
		}, CodeExecTokenMismatch, "Confirmation token does not match this execute request."},
		{"other consumer", ExecuteModeConfirm, func(g *execGate, tok string) *Event {
			other := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_2", Register: &RegisterAgent{
				Agent: AgentInfo{Name: "thief", Type: "autonomous", PrincipalID: "org_2"}, TokenHash: tokenHash("thief")}})
			r, h := req(g.t, body)
			return g.exec(&Command{Type: CmdExecute, AgentID: other.AgentID, TokenHash: tokenHash("thief"),
				Execute: &ExecuteRequest{BusinessID: "shop", Request: r, RequestHash: h, TokenHash: tok}})
		}, CodeExecTokenMismatch, "Confirmation token does not match this execute request."},
		{"amount over the ceiling", ExecuteModeStrict, func(g *execGate, tok string) *Event { return g.execute("shop", body, tok) },
			CodeExecAmountExceeded, "Execute amount exceeds policy limit (100 cents)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newExecGate(t, c.mode, 100)
			tok := tokenHash("tok")
			if ev := g.prepare("shop", body, tok); ev.Type != EvExecutePrepared {
				t.Fatalf("prepare: %v", ev.Error)
			}
			ev := c.run(g, tok)
			refused(t, ev, c.code, c.msg)
			if status, _ := Reply(ev); status != 403 {
				t.Fatalf("status %d", status)
			}
			if g.s.Exec.Tokens[tok] == nil || len(g.s.Exec.Open) != 0 {
				t.Fatalf("a refusal consumed the token or opened a transaction")
			}
			if c.mode == ExecuteModeConfirm && c.code != CodeExecTokenExpired {
				executing(t, g.execute("shop", body, tok))
			}
		})
	}
}

// TestSeed004_2_3_StrictAmountCeiling: strict mode refuses an amount over
// the ceiling (amount_cents, else amount in the business's currency), and
// passes one at it.
func TestSeed004_2_3_StrictAmountCeiling(t *testing.T) {
	g := newExecGate(t, ExecuteModeStrict, 100)
	g.business("org_1", OpCreate, Business{ID: "yen", Name: "Yen shop", Endpoint: "https://yen.example", Currency: "JPY"}, "")
	for i, c := range []struct {
		business, body string
		ok             bool
	}{
		{"shop", `{"amount_cents":100}`, true},
		{"shop", `{"amount_cents":101}`, false},
		{"shop", `{"amount":"1.00"}`, true},
		{"shop", `{"amount":1.01}`, false},
		{"shop", `{"item":"no amount"}`, true},
		{"yen", `{"amount":100}`, true},
		{"yen", `{"amount":"101"}`, false},
	} {
		tok := tokenHash("t" + string(rune('a'+i)))
		if ev := g.prepare(c.business, c.body, tok); ev.Type != EvExecutePrepared {
			t.Fatalf("%s: prepare %v", c.body, ev.Error)
		}
		ev := g.execute(c.business, c.body, tok)
		if c.ok {
			executing(t, ev)
		} else {
			refused(t, ev, CodeExecAmountExceeded, "Execute amount exceeds policy limit (100 cents).")
		}
	}
}

// TestSeed004_2_3_AmountIsExact: the amount is read exactly, in integer
// arithmetic; every malformed amount is a QWED-REQ-001 refusal naming the
// member.
func TestSeed004_2_3_AmountIsExact(t *testing.T) {
	cases := []struct {
		body, currency string
		cents          int64
		field          string // "" when it parses
	}{
		{`{"amount_cents":0}`, "USD", 0, ""},
		{`{"amount_cents":999999999999999}`, "USD", 999_999_999_999_999, ""},
		{`{"amount":"0.1"}`, "USD", 10, ""},
		{`{"amount":19.99}`, "USD", 1999, ""},
		{`{"amount":"19.990000"}`, "USD", 1999, ""},
		{`{"amount":"7"}`, "JPY", 7, ""},
		{`{"amount":"1.234"}`, "KWD", 1234, ""},
		{`{"amount":"0.29"}`, "USD", 29, ""}, // 0.29*100 is 28.999... in floating point
		{`{"amount_cents":5,"amount":"0.05"}`, "USD", 5, ""},
		{`{"amo\u0075nt_cents":12}`, "USD", 12, ""},
		{`{"nested":{"amount_cents":-1},"amount_cents":3}`, "USD", 3, ""},
		{`{"amount_cents":-1}`, "USD", 0, "request.amount_cents"},
		{`{"amount_cents":1.5}`, "USD", 0, "request.amount_cents"},
		{`{"amount_cents":1e3}`, "USD", 0, "request.amount_cents"},
		{`{"amount_cents":"100"}`, "USD", 0, "request.amount_cents"},
		{`{"amount_cents":1000000000000001}`, "USD", 0, "request.amount_cents"},
		{`{"amount_cents":99999999999999999999999}`, "USD", 0, "request.amount_cents"},
		{`{"amount_cents":1,"amount_cents":2}`, "USD", 0, "request.amount_cents"},
		{`{"amount":"-1.00"}`, "USD", 0, "request.amount"},
		{`{"amount":-0}`, "USD", 0, "request.amount"},
		{`{"amount":"NaN"}`, "USD", 0, "request.amount"},
		{`{"amount":"Infinity"}`, "USD", 0, "request.amount"},
		{`{"amount":1e2}`, "USD", 0, "request.amount"},
		{`{"amount":"1.001"}`, "USD", 0, "request.amount"},
		{`{"amount":"1.5"}`, "JPY", 0, "request.amount"},
		{`{"amount":"01.00"}`, "USD", 0, "request.amount"},
		{`{"amount":"1."}`, "USD", 0, "request.amount"},
		{`{"amount":" 1"}`, "USD", 0, "request.amount"},
		{`{"amount":"1\u0030"}`, "USD", 0, "request.amount"},
		{`{"amount":true}`, "USD", 0, "request.amount"},
		{`{"amount":"10000000000000.01"}`, "USD", 0, "request.amount"},
		{`{"amount_cents":5,"amount":"0.06"}`, "USD", 0, "request.amount"},
	}
	for _, c := range cases {
		got, err := executeAmount([]byte(c.body), c.currency)
		switch {
		case c.field == "" && (err != nil || got != c.cents):
			t.Errorf("%s %s = %d, %v; want %d", c.body, c.currency, got, err, c.cents)
		case c.field != "" && (err == nil || err.Code != CodeInvalidRequest || err.Details["field"] != c.field):
			t.Errorf("%s %s = %d, %+v; want a refusal of %s", c.body, c.currency, got, err, c.field)
		}
	}
	// Through Decide: a refused amount opens nothing.
	g := newExecGate(t, ExecuteModeOpen, 100)
	ev := g.execute("shop", `{"amount":"NaN"}`, "")
	refused(t, ev, CodeInvalidRequest, "")
	if len(g.s.Exec.Open) != 0 {
		t.Fatal("a refused amount opened a transaction")
	}
}

// TestSeed004_2_2_TokensExpireAtTheTick: an expired token is refused
// (QWED-EXEC-003) until the execute tick cleans it, then it is unknown.
func TestSeed004_2_2_TokensExpireAtTheTick(t *testing.T) {
	g := newExecGate(t, ExecuteModeConfirm, 100)
	tick := func() *Event {
		return g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: g.now.String()}})
	}
	tok := tokenHash("tok")
	g.prepare("shop", `{}`, tok)
	g.now = g.now.Add(4 * time.Minute)
	if ev := tick(); ev != nil {
		t.Fatalf("a tick before the TTL: %+v", ev)
	}
	g.now = g.now.Add(time.Minute)
	refused(t, g.execute("shop", `{}`, tok), CodeExecTokenExpired, MsgExecTokenExpired)
	ev := tick()
	if ev == nil || ev.Type != EvExecuteTimers || len(ev.Timers.TokensExpired) != 1 || ev.Timers.TokensExpired[0] != tok {
		t.Fatalf("the tick: %+v", ev)
	}
	if len(g.s.Exec.Tokens) != 0 || g.s.Exec.Consumers["org_1"].Tokens != 0 {
		t.Fatalf("the expired token is still held")
	}
	refused(t, g.execute("shop", `{}`, tok), CodeExecTokenInvalid, MsgExecTokenInvalid)
	refused(t, g.exec(&Command{Type: CmdExecuteTick, Principal: "org_1"}), CodeForbidden, "")
}

// TestSeed004_2_2_ExpiredTokenKept: with ExpiredTokenKept recorded (as
// agentgate serve records it), the execute tick keeps an expired token
// that long, so that a late execute reads the seed's "Confirmation token
// expired. Prepare a new token." (QWED-EXEC-003) and not "Invalid
// confirmation token."; past it the tick drops the token.
func TestSeed004_2_2_ExpiredTokenKept(t *testing.T) {
	g := newExecGate(t, ExecuteModeConfirm, 100)
	cfg := g.s.Config
	ec := *cfg.Execute
	ec.ExpiredTokenKept = DefaultExpiredTokenKept
	cfg.Execute = &ec
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvConfigured {
		t.Fatalf("configuring: %s %v", ev.Type, ev.Error)
	}
	tick := func() *Event {
		return g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: g.now.String()}})
	}
	tok := tokenHash("kept")
	g.prepare("shop", `{}`, tok)
	g.now = g.now.Add(5*time.Minute + time.Second)
	if ev := tick(); ev != nil {
		t.Fatalf("a tick a second after the expiry dropped the token: %+v", ev)
	}
	refused(t, g.execute("shop", `{}`, tok), CodeExecTokenExpired, MsgExecTokenExpired)
	g.now = g.now.Add(time.Duration(DefaultExpiredTokenKept))
	ev := tick()
	if ev == nil || ev.Type != EvExecuteTimers || len(ev.Timers.TokensExpired) != 1 || ev.Timers.TokensExpired[0] != tok {
		t.Fatalf("the tick once the token was kept long enough: %+v", ev)
	}
	refused(t, g.execute("shop", `{}`, tok), CodeExecTokenInvalid, MsgExecTokenInvalid)
	bad := ec
	bad.ExpiredTokenKept = -1
	cfg.Execute = &bad
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvCommandRejected {
		t.Fatalf("a negative expired_token_kept: %s", ev.Type)
	}
}

// TestSeed004_2_2_TokenBounds: a consumer holds at most MaxOpenTokens.
func TestSeed004_2_2_TokenBounds(t *testing.T) {
	g := newExecGate(t, ExecuteModeConfirm, 100)
	s := execState(g.s)
	s.Tokens = map[string]*ExecutePrepared{}
	for i := range MaxOpenTokens {
		h := tokenHash("bulk" + string(rune(i)))
		s.Tokens[h] = &ExecutePrepared{TokenHash: h, Consumer: "org_1", ExpiresAt: g.now.Add(time.Hour)}
	}
	s.consumer("org_1").Tokens = MaxOpenTokens
	refused(t, g.prepare("shop", `{}`, tokenHash("one-more")), CodeRateLimited, "")
	refused(t, g.prepare("shop", `{}`, ""), CodeMissingField, "")
}

// TestSeed004_2_Outcome: the business's answer is recorded once; a
// failure is QWED-EXEC-008 (502); pending_confirmation carries the
// business's token (§2.6).
func TestSeed004_2_Outcome(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	tx := executing(t, g.execute("shop", `{"amount_cents":250}`, ""))
	if status, body := Reply(g.events[len(g.events)-1]); status != 202 || body.(ExecuteReply).Status != TxExecuting {
		t.Fatalf("executing reply %d %+v", status, body)
	}
	refused(t, g.exec(&Command{Type: CmdExecuteOutcome, Principal: "org_1", Outcome: &ExecuteOutcome{TransactionID: tx.ID, Status: "ok"}}), CodeForbidden, "")
	ev := g.outcome(ExecuteOutcome{TransactionID: tx.ID, HTTPStatus: 200, Status: "confirmed", Data: json.RawMessage(`{"order":"o-1"}`)})
	if ev.Type != EvExecuteCompleted || ev.Transaction.Status != TxCompleted || ev.Transaction.BusinessStatus != "confirmed" {
		t.Fatalf("outcome: %s %v %+v", ev.Type, ev.Error, ev.Transaction)
	}
	status, body := Reply(ev)
	b, _ := json.Marshal(body)
	if want := `{"transactionId":"` + tx.ID + `","status":"confirmed","data":{"order":"o-1"}}`; status != 200 || string(b) != want {
		t.Fatalf("reply %d %s, want %s", status, b, want)
	}
	if len(g.s.Exec.Open) != 0 {
		t.Fatal("the completed transaction is still open")
	}
	refused(t, g.outcome(ExecuteOutcome{TransactionID: tx.ID, Status: "again"}), CodeConflict, "")

	tx = executing(t, g.execute("shop", `{"amount_cents":1}`, ""))
	ev = g.outcome(ExecuteOutcome{TransactionID: tx.ID, HTTPStatus: 503, Error: "business answered 503 three times"})
	if ev.Transaction.Status != TxFailed || code(ev) != CodeExecBusinessFailed {
		t.Fatalf("failed outcome %+v %+v", ev.Transaction, ev.Error)
	}
	if status, _ := Reply(ev); status != 502 {
		t.Fatalf("failed status %d", status)
	}
	tx = executing(t, g.execute("shop", `{"amount_cents":2}`, ""))
	ev = g.outcome(ExecuteOutcome{TransactionID: tx.ID, HTTPStatus: 200, Status: TxPendingConfirmation, ConfirmationToken: "biz-tok"})
	_, body = Reply(ev)
	if r := body.(ExecuteReply); r.Status != TxPendingConfirmation || r.ConfirmationToken != "biz-tok" {
		t.Fatalf("pending_confirmation reply %+v", r)
	}
	tx = executing(t, g.execute("shop", `{"amount_cents":3}`, ""))
	for _, o := range []ExecuteOutcome{
		{TransactionID: tx.ID},
		{TransactionID: tx.ID, Status: "ok", HTTPStatus: 99},
		{TransactionID: tx.ID, Status: "ok", Data: json.RawMessage(`{`)},
		{TransactionID: tx.ID, Status: strings.Repeat("s", MaxBusinessStatusChars+1)},
		{TransactionID: tx.ID, Status: "ok\n"},
	} {
		if ev := g.outcome(o); ev.Type != EvCommandRejected {
			t.Fatalf("outcome %+v accepted", o)
		}
	}
}

// TestSeed004_3_1_BusinessRegistry: create, update and delete by the
// owner or the admin; the members are checked; an unknown business is
// QWED-EXEC-007 (404) at prepare and execute.
func TestSeed004_3_1_BusinessRegistry(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	b := Business{ID: "cafe", Name: "Café", Categories: []string{"travel", "food"}, Endpoint: "http://cafe.example:8080/x?y=1", Currency: "EUR"}
	ev := g.business("org_2", OpCreate, b, "")
	if ev.Business.Owner != "org_2" || ev.Business.Categories[0] != "food" {
		t.Fatalf("created %+v", ev.Business)
	}
	if status, _ := Reply(ev); status != 201 {
		t.Fatalf("create status %d", status)
	}
	g.business("org_2", OpCreate, b, CodeConflict)
	g.business("org_1", OpUpdate, b, CodeForbidden)
	b.Name = "Café 2"
	if ev := g.business(AdminPrincipal, OpUpdate, b, ""); ev.Business.Owner != "org_2" || g.s.Exec.Businesses["cafe"].Name != "Café 2" {
		t.Fatalf("updated %+v", ev.Business)
	}
	refused(t, g.exec(&Command{Type: CmdBusiness, TokenHash: tokenHash("buyer"), Business: &BusinessChange{Op: OpCreate, Business: b}}), CodeForbidden, "")
	refused(t, g.exec(&Command{Type: CmdBusiness, Business: &BusinessChange{Op: OpCreate, Business: b}}), CodeMissingAPIKey, "")
	bad := []struct {
		name string
		edit func(*Business)
		code Code
	}{
		{"id", func(b *Business) { b.ID = "a/b" }, CodeInvalidRequest},
		{"long id", func(b *Business) { b.ID = strings.Repeat("a", 129) }, CodeTooLong},
		{"no name", func(b *Business) { b.Name = "" }, CodeMissingField},
		{"control name", func(b *Business) { b.Name = "a\u202eb" }, CodeInvalidRequest},
		{"category case", func(b *Business) { b.Categories = []string{"Food"} }, CodeInvalidRequest},
		{"category twice", func(b *Business) { b.Categories = []string{"a", "a"} }, CodeInvalidRequest},
		{"categories", func(b *Business) { b.Categories = make([]string, 33) }, CodeTooLong},
		{"endpoint scheme", func(b *Business) { b.Endpoint = "ftp://x" }, CodeInvalidRequest},
		{"endpoint relative", func(b *Business) { b.Endpoint = "/x" }, CodeInvalidRequest},
		{"endpoint no host", func(b *Business) { b.Endpoint = "https:///x" }, CodeInvalidRequest},
		{"endpoint credentials", func(b *Business) { b.Endpoint = "https://u:p@x/" }, CodeInvalidRequest},
		{"endpoint space", func(b *Business) { b.Endpoint = "https://x/a b" }, CodeInvalidRequest},
		{"currency", func(b *Business) { b.Currency = "usd" }, CodeInvalidRequest},
		{"unknown currency", func(b *Business) { b.Currency = "XYZ" }, CodeInvalidRequest},
		{"no currency", func(b *Business) { b.Currency = "" }, CodeMissingField},
	}
	for _, c := range bad {
		x := Business{ID: "new", Name: "N", Endpoint: "https://n.example", Currency: "USD"}
		c.edit(&x)
		ev := g.exec(&Command{Type: CmdBusiness, Principal: "org_1", Business: &BusinessChange{Op: OpCreate, Business: x}})
		if code(ev) != c.code {
			t.Errorf("%s: %v, want %s", c.name, ev.Error, c.code)
		}
	}
	refused(t, g.exec(&Command{Type: CmdBusiness, Principal: "org_1", Business: &BusinessChange{Op: "upsert", Business: b}}), CodeInvalidRequest, "")
	refused(t, g.exec(&Command{Type: CmdBusiness, Principal: "org_1", Business: &BusinessChange{Op: OpUpdate, Business: Business{ID: "nope", Name: "n",
		Endpoint: "https://n", Currency: "USD"}}}), CodeExecUnknownBusiness, "Unknown business")

	ev = g.business("org_2", OpDelete, Business{ID: "cafe"}, "")
	if status, body := Reply(ev); status != 200 || body != (BusinessDeletedReply{ID: "cafe", Deleted: true}) {
		t.Fatalf("delete reply %d %+v", status, body)
	}
	if g.s.Exec.Businesses["cafe"] != nil {
		t.Fatal("the deleted business is still held")
	}
	ev = g.execute("cafe", `{}`, "")
	refused(t, ev, CodeExecUnknownBusiness, "Unknown business")
	if status, _ := Reply(ev); status != 404 {
		t.Fatalf("unknown business status %d", status)
	}
	refused(t, g.prepare("cafe", `{}`, tokenHash("x")), CodeExecUnknownBusiness, "Unknown business")
}

// TestSeed004_2_RequestChecks: the request must be a bounded JSON object
// with a well-formed hash; the agent must authenticate and not be
// suspended.
func TestSeed004_2_RequestChecks(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	_, h := req(t, `{}`)
	for _, c := range []struct {
		name string
		cmd  Command
		code Code
	}{
		{"no payload", Command{AgentID: g.agent, TokenHash: tokenHash("buyer")}, CodeMissingField},
		{"array", Command{AgentID: g.agent, TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(`[1]`), RequestHash: h}}, CodeInvalidRequest},
		{"too big", Command{AgentID: g.agent, TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "shop",
			Request: json.RawMessage(`{"a":"` + strings.Repeat("x", MaxExecuteRequestBytes) + `"}`), RequestHash: h}}, CodeTooLong},
		{"hash form", Command{AgentID: g.agent, TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(`{}`), RequestHash: "abc"}}, CodeInvalidRequest},
		{"token form", Command{AgentID: g.agent, TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(`{}`), RequestHash: h, TokenHash: "x"}}, CodeInvalidRequest},
		{"wrong agent token", Command{AgentID: g.agent, TokenHash: tokenHash("other"), Execute: &ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(`{}`), RequestHash: h}}, CodeInvalidAgentToken},
		{"unknown agent", Command{AgentID: "agent_x", TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(`{}`), RequestHash: h}}, CodeAgentNotRegistered},
		{"business id", Command{AgentID: g.agent, TokenHash: tokenHash("buyer"), Execute: &ExecuteRequest{BusinessID: "", Request: json.RawMessage(`{}`), RequestHash: h}}, CodeMissingField},
	} {
		for _, typ := range []CommandType{CmdExecute, CmdPrepareExecute} {
			cmd := c.cmd
			cmd.Type = typ
			if typ == CmdPrepareExecute && cmd.Execute != nil && cmd.Execute.TokenHash == "" {
				e := *cmd.Execute
				e.TokenHash = tokenHash("p")
				cmd.Execute = &e
			}
			if ev := g.exec(&cmd); code(ev) != c.code {
				t.Errorf("%s %s: %v, want %s", typ, c.name, ev.Error, c.code)
			}
		}
	}
	g.exec(&Command{Type: CmdSuspendAgent, Principal: "org_1", AgentID: g.agent, Suspend: &SuspendAgent{Suspended: true}})
	refused(t, g.execute("shop", `{}`, ""), CodeAgentSuspended, "")
}

// TestSeed004_2_RefusedAtAuthenticationIsWithheld: an execute or a
// prepare refused at authentication records its payload's digest, not
// the request (an unauthenticated caller writes nothing of its own to
// the log), and the withheld command re-decides to the same refusal.
func TestSeed004_2_RefusedAtAuthenticationIsWithheld(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	r, h := req(t, `{"amount_cents":5,"note":"`+strings.Repeat("x", 1000)+`"}`)
	for _, typ := range []CommandType{CmdExecute, CmdPrepareExecute} {
		ev := g.exec(&Command{Type: typ, AgentID: g.agent, TokenHash: tokenHash("stolen"),
			Execute: &ExecuteRequest{BusinessID: "shop", Request: r, RequestHash: h, TokenHash: tokenHash("t")}})
		refused(t, ev, CodeInvalidAgentToken, "")
		if ev.Command.Execute != nil || ev.Command.Withheld == nil || ev.Command.Withheld.Bytes < 1000 {
			t.Fatalf("%s: the refusal records %+v", typ, ev.Command)
		}
		again := Decide(g.s, Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition}, ev.Command)
		if a, b := mustJSON(t, ev), mustJSON(t, again); string(a) != string(b) {
			t.Fatalf("%s: the withheld command re-decides to\n%s\nnot\n%s", typ, b, a)
		}
	}
}

// TestSeed004_3_2_Authenticated: on Kafka the agent's partition
// authenticated it; the consumer's home partition, which does not hold
// the agent, accepts the command the gate marked.
func TestSeed004_3_2_Authenticated(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	r, h := req(t, `{"amount_cents":7}`)
	ev := g.exec(&Command{Type: CmdExecute, AgentID: "agent_elsewhere", Authenticated: &AuthenticatedAgent{AgentID: "agent_elsewhere", Principal: "org_9", Partition: 2},
		Execute: &ExecuteRequest{BusinessID: "shop", Request: r, RequestHash: h}})
	tx := executing(t, ev)
	if tx.Consumer != "org_9" || tx.AgentID != "agent_elsewhere" || ev.AgentID != "agent_elsewhere" {
		t.Fatalf("authenticated transaction %+v", tx)
	}
	refused(t, g.exec(&Command{Type: CmdExecute, AgentID: "agent_a", Authenticated: &AuthenticatedAgent{AgentID: "agent_b", Principal: "org_9"},
		Execute: &ExecuteRequest{BusinessID: "shop", Request: r, RequestHash: h}}), CodeInvalidRequest, "")
	refused(t, g.exec(&Command{Type: CmdExecuteOutcome, Authenticated: &AuthenticatedAgent{AgentID: "a", Principal: "org_9"},
		Outcome: &ExecuteOutcome{TransactionID: tx.ID, Status: "ok"}}), CodeInvalidRequest, "")
}

// openFor folds a decided transaction of status st into the gate's state
// as the policies will decide it (pending_approval, queued).
func (g *execGate) openFor(status string, releaseAt *time.Time) *Transaction {
	g.t.Helper()
	g.seq++
	tx := &Transaction{ID: TransactionIDFor(RequestID{Source: "test", ID: "open" + status}), Consumer: "org_1", AgentID: g.agent, BusinessID: "shop",
		AmountCents: 500, Currency: "USD", RequestHash: "sha256:" + strings.Repeat("0", 64), Status: status, CreatedAt: g.now, PolicyID: "p1",
		ReleaseAt: releaseAt}
	if status == TxPendingApproval {
		tx.ApprovalID = tx.ID
	}
	Apply(g.s, &Event{Seq: g.seq, Time: g.now, Type: EvExecuteDecided, AgentID: g.agent, Transaction: tx})
	return tx
}

// TestSeed004_3_2_ConfirmOnTheApprovalsQueue: a transaction pending
// approval is an approval of the existing queue; approving it executes
// it, denying or letting it expire closes it.
func TestSeed004_3_2_ConfirmOnTheApprovalsQueue(t *testing.T) {
	for _, c := range []struct {
		name    string
		resolve func(g *execGate, id string) *Event
		want    string
	}{
		{"approve", func(g *execGate, id string) *Event {
			return g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id, Approve: true}})
		}, TxExecuting},
		{"deny", func(g *execGate, id string) *Event {
			return g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: id, Reason: "no"}})
		}, TxDenied},
		{"expire", func(g *execGate, _ string) *Event {
			g.now = g.now.Add(25 * time.Hour)
			return g.exec(&Command{Type: CmdTick, Request: RequestID{Source: "agentgate/tick", ID: "t"}})
		}, TxExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newExecGate(t, ExecuteModeOpen, 100)
			tx := g.openFor(TxPendingApproval, nil)
			ap := g.s.Approvals[tx.ID]
			if ap == nil || ap.Kind != ApprovalKindExecute || ap.Status != ApprovalPending || ap.PrincipalID != "org_1" || ap.TransactionID != tx.ID {
				t.Fatalf("approval %+v", ap)
			}
			refused(t, g.exec(&Command{Type: CmdResolveApproval, Principal: "org_2", Resolve: &ResolveApproval{ApprovalID: tx.ID, Approve: true}}), CodeForbidden, "")
			ev := c.resolve(g, tx.ID)
			open := g.s.Exec.Open[tx.ID]
			switch c.want {
			case TxExecuting:
				if ev.Transaction == nil || ev.Transaction.Status != TxExecuting || open == nil || open.Status != TxExecuting {
					t.Fatalf("approved: %+v, open %+v", ev.Transaction, open)
				}
				if _, body := Reply(ev); body.(ApprovalReply).Transaction.Status != TxExecuting {
					t.Fatalf("approve reply %+v", body)
				}
				if ev := g.outcome(ExecuteOutcome{TransactionID: tx.ID, Status: "ok"}); ev.Type != EvExecuteCompleted {
					t.Fatalf("outcome after approval: %v", ev.Error)
				}
			case TxDenied:
				if ev.Transaction == nil || ev.Transaction.Status != TxDenied || open != nil {
					t.Fatalf("denied: %+v, open %+v", ev.Transaction, open)
				}
			default:
				if ev.Type != EvApprovalsExpired || open != nil || g.s.Approvals[tx.ID].Status != ApprovalExpired {
					t.Fatalf("expired: %+v, open %+v", ev, open)
				}
			}
		})
	}
}

// TestSeed004_3_1_QueuedReleasedAtTheTick: a queued transaction is
// released (executing) by the first execute tick at or after its window
// opens; one whose business left the registry expires instead.
func TestSeed004_3_1_QueuedReleasedAtTheTick(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	at := g.now.Add(time.Hour)
	tx := g.openFor(TxQueued, &at)
	tick := func() *Event {
		return g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: g.now.String()}})
	}
	if ev := tick(); ev != nil {
		t.Fatalf("released early: %+v", ev.Timers)
	}
	refused(t, g.outcome(ExecuteOutcome{TransactionID: tx.ID, Status: "ok"}), CodeConflict, "")
	g.now = at
	ev := tick()
	if ev == nil || len(ev.Timers.Released) != 1 || ev.Timers.Released[0] != tx.ID || g.s.Exec.Open[tx.ID].Status != TxExecuting {
		t.Fatalf("release: %+v", ev)
	}
	if ev := g.outcome(ExecuteOutcome{TransactionID: tx.ID, Status: "ok"}); ev.Type != EvExecuteCompleted {
		t.Fatalf("outcome after release: %v", ev.Error)
	}
	g2 := newExecGate(t, ExecuteModeOpen, 100)
	tx = g2.openFor(TxQueued, &at)
	g2.business("org_1", OpDelete, Business{ID: "shop"}, "")
	g2.now = at
	ev = g2.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: "x"}})
	if ev == nil || len(ev.Timers.Expired) != 1 || g2.s.Exec.Open[tx.ID] != nil {
		t.Fatalf("expiry: %+v", ev)
	}
}

// TestSeed004_Global_BusinessIsCopied: a business change decided on
// GlobalPartition is copied to the other partitions.
func TestSeed004_Global_BusinessIsCopied(t *testing.T) {
	b := &Business{ID: "shop", Name: "Shop", Categories: []string{}, Endpoint: "https://shop.example", Currency: "USD", Owner: "org_1"}
	ev := &Event{Seq: 4, Partition: GlobalPartition, Type: EvBusinessChanged, Business: b,
		Command: &Command{Type: CmdBusiness, Global: true, Principal: "org_1", Business: &BusinessChange{Op: OpCreate, Business: *b}}}
	ch, ok := CopyOf(ev)
	if !ok || ch.Business != b {
		t.Fatalf("CopyOf: %+v %v", ch, ok)
	}
	s := NewState()
	cp := Decide(s, Env{Now: t0, Seq: 1, Partition: 2}, &Command{Type: CmdCopyPrincipalState, Request: RequestID{Source: "agentgate/global", ID: "c"},
		Copy: &PrincipalStateCopy{From: GlobalPartition, Seq: 4, Hash: strings.Repeat("e", 64), Changes: []CopiedChange{ch}}})
	if cp.Type != EvPrincipalStateCopied {
		t.Fatalf("copy refused: %v", cp.Error)
	}
	Apply(s, cp)
	if s.Exec == nil || s.Exec.Businesses["shop"] == nil {
		t.Fatal("the copied business is not folded")
	}
	del := CopiedChange{Seq: 5, Type: EvBusinessChanged, Business: &Business{ID: "shop"}}
	Apply(s, Decide(s, Env{Now: t0, Seq: 2, Partition: 2}, &Command{Type: CmdCopyPrincipalState, Request: RequestID{Source: "agentgate/global", ID: "d"},
		Copy: &PrincipalStateCopy{From: GlobalPartition, Seq: 5, Hash: strings.Repeat("e", 64), Changes: []CopiedChange{del}}}))
	if s.Exec.Businesses["shop"] != nil {
		t.Fatal("the copied deletion is not folded")
	}
}

// TestSeed004_FoldIsDeterministic: re-deciding a recorded run of every
// execute command on a fresh state gives the same events, byte for byte,
// and the same state; Clone copies the execute state deeply.
func TestSeed004_FoldIsDeterministic(t *testing.T) {
	g := newExecGate(t, ExecuteModeConfirm, 100)
	g.setPolicy(spendCap("cap", 12, policy.OnExceedBlock))
	for i := range 6 {
		tok := tokenHash("d" + string(rune('a'+i)))
		body := `{"amount_cents":` + string(rune('1'+i)) + `}`
		g.prepare("shop", body, tok)
		if i%3 == 0 {
			g.execute("shop", body, tokenHash("wrong"))
		}
		ev := g.execute("shop", body, tok)
		if i%2 == 0 {
			g.outcome(ExecuteOutcome{TransactionID: ev.Transaction.ID, Status: "ok", Data: json.RawMessage(`{"i":1}`)})
		}
		g.now = g.now.Add(2 * time.Minute)
	}
	g.prepare("shop", `{}`, tokenHash("late"))
	g.now = g.now.Add(10 * time.Minute)
	g.exec(&Command{Type: CmdExecuteTick, Request: RequestID{Source: "agentgate/tick", ID: "z"}})
	clone := g.s.Clone()
	if a, b := stateJSON(t, g.s), stateJSON(t, clone); !bytes.Equal(a, b) {
		t.Fatalf("Clone differs:\n%s\n%s", a, b)
	}
	s := NewState()
	for i, ev := range g.events {
		again := Decide(s, Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition, Signer: hashSigner{}}, ev.Command)
		a, _ := json.Marshal(ev)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("event %d re-decides differently:\n%s\n%s", i, a, b)
		}
		Apply(s, again)
	}
	if a, b := stateJSON(t, g.s), stateJSON(t, s); !bytes.Equal(a, b) {
		t.Fatalf("the replayed state differs")
	}
	Apply(clone, &Event{Seq: 99, Time: g.now, Type: EvBusinessChanged, Business: &Business{ID: "shop"}})
	if g.s.Exec.Businesses["shop"] == nil {
		t.Fatal("Clone shares the business registry")
	}
}
