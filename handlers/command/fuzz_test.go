package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// fuzzEndpoints are the body decoders of every command endpoint, in a
// fixed order so that a fuzz input names one by index.
var fuzzEndpoints = []struct {
	name string
	ep   *Endpoint
}{
	{"register", RegisterAgent}, {"verify", VerifyAction}, {"tool", VerifyToolCall}, {"execution", LogExecution},
	{"trust", RequestTrust}, {"trust-level", SetTrustLevel}, {"suspend", SuspendAgent}, {"complaint", FileComplaint},
	{"tools", PutToolRegistry}, {"keys", IssuePrincipalKey}, {"approve", Approve}, {"deny", Deny},
	{"resolve-event", ResolveApproval}, {"revoke-key", RevokePrincipalKey}, {"rotate-token", RotateToken},
	{"revoke-token", RevokeToken}, {"a2a-message", A2AMessage}, {"a2a-boundary", A2ABoundary}, {"a2a-trust", A2ATrust},
	{"a2a-block-pair", A2ABlockPair}, {"prepare", PrepareExecute}, {"execute", Execute}, {"business-create", CreateBusiness},
	{"business-update", UpdateBusiness}, {"business-delete", DeleteBusiness},
	{"webhook-create", WebhookCreate}, {"webhook-update", WebhookUpdate}, {"webhook-delete", WebhookDelete},
	{"webhook-change", WebhookChange},
	{"business-update", UpdateBusiness}, {"business-delete", DeleteBusiness}, {"policy-create", CreatePolicy},
	{"policy-update", UpdatePolicy}, {"policy-delete", DeletePolicy}, {"policy-change", ChangePolicy},
	{"principal-permissions", PutPrincipalPermissions},
}

// checkRejection checks that e is a well-formed refusal: a JSON error body
// with a catalogue code, a message and a 4xx status.
func checkRejection(t *testing.T, what string, e *Rejection) {
	t.Helper()
	var eb struct {
		Error domain.Error `json:"error"`
	}
	if err := json.Unmarshal(e.Body(), &eb); err != nil {
		t.Fatalf("%s: error body %q is not JSON: %v", what, e.Body(), err)
	}
	if !eb.Error.Code.Known() || eb.Error.Message == "" || e.Status < 400 || e.Status > 499 {
		t.Fatalf("%s: error %+v status %d", what, eb.Error, e.Status)
	}
}

// fuzzBodySeeds are bodies of every endpoint, valid and not, the seed
// corpus of the body fuzz targets.
var fuzzBodySeeds = []string{
	`{"agent":{"name":"a","type":"supervised","principal_id":"org_1"},"permissions":{"allowed_engines":["math"]},"budget":{"max_daily_cost_usd":1.5}}`,
	`{"agent":{"name":"a","type":"autonomous"},"trust_level":"trusted"}`,
	`{"action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"c","step_number":1},"agent_token":"qwed_agent_secret"}`,
	`{"action_id":"act_1","success":true,"output":"charged 4111 1111 1111 1111 for ann@example.com"}`,
	`{"action_id":"act_1","success":true,"output":"x\u0000\ud800y","result_hash":"sha256:00"}`,
	`{"action":{"type":"send_message","output":"card 4111 1111 1111 1111"},"context":{"conversation_id":"c","step_number":1}}`,
	`{"tool_call":{"tool_name":"send_email","parameters":{"to":"x@y"}},"justification":"j"}`,
	`{"action_id":"act_1","actual_cost_usd":"0.02","actual_tokens":10,"success":true,"result_hash":"ab"}`,
	`{"requested_level":3,"justification":"j","evidence":{"total_actions":5}}`,
	`{"trust_level":2,"reason":"r"}`, `{"suspended":true,"reason":"r"}`, `{"reason":"spam"}`,
	`{"tools":{"t":{"risk_level":"high","requires_approval":true,"sandbox_required":false}}}`,
	`{"allowed_paths":["/srv"],"denied_paths":["**/*.pem"],"allowed_hosts":["*.Bücher.example","10.0.0.5"],"allowed_schemes":["https"],"allowed_ports":[443]}`,
	`{"principal_id":"org_2","allowed_ports":[0,65536]}`, `{"allowed_hosts":"x"}`, `{"allowed_ports":[1.5]}`,
	`{"approval_id":"act_1","approve":true,"reason":"ok"}`,
	`{"sender_agent_id":"agent_x","receiver_agent_id":"b","payload_type":"financial_transaction","payload":{"data":{"claimed_total":1,"line_items":[]}},"trace_id":"t"}`,
	`{"sender_agent_id":"agent_x","receiver_agent_id":"b","payload":{"code":"eval(1)"},"payload_type":"code_execution","timestamp":"2026-01-01T00:00:00Z"}`,
	`{"op":"block_pair","sender":"s","receiver":"r"}`, `{"sender":"s","receiver":"r"}`,
	`{"businessId":"shop","request":{"amount":"12.50","item":"x"},"agent_id":"agent_x"}`, `{"businessId":"shop","request":[1]}`,
	`{"businessId":"shop","request":{"n":1e400},"agent_id":"a"}`, `{"businessId":"shop","request":null}`,
	`{"id":"shop","name":"Shop","categories":["food"],"endpoint":"https://shop.example","currency":"USD"}`, `{"owner":"x"}`,
	`{"url":"https://hooks.example/h","events":["blocked","limit_80"]}`, `{"url":"http://h","consumer":"org_2","events":null}`,
	`{"op":"update","webhook":{"id":"wh_1","url":"https://h.example","events":["queued"]}}`, `{"op":"delete","webhook":{"id":"wh_1"}}`,
	`{"id":"daily","type":"spending","scope":{"agents":["b","a"]},"spending":{"daily_cents":1000,"on_exceed":"confirm"}}`,
	`{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"Europe/Paris","windows":[{"days":["mon"],"start":"09:00","end":"17:30"}],"outside":"queue"}}`,
	`{"op":"create","consumer":"org_1","policy":{"id":"c","type":"category","scope":{"business_id":"shop"},"category":{"mode":"block","categories":["bet"]}}}`,
	`{"op":"delete","policy":{"id":"c"}}`, `{"op":"update","consumer":"","policy":{"id":"c","type":"confirmation","scope":{},"confirmation":{"always":true}}}`,
	``, `{}`, `null`, `[]`, `{"x":1}`, `{"trust_level":"9"}`, `{"agent":1}`, `{} {}`, `{"a":1e999}`, "\xff",
}

