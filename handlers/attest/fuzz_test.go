package attest

import (
	"errors"
	"testing"
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
