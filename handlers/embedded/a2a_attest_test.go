package embedded_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

// A verdict of the embedded gate carries an A2A attestation signed by the
// gate's keyring: it verifies against the gate's JWKS (typ, issuer,
// claims, sub the payload's digest) and not as a decision attestation;
// after the signing key is rotated, replay --verify re-signs each verdict
// with the key that signed it (the kid of the recorded token), byte for
// byte, and a verdict decided after the rotation is signed by the new key.
func TestA2AVerdictAttestationVerifiesAndReplaysAfterRotation(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, dir, clock.Now)
	defer g.Stop(t)
	for i, agent := range []string{"procurement-agent", "treasury-agent"} {
		ev := g.Submit(t, &domain.Command{Type: domain.CmdA2ABoundary, Principal: "org_1",
			Request:     domain.RequestID{Source: "test", ID: "trust-" + agent},
			A2ABoundary: &domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: agent}})
		if ev.Type != domain.EvA2ABoundaryChanged {
			t.Fatalf("trust %d: %s %+v", i, ev.Type, ev.Error)
		}
	}
	payload := `{"data":{"claimed_total":150.00,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`
	send := func(id string) *domain.Event {
		clock.Advance(time.Second)
		ev := g.Submit(t, &domain.Command{Type: domain.CmdA2AMessage, Principal: "org_1",
			Request: domain.RequestID{Source: "test", ID: id},
			A2A: &a2a.Message{SenderAgentID: "procurement-agent", ReceiverAgentID: "treasury-agent",
				PayloadType: a2a.PayloadFinancial, Payload: json.RawMessage(payload), TraceID: "trace-" + id}})
		if ev.A2AVerdict == nil || ev.A2AVerdict.Status != a2a.StatusForwarded {
			t.Fatalf("%s: %s %+v %+v", id, ev.Type, ev.A2AVerdict, ev.Error)
		}
		return ev
	}
	before := send("m1")
	oldKID := g.Keyring.ActiveKID()
	if _, err := g.Keyring.Rotate(); err != nil {
		t.Fatal(err)
	}
	after := send("m2")

	set, err := attest.ParseJWKS(g.Keyring.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	digest, err := a2a.PayloadDigest(json.RawMessage(payload))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ev  *domain.Event
		kid string
	}{{before, oldKID}, {after, g.Keyring.ActiveKID()}} {
		v := c.ev.A2AVerdict
		claims, err := set.VerifyA2A(v.Attestation, c.ev.Time)
		if err != nil {
			t.Fatalf("%s: %v", v.TraceID, err)
		}
		want := a2a.Claims{Subject: digest, TraceID: v.TraceID, IssuedAt: c.ev.Time.Truncate(time.Second).UTC(),
			Verdict: a2a.StatusForwarded, Engine: a2a.EngineFinance, Sender: "procurement-agent", Receiver: "treasury-agent"}
		if claims.Claims() != want || claims.Issuer != attest.A2AIssuerPrefix+g.NodeID || v.PayloadDigest != digest {
			t.Errorf("%s: claims %+v issuer %s digest %s\nwant %+v", v.TraceID, claims.Claims(), claims.Issuer, v.PayloadDigest, want)
		}
		if h, _, _ := strings.Cut(v.Attestation, "."); !strings.Contains(mustB64(t, h), `"kid":"`+c.kid+`"`) {
			t.Errorf("%s signed by %s, want %s", v.TraceID, mustB64(t, h), c.kid)
		}
		if _, err := set.Verify(v.Attestation); err == nil {
			t.Errorf("%s: a verdict's attestation verified as a decision attestation", v.TraceID)
		}
	}

	rep, err := replay.Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay after rotation: %v %s %v", err, rep.ProjectionDiff, rep.Mismatches)
	}
}

// mustB64 decodes the base64url segment seg of a JWS.
func mustB64(t *testing.T, seg string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
