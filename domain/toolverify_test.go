package domain

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// toolCall builds a tool call of agent name with parameters and an
// engine verdict (nil for none).
func toolCall(agentID, name, tool, params string, v *EngineVerdict) *Command {
	c := toolCmd(agentID, name, tool)
	c.Tool.ToolCall.Parameters = json.RawMessage(params)
	c.Verdict = v
	return c
}

func sqlVerdict(status engines.Status, risk Risk, param string) *EngineVerdict {
	return &EngineVerdict{Engine: "sql", Status: status, Risk: risk, Parameter: param, OutcomeDigest: stateHash("outcome")}
}

// QWED-Agent spec v1.1 §5.3 (requires_verification, verification_engine):
// a tool's parameters are verified by its engine, and the verdict decides
// as it does for an action; a log written before Config.ToolVerification
// keeps deciding by the rules alone.
func TestAgentSpec5_3_ToolParametersVerified(t *testing.T) {
	drop := `{"query":"DROP TABLE users"}`
	t.Run("before the switch the rules alone decide", func(t *testing.T) {
		g := newGate(t)
		id := g.register("a", "supervised", nil, Limits{}, Permissions{AllowedTools: []string{"database_read"}})
		ev := g.exec(toolCall(id, "a", "database_read", drop, sqlVerdict(engines.Verified, RiskCritical, "query")))
		if decision(ev) != Approved {
			t.Fatalf("old log: %s %v, want APPROVED as recorded", decision(ev), ev.Error)
		}
	})
	g := newGate(t)
	g.s.Config.ToolVerification = true
	sup := g.register("sup", "supervised", nil, Limits{}, Permissions{AllowedTools: []string{"database_read", "run_report"}})
	inj := g.register("inj", "supervised", nil, Limits{}, Permissions{AllowedTools: []string{"database_read"}})
	trusted := g.register("tr", "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{AllowedTools: []string{"database_read"}})
	cases := []struct {
		name     string
		agent    string
		who      string
		tool     string
		params   string
		verdict  *EngineVerdict
		want     Decision
		wantCode Code
	}{
		{"a DROP through a read tool is denied", sup, "sup", "database_read", drop,
			sqlVerdict(engines.Verified, RiskCritical, "query"), Denied, CodeVerificationFailed},
		{"whatever the trust level", trusted, "tr", "database_read", `{"query":"DROP TABLE users","limit":1}`,
			sqlVerdict(engines.Verified, RiskCritical, "query"), Denied, CodeVerificationFailed},
		{"a read within the tool's risk is approved", sup, "sup", "database_read", `{"query":"SELECT 1"}`,
			sqlVerdict(engines.Verified, RiskLow, "query"), Approved, ""},
		{"the sql alias is verified too", sup, "sup", "database_read", `{"sql":"DELETE FROM t"}`,
			sqlVerdict(engines.Verified, RiskHigh, "sql"), Denied, CodeVerificationFailed},
		{"an unverified parameter is pending", sup, "sup", "database_read", `{"query":"SELECT 2"}`, nil, Pending, ""},
		{"a parameter that is not a string is pending", sup, "sup", "database_read", `{"query":42}`, nil, Pending, ""},
		{"a verdict on another parameter is pending", sup, "sup", "database_read", `{"query":"SELECT 3"}`,
			sqlVerdict(engines.Verified, RiskLow, "sql"), Pending, ""},
		{"a verdict of another engine is pending", sup, "sup", "database_read", `{"query":"SELECT 4"}`,
			&EngineVerdict{Engine: "math", Status: engines.Verified, Parameter: "query"}, Pending, ""},
		{"an injection blocked by the engine is a security violation", inj, "inj", "database_read", `{"query":"SELECT 5 OR 1=1"}`,
			&EngineVerdict{Engine: "sql", Status: engines.Blocked, Parameter: "query", Reason: "tautology"}, Denied, CodeSecurityViolated},
		{"a correction is never applied to a tool", sup, "sup", "database_read", `{"query":"SELECT 6"}`,
			&EngineVerdict{Engine: "sql", Status: engines.Corrected, Corrected: "SELECT 7", Risk: RiskLow, Parameter: "query"}, Pending, ""},
		{"nothing to verify under the defaults", sup, "sup", "database_read", `{"table":"users"}`, nil, Approved, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := g.exec(toolCall(c.agent, c.who, c.tool, c.params, c.verdict))
			if decision(ev) != c.want || code(ev) != c.wantCode {
				t.Fatalf("%s: %s %v, want %s %s", c.params, decision(ev), ev.Error, c.want, c.wantCode)
			}
			if c.verdict != nil && c.want == Approved && ev.Decided.Verification.Engine != "sql" {
				t.Fatalf("verification engine %q, want sql", ev.Decided.Verification.Engine)
			}
			if c.wantCode == CodeVerificationFailed && ev.Error.Details["parameter"] != c.verdict.Parameter {
				t.Fatalf("details %v do not name parameter %q", ev.Error.Details, c.verdict.Parameter)
			}
			if c.wantCode == CodeSecurityViolated && !ev.Decided.SecurityViolation {
				t.Fatal("an engine block is not recorded as a security violation")
			}
		})
	}
	t.Run("a registry entry names the engine and the parameters", func(t *testing.T) {
		ev := g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: &PutToolRegistry{PrincipalID: "org_1",
			Tools: []ToolSpec{{Name: "run_report", RiskLevel: RiskMedium, RequiresVerification: true, VerificationEngine: "sql",
				VerifyParameters: []string{"statement"}}}}})
		if ev.Type != EvToolRegistrySet {
			t.Fatalf("registry: %s %v", ev.Type, ev.Error)
		}
		// The entry asks for verification: a call without the parameter is pending.
		if ev := g.exec(toolCall(sup, "sup", "run_report", `{"query":"DROP TABLE t"}`, nil)); decision(ev) != Pending {
			t.Fatalf("without the parameter: %s %v, want PENDING", decision(ev), ev.Error)
		}
		ev = g.exec(toolCall(sup, "sup", "run_report", `{"statement":"DROP TABLE t"}`, sqlVerdict(engines.Verified, RiskCritical, "statement")))
		if decision(ev) != Denied || code(ev) != CodeVerificationFailed {
			t.Fatalf("a DROP: %s %v, want DENIED AGENT-005", decision(ev), ev.Error)
		}
		if !slices.Contains(ev.Decided.Verification.ChecksFailed, checkEngineVerdict) {
			t.Fatalf("checks failed %v", ev.Decided.Verification.ChecksFailed)
		}
	})
	t.Run("a registry's engine must be known", func(t *testing.T) {
		bad := &PutToolRegistry{PrincipalID: "org_1", Tools: []ToolSpec{{Name: "x", RiskLevel: RiskLow, RequiresVerification: true, VerificationEngine: "oracle"}}}
		ev := g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: bad})
		if code(ev) != CodeInvalidRequest || ev.Error.Details["field"] != "tools[0].verification_engine" {
			t.Fatalf("unknown engine: %s %v, want REQ-001 on verification_engine", ev.Type, ev.Error)
		}
		noEngine := &PutToolRegistry{PrincipalID: "org_1", Tools: []ToolSpec{{Name: "database_read", RiskLevel: RiskLow, RequiresVerification: true}}}
		if ev := g.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: noEngine}); ev.Type != EvToolRegistrySet {
			t.Fatalf("a well-known tool without an engine takes its default: %s %v", ev.Type, ev.Error)
		}
		if plan := ToolVerification(g.s.Principals["org_1"], "database_read"); plan.Engine != "sql" || !plan.Explicit {
			t.Fatalf("plan %+v, want the sql engine, explicit", plan)
		}
		old := newGate(t)
		if ev := old.exec(&Command{Type: CmdPutToolRegistry, Principal: "org_1", ToolRegistry: bad}); ev.Type != EvToolRegistrySet {
			t.Fatalf("before the switch: %s %v, want the registry set as recorded", ev.Type, ev.Error)
		}
	})
}

// The transport keeps the most severe verdict of a call's parameters.
func TestAgentSpec5_3_MostSevereToolVerdict(t *testing.T) {
	ok := sqlVerdict(engines.Verified, RiskLow, "query")
	high := sqlVerdict(engines.Verified, RiskHigh, "sql")
	failed := sqlVerdict(engines.Failed, "", "sql")
	blocked := &EngineVerdict{Engine: "sql", Status: engines.Verified, Findings: []engines.Finding{{Rule: "r", Severity: "high"}}}
	for _, c := range []struct {
		a, b *EngineVerdict
		want bool
	}{{ok, nil, true}, {high, ok, true}, {ok, high, false}, {failed, high, true}, {blocked, failed, true}, {failed, blocked, false}} {
		if got := MoreSevereVerdict(c.a, c.b); got != c.want {
			t.Errorf("MoreSevereVerdict(%+v, %+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
