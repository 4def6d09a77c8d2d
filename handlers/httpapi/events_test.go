package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/schemas"
	"github.com/agentgate/agentgate/streams/cehttp"
)

// sendEvent posts ev to /events with headers h and decodes the reply
// CloudEvent.
func (g *testGate) sendEvent(ev cehttp.Event, h hdr) (int, cehttp.Event, map[string]any) {
	g.t.Helper()
	req, err := cehttp.NewRequest(context.Background(), g.srv.URL+"/events", ev)
	if err != nil {
		g.t.Fatalf("encoding the request event: %v", err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatalf("POST /events: %v", err)
	}
	defer resp.Body.Close()
	reply, err := cehttp.DecodeResponse(resp)
	if err != nil {
		g.t.Fatalf("decoding the reply event (status %d): %v", resp.StatusCode, err)
	}
	var data map[string]any
	if err := json.Unmarshal(reply.Data, &data); err != nil {
		g.t.Fatalf("decoding the reply data %q: %v", reply.Data, err)
	}
	if slices.Contains(command.EventTypes(), ev.Type) {
		checkReplyBody(g.t, ev.Type, reply.Data)
		if resp.StatusCode/100 == 2 {
			data := ev.Data
			if len(strings.TrimSpace(string(data))) == 0 {
				data = []byte("{}") // the endpoints that take an empty body read it as {}
			}
			if vs, err := schemas.ValidateCommand(ev.Type, data); err != nil || vs != nil {
				g.t.Errorf("%s accepted data its schema refuses: %v %+v\n%s", ev.Type, err, vs, ev.Data)
			}
		}
	}
	return resp.StatusCode, reply, data
}

func cloudEvent(mode cehttp.Mode, typ, id, subject, data string) cehttp.Event {
	return cehttp.Event{
		SpecVersion: cehttp.SpecVersion, Type: typ, Source: "test/client", ID: id, Subject: subject,
		DataContentType: "application/json", Data: []byte(data), Mode: mode,
		Extensions: map[string]string{"correlationid": "corr-" + id},
	}
}

// TestDesign3_EventsRoundTrip pins POST /events in both modes (the contracts of
// docs/ARCHITECTURE.md): register, verify, tool call, execution log, trust
// request and approval resolution as CloudEvents, each answered by a
// <type>.reply event in the request's mode whose data is the endpoint's body,
// with the endpoint's status; a redelivered event gets the recorded decision.
func TestDesign3_EventsRoundTrip(t *testing.T) {
	for _, mode := range []cehttp.Mode{cehttp.ModeBinary, cehttp.ModeStructured} {
		t.Run(mode.String(), func(t *testing.T) {
			g := newTestGate(t, gateOptions{})
			key := g.issueKey("org_a")

			status, reply, data := g.sendEvent(cloudEvent(mode, "qwed.agent.register", "reg-1", "",
				`{"agent":{"name":"bot","type":"supervised","principal_id":"org_a"}}`), apiKey(key))
			if status != 201 || reply.Type != "qwed.agent.register.reply" || reply.Mode != mode || data["agent_token"] == nil {
				t.Fatalf("register: %d %s %s %s", status, reply.Type, reply.Mode, reply.Data)
			}
			if reply.Extensions["correlationid"] != "corr-reg-1" || reply.Source != cehttp.ReplySource {
				t.Errorf("reply attributes %+v", reply)
			}
			agentID, token := data["agent_id"].(string), data["agent_token"].(string)

			before := g.head()
			verify := cloudEvent(mode, "qwed.agent.action.verify", "v-1", agentID,
				`{"action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"c","step_number":1}}`)
			status, reply, data = g.sendEvent(verify, bearerH(token))
			if status != 200 || reply.Type != "qwed.agent.action.verify.reply" || data["decision"] != "APPROVED" || reply.Subject != agentID {
				t.Fatalf("verify: %d %s %s", status, reply.Type, reply.Data)
			}
			first := string(reply.Data)
			status, reply, _ = g.sendEvent(verify, bearerH(token))
			if status != 200 || string(reply.Data) != first {
				t.Errorf("redelivery: %d %s, want the recorded %s", status, reply.Data, first)
			}
			if evs := g.events(before); len(evs) != 1 {
				t.Errorf("log holds %d events for one request delivered twice", len(evs))
			}
			actionID := data["action_id"].(string)

			// agent_id and agent_token in the data (QWED-Agent spec v1.1 §4.1), no subject.
			status, _, data = g.sendEvent(cloudEvent(mode, "qwed.agent.tool.verify", "t-1", "",
				fmt.Sprintf(`{"agent_id":%q,"agent_token":%q,"tool_call":{"tool_name":"send_email","parameters":{"to":"x"}}}`, agentID, token)), nil)
			if status != 202 || data["decision"] != "PENDING" {
				t.Fatalf("tool call: %d %v", status, data)
			}
			approvalID := data["approval"].(map[string]any)["approval_id"].(string)

			status, _, data = g.sendEvent(cloudEvent(mode, "qwed.approval.resolve", "r-1", "",
				fmt.Sprintf(`{"approval_id":%q,"approve":true,"reason":"ok"}`, approvalID)), apiKey(key))
			if status != 200 || data["approval"].(map[string]any)["status"] != "approved" {
				t.Fatalf("resolve: %d %v", status, data)
			}
			status, _, data = g.sendEvent(cloudEvent(mode, "qwed.agent.execution.log", "x-1", agentID,
				fmt.Sprintf(`{"action_id":%q,"success":true,"cost_usd":0,"tokens":3}`, actionID)), bearerH(token))
			if status != 200 || data["logged"] != true {
				t.Fatalf("execution log: %d %v", status, data)
			}
			status, _, data = g.sendEvent(cloudEvent(mode, "qwed.agent.trust.request", "tr-1", agentID,
				`{"request":"trust_elevation","from_level":1,"to_level":2,"evidence":{"days_active":0,"total_actions":0,"denied_actions":0,"attestations":0}}`),
				bearerH(token))
			if status != 200 || data["request_id"] == nil {
				t.Fatalf("trust request: %d %v", status, data)
			}
		})
	}
}

// TestDesign3_EventsRejections pins the refusals of POST /events: a body
// that is not a CloudEvent gets a plain JSON error, a CloudEvent of an
// unknown type or with bad data a reply event holding the error; each is
// recorded once.
func TestDesign3_EventsRejections(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)

	before := g.head()
	r := g.do("POST", "/events", hdr{"Content-Type": "application/json"}, `{"action":{}}`)
	if r.status != 400 || r.errorCode(t) != string(domain.CodeInvalidRequest) {
		t.Fatalf("not a CloudEvent: %d %s", r.status, r.body)
	}
	g.expectRejected(before, domain.CodeInvalidRequest, "")

	before = g.head()
	status, reply, data := g.sendEvent(cloudEvent(cehttp.ModeStructured, "qwed.agent.unknown", "u-1", a.id, `{}`), bearerH(a.token))
	if e, _ := data["error"].(map[string]any); status != 400 || e["code"] != string(domain.CodeUnsupportedType) || reply.Type != "qwed.agent.unknown.reply" {
		t.Fatalf("unknown type: %d %s", status, reply.Data)
	}
	g.expectRejected(before, domain.CodeUnsupportedType, "")

	before = g.head()
	status, _, data = g.sendEvent(cloudEvent(cehttp.ModeBinary, "qwed.agent.action.verify", "bad-1", a.id, `{"action":{"type":"calculate","extra":1}}`), bearerH(a.token))
	if e, _ := data["error"].(map[string]any); status != 400 || e["code"] != string(domain.CodeInvalidRequest) {
		t.Fatalf("bad data: %d %v", status, data)
	}
	g.expectRejected(before, domain.CodeInvalidRequest, "")

	before = g.head()
	status, _, data = g.sendEvent(cloudEvent(cehttp.ModeBinary, "qwed.agent.action.verify", "noauth-1", a.id, `{"action":{"type":"calculate"}}`), nil)
	if e, _ := data["error"].(map[string]any); status != 401 || e["code"] != string(domain.CodeInvalidAgentToken) {
		t.Fatalf("no token: %d %v", status, data)
	}
	g.expectRejected(before, domain.CodeInvalidAgentToken, "")

	before = g.head()
	status, _, data = g.sendEvent(cloudEvent(cehttp.ModeBinary, "qwed.agent.register", "noauth-2", "", `{"agent":{}}`), nil)
	if e, _ := data["error"].(map[string]any); status != 401 || e["code"] != string(domain.CodeMissingAPIKey) {
		t.Fatalf("register without a key: %d %v", status, data)
	}
	g.expectRejected(before, domain.CodeMissingAPIKey, "")

	// Batch mode is refused with a plain error.
	req, _ := http.NewRequest("POST", g.srv.URL+"/events", strings.NewReader(`[]`))
	req.Header.Set("Content-Type", "application/cloudevents-batch+json")
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || errorOf(t, b).Code != domain.CodeInvalidRequest {
		t.Fatalf("batch mode: %d %s", resp.StatusCode, b)
	}
}
