package attest

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TreeHeadTyp is the JOSE "typ" header of a signed tree head: the
// statement with which a tenant-scoped compliance bundle binds an agent's
// events to the log (issue 11). It differs from Typ and CheckpointTyp, so
// no token of one kind passes for another.
const TreeHeadTyp = "agentgate-tree+jwt"

// TreeHeadClaims are the claims of a tree head: the RFC 6962 Merkle tree
// hash of a partition's first Size events (each leaf is the 32-byte
// SHA-256 of an event's bytes, the chain hash), the chain hash of the
// last of them, and the agent's events among them: how many and the hex
// SHA-256 of their list (see handlers/history/report). Field order fixes the
// JSON encoding.
type TreeHeadClaims struct {
	// Issuer is IssuerPrefix followed by the signing node's ID.
	Issuer string `json:"iss"`
	// IssuedAt is the time of the position the tree ends at (not the
	// time of signing), in Unix seconds, so that the same log gives the
	// same token.
	IssuedAt  int64  `json:"iat"`
	Partition int32  `json:"partition"`
	Size      uint64 `json:"size"`
	Root      string `json:"root"`
	Head      string `json:"head"`
	// Time is the position's time, RFC 3339 with nanoseconds.
	Time        string `json:"time"`
	AgentID     string `json:"agent_id"`
	AgentEvents uint64 `json:"agent_events"`
	AgentDigest string `json:"agent_events_digest"`
	// PeriodFrom and PeriodTo are the report's period, RFC 3339.
	PeriodFrom string `json:"from"`
	PeriodTo   string `json:"to"`
}

// GetExpirationTime implements jwt.Claims; a tree head carries no exp.
func (c *TreeHeadClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuedAt implements jwt.Claims.
func (c *TreeHeadClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}

// GetNotBefore implements jwt.Claims; a tree head carries no nbf.
func (c *TreeHeadClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims.
func (c *TreeHeadClaims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims; a tree head carries no sub.
func (c *TreeHeadClaims) GetSubject() (string, error) { return "", nil }

// GetAudience implements jwt.Claims; a tree head carries no aud.
func (c *TreeHeadClaims) GetAudience() (jwt.ClaimStrings, error) { return nil, nil }

// SignTreeHead signs c with the keyring's active key as node nodeID (it
// sets c.Issuer): a compact JWS with header {"alg":"ES256","kid":…,
// "typ":TreeHeadTyp}, deterministic (RFC 6979) and low-S like every token
// of this package.
func (kr *Keyring) SignTreeHead(nodeID string, c TreeHeadClaims) (string, error) {
	if nodeID == "" {
		return "", errors.New("signing tree head: empty node ID")
	}
	c.Issuer = IssuerPrefix + nodeID
	s := &signer{ring: kr, nodeID: nodeID}
	out, err := s.token(TreeHeadTyp, &c)
	if err != nil {
		return "", fmt.Errorf("signing tree head: %w", err)
	}
	return out, nil
}

// VerifyTreeHead checks a tree head token against the set and returns its
// claims: ES256 only, kid in the set, a valid low-S signature, strict
// decoding, a node issuer, typ TreeHeadTyp. Failures wrap the package's
// sentinel errors.
func (s *KeySet) VerifyTreeHead(token string) (*TreeHeadClaims, error) {
	claims := &TreeHeadClaims{}
	if err := s.parse(token, TreeHeadTyp, IssuerPrefix, claims, asToken); err != nil {
		return nil, err
	}
	return claims, nil
}
