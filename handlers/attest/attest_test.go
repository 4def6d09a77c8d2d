package attest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/domain"
)

// rfc7517Key is the P-256 example key of RFC 7517 Appendix A.1/A.2.
const (
	rfc7517D = "870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE"
	rfc7517X = "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4"
	rfc7517Y = "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"
	// rfc7517KID is its RFC 7638 thumbprint, computed independently (Python
	// hashlib over the JSON of the required members).
	rfc7517KID = "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s"
)

func typicalClaims() domain.AttestationClaims {
	return domain.AttestationClaims{
		Subject:        "did:qwed:agent:agent_7f3c",
		ActionID:       "act_0001",
		IssuedAt:       time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC),
		Decision:       domain.Approved,
		RequestDigest:  "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		AgentID:        "agent_7f3c",
		ConversationID: "conv-001",
		Step:           3,
		Seq:            42,
		Partition:      1,
		Risk:           domain.RiskHigh,
	}
}

// fixedRing returns a keyring in a temp dir holding only the RFC 7517 key,
// written the way Rotate writes keys.
func fixedRing(t testing.TB) *Keyring {
	t.Helper()
	d, err := b64.DecodeString(rfc7517D)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, keysDir), 0o700); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, keysDir, "000001-"+rfc7517KID+".pem")
	if err := os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// TestThumbprintRFC7638 pins the kid: the RFC 7638 thumbprint of the
// RFC 7517 example key, computed independently.
func TestThumbprintRFC7638(t *testing.T) {
	if got := Thumbprint(rfc7517X, rfc7517Y); got != rfc7517KID {
		t.Fatalf("Thumbprint = %s, want %s", got, rfc7517KID)
	}
	kr := fixedRing(t)
	if kr.ActiveKID() != rfc7517KID {
		t.Fatalf("ActiveKID = %s, want %s", kr.ActiveKID(), rfc7517KID)
	}
	want := `{"keys":[{"kty":"EC","crv":"P-256","x":"` + rfc7517X + `","y":"` + rfc7517Y +
		`","use":"sig","alg":"ES256","kid":"` + rfc7517KID + `"}]}`
	if got := string(kr.JWKS()); got != want {
		t.Fatalf("JWKS =\n%s\nwant\n%s", got, want)
	}
}

// TestRFC6979DeterministicNonce pins the signing method to the RFC 6979
// A.2.5 vector (P-256, SHA-256, message "sample"): the signature is the
// 64-byte r||s of RFC 7518 §3.4. The vector's s (F7CB…) is high (> n/2),
// so the gate issues its low twin n - s (0834…), which verifies as well.
func TestRFC6979DeterministicNonce(t *testing.T) {
	d, _ := hex.DecodeString("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721")
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signingMethod.Sign("sample", priv)
	if err != nil {
		t.Fatal(err)
	}
	vectorS, _ := new(big.Int).SetString("F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8", 16)
	lowS := new(big.Int).Sub(elliptic.P256().Params().N, vectorS)
	want := "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716" +
		fmt.Sprintf("%064X", lowS)
	if want[64:] != "0834E36AD29A83BF2BC9385E491D6099C8FDF9D1ED67AA7EA5F51F93782857A9" {
		t.Fatalf("n - s = %s", want[64:])
	}
	if got := strings.ToUpper(hex.EncodeToString(sig)); got != want {
		t.Fatalf("r||s = %s\nwant   %s", got, want)
	}
	if err := signingMethod.Verify("sample", sig, &priv.PublicKey); err != nil {
		t.Fatalf("verifying: %v", err)
	}
}

