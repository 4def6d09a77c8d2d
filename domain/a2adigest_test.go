package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/a2a"
)

// A command whose payload digest the transport computed (Command.A2ADigest)
// is decided as one without it, which Decide digests itself (a command
// recorded before the field existed): the events differ only by the
// recorded a2a_digest member, for verdicts and for refusals alike. The
// configuration's payload bound still applies with a digest.
func TestA2ADigestFromTransport(t *testing.T) {
	g := newGate(t)
	g.trustAll("a", "b")
	cfg := DefaultConfig()
	a := DefaultA2AConfig()
	a.MaxPayloadSizeBytes = 256
	cfg.A2A = &a
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvConfigured {
		t.Fatalf("configure: %+v", ev.Error)
	}
	env := Env{Now: g.now, Seq: 1000, Partition: 1, Signer: hashSigner{}}
	for i, c := range []struct {
		typ             a2a.PayloadType
		sender, payload string
		timestamp       string
	}{
		{a2a.PayloadGeneral, "a", `{"message":"Hello!"}`, ""},
		{a2a.PayloadFinancial, "a", fmt.Sprintf(finPayload, "150.00"), "2026-11-24T09:30:15Z"},
		{a2a.PayloadFinancial, "a", fmt.Sprintf(finPayload, "151.00"), ""},
		{a2a.PayloadLogic, "a", `{"assertions":["x > 5","x < 3"]}`, ""},
		{a2a.PayloadGeneral, "a", `{"x":"` + strings.Repeat("y", 300) + `"}`, ""},
		{a2a.PayloadGeneral, "a", `{}`, "yesterday"},
		{a2a.PayloadGeneral, "a\x01", `{}`, ""},
		{a2a.PayloadGeneral, "stranger", `{}`, ""},
	} {
		digest, err := a2a.PayloadDigest(json.RawMessage(c.payload))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		mk := func() *Command {
			cmd := a2aMsg(c.sender, "b", c.typ, c.payload)
			cmd.A2A.Timestamp = c.timestamp
			cmd.Request = RequestID{Source: "t", ID: fmt.Sprintf("digest-%d", i)}
			return cmd
		}
		without, with := mk(), mk()
		with.A2ADigest = digest
		want, err := json.Marshal(Decide(g.s, env, without))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(Decide(g.s, env, with))
		if err != nil {
			t.Fatal(err)
		}
		member := []byte(`,"a2a_digest":"` + digest + `"`)
		if bytes.Count(got, member) != 1 || !bytes.Equal(bytes.Replace(got, member, nil, 1), want) {
			t.Errorf("%d: with the digest\n%s\nwithout\n%s", i, got, want)
		}
	}
}

// Decide never trusts a digest of another shape than "sha256:" and 64
// lowercase hex digits: the command is refused (no client can set one,
// so it is the gate's fault, QWED-SYS-001), with no verdict.
func TestA2ADigestMalformed(t *testing.T) {
	g := newGate(t)
	g.trustAll("a", "b")
	env := Env{Now: g.now, Seq: 1000, Partition: 1, Signer: hashSigner{}}
	good, err := a2a.PayloadDigest(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	hexPart := strings.TrimPrefix(good, a2a.DigestPrefix)
	for _, d := range []string{
		"sha256:" + strings.ToUpper(hexPart), "sha512:" + hexPart, hexPart, good[:len(good)-1], good + "0",
		"sha256:" + hexPart[:63] + "g", "sha256:" + hexPart[:63] + " ",
	} {
		cmd := a2aMsg("a", "b", a2a.PayloadGeneral, `{}`)
		cmd.Request = RequestID{Source: "t", ID: "malformed"}
		cmd.A2ADigest = d
		ev := Decide(g.s, env, cmd)
		if ev.A2AVerdict != nil || ev.Error == nil || ev.Error.Code != CodeInternal || ev.Error.Details["field"] != "a2a_digest" {
			t.Errorf("%q: verdict %+v, error %+v", d, ev.A2AVerdict, ev.Error)
		}
	}
	cmd := a2aMsg("a", "b", a2a.PayloadGeneral, `{}`)
	cmd.Request = RequestID{Source: "t", ID: "good"}
	cmd.A2ADigest = good
	if v := Decide(g.s, env, cmd).A2AVerdict; v == nil || v.PayloadDigest != good || v.Status != a2a.StatusForwarded {
		t.Errorf("well-formed: %+v", v)
	}
}
