package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// a2aSigner signs A2A verdicts with a fixed token.
type a2aSigner struct{}

func (a2aSigner) Sign(domain.AttestationClaims) (string, error) { return "att", nil }
func (a2aSigner) SignA2A(c a2a.Claims) (string, error)          { return "jwt." + c.TraceID, nil }

// The AgentMessage of POST /a2a/intercept and qwed.a2a.message builds the
// same command; an agent token makes the sender the command's agent.
func TestA2AMessageBuild(t *testing.T) {
	body := []byte(`{"sender_agent_id":"agent-A","receiver_agent_id":"agent-B","payload":{"message":"Hello!"}}`)
	id := domain.RequestID{Source: "http", ID: "1"}
	b, r := HTTP.Build(A2AMessage, &Input{Body: body}, &Credentials{Principal: "org_1"}, id)
	if r != nil {
		t.Fatalf("principal: %+v", r.Err)
	}
	c := b.Command
	if c.Type != domain.CmdA2AMessage || c.Principal != "org_1" || c.AgentID != "" || c.A2A.PayloadType != a2a.PayloadGeneral ||
		c.A2A.SenderAgentID != "agent-A" || c.Request.Scope != "principal:org_1" {
		t.Fatalf("command %+v %+v", c, c.A2A)
	}
	ev, r := Kafka.BuildEvent(string(domain.CmdA2AMessage), "", body, domain.RequestID{Source: "s", ID: "1"}, Credentials{TokenHash: strings.Repeat("a", 64)})
	if r != nil || ev.Command.AgentID != "agent-A" || ev.Command.Principal != "" {
		t.Fatalf("token: %+v %+v", ev.Command, r)
	}
	for _, c := range []struct {
		in     Input
		cr     Credentials
		status int
		code   domain.Code
	}{
		{Input{Body: body}, Credentials{}, 401, domain.CodeInvalidAgentToken},
		{Input{Body: body, AgentID: "agent-X"}, Credentials{Principal: "org_1"}, 400, domain.CodeInvalidRequest},
		{Input{Body: []byte(`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{"x":"` + strings.Repeat("y", 100) + `"}}`), MaxPayload: 64},
			Credentials{Principal: "org_1"}, 413, domain.CodeTooLong},
		{Input{Body: []byte(`{"sender_agent_id":"a","receiver_agent_id":"b","payload":[]}`)}, Credentials{Principal: "org_1"}, 400, domain.CodeInvalidRequest},
		{Input{Body: []byte(`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{},"extra":1}`)}, Credentials{Principal: "org_1"}, 400, domain.CodeInvalidRequest},
	} {
		_, r := HTTP.Build(A2AMessage, &c.in, &c.cr, id)
		if r == nil || r.Status != c.status || r.Err.Code != c.code {
			t.Errorf("%s: got %+v, want %d %s", c.in.Body, r, c.status, c.code)
		}
	}
}

// The edge computes the payload digest while it validates the message and
// records it in the command (Decide then does not canonicalize the payload
// on the partition's single writer): it is a2a.PayloadDigest of the
// payload, over HTTP and Kafka alike. No client can choose it: the
// AgentMessage is a closed object, so a member naming a digest is refused
// at decode, whatever its spelling.
func TestA2AMessageDigestFromEdge(t *testing.T) {
	payload := `{"b":1.50,"a":[true,null,"x"]}`
	body := []byte(`{"sender_agent_id":"agent-A","receiver_agent_id":"agent-B","payload_type":"general","payload":` + payload + `}`)
	want, err := a2a.PayloadDigest(json.RawMessage(payload))
	if err != nil {
		t.Fatal(err)
	}
	id := domain.RequestID{Source: "http", ID: "1"}
	b, r := HTTP.Build(A2AMessage, &Input{Body: body}, &Credentials{Principal: "org_1"}, id)
	if r != nil {
		t.Fatalf("http: %+v", r.Err)
	}
	if b.Command.A2ADigest != want {
		t.Errorf("http digest %q, want %q", b.Command.A2ADigest, want)
	}
	ev, r := Kafka.BuildEvent(string(domain.CmdA2AMessage), "", body, domain.RequestID{Source: "s", ID: "1"}, Credentials{Principal: "org_1"})
	if r != nil {
		t.Fatalf("kafka: %+v", r.Err)
	}
	if ev.Command.A2ADigest != want {
		t.Errorf("kafka digest %q, want %q", ev.Command.A2ADigest, want)
	}
	forged := "sha256:" + strings.Repeat("0", 64)
	for _, member := range []string{"a2a_digest", "payload_digest", "digest", "A2A_Digest"} {
		body := []byte(`{"sender_agent_id":"agent-A","receiver_agent_id":"agent-B","payload":` + payload + `,"` + member + `":"` + forged + `"}`)
		if _, r := HTTP.Build(A2AMessage, &Input{Body: body}, &Credentials{Principal: "org_1"}, id); r == nil || r.Err.Code != domain.CodeInvalidRequest {
			t.Errorf("http %s: got %+v, want a %s refusal", member, r, domain.CodeInvalidRequest)
		}
		if _, r := Kafka.BuildEvent(string(domain.CmdA2AMessage), "", body, domain.RequestID{Source: "s", ID: "1"}, Credentials{Principal: "org_1"}); r == nil || r.Err.Code != domain.CodeInvalidRequest {
			t.Errorf("kafka %s: got %+v, want a %s refusal", member, r, domain.CodeInvalidRequest)
		}
	}
}

