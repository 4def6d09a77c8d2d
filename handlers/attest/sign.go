package attest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/domain"
)

// Typ is the JOSE "typ" header of an attestation (RFC 8725 §3.11 explicit
// typing), so an attestation cannot be confused with another kind of JWT.
const Typ = "qwed-attestation+jwt"

// IssuerPrefix starts the iss claim: "did:qwed:node:<node ID>".
const IssuerPrefix = "did:qwed:node:"

// Claims are the claims of an attestation token. Field order fixes the JSON
// encoding, so equal claims encode to equal bytes.
type Claims struct {
	// Issuer is IssuerPrefix followed by the signing node's ID.
	Issuer string `json:"iss"`
	// Subject is the agent DID.
	Subject string `json:"sub"`
	// ID is the action ID the decision answers.
	ID string `json:"jti"`
	// IssuedAt is the decision time, in Unix seconds.
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is never set by this package's signer (an attestation is
	// a permanent record), but Verify refuses a token whose exp has passed.
	ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`

	// Decision, AgentID and RiskLevel are always set on a gate decision's
	// attestation and absent from a POST /verify attestation (Kind
	// "qwed.verify"), which binds a request to an engine outcome instead.
	Decision       domain.Decision `json:"decision,omitempty"`
	RequestDigest  string          `json:"request_digest"`
	AgentID        string          `json:"agent_id,omitempty"`
	ConversationID string          `json:"conversation_id,omitempty"`
	Step           int64           `json:"step,omitempty"`
	Seq            uint64          `json:"seq"`
	Partition      int32           `json:"partition"`
	RiskLevel      domain.Risk     `json:"risk_level,omitempty"`
	// Kind, Engine, Status, OutcomeDigest and CorrectedDigest bind an
	// engine verdict (see domain.AttestationClaims); absent without one.
	Kind            string `json:"kind,omitempty"`
	Engine          string `json:"engine,omitempty"`
	Status          string `json:"status,omitempty"`
	OutcomeDigest   string `json:"outcome_digest,omitempty"`
	CorrectedDigest string `json:"corrected_digest,omitempty"`
}

// NewClaims returns the token claims of c issued by node nodeID.
func NewClaims(nodeID string, c domain.AttestationClaims) Claims {
	return Claims{
		Issuer:          IssuerPrefix + nodeID,
		Subject:         c.Subject,
		ID:              c.ActionID,
		IssuedAt:        c.IssuedAt.Unix(),
		Decision:        c.Decision,
		RequestDigest:   c.RequestDigest,
		AgentID:         c.AgentID,
		ConversationID:  c.ConversationID,
		Step:            c.Step,
		Seq:             c.Seq,
		Partition:       c.Partition,
		RiskLevel:       c.Risk,
		Kind:            c.Kind,
		Engine:          c.Engine,
		Status:          c.Status,
		OutcomeDigest:   c.OutcomeDigest,
		CorrectedDigest: c.CorrectedDigest,
	}
}

// Attestation returns the domain claims carried by the token (IssuedAt at
// second precision, in UTC).
func (c *Claims) Attestation() domain.AttestationClaims {
	return domain.AttestationClaims{
		Subject:         c.Subject,
		ActionID:        c.ID,
		IssuedAt:        time.Unix(c.IssuedAt, 0).UTC(),
		Decision:        c.Decision,
		RequestDigest:   c.RequestDigest,
		AgentID:         c.AgentID,
		ConversationID:  c.ConversationID,
		Step:            c.Step,
		Seq:             c.Seq,
		Partition:       c.Partition,
		Risk:            c.RiskLevel,
		Kind:            c.Kind,
		Engine:          c.Engine,
		Status:          c.Status,
		OutcomeDigest:   c.OutcomeDigest,
		CorrectedDigest: c.CorrectedDigest,
	}
}

// GetExpirationTime implements jwt.Claims.
func (c *Claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }

// GetIssuedAt implements jwt.Claims.
func (c *Claims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}

// GetNotBefore implements jwt.Claims; attestations carry no nbf.
func (c *Claims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims.
func (c *Claims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims.
func (c *Claims) GetSubject() (string, error) { return c.Subject, nil }

// GetAudience implements jwt.Claims; attestations carry no aud.
func (c *Claims) GetAudience() (jwt.ClaimStrings, error) { return nil, nil }

// deterministicES256 is the ES256 signing method with RFC 6979 nonces.
// golang-jwt's own ES256 draws a random nonce; verification is the same, so
// Verify delegates to it.
type deterministicES256 struct{}

var signingMethod jwt.SigningMethod = deterministicES256{}

// Alg implements jwt.SigningMethod.
func (deterministicES256) Alg() string { return "ES256" }

// Verify implements jwt.SigningMethod.
func (deterministicES256) Verify(signingString string, sig []byte, key any) error {
	return jwt.SigningMethodES256.Verify(signingString, sig, key)
}

// Sign implements jwt.SigningMethod: the SHA-256 digest of signingString
// signed with an RFC 6979 nonce (crypto/ecdsa with a nil random source),
// returned as the 64-byte r||s of RFC 7518 §3.4.
func (deterministicES256) Sign(signingString string, key any) ([]byte, error) {
	priv, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing ES256: key is %T, not *ecdsa.PrivateKey", key)
	}
	digest := sha256.Sum256([]byte(signingString))
	der, err := priv.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing ES256: %w", err)
	}
	var rs struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &rs)
	if err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("signing ES256: decoding ASN.1 signature: %w", errors.Join(err, errTrailingASN1(rest)))
	}
	out := make([]byte, 2*coordBytes)
	rs.R.FillBytes(out[:coordBytes])
	rs.S.FillBytes(out[coordBytes:])
	return out, nil
}

func errTrailingASN1(rest []byte) error {
	if len(rest) == 0 {
		return nil
	}
	return fmt.Errorf("%d trailing bytes", len(rest))
}

// signer signs with a keyring's active key, or with one fixed kid.
type signer struct {
	ring   *Keyring
	nodeID string
	kid    string // empty: the active key at each Sign
}

// Signer returns the domain.Signer of node nodeID: it signs with the key
// that is active when Sign is called (a Rotate takes effect at once). Its
// tokens are deterministic: the same claims and key give the same token.
func (kr *Keyring) Signer(nodeID string) domain.Signer {
	return &signer{ring: kr, nodeID: nodeID}
}

// SignerFor returns, for replay verification, a function that gives the
// signer of the key that signed recordedToken (found by the kid of its
// header, whose signature is not checked here). If the token is empty,
// unparseable or names a key the ring does not hold, the active key signs:
// a re-signed token then differs from the recorded one, which the replay
// reports.
func (kr *Keyring) SignerFor(nodeID string) func(recordedToken string) domain.Signer {
	return func(recordedToken string) domain.Signer {
		kid, _ := headerKID(recordedToken)
		if kid != "" && kr.hasKID(kid) {
			return &signer{ring: kr, nodeID: nodeID, kid: kid}
		}
		return &signer{ring: kr, nodeID: nodeID}
	}
}

func (kr *Keyring) hasKID(kid string) bool {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return kr.byKID[kid] != nil
}

// Sign implements domain.Signer. It fails if the node ID is empty or the
// claims have no IssuedAt.
func (s *signer) Sign(c domain.AttestationClaims) (string, error) {
	if s.nodeID == "" {
		return "", errors.New("signing attestation: empty node ID")
	}
	if c.IssuedAt.IsZero() {
		return "", errors.New("signing attestation: claims have no issued-at time")
	}
	claims := NewClaims(s.nodeID, c)
	out, err := s.token(Typ, &claims)
	if err != nil {
		return "", fmt.Errorf("signing attestation: %w", err)
	}
	return out, nil
}

// token signs claims as a compact JWS with header {"alg":"ES256","kid":…,
// "typ":typ} with the signer's key, deterministically (RFC 6979).
func (s *signer) token(typ string, claims jwt.Claims) (string, error) {
	k := s.ring.key(s.kid)
	tok := jwt.NewWithClaims(signingMethod, claims)
	tok.Header["typ"] = typ
	tok.Header["kid"] = k.kid
	return tok.SignedString(k.priv)
}
