package attest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ExecuteTyp is the JOSE "typ" header of an execute decision: the token
// the adapter sends a business in X-Agentgate-Decision with each call
// (issue 14). It differs from every other typ of this package, so an
// execute decision never passes for an attestation, a checkpoint, a tree
// head or an A2A verdict, nor any of them for it.
const ExecuteTyp = "qwed-execute-decision+jwt"

// ExecuteValidity is how long an execute decision authorises its call
// after the decision: exp = iat + ExecuteValidity. Fixed (not the signer's
// TTL), so that a decision's token depends on its claims alone and every
// attempt of one call, before and after a restart, sends the same bytes.
const ExecuteValidity = 24 * time.Hour

// ExecuteDecision is the private "qwed_execute" claim: what the gate
// decided about one execute. Field order fixes the encoding.
type ExecuteDecision struct {
	TransactionID string `json:"transaction_id"`
	Consumer      string `json:"consumer"`
	AgentID       string `json:"agent_id"`
	BusinessID    string `json:"business_id"`
	AmountCents   int64  `json:"amount_cents"`
	Currency      string `json:"currency"`
	// RequestHash is "sha256:" + the hex SHA-256 of the RFC 8785 form of
	// the request the business receives as the call's body: the business
	// recomputes it to check that the body is the one decided.
	RequestHash string `json:"request_hash"`
	// DecidedAt is when the transaction became executing, RFC 3339 with
	// nanoseconds, UTC.
	DecidedAt string `json:"decided_at"`
}

// ExecuteClaims are the claims of an execute decision. Field order fixes
// the JSON encoding, so equal claims encode to equal bytes.
type ExecuteClaims struct {
	// Issuer is IssuerPrefix followed by the signing node's ID.
	Issuer string `json:"iss"`
	// Subject is the transaction ID (also the call's Idempotency-Key).
	Subject string `json:"sub"`
	// Audience is the business ID: a token for one business is no
	// authority at another.
	Audience string `json:"aud"`
	// IssuedAt is DecidedAt in Unix seconds; ExpiresAt is IssuedAt +
	// ExecuteValidity.
	IssuedAt  int64           `json:"iat"`
	ExpiresAt int64           `json:"exp"`
	Execute   ExecuteDecision `json:"qwed_execute"`
}

// NewExecuteClaims returns the claims of decision d issued by node nodeID
// at decidedAt. It fails when the node ID or a string member of d is
// empty, or decidedAt is zero (fail closed: no call leaves with an
// incomplete decision).
func NewExecuteClaims(nodeID string, d ExecuteDecision, decidedAt time.Time) (ExecuteClaims, error) {
	if decidedAt.IsZero() {
		return ExecuteClaims{}, errors.New("the decision has no time")
	}
	d.DecidedAt = decidedAt.UTC().Format(time.RFC3339Nano)
	if err := checkExecute(nodeID, &d); err != nil {
		return ExecuteClaims{}, err
	}
	iat := decidedAt.Unix()
	return ExecuteClaims{
		Issuer: IssuerPrefix + nodeID, Subject: d.TransactionID, Audience: d.BusinessID,
		IssuedAt: iat, ExpiresAt: iat + int64(ExecuteValidity/time.Second), Execute: d,
	}, nil
}

// checkExecute fails when the node ID or a string member of d is empty,
// or the amount is negative.
func checkExecute(nodeID string, d *ExecuteDecision) error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"node ID", nodeID}, {"transaction ID", d.TransactionID}, {"consumer", d.Consumer},
		{"agent ID", d.AgentID}, {"business ID", d.BusinessID}, {"currency", d.Currency},
		{"request hash", d.RequestHash}, {"decision time", d.DecidedAt},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the decision has no %s", strings.Join(missing, ", "))
	}
	if d.AmountCents < 0 {
		return fmt.Errorf("the decision's amount %d is negative", d.AmountCents)
	}
	return nil
}

// GetExpirationTime implements jwt.Claims.
func (c *ExecuteClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.ExpiresAt, 0)), nil
}

// GetIssuedAt implements jwt.Claims.
func (c *ExecuteClaims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}

// GetNotBefore implements jwt.Claims; execute decisions carry no nbf.
func (c *ExecuteClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims.
func (c *ExecuteClaims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims.
func (c *ExecuteClaims) GetSubject() (string, error) { return c.Subject, nil }

// GetAudience implements jwt.Claims.
func (c *ExecuteClaims) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{c.Audience}, nil
}

// SignExecute signs the decision d, made at decidedAt, with the keyring's
// active key as node nodeID: a compact JWS with header {"alg":"ES256",
// "kid":…,"typ":ExecuteTyp} over ExecuteClaims, deterministic (RFC 6979)
// and low-S like every token of this package, so the same decision signed
// again (a retried call, a call made again after a restart) is the same
// token while the active key is. It fails on incomplete claims and on a
// token longer than MaxTokenBytes.
func (kr *Keyring) SignExecute(nodeID string, d ExecuteDecision, decidedAt time.Time) (string, error) {
	claims, err := NewExecuteClaims(nodeID, d, decidedAt)
	if err != nil {
		return "", fmt.Errorf("signing execute decision: %w", err)
	}
	s := &signer{ring: kr, nodeID: nodeID}
	out, err := s.token(ExecuteTyp, &claims)
	if err != nil {
		return "", fmt.Errorf("signing execute decision: %w", err)
	}
	if len(out) > MaxTokenBytes {
		return "", fmt.Errorf("signing execute decision: token of %d bytes exceeds %d", len(out), MaxTokenBytes)
	}
	return out, nil
}

// VerifyExecute checks an execute decision as a business receiving it
// does, against the set, as of time now, and returns its claims: the size
// bound, alg ES256, typ ExecuteTyp (any other token type is ErrType), a
// kid of the set, a valid low-S signature, strictly decoded claims, an iss
// of IssuerPrefix and a node ID, every claim present, sub the transaction
// ID, aud the business ID, exp = iat + ExecuteValidity, and now before exp
// (else ErrExpired). The caller passes the clock: the check never reads
// it. Failures wrap the package's sentinel errors.
//
// Success means the gate decided this execute; the business then checks
// that aud is itself, that the Idempotency-Key is sub, and that the
// request_hash is the one of the body it received.
func (s *KeySet) VerifyExecute(token string, now time.Time) (*ExecuteClaims, error) {
	claims := &ExecuteClaims{}
	if err := s.parse(token, ExecuteTyp, IssuerPrefix, claims, asOffline); err != nil {
		return nil, err
	}
	if err := checkExecute(strings.TrimPrefix(claims.Issuer, IssuerPrefix), &claims.Execute); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if claims.Subject != claims.Execute.TransactionID || claims.Audience != claims.Execute.BusinessID {
		return nil, fmt.Errorf("%w: sub %q and aud %q are not the decision's transaction and business", ErrMalformed, claims.Subject, claims.Audience)
	}
	if claims.ExpiresAt != claims.IssuedAt+int64(ExecuteValidity/time.Second) {
		return nil, fmt.Errorf("%w: exp %d is not iat %d + %s", ErrMalformed, claims.ExpiresAt, claims.IssuedAt, ExecuteValidity)
	}
	if now.Unix() >= claims.ExpiresAt {
		return nil, fmt.Errorf("%w: exp %s, now %s", ErrExpired,
			time.Unix(claims.ExpiresAt, 0).UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return claims, nil
}
