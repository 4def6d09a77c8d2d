package attest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// seedA2AClaims are the claims of QWED A2A's "Attestations" example: iat
// 1711411200 (2024-03-26T00:00:00Z), exp a day later.
func seedA2AClaims() a2a.Claims {
	return a2a.Claims{
		Subject:  "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		TraceID:  "a2a_trace_001",
		IssuedAt: time.Unix(1711411200, 0).UTC(),
		Verdict:  a2a.StatusForwarded,
		Engine:   a2a.EngineFinance,
		Sender:   "procurement-agent",
		Receiver: "treasury-agent",
	}
}

// seedIAT is the iat of seedA2AClaims.
var seedIAT = time.Unix(1711411200, 0).UTC()

// a2aSigner returns s as an a2a.Signer, failing the test if it is not one.
func a2aSigner(t testing.TB, s domain.Signer) a2a.Signer {
	t.Helper()
	as, ok := s.(a2a.Signer)
	if !ok {
		t.Fatalf("signer %T does not implement a2a.Signer", s)
	}
	return as
}

// frozenA2AToken is seedA2AClaims signed by the RFC 7517 key for node
// "local": deterministic ES256 reproduces it on any machine and version.
const frozenA2AToken = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImNuLUlfV05NQ2xlaGlWcDUxaV8wVnBPRU5XMXVwRWVyQThzRWFtNWhuLXMiLCJ0eXAiOiJxd2VkLWEyYS1hdHRlc3RhdGlvbitqd3QifQ." +
	"eyJpc3MiOiJkaWQ6cXdlZDphMmE6bG9jYWwiLCJzdWIiOiJzaGEyNTY6ZTNiMGM0NDI5OGZjMWMxNDlhZmJmNGM4OTk2ZmI5MjQyN2FlNDFlNDY0OWI5MzRjYTQ5NTk5MWI3ODUyYjg1NSIsImlhdCI6MTcxMTQxMTIwMCwiZXhwIjoxNzExNDk3NjAwLCJqdGkiOiJhMmFfdHJhY2VfMDAxIiwicXdlZF9hMmEiOnsidmVyc2lvbiI6IjEuMCIsInZlcmRpY3QiOiJmb3J3YXJkZWQiLCJlbmdpbmUiOiJmaW5hbmNlX2d1YXJkIiwic2VuZGVyIjoicHJvY3VyZW1lbnQtYWdlbnQiLCJyZWNlaXZlciI6InRyZWFzdXJ5LWFnZW50In19." +
	"A2r1tdScaub6ahMocxY6N42FM3yoC5KcqhkA1cC0kcV_oQ8cETgbisx1aOJlFQN6fdebSxjeT_M9B4yuWAR5rA"

// TestSignA2AShape pins the A2A token: the header of every attestation
// with typ qwed-a2a-attestation+jwt, the claims of the QWED A2A example
// in its order, byte for byte, and the frozen signature.
func TestSignA2AShape(t *testing.T) {
	kr := fixedRing(t)
	tok, err := a2aSigner(t, kr.Signer("local")).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}
	checkTokenShape(t, tok, A2ATyp, `{"iss":"did:qwed:a2a:local","sub":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",`+
		`"iat":1711411200,"exp":1711497600,"jti":"a2a_trace_001","qwed_a2a":{"version":"1.0","verdict":"forwarded",`+
		`"engine":"finance_guard","sender":"procurement-agent","receiver":"treasury-agent"}}`)
	if tok != frozenA2AToken {
		t.Errorf("token differs from the frozen fixture:\n%s\nwant\n%s", tok, frozenA2AToken)
	}
}

// TestSignA2AEverySignerDeterministic pins that each signer the keyring
// returns (Signer, SignerTTL, SignerFor) is an a2a.Signer giving the same
// token for the same claims: exp is always iat + 24 h, whatever the
// signer's TTL for decision attestations.
func TestSignA2AEverySignerDeterministic(t *testing.T) {
	kr := fixedRing(t)
	signers := map[string]domain.Signer{
		"Signer":           kr.Signer("local"),
		"SignerTTL 1h":     kr.SignerTTL("local", time.Hour),
		"SignerFor none":   kr.SignerFor("local")(),
		"SignerFor frozen": kr.SignerFor("local")(frozenA2AToken),
	}
	for name, s := range signers {
		for range 2 {
			tok, err := a2aSigner(t, s).SignA2A(seedA2AClaims())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if tok != frozenA2AToken {
				t.Errorf("%s signed\n%s\nwant\n%s", name, tok, frozenA2AToken)
			}
		}
	}
}

