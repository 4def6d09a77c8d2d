package attest

import "testing"

// BenchmarkSign measures the ES256 signing of typical attestation claims
// (claims encoding, SHA-256, RFC 6979 ECDSA, base64url).
func BenchmarkSign(b *testing.B) {
	s := fixedRing(b).Signer("node-1")
	c := typicalClaims()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify measures Verify(token, jwks): JWKS parsing plus the token
// checks and ECDSA verification.
func BenchmarkVerify(b *testing.B) {
	kr := fixedRing(b)
	tok, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		b.Fatal(err)
	}
	jwks := kr.JWKS()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(tok, jwks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeySetVerify measures verification against a JWKS parsed once.
func BenchmarkKeySetVerify(b *testing.B) {
	kr := fixedRing(b)
	tok, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		b.Fatal(err)
	}
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := set.Verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignA2A measures the signing of a verdict's attestation (claims
// encoding, SHA-256, RFC 6979 ECDSA, base64url): what each verdict of
// POST /a2a/intercept pays to be signed.
func BenchmarkSignA2A(b *testing.B) {
	s := a2aSigner(b, fixedRing(b).Signer("local"))
	c := seedA2AClaims()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.SignA2A(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyA2A measures a relying party's check of a verdict's
// attestation against a JWKS parsed once.
func BenchmarkVerifyA2A(b *testing.B) {
	kr := fixedRing(b)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := set.VerifyA2A(frozenA2AToken, seedIAT); err != nil {
			b.Fatal(err)
		}
	}
}
