package attest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func typicalExecute() ExecuteDecision {
	return ExecuteDecision{
		TransactionID: "tx_0123456789abcdef01234567", Consumer: "acme", AgentID: "agent_7f3c",
		BusinessID: "shop.example", AmountCents: 1250, Currency: "USD",
		RequestHash: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	}
}

var executeAt = time.Date(2026, 11, 26, 7, 30, 0, 123456789, time.UTC)

// Issue 14: an execute decision round-trips, deterministically (every
// attempt of a call sends the same token); it passes for no other token
// type, nor any of them for it; an expired or incomplete one is refused.
func TestExecuteDecisionRoundTrip(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	d := typicalExecute()
	tok, err := kr.SignExecute("node_a", d, executeAt)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := kr.SignExecute("node_a", d, executeAt); again != tok {
		t.Fatal("two signatures of the same decision differ")
	}
	if TokenType(tok) != ExecuteTyp {
		t.Fatalf("typ %q", TokenType(tok))
	}
	got, err := set.VerifyExecute(tok, executeAt.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := d
	want.DecidedAt = "2026-11-26T07:30:00.123456789Z"
	if got.Execute != want || got.Subject != d.TransactionID || got.Audience != d.BusinessID ||
		got.Issuer != IssuerPrefix+"node_a" || got.IssuedAt != executeAt.Unix() || got.ExpiresAt != executeAt.Unix()+86400 {
		t.Fatalf("claims %+v", got)
	}
	if _, err := set.VerifyExecute(tok, executeAt.Add(ExecuteValidity)); !errors.Is(err, ErrExpired) {
		t.Fatalf("at exp: %v, want ErrExpired", err)
	}
	if _, err := set.Verify(tok); !errors.Is(err, ErrType) {
		t.Fatalf("an execute decision verified as an attestation: %v", err)
	}
	if _, err := set.VerifyA2A(tok, executeAt); !errors.Is(err, ErrType) {
		t.Fatalf("an execute decision verified as an A2A attestation: %v", err)
	}
	if _, err := set.VerifyTreeHead(tok); !errors.Is(err, ErrType) {
		t.Fatalf("an execute decision verified as a tree head: %v", err)
	}
	att, err := kr.Signer("node_a").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.VerifyExecute(att, executeAt); !errors.Is(err, ErrType) {
		t.Fatalf("an attestation verified as an execute decision: %v", err)
	}
	// Another business's token: the payload edited to name it fails the
	// signature.
	parts := strings.Split(tok, ".")
	raw, _ := b64.DecodeString(parts[1])
	edited := strings.Replace(string(raw), `"aud":"shop.example"`, `"aud":"bank.example"`, 1)
	forged := parts[0] + "." + b64.EncodeToString([]byte(edited)) + "." + parts[2]
	if _, err := set.VerifyExecute(forged, executeAt); !errors.Is(err, ErrSignature) {
		t.Fatalf("an edited audience: %v, want ErrSignature", err)
	}
	for name, mut := range map[string]func(*ExecuteDecision){
		"no transaction": func(d *ExecuteDecision) { d.TransactionID = "" },
		"no consumer":    func(d *ExecuteDecision) { d.Consumer = "" },
		"no hash":        func(d *ExecuteDecision) { d.RequestHash = "" },
		"negative":       func(d *ExecuteDecision) { d.AmountCents = -1 },
	} {
		bad := typicalExecute()
		mut(&bad)
		if _, err := kr.SignExecute("node_a", bad, executeAt); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	if _, err := kr.SignExecute("", d, executeAt); err == nil {
		t.Fatal("signed without a node ID")
	}
	if _, err := kr.SignExecute("node_a", d, time.Time{}); err == nil {
		t.Fatal("signed without a decision time")
	}
}

// A token whose claims a (compromised) signer left inconsistent — sub not
// the transaction — is refused by the business's check even though its
// signature verifies.
func TestExecuteDecisionInconsistentClaims(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewExecuteClaims("node_a", typicalExecute(), executeAt)
	if err != nil {
		t.Fatal(err)
	}
	c.Subject = "tx_other"
	s := &signer{ring: kr, nodeID: "node_a"}
	tok, err := s.token(ExecuteTyp, &c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.VerifyExecute(tok, executeAt); !errors.Is(err, ErrMalformed) {
		t.Fatalf("sub not the transaction: %v, want ErrMalformed", err)
	}
}
