package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// Issue 13 item 8, the Go client: a reply to a qwed.a2a.message decodes to
// the typed verdict (any status, with the rate limit's retry-after), and a
// refusal to an *client.Error carrying the catalogue code and the status;
// a body that is neither is an error too, never a verdict.
func TestParseVerdict(t *testing.T) {
	v, err := client.ParseVerdict(&client.Reply{Status: 429, RetryAfter: 2 * time.Second,
		Data: []byte(`{"status":"rate_limited","reason":"slow down","engine_used":"trust_boundary","attestation_jwt":"eyJ.x.y","trace_id":"t1","verified_at":"2026-01-15T10:00:00Z","details":{}}`)})
	if err != nil || v.Status != a2a.StatusRateLimited || v.Forwarded() || v.Engine != a2a.EngineTrust || v.Attestation != "eyJ.x.y" ||
		v.TraceID != "t1" || !v.VerifiedAt.Equal(time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)) || v.RetryAfter != 2*time.Second || string(v.Details) != "{}" {
		t.Fatalf("rate-limited verdict: %+v %v", v, err)
	}
	_, err = client.ParseVerdict(&client.Reply{Status: 400, Data: []byte(`{"error":{"code":"QWED-REQ-002","message":"receiver_agent_id is required","details":{"field":"receiver_agent_id"}}}`)})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Code != domain.CodeMissingField || e.Details["field"] != "receiver_agent_id" ||
		client.ErrorCode(err) != domain.CodeMissingField {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := client.ParseVerdict(&client.Reply{Status: 200, Data: []byte(`{}`)}); client.ErrorCode(err) != domain.CodeInternal {
		t.Fatalf("an empty body: %v", err)
	}
	if _, err := client.ParseVerdict(&client.Reply{Status: 200, Data: []byte(`not json`)}); err == nil {
		t.Fatal("a body that is not JSON decoded")
	}
}

// A2AMessage keeps the AgentMessage's bytes: "<", ">" and "&" are not
// HTML-escaped (six bytes each: a payload of them would outgrow the
// requests topic's bound six times sooner), and the command is keyed by
// the sender.
func TestA2AMessageIsNotEscaped(t *testing.T) {
	cmd := client.A2AMessage(client.A2A{Message: a2a.Message{SenderAgentID: "a<1>", ReceiverAgentID: "b", PayloadType: a2a.PayloadGeneral,
		Payload: []byte(`{"message":"<b>a & b</b>"}`)}, APIKey: "k"})
	data, ok := cmd.Data.([]byte)
	if !ok || string(data) != `{"sender_agent_id":"a<1>","receiver_agent_id":"b","payload_type":"general","payload":{"message":"<b>a & b</b>"}}` ||
		cmd.AgentID != "a<1>" || cmd.Type != domain.CmdA2AMessage || cmd.APIKey != "k" {
		t.Fatalf("A2AMessage: %+v %s", cmd, data)
	}
}
