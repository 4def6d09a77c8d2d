package domain_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
)

// TestDesign2_1_RealAttestationIsReproducible uses the real ES256 keyring:
// an approved high-risk decision carries an attestation that verifies
// against the JWKS with the decision's claims, and re-deciding the recorded
// command on the same state reproduces the event byte for byte (RFC 6979).
func TestDesign2_1_RealAttestationIsReproducible(t *testing.T) {
	kr, err := attest.OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	signer := kr.Signer("node-1")
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s := domain.NewState()
	sum := sha256.Sum256([]byte("token"))
	tok := hex.EncodeToString(sum[:])
	reg := domain.Decide(s, domain.Env{Now: now, Seq: 1}, &domain.Command{Type: domain.CmdRegisterAgent, Principal: "org_1",
		Request: domain.RequestID{Source: "t", ID: "1"}, Register: &domain.RegisterAgent{
			Agent: domain.AgentInfo{Name: "a", Type: "trusted", PrincipalID: "org_1"}, TokenHash: tok}})
	domain.Apply(s, reg)
	cmd := &domain.Command{Type: domain.CmdVerifyAction, AgentID: reg.AgentID, TokenHash: tok,
		Request: domain.RequestID{Source: "t", ID: "2"}, Verify: &domain.VerifyAction{
			Action:  domain.Action{Type: "execute_sql", Query: "UPDATE orders SET status = 'shipped' WHERE id = 7"},
			Context: domain.ActionContext{ConversationID: "c", StepNumber: "1"}}}
	before := s.Clone()
	env := domain.Env{Now: now.Add(time.Minute), Seq: 2, Partition: 5, Signer: signer}
	ev := domain.Decide(s, env, cmd)
	if ev.Decided == nil || ev.Decided.Decision != domain.Approved || ev.Decided.Attestation == "" {
		t.Fatalf("%+v %v", ev.Decided, ev.Error)
	}
	claims, err := attest.Verify(ev.Decided.Attestation, kr.JWKS())
	if err != nil {
		t.Fatalf("verifying: %v", err)
	}
	c, _ := json.Marshal(claims)
	for _, want := range []string{`"sub":"did:qwed:agent:` + reg.AgentID + `"`, `"jti":"` + ev.Decided.ActionID + `"`,
		`"request_digest":"` + ev.Decided.RequestDigest + `"`, `"decision":"APPROVED"`, `"risk_level":"high"`} {
		if !bytes.Contains(c, []byte(want)) {
			t.Errorf("claims %s lack %s", c, want)
		}
	}
	first, _ := json.Marshal(ev)
	var recorded domain.Event
	if err := json.Unmarshal(first, &recorded); err != nil {
		t.Fatal(err)
	}
	again := domain.Decide(before, domain.Env{Now: recorded.Time, Seq: recorded.Seq, Partition: recorded.Partition, Signer: signer}, recorded.Command)
	second, _ := json.Marshal(again)
	if !bytes.Equal(first, second) {
		t.Fatalf("re-decided event differs:\n%s\n%s", first, second)
	}
}