// TestSignA2ARefusesIncompleteClaims pins fail closed: a claim left empty,
// no issued-at time or no node ID is an error and no token.
func TestSignA2ARefusesIncompleteClaims(t *testing.T) {
	kr := fixedRing(t)
	for _, c := range []struct {
		name string
		edit func(*a2a.Claims)
	}{
		{"subject", func(c *a2a.Claims) { c.Subject = "" }},
		{"trace ID", func(c *a2a.Claims) { c.TraceID = "" }},
		{"verdict", func(c *a2a.Claims) { c.Verdict = "" }},
		{"engine", func(c *a2a.Claims) { c.Engine = "" }},
		{"sender", func(c *a2a.Claims) { c.Sender = "" }},
		{"receiver", func(c *a2a.Claims) { c.Receiver = "" }},
		{"issued-at time", func(c *a2a.Claims) { c.IssuedAt = time.Time{} }},
	} {
		cl := seedA2AClaims()
		c.edit(&cl)
		tok, err := a2aSigner(t, kr.Signer("local")).SignA2A(cl)
		if err == nil || tok != "" || !strings.Contains(err.Error(), c.name) {
			t.Errorf("no %s: token %q, error %v; want an error naming it", c.name, tok, err)
		}
	}
	if tok, err := a2aSigner(t, kr.Signer("")).SignA2A(seedA2AClaims()); err == nil || tok != "" {
		t.Errorf("empty node ID: token %q, error %v", tok, err)
	}
	huge := seedA2AClaims()
	huge.TraceID = strings.Repeat("<", MaxTokenBytes)
	if tok, err := a2aSigner(t, kr.Signer("local")).SignA2A(huge); err == nil || tok != "" {
		t.Errorf("a token no verifier accepts was issued: %d bytes, error %v", len(tok), err)
	}
}

// TestVerifyA2ARoundTrip pins that an A2A token verifies against the ring's
// key set until its exp, on the time the caller gives, and returns the
// signed claims.
func TestVerifyA2ARoundTrip(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	in := seedA2AClaims()
	tok, err := a2aSigner(t, kr.Signer("node-1")).SignA2A(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{seedIAT, seedIAT.Add(A2AValidity - time.Second)} {
		got, err := set.VerifyA2A(tok, at)
		if err != nil {
			t.Fatalf("at %s: %v", at, err)
		}
		if got.Issuer != "did:qwed:a2a:node-1" || got.ExpiresAt != 1711497600 || got.A2A.Version != "1.0" {
			t.Errorf("claims %+v", got)
		}
		if got.Claims() != in {
			t.Errorf("claims = %+v\nwant     %+v", got.Claims(), in)
		}
	}
	for _, at := range []time.Time{seedIAT.Add(A2AValidity), seedIAT.Add(365 * 24 * time.Hour)} {
		if got, err := set.VerifyA2A(tok, at); !errors.Is(err, ErrExpired) || got != nil {
			t.Errorf("at %s: %+v, %v; want ErrExpired", at, got, err)
		}
	}
}

// TestTypeConfusionA2AAndDecision pins explicit typing both ways: a
// decision attestation, a checkpoint and a tree head, signed by the same
// key, never verify as an A2A attestation, and an A2A attestation never
// verifies as any of them.
func TestTypeConfusionA2AAndDecision(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	s := kr.Signer("local")
	decision, err := s.Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	ck, err := s.(domain.CheckpointSigner).SignCheckpoint(domain.CheckpointClaims{IssuedAt: seedIAT, Partition: 0, Seq: 7, Head: "h"})
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"decision attestation": decision, "checkpoint": ck} {
		if got, err := set.VerifyA2A(tok, seedIAT); !errors.Is(err, ErrType) || got != nil {
			t.Errorf("%s as A2A: %+v, %v; want ErrType", name, got, err)
		}
	}
	if _, err := set.VerifyRecord(decision); err != nil {
		t.Fatalf("the decision attestation itself: %v", err)
	}
	a2aTok := frozenA2AToken
	if got, err := set.Verify(a2aTok); !errors.Is(err, ErrType) || got != nil {
		t.Errorf("A2A as decision: %+v, %v; want ErrType", got, err)
	}
	if got, err := set.VerifyRecord(a2aTok); !errors.Is(err, ErrType) || got != nil {
		t.Errorf("A2A as decision record: %+v, %v; want ErrType", got, err)
	}
	if got, err := set.VerifyCheckpoint(a2aTok); !errors.Is(err, ErrType) || got != nil {
		t.Errorf("A2A as checkpoint: %+v, %v; want ErrType", got, err)
	}
	if got, err := set.VerifyTreeHead(a2aTok); !errors.Is(err, ErrType) || got != nil {
		t.Errorf("A2A as tree head: %+v, %v; want ErrType", got, err)
	}
	if TokenType(a2aTok) != A2ATyp || TokenType(decision) != Typ || TokenType("x") != "" {
		t.Errorf("TokenType: %q %q %q", TokenType(a2aTok), TokenType(decision), TokenType("x"))
	}
}

