package command_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
)

// keyStore opens a real projection store and returns it with a function
// that records an API key of principal in it, as the worker's fold does.
func keyStore(t *testing.T) (*projections.Store, func(principal, key string)) {
	t.Helper()
	s, err := projections.Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	st := domain.NewState()
	var seq uint64
	return s, func(principal, key string) {
		t.Helper()
		seq++
		ev := &domain.Event{Seq: seq, Type: domain.EvPrincipalKeyIssued, Time: time.Unix(1_700_000_000, 0).UTC(),
			KeyIssued: &domain.IssuePrincipalKey{PrincipalID: principal, KeyHash: command.HashSecret(key), KeyID: "key_" + principal}}
		var f projections.Fold
		f.Add(st, ev)
		if err := s.Apply(st, &f, projections.Checkpoint{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
}

// One authentication of API keys for every transport: the admin key, a
// recorded key, an unknown key, and the lookup retried once after the
// read side caught up.
func TestKeysPrincipal(t *testing.T) {
	ctx := context.Background()
	store, issue := keyStore(t)
	issue("org_a", "qwed_key_a")
	admin := command.HashSecret("qwed_admin_x")
	k := command.NewKeys(" "+strings.ToUpper(admin)+"\n", store, nil)

	if p, err := k.Principal(ctx, "qwed_admin_x"); err != nil || p != domain.AdminPrincipal {
		t.Fatalf("admin key: %q, %v", p, err)
	}
	if p, err := k.Principal(ctx, "qwed_key_a"); err != nil || p != "org_a" {
		t.Fatalf("recorded key: %q, %v", p, err)
	}
	if p, err := k.Principal(ctx, "qwed_key_b"); !errors.Is(err, command.ErrInvalidKey) || p != "" {
		t.Fatalf("unknown key: %q, %v", p, err)
	}
	if p, err := command.NewKeys("", store, nil).Principal(ctx, ""); !errors.Is(err, command.ErrInvalidKey) || p != "" {
		t.Fatalf("no admin key configured, empty key: %q, %v", p, err)
	}

	// A key recorded elsewhere a moment ago: found once the read side has
	// caught up, and only then.
	calls := 0
	caught := command.NewKeys(admin, store, func(context.Context) bool {
		calls++
		issue("org_b", "qwed_key_b")
		return true
	})
	if p, err := caught.Principal(ctx, "qwed_key_b"); err != nil || p != "org_b" || calls != 1 {
		t.Fatalf("after catching up: %q, %v (%d catch-ups)", p, err, calls)
	}
	if _, err := caught.Principal(ctx, "qwed_key_a"); err != nil || calls != 1 {
		t.Fatalf("a known key caught up: %v (%d catch-ups)", err, calls)
	}
	failed := command.NewKeys(admin, store, func(context.Context) bool { return false })
	if _, err := failed.Principal(ctx, "qwed_key_c"); !errors.Is(err, command.ErrInvalidKey) {
		t.Fatalf("catch-up failed: %v", err)
	}

}

// Secrets are compared by their hashes, in constant time; an empty hash
// never matches, not even another empty one.
func TestEqualHash(t *testing.T) {
	a, b := command.HashSecret("qwed_agent_a"), command.HashSecret("qwed_agent_b")
	if len(a) != 64 || strings.ToLower(a) != a {
		t.Fatalf("HashSecret = %q, want 64 lowercase hex digits", a)
	}
	if !command.EqualHash(a, strings.Clone(a)) || command.EqualHash(a, b) || command.EqualHash("", "") || command.EqualHash(a, "") {
		t.Fatal("EqualHash")
	}
}
