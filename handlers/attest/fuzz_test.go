package attest

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/domain/a2a"
)

// FuzzVerify checks that Verify never panics on any token, that every
// refusal wraps one of the sentinel errors, and that the only tokens it
// accepts are the ones the key actually signed.
func FuzzVerify(f *testing.F) {
	kr := fixedRing(f)
	jwks := kr.JWKS()
	set, err := ParseJWKS(jwks)
	if err != nil {
		f.Fatal(err)
	}
	signed := map[string]bool{}
	for i, node := range []string{"node-1", "n2"} {
		c := typicalClaims()
		c.Seq = uint64(i)
		tok, err := kr.Signer(node).Sign(c)
		if err != nil {
			f.Fatal(err)
		}
		signed[tok] = true
		f.Add(tok)
	}
	for _, s := range []string{"", ".", "..", "a.b.c", "eyJhbGciOiJub25lIn0..", "eyJhbGciOiJFUzI1NiJ9.e30.AA", "\x00.\xff.\n"} {
		f.Add(s)
	}
	sentinels := []error{ErrMalformed, ErrAlgorithm, ErrType, ErrUnknownKey, ErrSignature, ErrExpired, ErrIssuer}
	f.Fuzz(func(t *testing.T, token string) {
		claims, err := set.Verify(token)
		if err == nil {
			if !signed[token] {
				t.Fatalf("accepted a token the key never signed: %q", token)
			}
			if claims == nil {
				t.Fatal("nil claims without an error")
			}
			return
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("error %v wraps no sentinel", err)
	})
}

// FuzzParseJWKS checks the JWKS decoder that verify-attestation feeds
// from an untrusted file or URL: never a panic; a refusal wraps
// ErrInvalidJWKS; an accepted set holds at least one key, every kid
// non-empty and unique, and a token signed by the real key verifies only
// when the set holds that key.
func FuzzParseJWKS(f *testing.F) {
	kr := fixedRing(f)
	real := kr.JWKS()
	tok, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	for _, s := range []string{``, `{}`, `{"keys":[]}`, `{"keys":[{"kty":"RSA"}]}`, `{"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":"AA","y":"AA"}]}`,
		`{"keys":null}`, `{"keys":[1]}`, `[]`, `{"keys":[{"kty":"EC","crv":"P-384","kid":"k"}]}`} {
		f.Add([]byte(s))
	}
	realSet, err := ParseJWKS(real)
	if err != nil {
		f.Fatal(err)
	}
	realKID := realSet.KIDs()[0]
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseJWKS(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidJWKS) {
				t.Fatalf("refusal %v does not wrap ErrInvalidJWKS", err)
			}
			return
		}
		kids := set.KIDs()
		if len(kids) == 0 {
			t.Fatal("accepted a set without a key")
		}
		for i, k := range kids {
			if k == "" || (i > 0 && kids[i-1] == k) {
				t.Fatalf("kids %q", kids)
			}
		}
		if _, err := set.Verify(tok); err == nil && !slices.Contains(kids, realKID) {
			t.Fatalf("a set without the signing key %s verified its token", realKID)
		}
	})
}

// FuzzVerifyA2A checks VerifyA2A as FuzzVerify checks Verify: never a
// panic, every refusal wraps a sentinel, and it accepts only the A2A
// tokens the key signed; the decision attestation among the seeds, signed
// by the same key, is always a refusal (typ confusion).
func FuzzVerifyA2A(f *testing.F) {
	kr := fixedRing(f)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		f.Fatal(err)
	}
	signed := map[string]bool{}
	for i, verdict := range []a2a.Status{a2a.StatusForwarded, a2a.StatusBlocked} {
		c := seedA2AClaims()
		c.Verdict = verdict
		c.TraceID += string(rune('a' + i))
		tok, err := a2aSigner(f, kr.Signer("local")).SignA2A(c)
		if err != nil {
			f.Fatal(err)
		}
		signed[tok] = true
		f.Add(tok)
	}
	decision, err := kr.Signer("local").Sign(typicalClaims())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(decision)
	f.Add(twin(frozenA2AToken))
	for _, s := range []string{"", ".", "..", "a.b.c", "eyJhbGciOiJub25lIn0..", "eyJhbGciOiJFUzI1NiJ9.e30.AA", "\x00.\xff.\n"} {
		f.Add(s)
	}
	sentinels := []error{ErrMalformed, ErrAlgorithm, ErrType, ErrUnknownKey, ErrSignature, ErrExpired, ErrIssuer}
	f.Fuzz(func(t *testing.T, token string) {
		claims, err := set.VerifyA2A(token, seedIAT)
		if err == nil {
			if !signed[token] {
				t.Fatalf("accepted a token the key never signed: %q", token)
			}
			if claims == nil || claims.ID == "" {
				t.Fatalf("claims %+v without an error", claims)
			}
			return
		}
		if claims != nil {
			t.Fatalf("claims %+v with error %v", claims, err)
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("error %v wraps no sentinel", err)
	})
}
