package attest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
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
	// ExpiresAt is IssuedAt plus the signer's TTL (Keyring.SignerTTL);
	// absent when the TTL is 0. Verify refuses a token whose exp has
	// passed; VerifyRecord (an audit of the log) does not, since an expired
	// attestation is still the record of a decision.
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
// returned as the 64-byte r||s of RFC 7518 §3.4 with s in its low form
// (s <= n/2): of the two signatures (r, s) and (r, n-s) that verify, only
// the low one is issued, and Verify accepts only it, so a token cannot be
// re-encoded into a second valid token for the same claims.
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
	if rs.S.Cmp(halfOrder) > 0 {
		rs.S.Sub(priv.Curve.Params().N, rs.S)
	}
	out := make([]byte, 2*coordBytes)
	rs.R.FillBytes(out[:coordBytes])
	rs.S.FillBytes(out[coordBytes:])
	return out, nil
}

// halfOrder is n/2 for P-256: a signature's s above it is high-S.
var halfOrder = new(big.Int).Rsh(elliptic.P256().Params().N, 1)

// highS reports whether the r||s signature sig has s > n/2. A signature of
// the wrong length is not high-S (it fails verification anyway).
func highS(sig []byte) bool {
	if len(sig) != 2*coordBytes {
		return false
	}
	return new(big.Int).SetBytes(sig[coordBytes:]).Cmp(halfOrder) > 0
}

// twin returns token with its signature's s replaced by n-s: the other
// valid encoding of the same signature ("" if token is not a compact JWS
// with a 64-byte signature).
func twin(token string) string {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return ""
	}
	sig, err := b64.DecodeString(token[i+1:])
	if err != nil || len(sig) != 2*coordBytes {
		return ""
	}
	s := new(big.Int).SetBytes(sig[coordBytes:])
	s.Sub(elliptic.P256().Params().N, s)
	s.FillBytes(sig[coordBytes:])
	return token[:i+1] + b64.EncodeToString(sig)
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
	// ttl is how long an attestation is valid after its iat (its exp
	// claim); 0 issues no exp. Checkpoints never carry one.
	ttl time.Duration
	// recorded, for a replay signer, are the tokens the log recorded for
	// the event being re-decided: a token signed before signatures were
	// low-S is reproduced in its recorded (high-S) encoding.
	recorded []string
}

// DefaultAttestationTTL is the validity of an attestation when serve is
// given none: the 24 hours of the QWED A2A specification's "Expiry".
const DefaultAttestationTTL = 24 * time.Hour

// Signer returns the domain.Signer of node nodeID: it signs with the key
// that is active when Sign is called (a Rotate takes effect at once) and
// issues attestations without exp. Its tokens are deterministic: the same
// claims and key give the same token.
func (kr *Keyring) Signer(nodeID string) domain.Signer { return kr.SignerTTL(nodeID, 0) }

// SignerTTL is Signer whose attestations expire ttl after their iat (the
// exp claim; 0: none). The TTL is the signer's, not the decision's: a
// replay re-signs with the TTL the recorded token carries.
func (kr *Keyring) SignerTTL(nodeID string, ttl time.Duration) domain.Signer {
	return &signer{ring: kr, nodeID: nodeID, ttl: max(ttl, 0)}
}

// SignerFor returns, for replay verification, a function that gives the
// signer that reproduces the recorded tokens of one event: the key that
// signed the first of them (found by the kid of its header, whose
// signature is not checked here) and the TTL it carries (exp - iat). If
// there is no token, or it is unparseable or names a key the ring does not
// hold, the active key signs without exp: a re-signed token then differs
// from the recorded one, which the replay reports. A recorded token whose
// signature is the high-S encoding of the one the signer makes (issued
// before signatures were low-S) is reproduced as recorded.
func (kr *Keyring) SignerFor(nodeID string) func(recordedTokens ...string) domain.Signer {
	return func(recordedTokens ...string) domain.Signer {
		s := &signer{ring: kr, nodeID: nodeID, recorded: recordedTokens}
		for _, tok := range recordedTokens {
			if tok == "" {
				continue
			}
			if kid, _ := headerKID(tok); kid != "" && kr.hasKID(kid) {
				s.kid = kid
			}
			s.ttl = recordedTTL(tok)
			break
		}
		return s
	}
}

// recordedTTL is exp - iat of an attestation token, unverified (0 when it
// has no exp or does not decode).
func recordedTTL(token string) time.Duration {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return 0
	}
	raw, err := b64.DecodeString(parts[1])
	if err != nil {
		return 0
	}
	var c struct {
		IssuedAt  int64  `json:"iat"`
		ExpiresAt *int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &c) != nil || c.ExpiresAt == nil || *c.ExpiresAt < c.IssuedAt {
		return 0
	}
	return time.Duration(*c.ExpiresAt-c.IssuedAt) * time.Second
}

// asRecorded returns the recorded encoding of tok when the signer replays
// an event whose recorded tokens hold tok's high-S twin, and tok otherwise.
func (s *signer) asRecorded(tok string) string {
	if len(s.recorded) == 0 {
		return tok
	}
	if t := twin(tok); t != "" && slices.Contains(s.recorded, t) {
		return t
	}
	return tok
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
	if s.ttl > 0 {
		claims.ExpiresAt = jwt.NewNumericDate(time.Unix(claims.IssuedAt, 0).Add(s.ttl))
	}
	out, err := s.token(Typ, &claims)
	if err != nil {
		return "", fmt.Errorf("signing attestation: %w", err)
	}
	return s.asRecorded(out), nil
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
