package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// Request scopes (issue 11): an unscoped request (every log written before
// scopes) mints the identifiers it always did, so those logs re-decide to
// the same bytes; the same source and id in two scopes mint different
// identifiers, so one tenant cannot claim another's.
func TestScopedRequestsMintTheirOwnIDs(t *testing.T) {
	legacy := RequestID{Source: "http", ID: "K"}
	sum := sha256.Sum256([]byte("http\x00K"))
	if got := AgentIDFor(legacy); got != "agent_"+hex.EncodeToString(sum[:8]) {
		t.Fatalf("unscoped agent id %s, want SHA-256(source NUL id)", got)
	}
	sum = sha256.Sum256([]byte("\x01http\x00K"))
	if got := ActionIDFor(legacy); got != "act_"+hex.EncodeToString(sum[:10]) {
		t.Fatalf("unscoped action id %s, want SHA-256(0x01 source NUL id)", got)
	}
	p, q := legacy, legacy
	p.Scope, q.Scope = RequestScope("org_p", ""), RequestScope("org_q", "")
	seen := map[string]RequestID{}
	for _, r := range []RequestID{legacy, p, q} {
		for _, id := range []string{AgentIDFor(r), ActionIDFor(r), TrustRequestIDFor(r)} {
			if other, dup := seen[id]; dup {
				t.Fatalf("%+v and %+v mint the same id %s", r, other, id)
			}
			seen[id] = r
		}
	}
	long := RequestID{Source: string(make([]byte, 300)), ID: "x", Scope: "principal:p"}
	if AgentIDFor(long) == AgentIDFor(RequestID{Source: long.Source, ID: "x"}) {
		t.Fatal("a long scoped request mints the unscoped id")
	}
	h := tokenHash("a")
	for _, c := range []struct{ principal, token, want string }{
		{"org_p", h, "principal:org_p"},
		{AdminPrincipal, "", "principal:*"},
		{"", h, "token:" + h[:32]},
		{"", "", ""},
	} {
		if got := RequestScope(c.principal, c.token); got != c.want {
			t.Errorf("RequestScope(%q, %q) = %q, want %q", c.principal, c.token, got, c.want)
		}
	}
}
