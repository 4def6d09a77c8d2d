package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/agentgate/agentgate/domain"
)

// HashSecret returns the hex SHA-256 of a token or key: the only form in
// which secrets are stored or logged.
func HashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// NewSecret mints a secret: prefix + base64url of 32 random bytes.
func NewSecret(prefix string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing a secret: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Submitter is what the offline credential commands need of a worker.
type Submitter interface {
	Submit(context.Context, *domain.Command) (*domain.Event, error)
}

// submitAdmin records cmd as the admin's (source agentgate/keys, id) and
// returns its event, or the refusal as an error.
func submitAdmin(ctx context.Context, w Submitter, id string, cmd *domain.Command) (*domain.Event, error) {
	cmd.Principal = domain.AdminPrincipal
	cmd.Request = domain.RequestID{Source: "agentgate/keys", ID: id}
	ev, err := w.Submit(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", cmd.Type, err)
	}
	if ev == nil || ev.Error != nil {
		msg := "no event"
		if ev != nil {
			msg = ev.Error.Error()
		}
		return nil, fmt.Errorf("recording %s: refused: %s", cmd.Type, msg)
	}
	return ev, nil
}

// IssueKey mints an API key for a principal and records its hash through
// the worker (which must be running). It returns the key, shown once.
func IssueKey(ctx context.Context, w Submitter, principal string) (key, keyID string, err error) {
	return rotateKey(ctx, w, principal, "")
}

// RotateKey mints an API key for a principal that replaces its key
// oldKeyID in one event: the old key stops working when the new one is
// recorded. It returns the new key, shown once, and its ID.
func RotateKey(ctx context.Context, w Submitter, principal, oldKeyID string) (key, keyID string, err error) {
	if oldKeyID == "" {
		return "", "", errors.New("rotating a key: no key id")
	}
	return rotateKey(ctx, w, principal, oldKeyID)
}

func rotateKey(ctx context.Context, w Submitter, principal, replaces string) (key, keyID string, err error) {
	key, err = NewSecret("qwed_key_")
	if err != nil {
		return "", "", err
	}
	h := HashSecret(key)
	keyID = "key_" + h[:16]
	_, err = submitAdmin(ctx, w, keyID, &domain.Command{Type: domain.CmdIssuePrincipalKey,
		IssueKey: &domain.IssuePrincipalKey{PrincipalID: principal, KeyHash: h, KeyID: keyID, Replaces: replaces}})
	if err != nil {
		return "", "", err
	}
	return key, keyID, nil
}

// RevokeKey revokes a principal's API key by ID.
func RevokeKey(ctx context.Context, w Submitter, principal, keyID string) error {
	_, err := submitAdmin(ctx, w, "revoke/"+principal+"/"+keyID, &domain.Command{Type: domain.CmdRevokePrincipalKey,
		RevokeKey: &domain.IssuePrincipalKey{PrincipalID: principal, KeyID: keyID}})
	return err
}

// RotateAgentToken mints a new token for an agent; the old one stops
// working. It returns the token, shown once.
func RotateAgentToken(ctx context.Context, w Submitter, agent string) (string, error) {
	tok, err := NewSecret("qwed_agent_")
	if err != nil {
		return "", err
	}
	h := HashSecret(tok)
	_, err = submitAdmin(ctx, w, "token/"+h[:16], &domain.Command{Type: domain.CmdRotateAgentToken, AgentID: agent,
		NewToken: &domain.AgentTokenChange{TokenHash: h}})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// RevokeAgentToken revokes an agent's token: the agent is refused until a
// new token is rotated in.
func RevokeAgentToken(ctx context.Context, w Submitter, agent string) error {
	id, err := NewSecret("revoke-token_")
	if err != nil {
		return err
	}
	_, err = submitAdmin(ctx, w, id, &domain.Command{Type: domain.CmdRevokeAgentToken, AgentID: agent,
		NewToken: &domain.AgentTokenChange{}})
	return err
}
