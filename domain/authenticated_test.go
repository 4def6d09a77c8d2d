package domain

import "testing"

// executeCaller: an agent's prepare or execute is accepted as the gate
// authenticated it (Kafka: on its agent's partition) on a partition that
// does not hold the agent; one the gate refused is checked again where
// the agent lives, its refusal recorded, and never decided there when the
// check passes; without Authenticated the token is checked as for every
// agent command.
func TestExecuteCaller(t *testing.T) {
	g := newGate(t)
	agent := g.register("buyer", "autonomous", nil, Limits{}, Permissions{})
	caller := func(s *State, cmd *Command) (string, string, *Error) {
		d := &decider{s: s, env: Env{Now: t0, Partition: 3}, now: t0, cmd: cmd, ev: new(Event)}
		return d.executeCaller()
	}
	exec := func(a *AuthenticatedAgent, tokenOf string) *Command {
		return &Command{Type: CmdExecute, AgentID: agent, TokenHash: tokenHash(tokenOf), Authenticated: a}
	}

	// The home partition does not hold the agent.
	home := NewState()
	if id, c, err := caller(home, exec(&AuthenticatedAgent{AgentID: agent, Principal: "org_1", Partition: 1}, "buyer")); err != nil || id != agent || c != "org_1" {
		t.Fatalf("authenticated by the gate: %q %q %v", id, c, err)
	}
	if _, _, err := caller(home, exec(&AuthenticatedAgent{AgentID: "agt_other", Principal: "org_1", Partition: 1}, "buyer")); err == nil || err.Code != CodeInvalidRequest {
		t.Fatalf("an authentication of another agent: %v", err)
	}
	if _, _, err := caller(home, exec(nil, "buyer")); err == nil || err.Code != CodeAgentNotRegistered {
		t.Fatalf("not authenticated, on a partition without the agent: %v", err)
	}

	// The agent's partition (g.s holds it).
	refused := &AuthenticatedAgent{AgentID: agent, Partition: 3}
	if _, _, err := caller(g.s, exec(refused, "someone else")); err == nil || err.Code != CodeInvalidAgentToken {
		t.Fatalf("a bad token the gate refused: %v", err)
	}
	if _, _, err := caller(g.s, exec(refused, "buyer")); err == nil || err.Code != CodeUnavailable {
		t.Fatalf("a good token the gate refused (its projections behind): %v", err)
	}
	if id, c, err := caller(g.s, exec(nil, "buyer")); err != nil || id != agent || c != "org_1" {
		t.Fatalf("not marked, where the agent lives: %q %q %v", id, c, err)
	}
}

// Decide refuses the gate's authentication on any command but a prepare
// or an execute: it vouches for nothing else.
func TestAuthenticatedOnlyOnExecutes(t *testing.T) {
	g := newGate(t)
	agent := g.register("verifier", "autonomous", nil, Limits{}, Permissions{})
	cmd := verifyCmd(agent, "someone else", "c1", "1", "execute_sql", "SELECT 1")
	cmd.Authenticated = &AuthenticatedAgent{AgentID: agent, Principal: "org_1", Partition: 1}
	ev := g.exec(cmd)
	if ev.Type != EvCommandRejected || code(ev) != CodeInvalidRequest || ev.Error.Details["field"] != "authenticated" {
		t.Fatalf("a verify_action carrying an authentication: %s %v", ev.Type, ev.Error)
	}
}
