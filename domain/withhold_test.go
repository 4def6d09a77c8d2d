package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// A refusal at authentication records the payload's digest and size, never
// the payload (issue 11, item 4), and re-deciding the recorded command on
// the same state gives the same bytes (replay --verify). Before a
// gate.configured event turns it on, refusals are recorded whole, as the
// logs written before it hold them.
func TestRefusalAtAuthenticationWithholdsThePayload(t *testing.T) {
	const marker = "PAYLOAD-MARKER"
	big := strings.Repeat("x", 64<<10) + marker
	g := newGate(t)
	id := g.register("a", "autonomous", trustPtr(TrustAutonomous), Limits{}, Permissions{})
	other := g.register("b", "autonomous", trustPtr(TrustAutonomous), Limits{}, Permissions{})
	g.exec(&Command{Type: CmdSuspendAgent, AgentID: other, Principal: "org_1", Suspend: &SuspendAgent{Suspended: true}})
	verify := func(agent, token string) *Command {
		c := verifyCmd(agent, "a", "c1", "1", "calculate", big)
		c.TokenHash = token
		return c
	}
	cases := []struct {
		name string
		cmd  *Command
		code Code
	}{
		{"unknown agent", verify("agent_0000000000000000", tokenHash("a")), CodeAgentNotRegistered},
		{"wrong token", verify(id, tokenHash("x")), CodeInvalidAgentToken},
		{"token that is no hash", verify(id, "x"), CodeInvalidAgentToken},
		{"no credentials", verify(id, ""), CodeInvalidAgentToken},
		{"suspended agent", &Command{Type: CmdVerifyToolCall, AgentID: other, TokenHash: tokenHash("b"),
			Tool: &VerifyToolCall{ToolCall: ToolCall{ToolName: "send_email"}, Justification: big}}, CodeAgentSuspended},
		{"another principal's agent", &Command{Type: CmdFileComplaint, AgentID: id, Principal: "org_2",
			Complaint: &FileComplaint{Reason: big}}, CodeForbidden},
		{"execution log, wrong token", &Command{Type: CmdLogExecution, AgentID: id, TokenHash: tokenHash("x"),
			Execution: &LogExecution{ActionID: "act_1", ResultHash: big}}, CodeInvalidAgentToken},
		{"trust request, unknown agent", &Command{Type: CmdRequestTrust, AgentID: "agent_x", TokenHash: tokenHash("a"),
			Trust: &RequestTrustElevation{Justification: big}}, CodeAgentNotRegistered},
	}
	decide := func(cmd *Command) (*Event, []byte) {
		t.Helper()
		ev := Decide(g.s, Env{Now: g.now, Seq: g.seq + 1, Partition: 3, Signer: g.signer}, cmd)
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return ev, b
	}
	// Before the switch: the whole command, as the existing logs hold it.
	for _, c := range cases {
		ev, b := decide(c.cmd)
		if code(ev) != c.code || ev.Command != c.cmd || !bytes.Contains(b, []byte(marker)) {
			t.Fatalf("%s without the switch: %s %v, command withheld: %v", c.name, ev.Type, ev.Error, ev.Command != c.cmd)
		}
	}
	cfg := DefaultConfig()
	if !cfg.WithholdRefusals || NewState().Config.WithholdRefusals {
		t.Fatal("DefaultConfig must withhold refusals and NewState must not")
	}
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, b := decide(c.cmd)
			if ev.Type != EvCommandRejected || code(ev) != c.code {
				t.Fatalf("%s %v, want a refusal %s", ev.Type, ev.Error, c.code)
			}
			if bytes.Contains(b, []byte(marker)) || len(b) > 2048 {
				t.Fatalf("the refusal records the payload (%d bytes): %.300s", len(b), b)
			}
			w := ev.Command
			if w == nil || w.Withheld == nil || w.Type != c.cmd.Type || w.Request != c.cmd.Request || w.AgentID != c.cmd.AgentID ||
				w.TokenHash != c.cmd.TokenHash || w.Principal != c.cmd.Principal || w.payload() != nil {
				t.Fatalf("recorded command %+v, want the type, request, credentials and agent with the payload withheld", w)
			}
			p, _ := json.Marshal(c.cmd.payload())
			sum := sha256.Sum256(p)
			if w.Withheld.Digest != hex.EncodeToString(sum[:]) || w.Withheld.Bytes != int64(len(p)) {
				t.Fatalf("withheld %+v, want the SHA-256 and size of the encoded payload (%d bytes)", w.Withheld, len(p))
			}
			// replay --verify: the recorded command, decoded from the
			// recorded bytes, is decided to the same bytes.
			var rec Event
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if _, again := decide(rec.Command); !bytes.Equal(again, b) {
				t.Fatalf("re-deciding the recorded command:\n%s\nwant\n%s", again, b)
			}
		})
	}
	// A withheld command whose credentials hold was never recorded: it
	// is refused as malformed, never decided without its payload.
	w := Withhold(verifyCmd(id, "a", "c1", "1", "calculate", "1+1"))
	if ev, _ := decide(w); ev.Type != EvCommandRejected || code(ev) != CodeInvalidRequest {
		t.Fatalf("withheld command with valid credentials: %s %v, want REQ-001", ev.Type, ev.Error)
	}
	// A refusal after authentication keeps its payload: it is decided on it.
	ok := verifyCmd(id, "a", "c1", "0", "calculate", "1+1")
	ok.Request = RequestID{Source: "test", ID: "after-auth"}
	if ev, _ := decide(ok); code(ev) != CodeInvalidStepNumber || ev.Command != ok {
		t.Fatalf("refusal after authentication: %v, command kept %v", ev.Error, ev.Command == ok)
	}
}
