package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// An execute's body builds the command every transport decides: the
// agent named by agent_id or the input, the request's RFC 8785 hash (the
// same for any member order and spacing), the confirmation token's hash.
func TestSeed004_2_2_ExecuteBuild(t *testing.T) {
	tok := strings.Repeat("a", 64)
	id := domain.RequestID{Source: "http", ID: "1"}
	b1, r := HTTP.Build(Execute, &Input{Body: []byte(`{"businessId":"shop","request":{"item":"tea","amount":"1.50"},"agent_id":"agent_1"}`),
		ConfirmationToken: "qwed_ct_x"}, &Credentials{TokenHash: tok}, id)
	if r != nil {
		t.Fatalf("execute: %+v", r.Err)
	}
	c := b1.Command
	if c.Type != domain.CmdExecute || c.AgentID != "agent_1" || c.TokenHash != tok || c.Execute.BusinessID != "shop" ||
		c.Execute.TokenHash != HashSecret("qwed_ct_x") || !strings.HasPrefix(c.Execute.RequestHash, "sha256:") {
		t.Fatalf("command %+v %+v", c, c.Execute)
	}
	b2, r := Kafka.BuildEvent(string(domain.CmdExecute), "agent_1", []byte(`{ "request": { "amount":"1.50", "item":"tea" }, "businessId":"shop" }`),
		domain.RequestID{Source: "s", ID: "1"}, Credentials{TokenHash: tok})
	if r != nil || b2.Command.Execute.RequestHash != c.Execute.RequestHash || b2.Command.Execute.TokenHash != "" {
		t.Fatalf("the CloudEvent: %+v %v", b2.Command, r)
	}
	for _, bad := range []struct {
		body string
		in   Input
		code domain.Code
	}{
		{`{"businessId":"shop","request":{}}`, Input{}, domain.CodeMissingField},
		{`{"request":{}}`, Input{AgentID: "a"}, domain.CodeMissingField},
		{`{"businessId":"shop"}`, Input{AgentID: "a"}, domain.CodeMissingField},
		{`{"businessId":"shop","request":[1]}`, Input{AgentID: "a"}, domain.CodeInvalidRequest},
		{`{"businessId":"shop","request":{},"extra":1}`, Input{AgentID: "a"}, domain.CodeInvalidRequest},
		{`{"businessId":"shop","request":{},"agent_id":"b"}`, Input{AgentID: "a"}, domain.CodeInvalidRequest},
		{`{"businessId":"shop","request":{"a":"` + strings.Repeat("x", domain.MaxExecuteRequestBytes) + `"}}`, Input{AgentID: "a"}, domain.CodeTooLong},
	} {
		in := bad.in
		in.Body = []byte(bad.body)
		if _, r := HTTP.Build(Execute, &in, &Credentials{TokenHash: tok}, id); r == nil || r.Err.Code != bad.code {
			t.Errorf("%s: %+v, want %s", bad.body, r, bad.code)
		}
	}
}

// In modes confirm and strict a body that cannot be validated is §2.4's
// refusal: without a token QWED-EXEC-001, with one QWED-EXEC-006, 403,
// the spec's message verbatim; in mode open it stays QWED-REQ-001.
func TestSeed004_2_4_UnparseableBody(t *testing.T) {
	id := domain.RequestID{Source: "http", ID: "1"}
	cr := &Credentials{TokenHash: strings.Repeat("a", 64)}
	for _, c := range []struct {
		mode, token string
		code        domain.Code
		msg         string
	}{
		{domain.ExecuteModeConfirm, "qwed_ct_x", domain.CodeExecUnparseable, "Unable to validate confirmation token for execute payload."},
		{domain.ExecuteModeStrict, "qwed_ct_x", domain.CodeExecUnparseable, "Unable to validate confirmation token for execute payload."},
		{domain.ExecuteModeConfirm, "", domain.CodeExecConfirmationRequired, "Execute confirmation required. Provide x-confirmation-token header."},
		{domain.ExecuteModeOpen, "qwed_ct_x", domain.CodeInvalidRequest, ""},
	} {
		for _, body := range []string{`{"businessId":"shop","request":`, `{"businessId":"shop","request":"x"}`, `[]`} {
			_, r := HTTP.Build(Execute, &Input{Body: []byte(body), AgentID: "a", ConfirmationToken: c.token, ExecuteMode: c.mode}, cr, id)
			if r == nil || r.Err.Code != c.code || (c.msg != "" && r.Err.Message != c.msg) {
				t.Fatalf("%s %q: %+v, want %s %q", c.mode, body, r, c.code, c.msg)
			}
			if c.msg != "" && r.Status != 403 {
				t.Fatalf("%s: status %d", c.mode, r.Status)
			}
		}
	}
	// A prepare's body is not an execute's: it is never §2.4's.
	if _, r := HTTP.Build(PrepareExecute, &Input{Body: []byte(`{`), AgentID: "a", ExecuteMode: domain.ExecuteModeConfirm}, cr, id); r == nil || r.Err.Code != domain.CodeInvalidRequest {
		t.Fatalf("prepare: %+v", r)
	}
}

