package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/attest"
)

// TestCLIVerifyA2AAttestation runs `agentgate verify-attestation` on A2A
// verdict attestations signed by a gate's keyring, against its JWKS as a
// file and as a URL: a valid token prints VALID and its claims (exit 0);
// --payload recomputes the digest of the payload's RFC 8785 form and
// accepts it only when it is the token's sub; a tampered token, a token
// of another key set, an expired token and a changed payload are INVALID
// (exit 1); a payload that is not a JSON object, and --payload on a
// decision attestation, are errors.
func TestCLIVerifyA2AAttestation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	kr, err := attest.OpenKeyring(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	jwksFile := filepath.Join(dir, "jwks.json")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("jwks.json", string(kr.JWKS()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(kr.JWKS())
	}))
	defer srv.Close()

	// QWED A2A's quick-start payload, as an agent might send it, and its
	// RFC 8785 form written out by hand: the digest does not depend on the
	// code under test.
	payload := write("payload.json", `{ "data": { "line_items": [
	  {"description": "Widget A", "amount": 50.00, "quantity": 2},
	  {"quantity": 2, "amount": 25.00, "description": "Widget B"}],
	  "claimed_total": 150.00 } }`)
	canonical := `{"data":{"claimed_total":150,"line_items":[{"amount":50,"description":"Widget A","quantity":2},{"amount":25,"description":"Widget B","quantity":2}]}}`
	sum := sha256.Sum256([]byte(canonical))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	changed := write("changed.json", strings.Replace(canonical, "150", "999.99", 1))

	sign := func(kr *attest.Keyring, at time.Time) string {
		t.Helper()
		tok, err := kr.Signer("node_cli").(a2a.Signer).SignA2A(a2a.Claims{
			Subject: digest, TraceID: "demo_001", IssuedAt: at, Verdict: a2a.StatusForwarded,
			Engine: a2a.EngineFinance, Sender: "procurement-agent", Receiver: "treasury-agent",
		})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// The CLI checks exp against the clock: the token is issued now.
	token := sign(kr, time.Now())
	for _, src := range []string{jwksFile, srv.URL} {
		out, code := cliRun(t, bin, "verify-attestation", "--jwks", src, token)
		if code != 0 || !strings.HasPrefix(out, "VALID\n") || !strings.Contains(out, `"iss": "did:qwed:a2a:node_cli"`) ||
			!strings.Contains(out, `"sub": "`+digest+`"`) || !strings.Contains(out, `"verdict": "forwarded"`) || !strings.Contains(out, `"jti": "demo_001"`) {
			t.Fatalf("verify-attestation --jwks %s: exit %d\n%s", src, code, out)
		}
	}
	out, code := cliRun(t, bin, "verify-attestation", "--jwks", jwksFile, "--payload", payload, token)
	if code != 0 || !strings.HasPrefix(out, "VALID\npayload matches sub "+digest+"\n") {
		t.Fatalf("--payload of the signed payload: exit %d\n%s", code, out)
	}

	other, err := attest.OpenKeyring(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	sig := token[strings.LastIndexByte(token, '.')+1:]
	c := byte('A')
	if sig[5] == 'A' {
		c = 'B'
	}
	for name, args := range map[string][]string{
		"tampered signature": {token[:len(token)-len(sig)+5] + string(c) + sig[6:]},
		"another key set":    {sign(other, time.Now())},
		"expired":            {sign(kr, time.Date(2024, 3, 26, 0, 0, 0, 0, time.UTC))},
		"changed payload":    {"--payload", changed, token},
	} {
		out, code := cliRun(t, bin, append([]string{"verify-attestation", "--jwks", jwksFile}, args...)...)
		if code != 1 || !strings.HasPrefix(out, "INVALID") {
			t.Errorf("%s: exit %d\n%s", name, code, out)
		}
	}
	if out, code := cliRun(t, bin, "verify-attestation", "--jwks", jwksFile, "--payload", changed, token); !strings.Contains(out, "is not the attestation's sub "+digest) || code != 1 {
		t.Errorf("changed payload: exit %d\n%s", code, out)
	}

	if out, code := cliRun(t, bin, "verify-attestation", "--jwks", jwksFile, "--payload", write("array.json", "[1]"), token); code != 1 || !strings.Contains(out, "digesting --payload") {
		t.Errorf("a payload that is not an object: exit %d\n%s", code, out)
	}

	decision, err := kr.Signer("node_cli").Sign(domain.AttestationClaims{
		Subject: "did:qwed:agent:agent_1", ActionID: "act_1", IssuedAt: time.Now(), Decision: domain.Approved,
		RequestDigest: digest, AgentID: "agent_1", Risk: domain.RiskLow,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, code := cliRun(t, bin, "verify-attestation", "--jwks", jwksFile, decision); code != 0 || !strings.HasPrefix(out, "VALID") || strings.Contains(out, "qwed_a2a") {
		t.Fatalf("a decision attestation: exit %d\n%s", code, out)
	}
	if out, code := cliRun(t, bin, "verify-attestation", "--jwks", jwksFile, "--payload", payload, decision); code == 0 || !strings.Contains(out, "--payload applies to A2A") {
		t.Fatalf("--payload on a decision attestation: exit %d\n%s", code, out)
	}
}
