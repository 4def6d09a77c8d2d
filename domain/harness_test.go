package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"
)

// hashSigner is a deterministic Signer for tests: the token is the hex
// SHA-256 of the claims' JSON and issue time. The real ES256 signer lives in
// handlers/attest (which imports this package); the domain only needs a
// deterministic token or an error.
type hashSigner struct{}

func (hashSigner) Sign(c AttestationClaims) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append(b, c.IssuedAt.UTC().Format(time.RFC3339Nano)...))
	return "att." + hex.EncodeToString(h[:8]), nil
}

// failingSigner always fails, like a signer whose key store is gone.
type failingSigner struct{}

func (failingSigner) Sign(AttestationClaims) (string, error) {
	return "", errors.New("key store unavailable")
}

// gate drives Decide and Apply like the partition worker does, and checks
// on every command that Decide left the state untouched.
type gate struct {
	t      testing.TB
	s      *State
	now    time.Time
	seq    uint64
	signer Signer
	reqN   int
	// events are the recorded events with the state JSON before each.
	events []*Event
	before [][]byte
}

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func newGate(t testing.TB) *gate {
	return &gate{t: t, s: NewState(), now: t0, signer: hashSigner{}}
}

func stateJSON(t testing.TB, s *State) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("encoding state: %v", err)
	}
	return b
}

// exec decides cmd (giving it a fresh request ID when it has none), checks
// Decide did not mutate the state, and applies the event.
func (g *gate) exec(cmd *Command) *Event {
	g.t.Helper()
	if cmd.Request.ID == "" {
		g.reqN++
		cmd.Request = RequestID{Source: "test", ID: "r" + strconv.Itoa(g.reqN)}
	}
	before := stateJSON(g.t, g.s)
	ev := Decide(g.s, Env{Now: g.now, Seq: g.seq + 1, Partition: 3, Signer: g.signer}, cmd)
	if after := stateJSON(g.t, g.s); !bytes.Equal(before, after) {
		g.t.Fatalf("Decide(%s) mutated the state", cmd.Type)
	}
	if ev == nil {
		return nil
	}
	if ev.Seq != g.seq+1 || ev.Partition != 3 || (ev.Command != cmd && (ev.Command == nil || ev.Command.Withheld == nil)) {
		g.t.Fatalf("Decide(%s): event position/command not set from env: seq %d partition %d", cmd.Type, ev.Seq, ev.Partition)
	}
	g.seq++
	Apply(g.s, ev)
	g.events = append(g.events, ev)
	g.before = append(g.before, before)
	return ev
}

func tokenHash(name string) string {
	h := sha256.Sum256([]byte("token:" + name))
	return hex.EncodeToString(h[:])
}

func stateHash(seed string) string {
	h := sha256.Sum256([]byte("state:" + seed))
	return hex.EncodeToString(h[:])
}

// register registers an agent named name for principal "org_1" and returns its ID.
func (g *gate) register(name, typ string, trust *TrustLevel, budget Limits, perms Permissions) string {
	g.t.Helper()
	ev := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
		Agent:       AgentInfo{Name: name, Type: typ, PrincipalID: "org_1"},
		Permissions: perms, Budget: budget, TrustLevel: trust, TokenHash: tokenHash(name),
	}})
	if ev.Type != EvAgentRegistered {
		g.t.Fatalf("registering %s: %s %v", name, ev.Type, ev.Error)
	}
	return ev.AgentID
}

func trustPtr(t TrustLevel) *TrustLevel { return &t }

// verify builds a verify_action command authenticated by the agent token.
func verifyCmd(agentID, name, conv string, step string, typ, query string) *Command {
	return &Command{Type: CmdVerifyAction, AgentID: agentID, TokenHash: tokenHash(name), Verify: &VerifyAction{
		Action:  Action{Type: typ, Query: query},
		Context: ActionContext{ConversationID: conv, StepNumber: json.Number(step)},
	}}
}

func toolCmd(agentID, name, tool string) *Command {
	return &Command{Type: CmdVerifyToolCall, AgentID: agentID, TokenHash: tokenHash(name), Tool: &VerifyToolCall{
		ToolCall: ToolCall{ToolName: tool},
	}}
}

// code returns the error code of an event ("" for none).
func code(ev *Event) Code {
	if ev == nil || ev.Error == nil {
		return ""
	}
	return ev.Error.Code
}

func decision(ev *Event) Decision {
	if ev == nil || ev.Decided == nil {
		return ""
	}
	return ev.Decided.Decision
}