// FuzzEndpointBodies pins every command endpoint's body decoder: on any
// input it never panics and yields exactly one of a command and a
// rejection; a rejection is a catalogue 4xx error; a command encodes, and
// neither a minted secret nor an agent token given in the body appears in
// it (invariant 6: secrets never enter the log).
func FuzzEndpointBodies(f *testing.F) {
	for i, s := range fuzzBodySeeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		in := Input{Body: body, AgentID: "agent_x", Tool: "send_email", ApprovalID: "act_1", PrincipalID: "org_1"}
		var cr Credentials
		cmd, m, rej := e.ep.build(&in, &cr)
		if (cmd == nil) == (rej == nil) {
			t.Fatalf("%s(%q) = %v, %v: want exactly one of a command and an error", e.name, body, cmd, rej)
		}
		if rej != nil {
			checkRejection(t, e.name, rej)
			return
		}
		enc, err := json.Marshal(cmd)
		if err != nil {
			t.Fatalf("%s: the command of %q does not encode: %v", e.name, body, err)
		}
		if m != nil && (m.value == "" || bytes.Contains(enc, []byte(m.value))) {
			t.Fatalf("%s: the minted secret is in the command: %s", e.name, enc)
		}
		var tok struct {
			AgentToken string `json:"agent_token"`
		}
		if json.Unmarshal(body, &tok) == nil && len(tok.AgentToken) >= 8 && bytes.Contains(enc, []byte(tok.AgentToken)) {
			t.Fatalf("%s: the agent token of the body is in the command: %s", e.name, enc)
		}
		// An execution's output is recorded as its scan, never as text.
		var out struct {
			Output string `json:"output"`
		}
		if cmd.Type == domain.CmdLogExecution && json.Unmarshal(body, &out) == nil && out.Output != "" {
			if cmd.OutputScan == nil || cmd.OutputScan.Bytes != int64(len(out.Output)) {
				t.Fatalf("%s: output %q scanned as %+v", e.name, out.Output, cmd.OutputScan)
			}
			// Beside the members the body chose (action id, hashes), which
			// may hold anything.
			rest := *cmd
			rest.Execution, rest.AgentID = nil, ""
			if b, _ := json.Marshal(&rest); len(out.Output) >= 8 && bytes.Contains(b, []byte(out.Output)) {
				t.Fatalf("%s: the output is in the command: %s", e.name, b)
			}
		}
	})
}