// A prepare mints the confirmation token: its hash in the command, the
// token in the answer to this request only (a retry, whose minted token
// differs, is the same request and gets the answer without it).
func TestSeed004_2_2_PrepareMintsTheToken(t *testing.T) {
	body := []byte(`{"businessId":"shop","request":{"amount_cents":5}}`)
	id := domain.RequestID{Source: "http", ID: "1"}
	cr := Credentials{TokenHash: strings.Repeat("a", 64)}
	b, r := HTTP.Build(PrepareExecute, &Input{Body: body, AgentID: "agent_1"}, &cr, id)
	if r != nil {
		t.Fatal(r.Err)
	}
	x := b.Command.Execute
	ev := &domain.Event{Type: domain.EvExecutePrepared, Command: b.Command, Prepared: &domain.ExecutePrepared{TokenHash: x.TokenHash,
		BusinessID: "shop", RequestHash: x.RequestHash, Summary: "Shop: 0.05 USD", Consumer: "org_1", AgentID: "agent_1"}}
	status, out, err := b.Render(ev)
	var m map[string]any
	if err != nil || status != 200 || json.Unmarshal(out, &m) != nil {
		t.Fatalf("render %d %s %v", status, out, err)
	}
	tok, _ := m["confirmationToken"].(string)
	if !strings.HasPrefix(tok, ConfirmationTokenPrefix) || HashSecret(tok) != x.TokenHash || m["summary"] != "Shop: 0.05 USD" {
		t.Fatalf("answer %s", out)
	}
	retry, r := HTTP.Build(PrepareExecute, &Input{Body: body, AgentID: "agent_1"}, &cr, id)
	if r != nil || retry.Command.Execute.TokenHash == x.TokenHash || !retry.Same(ev) {
		t.Fatalf("the retry is not the same request")
	}
	if _, out, _ := retry.Render(ev); strings.Contains(string(out), "confirmationToken") {
		t.Fatalf("the retry's answer holds the token: %s", out)
	}
}

// The business registry's bodies: the path's id wins (a differing body
// id is refused), the owner is the gate's, not the body's.
func TestSeed004_3_1_BusinessBuild(t *testing.T) {
	id := domain.RequestID{Source: "http", ID: "1"}
	cr := &Credentials{Principal: "org_1"}
	body := `{"id":"shop","name":"Shop","categories":["food"],"endpoint":"https://shop.example","currency":"USD"}`
	b, r := HTTP.Build(CreateBusiness, &Input{Body: []byte(body)}, cr, id)
	if r != nil || b.Command.Type != domain.CmdBusiness || b.Command.Business.Op != domain.OpCreate || b.Command.Business.Business.ID != "shop" {
		t.Fatalf("create: %+v %v", b.Command, r)
	}
	b, r = HTTP.Build(UpdateBusiness, &Input{Body: []byte(`{"name":"Shop 2","endpoint":"https://s","currency":"EUR"}`), BusinessID: "shop"}, cr, id)
	if r != nil || b.Command.Business.Op != domain.OpUpdate || b.Command.Business.Business.ID != "shop" {
		t.Fatalf("update: %+v %v", b.Command, r)
	}
	if _, r := HTTP.Build(UpdateBusiness, &Input{Body: []byte(body), BusinessID: "other"}, cr, id); r == nil || r.Err.Code != domain.CodeInvalidRequest {
		t.Fatalf("update with another id: %v", r)
	}
	if _, r := HTTP.Build(CreateBusiness, &Input{Body: []byte(`{"id":"x","owner":"org_2"}`)}, cr, id); r == nil || r.Err.Code != domain.CodeInvalidRequest {
		t.Fatalf("an owner in the body: %v", r)
	}
	if _, r := HTTP.Build(CreateBusiness, &Input{Body: []byte(body)}, &Credentials{TokenHash: strings.Repeat("a", 64)}, id); r == nil || r.Err.Code != domain.CodeMissingAPIKey {
		t.Fatalf("an agent token: %v", r)
	}
	b, r = HTTP.Build(DeleteBusiness, &Input{BusinessID: "shop"}, cr, id)
	if r != nil || b.Command.Business.Op != domain.OpDelete || b.Command.Business.Business.ID != "shop" {
		t.Fatalf("delete: %+v %v", b.Command, r)
	}
}

// A prepare refused at authentication is recorded withheld; its retry,
// which mints another token, is the same request and gets the refusal.
func TestSeed004_2_2_RefusedPrepareRetry(t *testing.T) {
	body := []byte(`{"businessId":"shop","request":{"amount_cents":5}}`)
	id := domain.RequestID{Source: "http", ID: "1"}
	cr := Credentials{TokenHash: strings.Repeat("a", 64)}
	b, r := HTTP.Build(PrepareExecute, &Input{Body: body, AgentID: "agent_1"}, &cr, id)
	if r != nil {
		t.Fatal(r.Err)
	}
	ev := &domain.Event{Type: domain.EvCommandRejected, Command: domain.Withhold(b.Command),
		Error: &domain.Error{Code: domain.CodeInvalidAgentToken, Message: "invalid agent token"}}
	retry, r := HTTP.Build(PrepareExecute, &Input{Body: body, AgentID: "agent_1"}, &cr, id)
	if r != nil || ev.Command.Withheld == nil || !retry.Same(ev) {
		t.Fatalf("the retry of a refused prepare is another request: %+v", ev.Command)
	}
}
