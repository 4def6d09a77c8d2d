package client_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
)

var b64 = base64.RawURLEncoding

// fixedKey is a P-256 key from a fixed scalar (the tests' own signer).
func fixedKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	d := sha256.Sum256([]byte("client attestation test key"))
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwksOf is the JWKS of pub under kid.
func jwksOf(t *testing.T, pub *ecdsa.PublicKey, kid string) []byte {
	t.Helper()
	raw, err := pub.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(raw[1:33]), "y": b64.EncodeToString(raw[33:]), "use": "sig", "alg": "ES256", "kid": kid,
	}}})
	return b
}

// signJWS signs header and claims with key, the signature normalised to
// low S, or to its high-S twin when highS.
func signJWS(t *testing.T, key *ecdsa.PrivateKey, header, claims any, highS bool) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	n := elliptic.P256().Params().N
	half := new(big.Int).Rsh(n, 1)
	if (s.Cmp(half) > 0) != highS {
		s = new(big.Int).Sub(n, s)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig)
}

// TestVerifyAttestationAgreesWithTheGate: the client's offline check and
// the gate's own (handlers/attest.Verify) accept and refuse the same
// tokens, each refusal with the client's matching sentinel.
func TestVerifyAttestationAgreesWithTheGate(t *testing.T) {
	key := fixedKey(t)
	const kid = "test-kid"
	jwks := jwksOf(t, &key.PublicKey, kid)
	now := time.Now()
	hdr := map[string]any{"alg": "ES256", "kid": kid, "typ": client.AttestationTyp}
	claims := map[string]any{
		"iss": "did:qwed:node:n1", "sub": "did:qwed:agent:agent_1", "jti": "act_1", "iat": now.Unix() - 10,
		"exp": now.Unix() + 3600, "decision": "APPROVED", "request_digest": "sha256:00", "agent_id": "agent_1",
		"seq": 7, "partition": 0, "risk_level": "low",
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for a, b := range m {
			out[a] = b
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	good := signJWS(t, key, hdr, claims, false)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + b64.EncodeToString([]byte(`{"iss":"did:qwed:node:n1","jti":"act_2","iat":1,"seq":7,"partition":0,"request_digest":"x"}`)) + "." + parts[2]
	cases := []struct {
		name  string
		token string
		jwks  []byte
		want  error // nil: accepted
	}{
		{"valid", good, jwks, nil},
		{"tampered claims", tampered, jwks, client.ErrAttestationSignature},
		{"high-S twin", signJWS(t, key, hdr, claims, true), jwks, client.ErrAttestationSignature},
		{"alg none", b64.EncodeToString([]byte(`{"alg":"none","typ":"qwed-attestation+jwt","kid":"test-kid"}`)) + "." + parts[1] + ".", jwks, client.ErrAttestationAlgorithm},
		{"alg HS256", signJWS(t, key, with(hdr, "alg", "HS256"), claims, false), jwks, client.ErrAttestationAlgorithm},
		{"A2A typ", signJWS(t, key, with(hdr, "typ", client.A2AAttestationTyp), claims, false), jwks, client.ErrAttestationType},
		{"no typ", signJWS(t, key, with(hdr, "typ", nil), claims, false), jwks, client.ErrAttestationType},
		{"unknown kid", signJWS(t, key, with(hdr, "kid", "other"), claims, false), jwks, client.ErrAttestationKey},
		{"crit header", signJWS(t, key, with(hdr, "crit", []string{"b64"}), claims, false), jwks, client.ErrAttestationMalformed},
		{"expired", signJWS(t, key, hdr, with(claims, "exp", now.Unix()-1), false), jwks, client.ErrAttestationExpired},
		{"no exp", signJWS(t, key, hdr, with(claims, "exp", nil), false), jwks, nil},
		{"foreign issuer", signJWS(t, key, hdr, with(claims, "iss", "did:web:evil"), false), jwks, client.ErrAttestationIssuer},
		{"bare issuer prefix", signJWS(t, key, hdr, with(claims, "iss", "did:qwed:node:"), false), jwks, client.ErrAttestationIssuer},
		{"two segments", parts[0] + "." + parts[1], jwks, client.ErrAttestationMalformed},
		{"too long", good + strings.Repeat("A", client.MaxAttestationBytes), jwks, client.ErrAttestationMalformed},
		{"empty JWKS", good, []byte(`{"keys":[]}`), client.ErrInvalidJWKS},
		{"JWKS not JSON", good, []byte(`{`), client.ErrInvalidJWKS},
	}
	for _, c := range cases {
		got, err := client.VerifyAttestation(c.token, c.jwks, now)
		_, gateErr := attest.Verify(c.token, c.jwks)
		if (err == nil) != (gateErr == nil) {
			t.Errorf("%s: the client says %v, the gate %v", c.name, err, gateErr)
		}
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want == nil && (got.ActionID != "act_1" || got.Decision != domain.Approved || got.Seq != 7):
			t.Errorf("%s: claims %+v", c.name, got)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestVerifyAttestationOfTheGatesKeyring: a token the gate's keyring signs
// verifies with its JWKS and not with another keyring's, and its exp
// passes with time.
func TestVerifyAttestationOfTheGatesKeyring(t *testing.T) {
	kr, err := attest.OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := attest.OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	iat := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	tok, err := kr.SignerTTL("node-1", time.Hour).Sign(domain.AttestationClaims{
		Subject: "did:qwed:agent:agent_1", ActionID: "act_9", IssuedAt: iat, Decision: domain.Approved,
		RequestDigest: "sha256:ab", AgentID: "agent_1", ConversationID: "conv_1", Step: 3, Seq: 12, Risk: "low",
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.VerifyAttestation(tok, kr.JWKS(), iat.Add(time.Minute))
	if err != nil || c.ActionID != "act_9" || c.Step != 3 || c.Seq != 12 || c.Issuer != "did:qwed:node:node-1" || c.ConversationID != "conv_1" {
		t.Fatalf("the keyring's token: %+v %v", c, err)
	}
	if _, err := client.VerifyAttestation(tok, other.JWKS(), iat); !errors.Is(err, client.ErrAttestationKey) {
		t.Fatalf("another keyring's JWKS: %v", err)
	}
	if _, err := client.VerifyAttestation(tok, kr.JWKS(), iat.Add(time.Hour)); !errors.Is(err, client.ErrAttestationExpired) {
		t.Fatalf("at its exp: %v", err)
	}
}

// FuzzVerifyAttestation: on any token, against a fixed JWKS, the client's
// offline check never panics and agrees with the gate's own
// (handlers/attest.Verify): both accept or both refuse.
func FuzzVerifyAttestation(f *testing.F) {
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), func() []byte { d := sha256.Sum256([]byte("fuzz key")); return d[:] }())
	if err != nil {
		f.Fatal(err)
	}
	pub, _ := key.PublicKey.Bytes()
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(pub[1:33]), "y": b64.EncodeToString(pub[33:]), "kid": "k1",
	}}})
	sign := func(header, claims string) string {
		input := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
		digest := sha256.Sum256([]byte(input))
		r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
		if err != nil {
			f.Fatal(err)
		}
		n := elliptic.P256().Params().N
		if s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
			s.Sub(n, s)
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
		return input + "." + b64.EncodeToString(sig)
	}
	hdr := `{"alg":"ES256","kid":"k1","typ":"qwed-attestation+jwt"}`
	f.Add(sign(hdr, `{"iss":"did:qwed:node:n","sub":"s","jti":"a","iat":1,"request_digest":"d","seq":1,"partition":0}`))
	f.Add(sign(hdr, `{"iss":"did:qwed:node:n","jti":"a","iat":1,"exp":1e12,"request_digest":"d","seq":1,"partition":0}`))
	f.Add(sign(hdr, `{"iss":"did:qwed:node:n","iat":"1","seq":-1,"partition":0}`))
	f.Add(sign(`{"alg":"ES256","kid":"k1","typ":"qwed-attestation+jwt","crit":[]}`, `{"iss":"did:qwed:node:n"}`))
	f.Add(sign(hdr, `{"iss":"did:qwed:node:n","iss":"did:web:x"}`))
	f.Add("e30.e30.")
	f.Fuzz(func(t *testing.T, token string) {
		_, err := client.VerifyAttestation(token, jwks, time.Now())
		_, gateErr := attest.Verify(token, jwks)
		if (err == nil) != (gateErr == nil) {
			t.Fatalf("token %q: the client says %v, the gate %v", token, err, gateErr)
		}
	})
}