// FuzzBuildEvent pins the CloudEvent -> command mapping used by
// POST /events and the Kafka gate: never a panic, exactly one of a
// command and a rejection, a rejection with a catalogue 4xx code, a
// command carrying the event's identity and credentials.
func FuzzBuildEvent(f *testing.F) {
	for _, typ := range append(EventTypes(), "qwed.unknown", "") {
		f.Add(typ, "agent_x", []byte(`{"action":{"type":"calculate","query":"1+1"},"context":{"conversation_id":"c","step_number":1}}`), "org_1", "")
		f.Add(typ, "", []byte(`{"approval_id":"act_1","approve":false}`), "", "ab")
	}
	f.Fuzz(func(t *testing.T, typ, subject string, data []byte, principal, tokenHash string) {
		id := domain.RequestID{Source: "fuzz", ID: "1"}
		ec, rej := Kafka.BuildEvent(typ, subject, data, id, Credentials{Principal: principal, TokenHash: tokenHash})
		if (ec.Command == nil) == (rej == nil) {
			t.Fatalf("BuildEvent(%q) = %v, %v: want exactly one", typ, ec, rej)
		}
		if rej != nil {
			if !rej.Err.Code.Known() || rej.Err.Message == "" || rej.Status < 400 || rej.Status > 499 {
				t.Fatalf("rejection %+v", rej)
			}
			if err := json.Unmarshal(rej.Body(), new(map[string]any)); err != nil {
				t.Fatalf("rejection body %q: %v", rej.Body(), err)
			}
			return
		}
		c := ec.Command
		if c.Request.Source != id.Source || c.Request.ID != id.ID || c.Request.Scope != domain.RequestScope(c.Principal, c.TokenHash) ||
			c.Principal != principal || (c.TokenHash != tokenHash && tokenHash != "") {
			t.Fatalf("command %+v lost the event's identity or credentials", c)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("command does not encode: %v", err)
		}
	})
}

// FuzzDecodeVerify pins the decoding of a verify body: on any input it
// never panics and yields either a command or an error, never both; an
// error is a well-formed error body with a catalogue code and a 4xx
// status; a command is a VerifyAction for the path's agent that encodes.
func FuzzDecodeVerify(f *testing.F) {
	for _, s := range []string{
		`{"action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"c","step_number":1}}`,
		`{"agent_id":"agent_x","agent_token":"qwed_agent_t","action":{"type":"execute_sql","query":"SELECT 1","parameters":{"a":[1,2,{"b":null}]}},"context":{"conversation_id":"c","step_number":"5"},"options":{"require_attestation":true,"risk_threshold":"medium"}}`,
		`{"action":{"type":"calculate","estimated_cost_usd":"0.25","estimated_tokens":12}}`,
		`{"action":{"type":1}}`, `{"context":{"step_number":true}}`, `{"context":{"step_number":"abc"}}`,
		`{"x":1}`, `[]`, `null`, `{}`, `{} {}`, `{"action":`, ``, `"\ud800"`, `{"action":{"parameters":1e400}}`,
		`{"agent_id":"other"}`, `{"action":{"estimated_cost_usd":-1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in := Input{Body: body, AgentID: "agent_x"}
		var cr Credentials
		cmd, e := decodeVerify(&in, &cr)
		if (cmd == nil) == (e == nil) {
			t.Fatalf("decodeVerify(%q) = %v, %v: want exactly one of a command and an error", body, cmd, e)
		}
		if e != nil {
			checkRejection(t, fmt.Sprintf("decodeVerify(%q)", body), e)
			return
		}
		if cmd.Type != domain.CmdVerifyAction || cmd.Verify == nil || cmd.AgentID != "agent_x" {
			t.Fatalf("command %+v for %q", cmd, body)
		}
		if _, err := json.Marshal(cmd); err != nil {
			t.Fatalf("the command of %q does not encode: %v", body, err)
		}
	})
}

// FuzzPrincipalPermissionsBody pins the body decoder of PUT
// /principals/{id}/permissions and the domain's validation behind it: on
// any input no panic; a refusal is a catalogue 4xx error; a command names
// the path's principal, and Decide either records a policy whose lists
// are within the bounds or refuses with a catalogue error.
func FuzzPrincipalPermissionsBody(f *testing.F) {
	for _, s := range fuzzBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in := Input{Body: body, PrincipalID: "org_1"}
		var cr Credentials
		cmd, _, rej := PutPrincipalPermissions.build(&in, &cr)
		if rej != nil {
			checkRejection(t, "principal-permissions", rej)
			return
		}
		if cmd.PrincipalPermissions == nil || cmd.PrincipalPermissions.PrincipalID != "org_1" {
			t.Fatalf("%q: command %+v", body, cmd)
		}
		st := domain.NewState()
		st.Config = domain.DefaultConfig()
		cmd.Principal = "org_1"
		ev := domain.Decide(st, domain.Env{Now: time.Unix(1e9, 0).UTC(), Seq: 1}, cmd)
		switch {
		case ev.Type == domain.EvCommandRejected:
			if ev.Error == nil || !ev.Error.Code.Known() {
				t.Fatalf("%q: refused with %+v", body, ev.Error)
			}
		case ev.Type != domain.EvPrincipalPermissionsSet || ev.PrincipalPermissions == nil:
			t.Fatalf("%q: event %s", body, ev.Type)
		case len(ev.PrincipalPermissions.AllowedHosts) > domain.MaxPermissionEntries || len(ev.PrincipalPermissions.AllowedPorts) > domain.MaxPermissionEntries:
			t.Fatalf("%q: unbounded lists recorded", body)
		}
	})
}