// TestVerifyA2ARejects pins each refusal of VerifyA2A with its sentinel
// error: tampering, algorithm confusion, kid injection, type confusion,
// foreign issuer, incomplete or ill-typed claims, high-S, huge tokens.
func TestVerifyA2ARejects(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	priv := kr.key("").priv
	good := frozenA2AToken
	parts := strings.Split(good, ".")
	hdrBytes, _ := b64.DecodeString(parts[0])
	hdr := string(hdrBytes)
	claimBytes, _ := b64.DecodeString(parts[1])
	claims := string(claimBytes)
	with := func(old, new string) string {
		if !strings.Contains(claims, old) {
			t.Fatalf("claims lack %s", old)
		}
		return resign(t, signingMethod, priv, hdr, strings.Replace(claims, old, new, 1))
	}
	withHeader := func(h string) string { return resign(t, signingMethod, priv, h, claims) }
	pubRaw, _ := priv.PublicKey.Bytes()
	other, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherTok, err := a2aSigner(t, other.Signer("local")).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, token string
		want        error
	}{
		{"tampered verdict", parts[0] + "." + b64.EncodeToString([]byte(strings.Replace(claims, "forwarded", "blocked__", 1))) + "." + parts[2], ErrSignature},
		{"tampered subject", parts[0] + "." + b64.EncodeToString([]byte(strings.Replace(claims, "e3b0", "e3b1", 1))) + "." + parts[2], ErrSignature},
		{"tampered signature", parts[0] + "." + parts[1] + "." + flipLast(parts[2]), ErrSignature},
		{"high-S twin", twin(good), ErrSignature},
		{"signed by a key not in the set", otherTok, ErrUnknownKey},
		{"kid of the set on another key's signature", parts[0] + "." + parts[1] + "." + strings.Split(otherTok, ".")[2], ErrSignature},
		{"kid path injection", withHeader(`{"alg":"ES256","kid":"../keys/000001-` + rfc7517KID + `.pem","typ":"qwed-a2a-attestation+jwt"}`), ErrUnknownKey},
		{"kid not a string", withHeader(`{"alg":"ES256","kid":{"$ne":""},"typ":"qwed-a2a-attestation+jwt"}`), ErrUnknownKey},
		{"no kid", withHeader(`{"alg":"ES256","typ":"qwed-a2a-attestation+jwt"}`), ErrUnknownKey},
		{"jwk in header", withHeader(`{"alg":"ES256","jwk":{"kty":"EC"},"typ":"qwed-a2a-attestation+jwt"}`), ErrUnknownKey},
		{"alg none", b64.EncodeToString([]byte(strings.Replace(hdr, "ES256", "none", 1))) + "." + parts[1] + ".", ErrAlgorithm},
		{"HS256 keyed with the public key", resign(t, jwt.SigningMethodHS256, pubRaw, strings.Replace(hdr, "ES256", "HS256", 1), claims), ErrAlgorithm},
		{"HS256 keyed with the JWKS", resign(t, jwt.SigningMethodHS256, kr.JWKS(), strings.Replace(hdr, "ES256", "HS256", 1), claims), ErrAlgorithm},
		{"ES384 label", withHeader(strings.Replace(hdr, "ES256", "ES384", 1)), ErrAlgorithm},
		{"decision typ", withHeader(strings.Replace(hdr, A2ATyp, Typ, 1)), ErrType},
		{"typ in upper case", withHeader(strings.Replace(hdr, A2ATyp, strings.ToUpper(A2ATyp), 1)), ErrType},
		{"plain JWT typ", withHeader(strings.Replace(hdr, A2ATyp, "JWT", 1)), ErrType},
		{"no typ", withHeader(`{"alg":"ES256","kid":"` + rfc7517KID + `"}`), ErrType},
		{"crit header", withHeader(`{"alg":"ES256","crit":["exp"],"kid":"` + rfc7517KID + `","typ":"qwed-a2a-attestation+jwt"}`), ErrMalformed},
		{"node issuer", with("did:qwed:a2a:local", "did:qwed:node:local"), ErrIssuer},
		{"foreign issuer", with("did:qwed:a2a:local", "did:web:evil.example"), ErrIssuer},
		{"empty node in issuer", with("did:qwed:a2a:local", "did:qwed:a2a:"), ErrIssuer},
		{"empty sender", with(`"sender":"procurement-agent"`, `"sender":""`), ErrMalformed},
		{"no receiver", with(`,"receiver":"treasury-agent"`, ``), ErrMalformed},
		{"no subject", with(`"sub":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",`, ``), ErrMalformed},
		{"no jti", with(`"jti":"a2a_trace_001",`, ``), ErrMalformed},
		{"no qwed_a2a", resign(t, signingMethod, priv, hdr, claims[:strings.Index(claims, `,"qwed_a2a"`)]+"}"), ErrMalformed},
		{"version 2.0", with(`"version":"1.0"`, `"version":"2.0"`), ErrMalformed},
		{"no exp", with(`"exp":1711497600,`, ``), ErrMalformed},
		{"exp before iat", with(`"exp":1711497600`, `"exp":1711411199`), ErrMalformed},
		{"exp a string", with(`"exp":1711497600`, `"exp":"1711497600"`), ErrMalformed},
		{"exp fractional", with(`"exp":1711497600`, `"exp":1711497600.5`), ErrMalformed},
		{"verdict a number", with(`"verdict":"forwarded"`, `"verdict":1`), ErrMalformed},
		{"claims not JSON", resign(t, signingMethod, priv, hdr, "not json"), ErrMalformed},
		{"too long", good + strings.Repeat("A", MaxTokenBytes), ErrMalformed},
		{"empty", "", ErrMalformed},
		{"four segments", good + ".x", ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := set.VerifyA2A(c.token, seedIAT)
			if !errors.Is(err, c.want) {
				t.Fatalf("VerifyA2A = %+v, %v; want %v", got, err, c.want)
			}
			if got != nil {
				t.Fatalf("claims returned with an error: %+v", got)
			}
		})
	}
	// The untouched token verifies: the refusals above are not a broken key.
	if _, err := set.VerifyA2A(good, seedIAT); err != nil {
		t.Fatalf("good token: %v", err)
	}
}

