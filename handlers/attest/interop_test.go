package attest

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestInteropOpenSSLVerifiesAttestation checks a fresh attestation with an
// independent ES256 implementation: the OpenSSL command line verifies the
// r||s signature (converted to DER) over the JWS signing input with the
// public key taken from the JWKS.
func TestInteropOpenSSLVerifiesAttestation(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	opensslVerifies(t, kr, tok)
}

// TestInteropOpenSSLVerifiesA2AAttestation is the same check on an A2A
// verdict attestation.
func TestInteropOpenSSLVerifiesA2AAttestation(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := a2aSigner(t, kr.Signer("node-1")).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}
	opensslVerifies(t, kr, tok)
}

// opensslVerifies has `openssl dgst -verify` check tok's signature with the
// active key of kr as its JWKS publishes it, then fail on a tampered
// signing input (so the check can fail).
func opensslVerifies(t *testing.T, kr *Keyring, tok string) {
	t.Helper()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(set.keys[kr.ActiveKID()])
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndexByte(tok, '.')
	sig, err := b64.DecodeString(tok[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	sigDER, err := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"pub.pem":  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}),
		"sig.der":  sigDER,
		"data.txt": []byte(tok[:i]),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func() (string, error) {
		cmd := exec.Command(openssl, "dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig.der", "data.txt")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil || !strings.Contains(out, "Verified OK") {
		t.Fatalf("openssl refused the token: %v\n%s", err, out)
	}
	// The same check fails on a tampered signing input: the test can fail.
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte(tok[:i]+"x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err == nil {
		t.Fatalf("openssl accepted a tampered input:\n%s", out)
	}
}

// TestInteropGolangJWTParsesA2AAttestation checks an A2A attestation with
// a general-purpose JWT library used the way a relying party would: stock
// golang-jwt ES256 (not this package's signing method), the key from the
// JWKS, its own exp check at a fixed time, the typ header and the claims
// as a generic map.
func TestInteropGolangJWTParsesA2AAttestation(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := a2aSigner(t, kr.Signer("local")).SignA2A(seedA2AClaims())
	if err != nil {
		t.Fatal(err)
	}
	parse := func(at time.Time) (*jwt.Token, jwt.MapClaims, error) {
		claims := jwt.MapClaims{}
		p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}), jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(), jwt.WithTimeFunc(func() time.Time { return at }))
		parsed, err := p.ParseWithClaims(tok, claims, func(tk *jwt.Token) (any, error) {
			kid, _ := tk.Header["kid"].(string)
			if pub := set.keys[kid]; pub != nil {
				return pub, nil
			}
			return nil, fmt.Errorf("kid %q not in the JWKS", kid)
		})
		return parsed, claims, err
	}
	parsed, claims, err := parse(seedIAT.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Method != jwt.SigningMethodES256 || parsed.Header["typ"] != A2ATyp {
		t.Errorf("method %v, header %v", parsed.Method, parsed.Header)
	}
	q, _ := claims["qwed_a2a"].(map[string]any)
	if claims["iss"] != "did:qwed:a2a:local" || claims["jti"] != "a2a_trace_001" || claims["exp"] != float64(1711497600) ||
		q["version"] != "1.0" || q["verdict"] != "forwarded" || q["engine"] != "finance_guard" ||
		q["sender"] != "procurement-agent" || q["receiver"] != "treasury-agent" {
		t.Errorf("claims %v", claims)
	}
	if _, _, err := parse(seedIAT.Add(A2AValidity)); !errors.Is(err, jwt.ErrTokenExpired) {
		t.Errorf("golang-jwt after exp: %v, want ErrTokenExpired", err)
	}
}
