package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/strictjson"
)

// The offline checks of the gate's attestations (handlers/attest's rules,
// which the gate signs by): ES256 compact JWS, the explicit typ, a kid of
// the JWKS, a low-S P-256 signature, an unexpired exp, a node issuer.
const (
	// AttestationTyp is the typ header of a decision attestation.
	AttestationTyp = "qwed-attestation+jwt"
	// A2AAttestationTyp is the typ header of an A2A verdict attestation.
	A2AAttestationTyp = "qwed-a2a-attestation+jwt"
	// MaxAttestationBytes bounds a token VerifyAttestation accepts.
	MaxAttestationBytes = 8 << 10
	// MaxJWKSBytes bounds a JWKS document the verification accepts.
	MaxJWKSBytes = 1 << 20
)

// The attestation errors: every failure of VerifyAttestation and
// VerifyA2AAttestation wraps one of them.
var (
	ErrAttestationMalformed = errors.New("malformed attestation token")
	ErrAttestationAlgorithm = errors.New("attestation algorithm is not ES256")
	ErrAttestationType      = errors.New("token is not an attestation of this kind")
	ErrAttestationKey       = errors.New("attestation signing key is not in the JWKS")
	ErrAttestationSignature = errors.New("attestation signature is invalid")
	ErrAttestationExpired   = errors.New("attestation has expired")
	ErrAttestationIssuer    = errors.New("attestation issuer is not a qwed node")
	ErrInvalidJWKS          = errors.New("invalid JWKS")
)

// AttestationClaims are the claims of a decision attestation (the gate's
// ES256 JWT binding a decision to its request digest and log position).
type AttestationClaims struct {
	Issuer          string          `json:"iss"`
	Subject         string          `json:"sub"`
	ActionID        string          `json:"jti"`
	IssuedAt        int64           `json:"iat"`
	ExpiresAt       *NumericDate    `json:"exp,omitempty"`
	Decision        domain.Decision `json:"decision,omitempty"`
	RequestDigest   string          `json:"request_digest"`
	AgentID         string          `json:"agent_id,omitempty"`
	ConversationID  string          `json:"conversation_id,omitempty"`
	Step            int64           `json:"step,omitempty"`
	Seq             uint64          `json:"seq"`
	Partition       int32           `json:"partition"`
	RiskLevel       domain.Risk     `json:"risk_level,omitempty"`
	Kind            string          `json:"kind,omitempty"`
	Engine          string          `json:"engine,omitempty"`
	Status          string          `json:"status,omitempty"`
	OutcomeDigest   string          `json:"outcome_digest,omitempty"`
	CorrectedDigest string          `json:"corrected_digest,omitempty"`
}

// NumericDate is a JWT time claim (RFC 7519 §2): Unix seconds. It decodes
// any JSON number, or a string holding one, truncated to whole seconds,
// as the gate's verifier reads it.
type NumericDate int64

// UnmarshalJSON implements json.Unmarshaler.
func (d *NumericDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("decoding a time claim: %w", err)
	}
	f, err := n.Float64()
	if err != nil {
		return fmt.Errorf("decoding a time claim: %w", err)
	}
	*d = NumericDate(int64(f))
	return nil
}

// A2AAttestationClaims are the claims of an A2A verdict attestation.
type A2AAttestationClaims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt *int64 `json:"exp,omitempty"`
	TraceID   string `json:"jti"`
	A2A       struct {
		Version  string `json:"version"`
		Verdict  string `json:"verdict"`
		Engine   string `json:"engine"`
		Sender   string `json:"sender"`
		Receiver string `json:"receiver"`
	} `json:"qwed_a2a"`
}

