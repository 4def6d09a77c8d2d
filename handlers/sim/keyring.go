package sim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentgate/agentgate/handlers/attest"
)

// testKeyring opens an attestation keyring in dir holding one P-256 key
// derived from a fixed string, so that every simulation signs (and its
// events hash) the same way: attest's real signer, with a key that is not
// drawn at random.
func testKeyring(dir string) (*attest.Keyring, error) {
	d := sha256.Sum256([]byte("agentgate simulator signing key"))
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:])
	if err != nil {
		return nil, fmt.Errorf("deriving the signing key: %w", err)
	}
	raw, err := priv.PublicKey.Bytes()
	if err != nil {
		return nil, fmt.Errorf("encoding the public key: %w", err)
	}
	b64 := base64.RawURLEncoding
	kid := attest.Thumbprint(b64.EncodeToString(raw[1:33]), b64.EncodeToString(raw[33:]))
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encoding the signing key: %w", err)
	}
	keys := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		return nil, fmt.Errorf("creating the key directory: %w", err)
	}
	file := filepath.Join(keys, "000001-"+kid+".pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, fmt.Errorf("writing the signing key: %w", err)
	}
	return attest.OpenKeyring(dir)
}
