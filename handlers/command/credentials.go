package command

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgate/agentgate/domain"
)

// The credential commands of the agentgate CLI (keys issue, rotate and
// revoke; agent token rotate and revoke): recorded through a worker as the
// admin's, with the secret minted here and only its hash in the command.

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
	key = NewSecret(APIKeyPrefix)
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
	tok := NewSecret(AgentTokenPrefix)
	h := HashSecret(tok)
	_, err := submitAdmin(ctx, w, "token/"+h[:16], &domain.Command{Type: domain.CmdRotateAgentToken, AgentID: agent,
		NewToken: &domain.AgentTokenChange{TokenHash: h}})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// RevokeAgentToken revokes an agent's token: the agent is refused until a
// new token is rotated in.
func RevokeAgentToken(ctx context.Context, w Submitter, agent string) error {
	_, err := submitAdmin(ctx, w, NewSecret("revoke-token_"), &domain.Command{Type: domain.CmdRevokeAgentToken, AgentID: agent,
		NewToken: &domain.AgentTokenChange{}})
	return err
}
