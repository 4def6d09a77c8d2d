package command_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// The credential commands of the CLI, through a real worker: a key is
// minted once and recorded only as its hash; a rotation replaces the old
// key in one event; a revoked key no longer authenticates; an agent's
// token rotates and is revoked likewise.
func TestCredentialCommands(t *testing.T) {
	ctx := context.Background()
	g := gatetest.Start(t, t.TempDir(), gatetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Now)
	defer g.Stop(t)
	keys := command.NewKeys("", g.Store, nil)

	k1, id1, err := command.IssueKey(ctx, g.Worker, "org_1")
	if err != nil || !strings.HasPrefix(k1, command.APIKeyPrefix) || id1 == "" {
		t.Fatalf("IssueKey = %q, %q, %v", k1, id1, err)
	}
	if p, err := keys.Principal(ctx, k1); err != nil || p != "org_1" {
		t.Fatalf("the issued key authenticates as %q, %v", p, err)
	}
	k2, id2, err := command.RotateKey(ctx, g.Worker, "org_1", id1)
	if err != nil || k2 == k1 || id2 == id1 {
		t.Fatalf("RotateKey = %q, %q, %v", k2, id2, err)
	}
	if _, err := keys.Principal(ctx, k1); !errors.Is(err, command.ErrInvalidKey) {
		t.Fatalf("the rotated-out key: %v, want ErrInvalidKey", err)
	}
	if _, _, err := command.RotateKey(ctx, g.Worker, "org_1", ""); err == nil {
		t.Fatal("RotateKey without a key id succeeded")
	}
	if err := command.RevokeKey(ctx, g.Worker, "org_1", id2); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Principal(ctx, k2); !errors.Is(err, command.ErrInvalidKey) {
		t.Fatalf("the revoked key: %v, want ErrInvalidKey", err)
	}

	agentID := g.Submit(t, gatetest.Register("agent-1", 2)).AgentID
	tok, err := command.RotateAgentToken(ctx, g.Worker, agentID)
	if err != nil || !strings.HasPrefix(tok, command.AgentTokenPrefix) {
		t.Fatalf("RotateAgentToken = %q, %v", tok, err)
	}
	if a, err := g.Store.Agent(agentID); err != nil || !command.EqualHash(a.TokenHash, command.HashSecret(tok)) {
		t.Fatalf("the agent's token hash after a rotation: %v", err)
	}
	if err := command.RevokeAgentToken(ctx, g.Worker, agentID); err != nil {
		t.Fatal(err)
	}
	if a, err := g.Store.Agent(agentID); err != nil || a.TokenHash != "" {
		t.Fatalf("the agent's token hash after a revocation: %+v, %v", a, err)
	}
	// A command the gate refuses is an error, not a silent success.
	if _, err := command.RotateAgentToken(ctx, g.Worker, "agent_unknown"); err == nil {
		t.Fatal("rotating the token of an unknown agent succeeded")
	}

	for _, ev := range gatetest.LogEvents(t, g.Log) {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{k1, k2, tok} {
			if strings.Contains(string(b), secret) {
				t.Fatalf("a secret is in the log: %s", b)
			}
		}
	}
}
