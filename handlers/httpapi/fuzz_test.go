package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

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
		in := input{body: body, agentID: "agent_x"}
		var cr creds
		cmd, e := decodeVerify(&in, &cr)
		if (cmd == nil) == (e == nil) {
			t.Fatalf("decodeVerify(%q) = %v, %v: want exactly one of a command and an error", body, cmd, e)
		}
		if e != nil {
			var eb struct {
				Error domain.Error `json:"error"`
			}
			if err := json.Unmarshal(e.body(), &eb); err != nil {
				t.Fatalf("error body %q is not JSON: %v", e.body(), err)
			}
			if !eb.Error.Code.Known() || eb.Error.Message == "" || e.status < 400 || e.status > 499 || !e.record {
				t.Fatalf("error %+v status %d record %v for %q", eb.Error, e.status, e.record, body)
			}
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
