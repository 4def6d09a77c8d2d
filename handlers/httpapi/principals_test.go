package httpapi

import (
	"testing"

	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// TestPrincipalWrites_EdgeRateLimit: over Config.PrincipalWriteRateLimit
// a key's principal-scoped writes get QWED-AUTH-004 (429, Retry-After)
// and nothing is recorded; another key is not held back.
func TestPrincipalWrites_EdgeRateLimit(t *testing.T) {
	g := newTestGate(t, gateOptions{principalRate: RateLimit{PerPrincipal: 1, Burst: 3}})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	gatetest.PrincipalWriteRateLimit(t, g.a2aHTTP(), keyA, "org_a", keyB, "org_b", 3,
		func() int { return int(g.head()) }, g.clock.Advance)
}
