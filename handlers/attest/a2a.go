package attest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/domain/a2a"
)

// A2ATyp is the JOSE "typ" header of a QWED A2A verdict attestation. It
// differs from Typ and CheckpointTyp, so a verdict's attestation can never
// pass for a decision attestation or a checkpoint, nor the reverse.
const A2ATyp = "qwed-a2a-attestation+jwt"

// A2AIssuerPrefix starts the iss claim of an A2A attestation:
// "did:qwed:a2a:<node ID>" (QWED A2A "Identity").
const A2AIssuerPrefix = "did:qwed:a2a:"

// A2AValidity is how long an A2A attestation is valid after its iat: its
// exp is iat + A2AValidity (QWED A2A "Expiry", 24 hours). It is fixed, not
// the signer's TTL, so a verdict's token depends on its claims alone.
const A2AValidity = 24 * time.Hour

// A2AVersion is the version of the qwed_a2a claim.
const A2AVersion = "1.0"

// A2AVerdictClaim is the private "qwed_a2a" claim: what the gate decided
// about one agent-to-agent message. Field order fixes the encoding.
type A2AVerdictClaim struct {
	Version  string     `json:"version"`
	Verdict  a2a.Status `json:"verdict"`
	Engine   string     `json:"engine"`
	Sender   string     `json:"sender"`
	Receiver string     `json:"receiver"`
}

// A2AClaims are the claims of an A2A verdict attestation, in the order of
// QWED A2A's "Attestations" example. Field order fixes the JSON encoding,
// so equal claims encode to equal bytes.
type A2AClaims struct {
	// Issuer is A2AIssuerPrefix followed by the signing node's ID.
	Issuer string `json:"iss"`
	// Subject is "sha256:" + the hex SHA-256 of the RFC 8785 form of the
	// message's payload: what a receiver recomputes to detect tampering.
	Subject string `json:"sub"`
	// IssuedAt is the decision time (the verdict event's), in Unix seconds.
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is IssuedAt + A2AValidity, in Unix seconds.
	ExpiresAt int64 `json:"exp"`
	// ID is the verdict's trace ID.
	ID  string          `json:"jti"`
	A2A A2AVerdictClaim `json:"qwed_a2a"`
}

// NewA2AClaims returns the token claims of c issued by node nodeID. It
// fails (fail closed: no verdict is returned unsigned, so none is signed
// incomplete) when the node ID or any claim is empty or IssuedAt is zero.
func NewA2AClaims(nodeID string, c a2a.Claims) (A2AClaims, error) {
	if err := checkA2A(nodeID, c); err != nil {
		return A2AClaims{}, err
	}
	if c.IssuedAt.IsZero() {
		return A2AClaims{}, errors.New("claims have no issued-at time")
	}
	iat := c.IssuedAt.Unix()
	return A2AClaims{
		Issuer:    A2AIssuerPrefix + nodeID,
		Subject:   c.Subject,
		IssuedAt:  iat,
		ExpiresAt: iat + int64(A2AValidity/time.Second),
		ID:        c.TraceID,
		A2A: A2AVerdictClaim{
			Version: A2AVersion, Verdict: c.Verdict, Engine: c.Engine,
			Sender: c.Sender, Receiver: c.Receiver,
		},
	}, nil
}

// checkA2A fails when the node ID or a string claim of c is empty.
func checkA2A(nodeID string, c a2a.Claims) error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"node ID", nodeID}, {"subject", c.Subject}, {"trace ID", c.TraceID}, {"verdict", string(c.Verdict)},
		{"engine", c.Engine}, {"sender", c.Sender}, {"receiver", c.Receiver},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("claims have no %s", strings.Join(missing, ", "))
	}
	return nil
}

// Claims returns the a2a claims carried by the token (IssuedAt at second
// precision, in UTC).
func (c *A2AClaims) Claims() a2a.Claims {
	return a2a.Claims{
		Subject: c.Subject, TraceID: c.ID, IssuedAt: time.Unix(c.IssuedAt, 0).UTC(),
		Verdict: c.A2A.Verdict, Engine: c.A2A.Engine, Sender: c.A2A.Sender, Receiver: c.A2A.Receiver,
	}
}

