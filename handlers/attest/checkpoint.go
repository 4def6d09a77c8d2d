package attest

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/domain"
)

// CheckpointTyp is the JOSE "typ" header of a log checkpoint signature
// (issue 5). It differs from Typ, so a checkpoint can never pass for a
// decision attestation, nor the reverse.
const CheckpointTyp = "agentgate-checkpoint+jwt"

// CheckpointClaims are the claims of a checkpoint token. Field order fixes
// the JSON encoding, so equal claims encode to equal bytes.
type CheckpointClaims struct {
	// Issuer is IssuerPrefix followed by the signing node's ID.
	Issuer string `json:"iss"`
	// IssuedAt is the checkpoint event's time, in Unix seconds.
	IssuedAt  int64  `json:"iat"`
	Partition int32  `json:"partition"`
	Seq       uint64 `json:"seq"`
	Head      string `json:"head"`
	// NextEvents and NextIntervalMillis are the policy under which the
	// next checkpoint is due (domain.CheckpointPolicy).
	NextEvents         int64 `json:"next_events"`
	NextIntervalMillis int64 `json:"next_interval_ms"`
}

// NewCheckpointClaims returns the token claims of c issued by node nodeID.
func NewCheckpointClaims(nodeID string, c domain.CheckpointClaims) CheckpointClaims {
	return CheckpointClaims{
		Issuer: IssuerPrefix + nodeID, IssuedAt: c.IssuedAt.Unix(),
		Partition: c.Partition, Seq: c.Seq, Head: c.Head,
		NextEvents: c.Next.Events, NextIntervalMillis: time.Duration(c.Next.Interval).Milliseconds(),
	}
}

// Matches reports whether the token's claims are those of checkpoint ck
// recorded at time t on partition p.
func (c *CheckpointClaims) Matches(p int32, t time.Time, ck *domain.LogCheckpoint) bool {
	return c.Partition == p && c.Seq == ck.Seq && c.Head == ck.Head && c.IssuedAt == t.Unix() &&
		c.NextEvents == ck.Next.Events && c.NextIntervalMillis == time.Duration(ck.Next.Interval).Milliseconds()
}

// GetExpirationTime implements jwt.Claims; checkpoints carry no exp.
func (c *CheckpointClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuedAt implements jwt.Claims.
func (c *CheckpointClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}

// GetNotBefore implements jwt.Claims; checkpoints carry no nbf.
func (c *CheckpointClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims.
func (c *CheckpointClaims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims; checkpoints carry no sub.
func (c *CheckpointClaims) GetSubject() (string, error) { return "", nil }

// GetAudience implements jwt.Claims; checkpoints carry no aud.
func (c *CheckpointClaims) GetAudience() (jwt.ClaimStrings, error) { return nil, nil }

// SignCheckpoint implements domain.CheckpointSigner with the signer's key
// (the active key, or the fixed kid of a SignerFor signer): a compact JWS
// with header {"alg":"ES256","kid":…,"typ":CheckpointTyp}, deterministic
// (RFC 6979) like every token of this package.
func (s *signer) SignCheckpoint(c domain.CheckpointClaims) (string, error) {
	if s.nodeID == "" {
		return "", errors.New("signing checkpoint: empty node ID")
	}
	if c.IssuedAt.IsZero() {
		return "", errors.New("signing checkpoint: claims have no issued-at time")
	}
	claims := NewCheckpointClaims(s.nodeID, c)
	out, err := s.token(CheckpointTyp, &claims)
	if err != nil {
		return "", fmt.Errorf("signing checkpoint: %w", err)
	}
	return s.asRecorded(out), nil
}

var _ domain.CheckpointSigner = (*signer)(nil)

// VerifyCheckpoint checks a checkpoint token of the log against the set
// and returns its claims: the checks of VerifyRecord, with typ
// CheckpointTyp. A checkpoint is only ever read from the hash-chained log,
// whose chain binds its bytes, so, like VerifyRecord, it accepts a
// signature's high-S encoding (checkpoints signed before signatures were
// low-S). Failures wrap the package's sentinel errors.
func (s *KeySet) VerifyCheckpoint(token string) (*CheckpointClaims, error) {
	claims := &CheckpointClaims{}
	if err := s.parse(token, CheckpointTyp, IssuerPrefix, claims, asRecord); err != nil {
		return nil, err
	}
	return claims, nil
}