// frozenToken is the attestation of typicalClaims by node "node-1" with the RFC
// 7517 key. It must never change: a replay reproduces attestations byte for byte
// (invariant 1, docs/ARCHITECTURE.md). Its signature was reproduced
// independently with Python cryptography 48 (OpenSSL, ECDSA
// deterministic_signing=True).
const frozenToken = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImNuLUlfV05NQ2xlaGlWcDUxaV8wVnBPRU5XMXVwRWVyQThzRWFtNWhuLXMiLCJ0eXAiOiJxd2VkLWF0dGVzdGF0aW9uK2p3dCJ9" +
	".eyJpc3MiOiJkaWQ6cXdlZDpub2RlOm5vZGUtMSIsInN1YiI6ImRpZDpxd2VkOmFnZW50OmFnZW50XzdmM2MiLCJqdGkiOiJhY3RfMDAwMSIsImlhdCI6MTc0MTk2NDk2NiwiZGVjaXNpb24iOiJBUFBST1ZFRCIsInJlcXVlc3RfZGlnZXN0Ijoic2hhMjU2OjlmODZkMDgxODg0YzdkNjU5YTJmZWFhMGM1NWFkMDE1YTNiZjRmMWIyYjBiODIyY2QxNWQ2YzE1YjBmMDBhMDgiLCJhZ2VudF9pZCI6ImFnZW50XzdmM2MiLCJjb252ZXJzYXRpb25faWQiOiJjb252LTAwMSIsInN0ZXAiOjMsInNlcSI6NDIsInBhcnRpdGlvbiI6MSwicmlza19sZXZlbCI6ImhpZ2gifQ" +
	".LTSSBTBDH6oWWQGQr0qzahYGNh3tmUGy5NxDqhzV2XAcKzSwKr8aAIETSEO8lppsHGL8ZUbHCJACRxySvt4JRA"

// TestSignDeterministic pins invariant 1 for attestations: signing the same
// claims twice, and after reopening the keyring from disk, gives the
// byte-identical token, equal to the frozen fixture.
func TestSignDeterministic(t *testing.T) {
	kr := fixedRing(t)
	s := kr.Signer("node-1")
	a, err := s.Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two signatures of the same claims differ:\n%s\n%s", a, b)
	}
	re, err := OpenKeyring(filepath.Dir(kr.dir))
	if err != nil {
		t.Fatal(err)
	}
	c, err := re.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if c != a {
		t.Fatalf("signature after reopening differs:\n%s\n%s", a, c)
	}
	if a != frozenToken {
		t.Fatalf("token differs from the frozen fixture:\n%s\nwant\n%s", a, frozenToken)
	}
}

// TestTokenShape pins the header, the claim encoding and the r||s signature
// length of an attestation.
func TestTokenShape(t *testing.T) {
	kr := fixedRing(t)
	tok, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	checkTokenShape(t, tok, Typ, `{"iss":"did:qwed:node:node-1","sub":"did:qwed:agent:agent_7f3c","jti":"act_0001","iat":1741964966,`+
		`"decision":"APPROVED","request_digest":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",`+
		`"agent_id":"agent_7f3c","conversation_id":"conv-001","step":3,"seq":42,"partition":1,"risk_level":"high"}`)
}

// checkTokenShape checks that tok, signed by the RFC 7517 key, is a compact
// JWS with the header {"alg":"ES256","kid":…,"typ":typ}, the claims
// wantClaims byte for byte and a 64-byte low-S r||s signature.
func checkTokenShape(t *testing.T, tok, typ, wantClaims string) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d segments", len(parts))
	}
	h, _ := b64.DecodeString(parts[0])
	if want := `{"alg":"ES256","kid":"` + rfc7517KID + `","typ":"` + typ + `"}`; string(h) != want {
		t.Errorf("header = %s, want %s", h, want)
	}
	if p, _ := b64.DecodeString(parts[1]); string(p) != wantClaims {
		t.Errorf("claims = %s\nwant     %s", p, wantClaims)
	}
	if sig, err := b64.DecodeString(parts[2]); err != nil || len(sig) != 64 || highS(sig) {
		t.Errorf("signature is %d bytes (%v), high-S %v; want 64 low-S bytes", len(sig), err, highS(sig))
	}
}

