package httpapi

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// fuzzEndpoints are the body decoders of every command endpoint, in a
// fixed order so that a fuzz input names one by index.
var fuzzEndpoints = []struct {
	name string
	ep   *endpoint
}{
	{"register", &epRegister}, {"verify", &epVerify}, {"tool", &epTool}, {"execution", &epExecution},
	{"trust", &epTrust}, {"trust-level", &epSetTrust}, {"suspend", &epSuspend}, {"complaint", &epComplaint},
	{"tools", &epToolRegistry}, {"keys", &epIssueKey}, {"approve", &epApprove}, {"deny", &epDeny},
	{"resolve-event", &epResolveEvent}, {"revoke-key", &epRevokeKey}, {"rotate-token", &epRotateToken},
	{"revoke-token", &epRevokeToken},
}

// checkRejection checks that e is a well-formed recorded refusal: a JSON
// error body with a catalogue code, a message and a 4xx status.
func checkRejection(t *testing.T, what string, e *apiError) {
	t.Helper()
	var eb struct {
		Error domain.Error `json:"error"`
	}
	if err := json.Unmarshal(e.body(), &eb); err != nil {
		t.Fatalf("%s: error body %q is not JSON: %v", what, e.body(), err)
	}
	if !eb.Error.Code.Known() || eb.Error.Message == "" || e.status < 400 || e.status > 499 || !e.record {
		t.Fatalf("%s: error %+v status %d record %v", what, eb.Error, e.status, e.record)
	}
}

// FuzzEndpointBodies pins every command endpoint's body decoder: on any
// input it never panics and yields exactly one of a command and a
// rejection; a rejection is a catalogue 4xx error; a command encodes, and
// neither a minted secret nor an agent token given in the body appears in
// it (invariant 6: secrets never enter the log).
func FuzzEndpointBodies(f *testing.F) {
	seeds := []string{
		`{"agent":{"name":"a","type":"supervised","principal_id":"org_1"},"permissions":{"allowed_engines":["math"]},"budget":{"max_daily_cost_usd":1.5}}`,
		`{"agent":{"name":"a","type":"autonomous"},"trust_level":"trusted"}`,
		`{"action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"c","step_number":1},"agent_token":"qwed_agent_secret"}`,
		`{"tool_call":{"tool_name":"send_email","parameters":{"to":"x@y"}},"justification":"j"}`,
		`{"action_id":"act_1","actual_cost_usd":"0.02","actual_tokens":10,"success":true,"result_hash":"ab"}`,
		`{"requested_level":3,"justification":"j","evidence":{"total_actions":5}}`,
		`{"trust_level":2,"reason":"r"}`, `{"suspended":true,"reason":"r"}`, `{"reason":"spam"}`,
		`{"tools":{"t":{"risk_level":"high","requires_approval":true,"sandbox_required":false}}}`,
		`{"approval_id":"act_1","approve":true,"reason":"ok"}`,
		``, `{}`, `null`, `[]`, `{"x":1}`, `{"trust_level":"9"}`, `{"agent":1}`, `{} {}`, `{"a":1e999}`, "\xff",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		in := input{body: body, agentID: "agent_x", tool: "send_email", approvalID: "act_1", principalID: "org_1"}
		var cr creds
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
	})
}

// FuzzBuildEventCommand pins the CloudEvent -> command mapping used by
// POST /events and the Kafka gate: never a panic, exactly one of a
// command and a rejection, a rejection with a catalogue 4xx code, a
// command carrying the event's identity and credentials.
func FuzzBuildEventCommand(f *testing.F) {
	for _, typ := range append(EventTypes(), "qwed.unknown", "") {
		f.Add(typ, "agent_x", []byte(`{"action":{"type":"calculate","query":"1+1"},"context":{"conversation_id":"c","step_number":1}}`), "org_1", "")
		f.Add(typ, "", []byte(`{"approval_id":"act_1","approve":false}`), "", "ab")
	}
	f.Fuzz(func(t *testing.T, typ, subject string, data []byte, principal, tokenHash string) {
		id := domain.RequestID{Source: "fuzz", ID: "1"}
		ec, rej := BuildEventCommand(typ, subject, data, id, principal, tokenHash)
		if (ec == nil) == (rej == nil) {
			t.Fatalf("BuildEventCommand(%q) = %v, %v: want exactly one", typ, ec, rej)
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

// FuzzParseActivityQuery pins the activity query's parser: an accepted
// query has from < to within MaxActivityPeriod and a limit in range; a
// refused one is a catalogue 4xx error.
func FuzzParseActivityQuery(f *testing.F) {
	for _, s := range []string{"", "from=2026-01-01", "from=2026-01-01&to=2026-02-01T00:00:00Z&limit=5&after_seq=9",
		"to=2020-01-01", "limit=0", "limit=x", "after_seq=-1", "from=2026-02-01&to=2026-01-01", "from=1900-01-01", "%zz"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http answers a malformed query itself
		}
		aq, e := parseActivityQuery(q, now)
		if e != nil {
			checkRejection(t, "activity "+raw, e)
			return
		}
		if !aq.from.Before(aq.to) || aq.to.Sub(aq.from) > MaxActivityPeriod || aq.limit < 1 || aq.limit > MaxListLimit {
			t.Fatalf("%q accepted as %+v", raw, aq)
		}
	})
}
