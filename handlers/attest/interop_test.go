package attest

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteropOpenSSLVerifiesAttestation checks a fresh attestation with an
// independent ES256 implementation: the OpenSSL command line verifies the
// r||s signature (converted to DER) over the JWS signing input with the
// public key taken from the JWKS.
func TestInteropOpenSSLVerifiesAttestation(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := kr.Signer("node-1").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
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
		t.Fatalf("openssl refused the attestation: %v\n%s", err, out)
	}
	// The same check fails on a tampered signing input: the test can fail.
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte(tok[:i]+"x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err == nil {
		t.Fatalf("openssl accepted a tampered input:\n%s", out)
	}
}
