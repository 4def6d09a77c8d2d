package domain

import "testing"

// QWED-Agent spec v1.1 §5.3 (sandbox_required): a tool whose registry entry
// requires a sandbox is decided with sandbox_required, and its execution
// log must attest sandboxed: true; a log that does not is recorded all the
// same (the action already ran) but flagged, in the event and the reply.
// A log written before Config.SandboxAttestation re-decides unflagged.
func TestAgentSpec5_3_SandboxRequired_ExecutionAttests(t *testing.T) {
	setup := func(t *testing.T, attest bool) (*gate, string) {
		g := newGate(t)
		g.s.Config.SandboxAttestation = attest
		ev := g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: &PutToolRegistry{PrincipalID: "org_1",
			Tools: []ToolSpec{{Name: "run_code", RiskLevel: RiskLow, SandboxRequired: true}, {Name: "read_doc", RiskLevel: RiskLow}}}})
		if ev.Type != EvToolRegistrySet {
			t.Fatalf("registry: %s %v", ev.Type, ev.Error)
		}
		return g, g.register("a", "supervised", nil, Limits{}, Permissions{AllowedTools: []string{"run_code", "read_doc"}})
	}
	// approve decides a call of tool and returns its action ID.
	approve := func(t *testing.T, g *gate, id, tool string, sandbox bool) string {
		ev := g.exec(toolCmd(id, "a", tool))
		if decision(ev) != Approved || ev.Decided.Verification.Sandbox != sandbox {
			t.Fatalf("%s: %s %v sandbox_required=%v, want APPROVED sandbox_required=%v",
				tool, decision(ev), ev.Error, ev.Decided.Verification.Sandbox, sandbox)
		}
		return ev.Decided.ActionID
	}
	logExec := func(t *testing.T, g *gate, id, action string, x LogExecution) *ExecutionLogged {
		x.ActionID, x.Success = action, true
		ev := g.exec(&Command{Type: CmdLogExecution, AgentID: id, TokenHash: tokenHash("a"), Execution: &x})
		if ev.Type != EvExecutionLogged {
			t.Fatalf("log: %s %v, want the execution recorded", ev.Type, ev.Error)
		}
		_, body := Reply(ev)
		if r := body.(ExecutionReply); r.SandboxViolation != ev.Executed.SandboxViolation || !r.Logged {
			t.Fatalf("reply %+v does not carry the event's flag %v", r, ev.Executed.SandboxViolation)
		}
		return ev.Executed
	}
	cases := []struct {
		name     string
		tool     string
		required bool
		log      LogExecution
		flagged  bool
	}{
		{"no attestation is flagged", "run_code", true, LogExecution{}, true},
		{"a description without sandboxed is flagged", "run_code", true, LogExecution{Sandbox: "gvisor"}, true},
		{"sandboxed is accepted", "run_code", true, LogExecution{Sandboxed: true, Sandbox: "firecracker sha256:ab"}, false},
		{"a tool without the requirement needs nothing", "read_doc", false, LogExecution{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, id := setup(t, true)
			act := approve(t, g, id, c.tool, c.required)
			if g.s.Agents[id].OpenActions[act].SandboxRequired != c.required {
				t.Fatalf("open action sandbox_required=%v, want %v", g.s.Agents[id].OpenActions[act].SandboxRequired, c.required)
			}
			if ex := logExec(t, g, id, act, c.log); ex.SandboxViolation != c.flagged {
				t.Fatalf("sandbox_violation=%v, want %v", ex.SandboxViolation, c.flagged)
			}
			if g.s.Agents[id].OpenActions[act] != nil {
				t.Fatal("a flagged execution must still close the action")
			}
		})
	}
	t.Run("before the switch executions are not flagged", func(t *testing.T) {
		g, id := setup(t, false)
		act := approve(t, g, id, "run_code", true)
		if ex := logExec(t, g, id, act, LogExecution{}); ex.SandboxViolation {
			t.Fatal("an old log re-decided its execution flagged")
		}
	})
	if !DefaultConfig().SandboxAttestation {
		t.Fatal("a new gate must enforce the attestation")
	}
}
