package command_test

import (
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

// The contracts (docs/ARCHITECTURE.md): the CloudEvent -> Command mapping used
// outside HTTP refuses what POST /events refuses, with the same codes.
func TestBuildEventRefusesLikeEvents(t *testing.T) {
	id := domain.RequestID{Source: "kafka-test", ID: "1"}
	cases := []struct {
		name      string
		typ, data string
		principal string
		want      domain.Code
	}{
		{"unknown type", "qwed.nope", `{}`, "", domain.CodeUnsupportedType},
		{"principal command without key", string(domain.CmdRegisterAgent), `{"agent":{"name":"a","type":"autonomous","principal_id":"p"}}`, "", domain.CodeMissingAPIKey},
		{"agent command without token", string(domain.CmdVerifyAction), `{"action":{"type":"database_query","query":"SELECT 1"},"context":{"conversation_id":"c","step_number":1}}`, "", domain.CodeInvalidAgentToken},
		{"unknown member", string(domain.CmdVerifyAction), `{"agent_token":"t","bogus":1}`, "", domain.CodeInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, rej := command.Kafka.BuildEvent(c.typ, "agent_1", []byte(c.data), id, command.Credentials{Principal: c.principal})
			if rej == nil || rej.Err.Code != c.want {
				t.Fatalf("BuildEvent = %+v, %v; want code %s", b.Command, rej, c.want)
			}
			if len(rej.Body()) == 0 || rej.Status < 400 {
				t.Fatalf("rejection status %d body %q", rej.Status, rej.Body())
			}
		})
	}
}

// Invariant 6: the agent token in the data reaches the command only as its
// hash; the command carries the request id and the subject as the agent.
func TestBuildEventHashesToken(t *testing.T) {
	id := domain.RequestID{Source: "kafka-test", ID: "2"}
	data := `{"agent_token":"qwed_agent_secret","action":{"type":"database_query","query":"SELECT 1"},"context":{"conversation_id":"c","step_number":1}}`
	ec, rej := command.Kafka.BuildEvent(string(domain.CmdVerifyAction), "agent_1", []byte(data), id, command.Credentials{})
	if rej != nil {
		t.Fatalf("rejected: %v", rej)
	}
	c := ec.Command
	scoped := id
	scoped.Scope = domain.RequestScope("", c.TokenHash) // the event's id is the token's own (issue 11)
	if c.Request != scoped || c.AgentID != "agent_1" || c.Type != domain.CmdVerifyAction {
		t.Fatalf("command %+v", c)
	}
	if c.TokenHash == "" || c.TokenHash == "qwed_agent_secret" || len(c.TokenHash) != 64 {
		t.Fatalf("token hash %q", c.TokenHash)
	}
	// An event recorded for another command with the same id is not disclosed.
	other := &domain.Event{Type: domain.EvActionDecided, Command: &domain.Command{Type: domain.CmdVerifyAction, AgentID: "agent_2", Request: id}}
	if _, _, rej := ec.Reply(other); rej == nil || rej.Err.Code != domain.CodeConflict {
		t.Fatalf("Reply(other) = %v, want %s", rej, domain.CodeConflict)
	}
}

// The audit record of a refusal holds the digest of the body, never the body.
func TestRejectionCommandHoldsNoBody(t *testing.T) {
	r := command.Reject(domain.CodeInvalidRequest, nil, "bad %s", "thing")
	cmd := command.RejectionCommand(r, "kafka agentgate.requests/0", []byte(`{"agent_token":"secret"}`), "", domain.RequestID{Source: "kafka", ID: "x"})
	if cmd.Type != domain.CmdRejectRequest || cmd.Reject.BodyBytes != 24 || len(cmd.Reject.BodyDigest) != 64 {
		t.Fatalf("reject command %+v %+v", cmd, cmd.Reject)
	}
	if cmd.Reject.Error.Message == "bad thing" {
		t.Fatalf("recorded the answered message %q, want the catalogue description", cmd.Reject.Error.Message)
	}
}