// TestVerifyRoundTrip pins that a signed attestation verifies against the
// ring's JWKS and returns the signed claims.
func TestVerifyRoundTrip(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := typicalClaims()
	tok, err := kr.Signer("node-1").Sign(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Verify(tok, kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	if got.Issuer != "did:qwed:node:node-1" {
		t.Errorf("iss = %q", got.Issuer)
	}
	if got.Attestation() != in {
		t.Errorf("claims = %+v\nwant     %+v", got.Attestation(), in)
	}
}

// TestSignRefusesIncompleteInput pins that a signer fails closed on an empty
// node ID or a missing issued-at time.
func TestSignRefusesIncompleteInput(t *testing.T) {
	kr := fixedRing(t)
	if _, err := kr.Signer("").Sign(typicalClaims()); err == nil {
		t.Error("signing with an empty node ID succeeded")
	}
	c := typicalClaims()
	c.IssuedAt = time.Time{}
	if _, err := kr.Signer("node-1").Sign(c); err == nil {
		t.Error("signing claims without IssuedAt succeeded")
	}
}

// resign builds a token from raw header and claims JSON and signs it with
// key using method.
func resign(t *testing.T, method jwt.SigningMethod, key any, header, claims string) string {
	t.Helper()
	signing := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	sig, err := method.Sign(signing, key)
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + b64.EncodeToString(sig)
}

// TestVerifyRejects pins each refusal of Verify with its sentinel error:
// tampering, wrong key, algorithm confusion, unknown kid, expiry, wrong type
// or issuer, and garbage.
func TestVerifyRejects(t *testing.T) {
	kr := fixedRing(t)
	jwks := kr.JWKS()
	priv := kr.key("").priv
	good, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	hdr := `{"alg":"ES256","kid":"` + rfc7517KID + `","typ":"qwed-attestation+jwt"}`
	claims, _ := b64.DecodeString(parts[1])

	other, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherTok, err := other.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	// The other ring's key published under our kid: right kid, wrong key.
	var otherSet jwkSet
	if err := json.Unmarshal(other.JWKS(), &otherSet); err != nil {
		t.Fatal(err)
	}
	otherSet.Keys[0].Kid = rfc7517KID
	wrongKeyJWKS, _ := json.Marshal(otherSet)

	tampered := strings.Replace(string(claims), `"APPROVED"`, `"DENIED"`, 1)
	expired := strings.Replace(string(claims), `"iat":1741964966,`, `"iat":1741964966,"exp":1741964967,`, 1)
	badIssuer := strings.Replace(string(claims), `did:qwed:node:node-1`, `did:web:evil.example`, 1)
	noIssuer := strings.Replace(string(claims), `did:qwed:node:node-1`, `did:qwed:node:`, 1)
	pubRaw, _ := kr.key("").priv.PublicKey.Bytes()

	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	derSig, err := priv.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		token string
		jwks  []byte
		want  error
	}{
		{"tampered payload", parts[0] + "." + b64.EncodeToString([]byte(tampered)) + "." + parts[2], jwks, ErrSignature},
		{"tampered signature", parts[0] + "." + parts[1] + "." + flipLast(parts[2]), jwks, ErrSignature},
		{"signature of another token", parts[0] + "." + parts[1] + "." + strings.Split(otherTok, ".")[2], jwks, ErrSignature},
		{"wrong key under the same kid", good, wrongKeyJWKS, ErrSignature},
		{"DER signature instead of r||s", parts[0] + "." + parts[1] + "." + b64.EncodeToString(derSig), jwks, ErrSignature},
		{"unknown kid", otherTok, jwks, ErrUnknownKey},
		{"no kid", resign(t, signingMethod, priv, `{"alg":"ES256","typ":"qwed-attestation+jwt"}`, string(claims)), jwks, ErrUnknownKey},
		{"alg none", b64.EncodeToString([]byte(`{"alg":"none","kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt"}`)) + "." + parts[1] + ".", jwks, ErrAlgorithm},
		{"alg None", b64.EncodeToString([]byte(`{"alg":"None","kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt"}`)) + "." + parts[1] + ".", jwks, ErrAlgorithm},
		{"HS256 keyed with the public key", resign(t, jwt.SigningMethodHS256, pubRaw, strings.Replace(hdr, "ES256", "HS256", 1), string(claims)), jwks, ErrAlgorithm},
		{"HS256 keyed with the JWKS", resign(t, jwt.SigningMethodHS256, jwks, strings.Replace(hdr, "ES256", "HS256", 1), string(claims)), jwks, ErrAlgorithm},
		{"ES384 label", resign(t, signingMethod, priv, strings.Replace(hdr, "ES256", "ES384", 1), string(claims)), jwks, ErrAlgorithm},
		// A repeated member is malformed, whichever comes last: encoding/json
		// kept the last, so HS256 then ES256 verified, and a claim in another
		// case was read here where other verifiers read the exact name.
		{"duplicate alg member", resign(t, signingMethod, priv, `{"alg":"ES256","kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt","alg":"HS256"}`, string(claims)), jwks, ErrMalformed},
		{"duplicate alg member, ES256 last", resign(t, signingMethod, priv, `{"alg":"HS256","kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt","alg":"ES256"}`, string(claims)), jwks, ErrMalformed},
		{"alg member in another case", resign(t, signingMethod, priv, `{"alg":"ES256","ALG":"none","kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt"}`, string(claims)), jwks, ErrMalformed},
		{"duplicate decision claim", resign(t, signingMethod, priv, hdr, strings.Replace(string(claims), `"decision":"APPROVED"`, `"decision":"DENIED","decision":"APPROVED"`, 1)), jwks, ErrMalformed},
		{"agent_id claim in another case", resign(t, signingMethod, priv, hdr, strings.Replace(string(claims), `"decision":"APPROVED"`, `"decision":"APPROVED","AGENT_ID":"agent-x"`, 1)), jwks, ErrMalformed},
		{"alg not a string", resign(t, signingMethod, priv, `{"alg":["ES256"],"kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt"}`, string(claims)), jwks, ErrAlgorithm},
		{"plain JWT typ", resign(t, signingMethod, priv, strings.Replace(hdr, "qwed-attestation+jwt", "JWT", 1), string(claims)), jwks, ErrType},
		{"no typ", resign(t, signingMethod, priv, `{"alg":"ES256","kid":"`+rfc7517KID+`"}`, string(claims)), jwks, ErrType},
		{"crit header", resign(t, signingMethod, priv, `{"alg":"ES256","crit":["x"],"kid":"`+rfc7517KID+`","typ":"qwed-attestation+jwt","x":1}`, string(claims)), jwks, ErrMalformed},
		{"expired", resign(t, signingMethod, priv, hdr, expired), jwks, ErrExpired},
		{"foreign issuer", resign(t, signingMethod, priv, hdr, badIssuer), jwks, ErrIssuer},
		{"empty node in issuer", resign(t, signingMethod, priv, hdr, noIssuer), jwks, ErrIssuer},
		{"claims not JSON", resign(t, signingMethod, priv, hdr, `not json`), jwks, ErrMalformed},
		{"empty", "", jwks, ErrMalformed},
		{"garbage", "garbage", jwks, ErrMalformed},
		{"two segments", parts[0] + "." + parts[1], jwks, ErrMalformed},
		{"four segments", good + ".x", jwks, ErrMalformed},
		{"header not base64", "!!!." + parts[1] + "." + parts[2], jwks, ErrMalformed},
		{"header not JSON", b64.EncodeToString([]byte("nope")) + "." + parts[1] + "." + parts[2], jwks, ErrMalformed},
		{"padded signature", good + "=", jwks, ErrMalformed},
		{"too long", good + strings.Repeat("A", MaxTokenBytes), jwks, ErrMalformed},
		{"garbage JWKS", good, []byte(`{"keys":`), ErrInvalidJWKS},
		{"empty JWKS", good, []byte(`{"keys":[]}`), ErrInvalidJWKS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			claims, err := Verify(c.token, c.jwks)
			if !errors.Is(err, c.want) {
				t.Fatalf("Verify = %+v, %v; want %v", claims, err, c.want)
			}
			if claims != nil {
				t.Fatalf("claims returned with an error: %+v", claims)
			}
		})
	}
	// The untouched token verifies: the refusals above are not a broken key.
	if _, err := Verify(good, jwks); err != nil {
		t.Fatalf("good token: %v", err)
	}
}

