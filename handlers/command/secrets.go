package command

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// Secret prefixes (QWED-Agent spec v1.1 §3.2).
const (
	// AgentTokenPrefix begins every agent token.
	AgentTokenPrefix = "qwed_agent_"
	// APIKeyPrefix begins every principal API key.
	APIKeyPrefix = "qwed_key_"
	// AdminKeyPrefix begins the admin key the gate mints on first start.
	AdminKeyPrefix = "qwed_admin_"
)

// NewSecret mints a secret: prefix + the base64url (unpadded) of 32
// bytes of crypto/rand, which never fails (it ends the program if the
// system's generator does).
func NewSecret(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashSecret returns the lowercase hex SHA-256 of a token or key: the
// only form in which the gate stores, compares or records a secret.
func HashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// EqualHash compares two secret hashes in constant time (crypto/subtle);
// "" never matches.
func EqualHash(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
