package domain

import (
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestDesign2_5_MayRunEngine pins when the transport runs an engine: only
// for a request Decide would authenticate, for an active agent allowed the
// engine and not blocked from the action type.
func TestDesign2_5_MayRunEngine(t *testing.T) {
	g := newGate(t)
	a := g.s.Agents[g.register("a", "autonomous", nil, Limits{}, Permissions{AllowedEngines: []string{"math"}, BlockedTools: []string{"execute_sql"}})]
	open := g.s.Agents[g.register("o", "autonomous", nil, Limits{}, Permissions{})]
	sus := *a
	sus.Status = StatusSuspended
	calc := func(mut func(*Command)) *Command {
		c := verifyCmd(a.ID, "a", "c", "1", "calculate", "2+2=4")
		if mut != nil {
			mut(c)
		}
		return c
	}
	tests := []struct {
		name  string
		agent *Agent
		cmd   *Command
		want  bool
	}{
		{"token", a, calc(nil), true},
		{"principal key", a, calc(func(c *Command) { c.TokenHash, c.Principal = "", "org_1" }), true},
		{"admin key", a, calc(func(c *Command) { c.TokenHash, c.Principal = "", AdminPrincipal }), true},
		{"unknown agent", nil, calc(nil), false},
		{"another agent's record", open, calc(nil), false},
		{"wrong token", a, calc(func(c *Command) { c.TokenHash = tokenHash("o") }), false},
		{"no credentials", a, calc(func(c *Command) { c.TokenHash = "" }), false},
		{"other principal", a, calc(func(c *Command) { c.TokenHash, c.Principal = "", "org_2" }), false},
		{"suspended", &sus, calc(nil), false},
		{"engine not allowed", a, calc(func(c *Command) { c.Verify.Action.Type = "verify_logic" }), false},
		{"type blocked", a, calc(func(c *Command) { c.Verify.Action.Type = "execute_sql" }), false},
		{"no engine for the type", a, calc(func(c *Command) { c.Verify.Action.Type = "send_email" }), false},
		{"empty allowed_engines allows every engine", open, verifyCmd(open.ID, "o", "c", "1", "verify_logic", "(GT x 1)"), true},
	}
	for _, tc := range tests {
		if got := MayRunEngine(tc.agent, tc.cmd); got != tc.want {
			t.Errorf("%s: MayRunEngine = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDesign2_5_NotRunVerdictIsNeverApproved: an action whose engine was
// not run (its agent was not yet known when the request arrived) but that
// authenticates when decided is PENDING, never APPROVED.
func TestDesign2_5_NotRunVerdictIsNeverApproved(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "trusted", nil, Limits{}, Permissions{})
	cmd := verifyCmd(id, "a", "c", "1", "calculate", "2+2=4")
	cmd.Verdict = NotRunVerdict("calculate")
	if cmd.Verdict.Status != engines.Error || cmd.Verdict.Engine != "math" || len(cmd.Verdict.OutcomeDigest) != 64 {
		t.Fatalf("verdict %+v", cmd.Verdict)
	}
	if again := NotRunVerdict("calculate"); again.OutcomeDigest != cmd.Verdict.OutcomeDigest || again.Reason != cmd.Verdict.Reason {
		t.Fatalf("not deterministic: %+v vs %+v", again, cmd.Verdict)
	}
	ev := g.exec(cmd)
	if ev.Decided == nil || ev.Decided.Decision != Pending {
		t.Fatalf("decided %+v", ev.Decided)
	}
	if NotRunVerdict("send_email") != nil {
		t.Fatal("a type no engine verifies has no verdict")
	}
}