func flipLast(s string) string {
	b := []byte(s)
	// Change the first character: the last one may hold only padding bits.
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

// TestRotationKeepsOldTokensVerifiable pins key rotation: the new key signs,
// the JWKS holds both keys sorted by kid, and tokens of the retired key
// still verify, also after reopening the ring from disk.
func TestRotationKeepsOldTokensVerifiable(t *testing.T) {
	dir := t.TempDir()
	kr, err := OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := kr.ActiveKID()
	oldTok, err := kr.Signer("n").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	second, err := kr.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if second == first || kr.ActiveKID() != second {
		t.Fatalf("after rotation active = %s, first %s, rotate returned %s", kr.ActiveKID(), first, second)
	}
	newTok, err := kr.Signer("n").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := headerKID(newTok); kid != second {
		t.Fatalf("new token signed by %s, want %s", kid, second)
	}
	var set jwkSet
	if err := json.Unmarshal(kr.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 || set.Keys[0].Kid > set.Keys[1].Kid {
		t.Fatalf("JWKS not two keys sorted by kid: %s", kr.JWKS())
	}
	re, err := OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	if re.ActiveKID() != second || !bytes.Equal(re.JWKS(), kr.JWKS()) {
		t.Fatalf("reopened ring: active %s, JWKS %s", re.ActiveKID(), re.JWKS())
	}
	for _, tok := range []string{oldTok, newTok} {
		if _, err := Verify(tok, re.JWKS()); err != nil {
			t.Errorf("token by %s: %v", must(headerKID(tok)), err)
		}
	}
}

func must(s string, _ error) string { return s }

// TestSignerForReplaysRecordedKey pins replay support: after a rotation, the
// signer for a recorded token re-signs with that token's key, byte for byte.
func TestSignerForReplaysRecordedKey(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := kr.Signer("n").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Rotate(); err != nil {
		t.Fatal(err)
	}
	again, err := kr.SignerFor("n")(recorded).Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if again != recorded {
		t.Fatalf("re-signed token differs:\n%s\n%s", recorded, again)
	}
	fresh, err := kr.SignerFor("n")("").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := headerKID(fresh); kid != kr.ActiveKID() {
		t.Fatalf("signer for no recorded token used %s, want the active %s", kid, kr.ActiveKID())
	}
}

// TestKeyFilesPersisted pins the key storage: dir/keys/ is 0700, each key a
// PKCS#8 PEM file of mode 0600 named <sequence>-<kid>.pem, reloaded as is;
// a corrupt or misnamed key file fails the open.
func TestKeyFilesPersisted(t *testing.T) {
	dir := t.TempDir()
	kr, err := OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	kid := kr.ActiveKID()
	keys := filepath.Join(dir, keysDir)
	info, err := os.Stat(keys)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("keys dir: %v, %v", info.Mode(), err)
	}
	entries, err := os.ReadDir(keys)
	if err != nil || len(entries) != 1 || entries[0].Name() != "000001-"+kid+".pem" {
		t.Fatalf("key files: %v, %v", entries, err)
	}
	path := filepath.Join(keys, entries[0].Name())
	info, err = os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", info.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("key file is not a PKCS#8 PEM: %s", data)
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		t.Fatalf("parsing PKCS#8: %v", err)
	}
	re, err := OpenKeyring(dir)
	if err != nil || re.ActiveKID() != kid {
		t.Fatalf("reopen: %v, active %s want %s", err, re.ActiveKID(), kid)
	}

	// A leftover temporary file is ignored.
	if err := os.WriteFile(filepath.Join(keys, ".key-1.tmp"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyring(dir); err != nil {
		t.Fatalf("temporary file not ignored: %v", err)
	}
	// A misnamed key fails closed.
	renamed := filepath.Join(keys, "000002-"+rfc7517KID+".pem")
	if err := os.WriteFile(renamed, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyring(dir); err == nil {
		t.Fatal("key under another kid's name accepted")
	}
	if err := os.Remove(renamed); err != nil {
		t.Fatal(err)
	}
	// A corrupt key fails closed.
	if err := os.WriteFile(path, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyring(dir); err == nil {
		t.Fatal("corrupt key file accepted")
	}
}

// TestParseJWKS pins the JWKS checks: off-curve points, wrong curves,
// duplicate kids and sets without an EC key are refused; other key types
// are skipped.
func TestParseJWKS(t *testing.T) {
	key := func(x, y, kid string) string {
		return `{"kty":"EC","crv":"P-256","x":"` + x + `","y":"` + y + `","kid":"` + kid + `"}`
	}
	good := key(rfc7517X, rfc7517Y, "k1")
	offCurve := key(rfc7517X, strings.Replace(rfc7517Y, "4E", "4F", 1), "k1")
	cases := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"one key", `{"keys":[` + good + `]}`, true},
		{"RSA key skipped", `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"},` + good + `]}`, true},
		{"only RSA", `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"}]}`, false},
		{"off curve", `{"keys":[` + offCurve + `]}`, false},
		{"P-384", `{"keys":[` + strings.Replace(good, "P-256", "P-384", 1) + `]}`, false},
		{"short x", `{"keys":[` + key("AAAA", rfc7517Y, "k1") + `]}`, false},
		{"no kid", `{"keys":[` + key(rfc7517X, rfc7517Y, "") + `]}`, false},
		{"duplicate kid", `{"keys":[` + good + `,` + good + `]}`, false},
		{"encryption key", `{"keys":[` + strings.Replace(good, `"kid"`, `"use":"enc","kid"`, 1) + `]}`, false},
		{"other alg", `{"keys":[` + strings.Replace(good, `"kid"`, `"alg":"ES384","kid"`, 1) + `]}`, false},
		{"not JSON", `{"keys":[`, false},
		{"no keys", `{}`, false},
	}
	for _, c := range cases {
		set, err := ParseJWKS([]byte(c.doc))
		if c.ok != (err == nil) {
			t.Errorf("%s: ParseJWKS = %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, ErrInvalidJWKS) {
			t.Errorf("%s: error %v does not wrap ErrInvalidJWKS", c.name, err)
		}
		if c.ok && strings.Join(set.KIDs(), ",") != "k1" {
			t.Errorf("%s: kids %v", c.name, set.KIDs())
		}
	}
	big := append([]byte(`{"keys":[`+good+`],"pad":"`), bytes.Repeat([]byte("x"), MaxJWKSBytes)...)
	big = append(big, `"}`...)
	if _, err := ParseJWKS(big); !errors.Is(err, ErrInvalidJWKS) {
		t.Errorf("oversized JWKS: %v", err)
	}
}

// TestConcurrentSignAndRotate pins that signers may run while the ring
// rotates: every token verifies against the final JWKS (run with -race).
func TestConcurrentSignAndRotate(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const signers, perSigner, rotations = 4, 20, 3
	tokens := make(chan string, signers*perSigner)
	errs := make(chan error, signers+1)
	var wg sync.WaitGroup
	for i := 0; i < signers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := kr.Signer("node-1")
			for j := 0; j < perSigner; j++ {
				tok, err := s.Sign(typicalClaims())
				if err != nil {
					errs <- err
					return
				}
				tokens <- tok
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < rotations; i++ {
			if _, err := kr.Rotate(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(tokens)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := len(kr.KIDs()); got != 1+rotations {
		t.Fatalf("ring holds %d keys, want %d", got, 1+rotations)
	}
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for tok := range tokens {
		if _, err := set.Verify(tok); err != nil {
			t.Fatalf("token %d: %v", n, err)
		}
		n++
	}
	if n != signers*perSigner {
		t.Fatalf("verified %d tokens, want %d", n, signers*perSigner)
	}
}

// Instances that share one key directory (README, Kafka: several
// instances) load the same keys and publish the same JWKS; a key rotated
// by one is in the other's JWKS once the other reopens its keyring.
func TestKeyringSharedDirectory(t *testing.T) {
	shared := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.Symlink(shared, filepath.Join(d, "keys")); err != nil {
			t.Fatal(err)
		}
	}
	ka, err := OpenKeyring(a)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := OpenKeyring(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ka.JWKS(), kb.JWKS()) {
		t.Fatalf("instances sharing a key directory publish different JWKS:\n%s\n%s", ka.JWKS(), kb.JWKS())
	}
	kid, err := ka.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(kb.JWKS(), []byte(kid)) {
		t.Fatal("the other instance saw the rotated key without reopening")
	}
	kb, err = OpenKeyring(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(kb.JWKS(), []byte(kid)) || !bytes.Equal(ka.JWKS(), kb.JWKS()) {
		t.Fatalf("after reopening, the rotated key %s is missing: %s", kid, kb.JWKS())
	}
}