// Boundary changes take a principal API key; an agent token is
// QWED-AUTH-003, no key QWED-AUTH-001.
func TestA2ABoundaryBuild(t *testing.T) {
	id := domain.RequestID{Source: "http", ID: "1"}
	for _, c := range []struct {
		ep   *Endpoint
		in   Input
		want domain.A2ABoundaryChange
	}{
		{A2ATrust, Input{AgentID: "a"}, domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: "a"}},
		{A2AUntrust, Input{AgentID: "a"}, domain.A2ABoundaryChange{Op: domain.A2AOpUntrust, Agent: "a"}},
		{A2ABlock, Input{AgentID: "a"}, domain.A2ABoundaryChange{Op: domain.A2AOpBlock, Agent: "a"}},
		{A2AUnblock, Input{AgentID: "a"}, domain.A2ABoundaryChange{Op: domain.A2AOpUnblock, Agent: "a"}},
		{A2ABlockPair, Input{Body: []byte(`{"sender":"s","receiver":"r"}`)}, domain.A2ABoundaryChange{Op: domain.A2AOpBlockPair, Sender: "s", Receiver: "r"}},
		{A2AUnblockPair, Input{Body: []byte(`{"sender":"s","receiver":"r"}`)}, domain.A2ABoundaryChange{Op: domain.A2AOpUnblockPair, Sender: "s", Receiver: "r"}},
		{A2ABoundary, Input{Body: []byte(`{"op":"block","agent":"x"}`)}, domain.A2ABoundaryChange{Op: domain.A2AOpBlock, Agent: "x"}},
	} {
		in := c.in
		b, r := HTTP.Build(c.ep, &in, &Credentials{Principal: "org_1"}, id)
		if r != nil || b.Command.Type != domain.CmdA2ABoundary || *b.Command.A2ABoundary != c.want {
			t.Errorf("%+v: %+v %+v", c.want, b.Command, r)
		}
		for _, cr := range []struct {
			cr   Credentials
			code domain.Code
		}{{Credentials{TokenHash: strings.Repeat("a", 64)}, domain.CodeForbidden}, {Credentials{}, domain.CodeMissingAPIKey}} {
			in := c.in
			if _, r := HTTP.Build(c.ep, &in, &cr.cr, id); r == nil || r.Err.Code != cr.code || r.Status != cr.code.HTTPStatus() {
				t.Errorf("%+v with %+v: %+v", c.want, cr.cr, r)
			}
		}
	}
	if _, r := HTTP.Build(A2ABlockPair, &Input{Body: []byte(`{"sender":"s","agent":"r"}`)}, &Credentials{Principal: "org_1"}, id); r == nil {
		t.Error("a pair body with an unknown member was accepted")
	}
}

// The answer to a verdict: 200 with the verdict's body, or 429 with
// Retry-After in whole seconds rounded up; details are always an object.
func TestA2AReply(t *testing.T) {
	st := domain.NewState()
	cfg := domain.DefaultConfig()
	a := domain.DefaultA2AConfig()
	a.DefaultAllow, a.RatePerMinute, a.Burst = true, 7, 1
	cfg.A2A = &a
	at := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	seq := uint64(0)
	run := func(cmd *domain.Command) *domain.Event {
		seq++
		ev := domain.Decide(st, domain.Env{Now: at, Seq: seq, Signer: a2aSigner{}}, cmd)
		domain.Apply(st, ev)
		return ev
	}
	run(&domain.Command{Type: domain.CmdConfigure, Principal: domain.AdminPrincipal, Request: domain.RequestID{Source: "t", ID: "c"}, Configure: &domain.Configure{Config: cfg}})
	msg := func(id string) *domain.Command {
		return &domain.Command{Type: domain.CmdA2AMessage, Principal: "org_1", Request: domain.RequestID{Source: "t", ID: id},
			A2A: &a2a.Message{SenderAgentID: "a", ReceiverAgentID: "b", PayloadType: a2a.PayloadGeneral, Payload: json.RawMessage(`{}`), TraceID: "tr-" + id}}
	}
	status, body, retry, err := A2AReply(run(msg("1")))
	want := `{"status":"forwarded","reason":"general: passthrough","engine_used":"passthrough","attestation_jwt":"jwt.tr-1","trace_id":"tr-1","verified_at":"2026-11-26T05:00:00Z","details":{}}`
	if err != nil || status != 200 || retry != "" || string(body) != want {
		t.Fatalf("forwarded: %d %q %s %v", status, retry, body, err)
	}
	status, body, retry, _ = A2AReply(run(msg("2")))
	if status != 429 || retry != "9" || !strings.Contains(string(body), `"status":"rate_limited"`) || !strings.Contains(string(body), `"retry_after_ms":8572`) {
		t.Fatalf("rate limited: %d %q %s", status, retry, body)
	}
	status, body, _, _ = A2AReply(run(&domain.Command{Type: domain.CmdA2ABoundary, Principal: "org_1", Request: domain.RequestID{Source: "t", ID: "b"},
		A2ABoundary: &domain.A2ABoundaryChange{Op: domain.A2AOpBlock, Agent: "x"}}))
	if status != 200 || string(body) != `{"boundary":"org_1","op":"block","agent":"x"}` {
		t.Fatalf("boundary: %d %s", status, body)
	}
}