// TestSignerForReplaysRecordedA2AKey pins replay of a verdict: after a
// rotation, the signer for a recorded A2A token re-signs with the key its
// kid names, byte for byte; with no recorded token the active key signs.
func TestSignerForReplaysRecordedA2AKey(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := a2aSigner(t, kr.Signer("n")).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Rotate(); err != nil {
		t.Fatal(err)
	}
	again, err := a2aSigner(t, kr.SignerFor("n")(recorded)).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}
	if again != recorded {
		t.Fatalf("re-signed A2A token differs:\n%s\n%s", recorded, again)
	}
	fresh, err := a2aSigner(t, kr.SignerFor("n")()).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := parseHeaderTyp(fresh, A2ATyp); kid.kid != kr.ActiveKID() || fresh == recorded {
		t.Fatalf("signer for no recorded token used %s, want the active %s", kid.kid, kr.ActiveKID())
	}
}

// TestA2AClaimsJSON pins that the claims a verifier prints are the token's
// claims as signed.
func TestA2AClaimsJSON(t *testing.T) {
	set, err := ParseJWKS(fixedRing(t).JWKS())
	if err != nil {
		t.Fatal(err)
	}
	got, err := set.VerifyA2A(frozenA2AToken, seedIAT)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	signed, _ := b64.DecodeString(strings.Split(frozenA2AToken, ".")[1])
	if string(b) != string(signed) {
		t.Fatalf("claims encode to\n%s\nsigned\n%s", b, signed)
	}
}

// TestSignA2AWorstCaseFits pins that the largest claims a valid message
// gives (256-character agent ids and a 128-byte trace id, every character
// one json.Marshal escapes to six bytes) sign to a token VerifyA2A takes:
// MaxTokenBytes refuses only what no valid message produces.
func TestSignA2AWorstCaseFits(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	c := seedA2AClaims()
	c.Sender, c.Receiver, c.TraceID = strings.Repeat("<", 256), strings.Repeat("\u2028", 256), strings.Repeat("&", 128)
	tok, err := a2aSigner(t, kr.Signer("node_0123456789abcdef")).SignA2A(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := set.VerifyA2A(tok, seedIAT); err != nil || got.Claims() != c {
		t.Fatalf("a %d-byte token: %+v, %v", len(tok), got, err)
	}
	t.Logf("worst-case token: %d bytes of %d", len(tok), MaxTokenBytes)
}
