package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

// Issue 11 item 12: principal API keys are rotated and revoked, by the
// admin or the principal itself, never by another principal; each change
// is one logged event, takes effect on the next request, and replays.
func TestCredentialsPrincipalKeyRotateAndRevoke(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	r := g.do("POST", "/principals/org_a/keys", apiKey(testAdminKey), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("issue: %d %s", r.status, r.body)
	}
	k1, id1 := r.json(t)["api_key"].(string), r.json(t)["key_id"].(string)
	other := g.issueKey("org_b")
	works := func(key string) int {
		t.Helper()
		return g.do("GET", "/approvals", apiKey(key), nil).status
	}
	if st := works(k1); st != 200 {
		t.Fatalf("a fresh key: %d", st)
	}
	// Another principal may neither rotate nor revoke org_a's key.
	if r := g.do("POST", "/principals/org_a/keys/"+id1+"/rotate", apiKey(other), nil); r.status != http.StatusForbidden {
		t.Fatalf("org_b rotates org_a's key: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/principals/org_a/keys/"+id1, apiKey(other), nil); r.status != http.StatusForbidden {
		t.Fatalf("org_b revokes org_a's key: %d %s", r.status, r.body)
	}
	// Nor name it under its own principal: one answer for a key it does not hold.
	if r := g.do("DELETE", "/principals/org_b/keys/"+id1, apiKey(other), nil); r.status != http.StatusNotFound || r.errorCode(t) != string(domain.CodeNotFound) {
		t.Fatalf("org_b revokes org_a's key under org_b: %d %s", r.status, r.body)
	}
	if st := works(k1); st != 200 {
		t.Fatalf("the key after refused attempts: %d", st)
	}
	// The principal rotates its own key: the old one stops at once.
	before := g.head()
	r = g.do("POST", "/principals/org_a/keys/"+id1+"/rotate", apiKey(k1), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	m := r.json(t)
	k2, id2 := m["api_key"].(string), m["key_id"].(string)
	if k2 == "" || id2 == id1 || m["replaces"] != id1 {
		t.Fatalf("rotation reply %s", r.body)
	}
	if st := works(k1); st != http.StatusUnauthorized {
		t.Fatalf("the rotated-out key: %d, want 401", st)
	}
	if st := works(k2); st != 200 {
		t.Fatalf("the new key: %d", st)
	}
	evs := g.events(before) // the rotation, then the refusal of k1
	if len(evs) == 0 || evs[0].Type != domain.EvPrincipalKeyIssued || evs[0].KeyIssued.Replaces != id1 || evs[0].KeyIssued.ReplacedHash != command.HashSecret(k1) {
		t.Fatalf("rotation recorded as %+v", evs)
	}
	// The admin revokes it; a second revocation finds nothing.
	before = g.head()
	if r := g.do("DELETE", "/principals/org_a/keys/"+id2, apiKey(testAdminKey), nil); r.status != 200 || r.json(t)["revoked"] != true {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if st := works(k2); st != http.StatusUnauthorized {
		t.Fatalf("the revoked key: %d, want 401", st)
	}
	if evs := g.events(before); len(evs) == 0 || evs[0].Type != domain.EvPrincipalKeyRevoked || evs[0].KeyRevoked.KeyHash != command.HashSecret(k2) {
		t.Fatalf("revocation recorded as %+v", evs)
	}
	if r := g.do("DELETE", "/principals/org_a/keys/"+id2, apiKey(testAdminKey), nil); r.status != http.StatusNotFound {
		t.Fatalf("revoking twice: %d %s", r.status, r.body)
	}
	if st := works(other); st != 200 {
		t.Fatalf("org_b's key after org_a's changes: %d", st)
	}
	rep, err := replay.Replay(context.Background(), g.gate.Log, g.gate.Store, true, g.gate.Keyring.SignerFor(g.gate.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay: %v %s %v", err, rep.ProjectionDiff, rep.Mismatches)
	}
}

// Issue 11 item 12: an agent rotates its own token (the old one stops at
// once, the new one is answered once); its principal revokes it (the
// agent is refused until the principal rotates one in); no other
// principal may do either.
func TestCredentialsAgentTokenRotateAndRevoke(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	other := g.issueKey("org_b")
	a := g.register(key, "org_a", 2, nil)
	verify := func(tok string, step int) response {
		t.Helper()
		return g.do("POST", "/agents/"+a.id+"/verify", bearerH(tok), verifyReq("calculate", strconv.Itoa(step)+"+2", "c", step))
	}
	if r := verify(a.token, 1); r.status != 200 {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	if r := g.do("POST", "/agents/"+a.id+"/token/rotate", apiKey(other), nil); r.status != http.StatusForbidden {
		t.Fatalf("org_b rotates org_a's agent token: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/agents/"+a.id+"/token", apiKey(other), nil); r.status != http.StatusForbidden {
		t.Fatalf("org_b revokes org_a's agent token: %d %s", r.status, r.body)
	}
	r := g.do("POST", "/agents/"+a.id+"/token/rotate", bearerH(a.token), nil)
	if r.status != 200 {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	tok2, _ := r.json(t)["agent_token"].(string)
	if tok2 == "" || tok2 == a.token {
		t.Fatalf("rotation reply %s", r.body)
	}
	for _, rec := range g.records(0) {
		if bytes.Contains(rec, []byte(tok2)) {
			t.Fatal("the log holds the plaintext of the rotated token")
		}
	}
	if r := verify(a.token, 2); r.status != http.StatusUnauthorized || r.errorCode(t) != string(domain.CodeInvalidAgentToken) {
		t.Fatalf("the rotated-out token: %d %s", r.status, r.body)
	}
	if r := verify(tok2, 2); r.status != 200 {
		t.Fatalf("the new token: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/agents/"+a.id+"/token", bearerH(tok2), nil); r.status != http.StatusUnauthorized {
		t.Fatalf("an agent revokes its own token without an API key: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/agents/"+a.id+"/token", apiKey(key), nil); r.status != 200 || r.json(t)["token_revoked"] != true {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := verify(tok2, 3); r.status != http.StatusUnauthorized {
		t.Fatalf("the revoked token: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/agents/"+a.id+"/token/rotate", apiKey(key), nil)
	tok3, _ := r.json(t)["agent_token"].(string)
	if r.status != 200 || tok3 == "" {
		t.Fatalf("the principal rotates a token in: %d %s", r.status, r.body)
	}
	if r := verify(tok3, 3); r.status != 200 {
		t.Fatalf("the token rotated in by the principal: %d %s", r.status, r.body)
	}
	rep, err := replay.Replay(context.Background(), g.gate.Log, g.gate.Store, true, g.gate.Keyring.SignerFor(g.gate.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay: %v %s %v", err, rep.ProjectionDiff, rep.Mismatches)
	}
}