// GetExpirationTime implements jwt.Claims.
func (c *A2AClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.ExpiresAt, 0)), nil
}

// GetIssuedAt implements jwt.Claims.
func (c *A2AClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}

// GetNotBefore implements jwt.Claims; A2A attestations carry no nbf.
func (c *A2AClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims.
func (c *A2AClaims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims.
func (c *A2AClaims) GetSubject() (string, error) { return c.Subject, nil }

// GetAudience implements jwt.Claims; A2A attestations carry no aud.
func (c *A2AClaims) GetAudience() (jwt.ClaimStrings, error) { return nil, nil }

// SignA2A implements a2a.Signer with the signer's key (the active key, or
// the recorded key of a SignerFor signer): a compact JWS with header
// {"alg":"ES256","kid":…,"typ":A2ATyp} over A2AClaims, deterministic
// (RFC 6979) like every token of this package, so a replayed verdict
// reproduces its token byte for byte. It fails on incomplete claims and on
// a token longer than MaxTokenBytes (which no verifier would accept).
func (s *signer) SignA2A(c a2a.Claims) (string, error) {
	claims, err := NewA2AClaims(s.nodeID, c)
	if err != nil {
		return "", fmt.Errorf("signing A2A attestation: %w", err)
	}
	out, err := s.token(A2ATyp, &claims)
	if err != nil {
		return "", fmt.Errorf("signing A2A attestation: %w", err)
	}
	if len(out) > MaxTokenBytes {
		return "", fmt.Errorf("signing A2A attestation: token of %d bytes exceeds %d", len(out), MaxTokenBytes)
	}
	return out, nil
}

var _ a2a.Signer = (*signer)(nil)

// VerifyA2A checks an A2A verdict attestation offline against the set, as
// of time now, and returns its claims: the size bound, alg ES256 (any
// other refused before a key is touched), typ A2ATyp (a decision
// attestation or a checkpoint is ErrType), a kid of the set, a valid
// low-S signature, strictly decoded claims, an iss of A2AIssuerPrefix and
// a node ID, every claim present with qwed_a2a version A2AVersion, and
// now before exp (else ErrExpired). The caller passes the clock: the
// check never reads it. Failures wrap the package's sentinel errors.
//
// Success means the gate signed these claims, not that the message was
// forwarded: a relying party acts on A2A.Verdict and checks that
// A2A.Receiver is itself, and A2A.Sender the agent the message came from.
func (s *KeySet) VerifyA2A(token string, now time.Time) (*A2AClaims, error) {
	claims := &A2AClaims{}
	if err := s.parse(token, A2ATyp, A2AIssuerPrefix, claims, asOffline); err != nil {
		return nil, err
	}
	if err := checkA2A(strings.TrimPrefix(claims.Issuer, A2AIssuerPrefix), claims.Claims()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if claims.A2A.Version != A2AVersion {
		return nil, fmt.Errorf("%w: qwed_a2a version %q, want %q", ErrMalformed, claims.A2A.Version, A2AVersion)
	}
	if claims.ExpiresAt <= claims.IssuedAt {
		return nil, fmt.Errorf("%w: exp %d is not after iat %d", ErrMalformed, claims.ExpiresAt, claims.IssuedAt)
	}
	if now.Unix() >= claims.ExpiresAt {
		return nil, fmt.Errorf("%w: exp %s, now %s", ErrExpired,
			time.Unix(claims.ExpiresAt, 0).UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return claims, nil
}

// TokenType returns the typ of token's JOSE header, unverified ("" if the
// header does not decode): it says which Verify applies (Typ: KeySet.Verify,
// A2ATyp: KeySet.VerifyA2A), never whether the token is valid.
func TokenType(token string) string {
	if len(token) > MaxTokenBytes {
		return ""
	}
	seg, _, _ := strings.Cut(token, ".")
	fields, err := decodeHeader(seg)
	if err != nil {
		return ""
	}
	typ, _ := fields["typ"].(string)
	return typ
}
