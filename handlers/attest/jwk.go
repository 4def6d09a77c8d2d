package attest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// MaxJWKSBytes bounds a JWKS document accepted by ParseJWKS and FetchJWKS.
const MaxJWKSBytes = 1 << 20

// ErrInvalidJWKS reports a JWKS document that cannot be used: not JSON, too
// large, a malformed or off-curve EC key, a duplicate kid, or no usable
// ES256 key at all.
var ErrInvalidJWKS = errors.New("invalid JWKS")

// coordBytes is the size of a P-256 coordinate.
const coordBytes = 32

var b64 = base64.RawURLEncoding.Strict()

// jwk is the JSON Web Key of one public signing key (RFC 7517, RFC 7518
// §6.2). Field order fixes the encoding.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	Kid string `json:"kid"`
}

type jwkSet struct {
	Keys []jwk `json:"keys"`
}

// publicJWK returns the public JWK of pub with its RFC 7638 thumbprint as
// kid.
func publicJWK(pub *ecdsa.PublicKey) (jwk, error) {
	raw, err := pub.Bytes()
	if err != nil {
		return jwk{}, fmt.Errorf("encoding public key: %w", err)
	}
	if pub.Curve != elliptic.P256() || len(raw) != 1+2*coordBytes {
		return jwk{}, errors.New("encoding public key: not a P-256 key")
	}
	k := jwk{
		Kty: "EC", Crv: "P-256",
		X:   b64.EncodeToString(raw[1 : 1+coordBytes]),
		Y:   b64.EncodeToString(raw[1+coordBytes:]),
		Use: "sig", Alg: "ES256",
	}
	k.Kid = Thumbprint(k.X, k.Y)
	return k, nil
}

// Thumbprint returns the RFC 7638 JWK thumbprint of a P-256 public key given
// by its base64url coordinates: the unpadded base64url SHA-256 of
// {"crv":"P-256","kty":"EC","x":x,"y":y} (required members only, in
// lexicographic order, no whitespace). It is the kid of every key this
// package creates.
func Thumbprint(x, y string) string {
	// x and y are base64url, which needs no JSON escaping.
	h := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return b64.EncodeToString(h[:])
}

// encodeJWKS renders keys as a JWKS document sorted by kid.
func encodeJWKS(keys []jwk) ([]byte, error) {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, func(a, b jwk) int { return cmpString(a.Kid, b.Kid) })
	out, err := json.Marshal(jwkSet{Keys: sorted})
	if err != nil {
		return nil, fmt.Errorf("encoding JWKS: %w", err)
	}
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// KeySet is a parsed JWKS: the ES256 public keys it holds, by kid. A KeySet
// is immutable and safe for concurrent use.
type KeySet struct {
	keys map[string]*ecdsa.PublicKey
}

// ParseJWKS parses a JWKS document (RFC 7517 §5). Keys whose kty is not "EC"
// are skipped (they cannot verify ES256); an EC key must be a valid P-256
// point with a kid, and its "use" and "alg", when present, must be "sig" and
// "ES256". It fails with ErrInvalidJWKS if the document is malformed, larger
// than MaxJWKSBytes, repeats a kid, or holds no usable key.
func ParseJWKS(data []byte) (*KeySet, error) {
	if len(data) > MaxJWKSBytes {
		return nil, fmt.Errorf("%w: document of %d bytes exceeds %d", ErrInvalidJWKS, len(data), MaxJWKSBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: decoding document: %w", ErrInvalidJWKS, err)
	}
	set := &KeySet{keys: make(map[string]*ecdsa.PublicKey, len(doc.Keys))}
	for i, raw := range doc.Keys {
		var k jwk
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("%w: decoding key %d: %w", ErrInvalidJWKS, i, err)
		}
		if k.Kty != "EC" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("%w: key %d (kid %q): %w", ErrInvalidJWKS, i, k.Kid, err)
		}
		if _, dup := set.keys[k.Kid]; dup {
			return nil, fmt.Errorf("%w: kid %q appears more than once", ErrInvalidJWKS, k.Kid)
		}
		set.keys[k.Kid] = pub
	}
	if len(set.keys) == 0 {
		return nil, fmt.Errorf("%w: no EC P-256 signing key", ErrInvalidJWKS)
	}
	return set, nil
}

// publicKey validates an EC JWK and returns its key.
func (k jwk) publicKey() (*ecdsa.PublicKey, error) {
	switch {
	case k.Kid == "":
		return nil, errors.New("missing kid")
	case k.Crv != "P-256":
		return nil, fmt.Errorf("curve %q is not P-256", k.Crv)
	case k.Use != "" && k.Use != "sig":
		return nil, fmt.Errorf("use %q is not sig", k.Use)
	case k.Alg != "" && k.Alg != "ES256":
		return nil, fmt.Errorf("alg %q is not ES256", k.Alg)
	}
	x, errX := b64.DecodeString(k.X)
	y, errY := b64.DecodeString(k.Y)
	if errX != nil || errY != nil || len(x) != coordBytes || len(y) != coordBytes {
		return nil, errors.New("x and y must be 32-byte base64url coordinates")
	}
	point := make([]byte, 0, 1+2*coordBytes)
	point = append(append(append(point, 4), x...), y...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		return nil, fmt.Errorf("decoding point: %w", err)
	}
	return pub, nil
}

// KIDs returns the key IDs of the set, sorted.
func (s *KeySet) KIDs() []string {
	out := make([]string, 0, len(s.keys))
	for kid := range s.keys {
		out = append(out, kid)
	}
	slices.Sort(out)
	return out
}