// VerifyAttestation checks a decision attestation offline against the
// JWKS document jwks (GET /.well-known/jwks.json, HTTPClient.JWKS) at the
// time now, and returns its claims: what a relying party runs before it
// acts on a decision. The algorithm must be ES256 (none, HMAC and any
// other are refused before a key is used), the typ AttestationTyp, the
// kid a key of the set, the signature valid and low-S, an exp after now,
// the issuer "did:qwed:node:<id>".
func VerifyAttestation(token string, jwks []byte, now time.Time) (*AttestationClaims, error) {
	c := new(AttestationClaims)
	if err := verifyJWS(token, jwks, AttestationTyp, "did:qwed:node:", now, c, &c.Issuer, func() *int64 {
		if c.ExpiresAt == nil {
			return nil
		}
		exp := int64(*c.ExpiresAt)
		return &exp
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// VerifyA2AAttestation checks an A2A verdict attestation (attestation_jwt
// of A2AIntercept) as VerifyAttestation checks a decision's, with the typ
// A2AAttestationTyp and the issuer "did:qwed:a2a:<id>".
func VerifyA2AAttestation(token string, jwks []byte, now time.Time) (*A2AAttestationClaims, error) {
	c := new(A2AAttestationClaims)
	if err := verifyJWS(token, jwks, A2AAttestationTyp, "did:qwed:a2a:", now, c, &c.Issuer, func() *int64 { return c.ExpiresAt }); err != nil {
		return nil, err
	}
	return c, nil
}

// VerifyAttestation fetches the gate's JWKS and checks token against it
// now (the package function VerifyAttestation). To check many tokens, or
// with no gate reachable, keep the JWKS and call the package function.
func (c *HTTPClient) VerifyAttestation(ctx context.Context, token string) (*AttestationClaims, error) {
	jwks, err := c.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	return VerifyAttestation(token, jwks, time.Now())
}

var b64url = base64.RawURLEncoding.Strict()

// verifyJWS checks token and decodes its claims into claims; iss points
// into claims, exp reads its exp claim once decoded (nil: none).
func verifyJWS(token string, jwks []byte, typ, issuerPrefix string, now time.Time, claims any, iss *string, exp func() *int64) error {
	if len(token) > MaxAttestationBytes {
		return fmt.Errorf("%w: token of %d bytes exceeds %d", ErrAttestationMalformed, len(token), MaxAttestationBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: not a compact JWS", ErrAttestationMalformed)
	}
	var header map[string]any
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("%w: header: %w", ErrAttestationMalformed, err)
	}
	if _, ok := header["crit"]; ok {
		return fmt.Errorf("%w: critical header extensions are not supported", ErrAttestationMalformed)
	}
	if alg, _ := header["alg"].(string); alg != "ES256" {
		return fmt.Errorf("%w: alg %v", ErrAttestationAlgorithm, header["alg"])
	}
	if t, _ := header["typ"].(string); t != typ {
		return fmt.Errorf("%w: typ %v, want %q", ErrAttestationType, header["typ"], typ)
	}
	kid, _ := header["kid"].(string)
	keys, err := parseJWKS(jwks)
	if err != nil {
		return err
	}
	pub := keys[kid]
	if pub == nil {
		return fmt.Errorf("%w: kid %q", ErrAttestationKey, kid)
	}
	sig, err := b64url.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return fmt.Errorf("%w: not a 64-byte ES256 signature", ErrAttestationSignature)
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if s.Cmp(halfOrder) > 0 {
		return fmt.Errorf("%w: high-S signature (only s <= n/2 is accepted)", ErrAttestationSignature)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return ErrAttestationSignature
	}
	if err := decodeSegment(parts[1], claims); err != nil {
		return fmt.Errorf("%w: claims: %w", ErrAttestationMalformed, err)
	}
	if e := exp(); e != nil && !now.Before(time.Unix(*e, 0)) {
		return fmt.Errorf("%w: exp %s", ErrAttestationExpired, time.Unix(*e, 0).UTC().Format(time.RFC3339))
	}
	if !strings.HasPrefix(*iss, issuerPrefix) || len(*iss) == len(issuerPrefix) {
		return fmt.Errorf("%w: iss %q", ErrAttestationIssuer, *iss)
	}
	return nil
}

// halfOrder is n/2 of P-256: a signature's s above it is the high-S twin.
var halfOrder = new(big.Int).Rsh(elliptic.P256().Params().N, 1)

// decodeSegment decodes a base64url JSON segment into v. A member name
// repeated in its object, at any depth, exactly or in another case
// (strictjson's rule, as the gate's verifier applies it) is refused: the
// decoder would keep the last one, and match claims to fields without
// regard to case, where another verifier may read another.
func decodeSegment(seg string, v any) error {
	raw, err := b64url.DecodeString(seg)
	if err != nil {
		return err
	}
	var e *strictjson.Error
	if err := strictjson.Check(raw, nil); errors.As(err, &e) && e.Kind != strictjson.KindSyntax {
		return err
	}
	return json.Unmarshal(raw, v)
}

// parseJWKS returns the ES256 keys of a JWKS document by kid: keys whose
// kty is not EC are skipped; an EC key must be a P-256 point with a kid
// (use "sig" and alg "ES256" when present); a repeated kid or no usable key
// is ErrInvalidJWKS.
func parseJWKS(doc []byte) (map[string]*ecdsa.PublicKey, error) {
	if len(doc) > MaxJWKSBytes {
		return nil, fmt.Errorf("%w: document of %d bytes exceeds %d", ErrInvalidJWKS, len(doc), MaxJWKSBytes)
	}
	var set struct {
		Keys []struct {
			Kty, Crv, X, Y, Use, Alg, Kid string
		} `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJWKS, err)
	}
	keys := make(map[string]*ecdsa.PublicKey, len(set.Keys))
	for i, k := range set.Keys {
		if k.Kty != "EC" {
			continue
		}
		if k.Kid == "" || k.Crv != "P-256" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "ES256") {
			return nil, fmt.Errorf("%w: key %d is not an ES256 signing key with a kid", ErrInvalidJWKS, i)
		}
		x, errX := b64url.DecodeString(k.X)
		y, errY := b64url.DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, fmt.Errorf("%w: key %d: x and y must be 32-byte base64url coordinates", ErrInvalidJWKS, i)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %w", ErrInvalidJWKS, i, err)
		}
		if keys[k.Kid] != nil {
			return nil, fmt.Errorf("%w: kid %q appears more than once", ErrInvalidJWKS, k.Kid)
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no EC P-256 signing key", ErrInvalidJWKS)
	}
	return keys, nil
}
