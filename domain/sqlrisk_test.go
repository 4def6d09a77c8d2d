package domain

import (
	"strconv"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestDesign4_SQLRiskIsTheEngineClass pins the one rule of an SQL action's
// risk: on a gate configured with EngineSQLRisk (DefaultConfig) it is the
// sql engine's class, or critical without one, and the tokenizer of older
// logs is never consulted (no SQL rejection of its own); on a state whose
// configuration predates the switch — the commands of a log written before
// it — the tokenizer decides as it did, so such a log re-decides byte for
// byte.
func TestDesign4_SQLRiskIsTheEngineClass(t *testing.T) {
	const read, stacked = "SELECT id FROM t WHERE id = 1", "SELECT id FROM t; DROP TABLE t"
	verdict := func(st engines.Status, r Risk) *EngineVerdict {
		return &EngineVerdict{Engine: "sql", Status: st, OutcomeDigest: "00", Risk: r}
	}
	cases := []struct {
		name, typ, query string
		v                *EngineVerdict
		engine, legacy   Risk
		legacyViolation  bool
	}{
		{"class low", "execute_sql", read, verdict(engines.Verified, RiskLow), RiskLow, RiskLow, false},
		{"class over a stacked query", "execute_sql", stacked, verdict(engines.Verified, RiskHigh), RiskHigh, RiskHigh, false},
		{"database_read takes the higher", "database_read", read, verdict(engines.Verified, RiskHigh), RiskHigh, RiskHigh, false},
		{"no verdict, a read", "execute_sql", read, nil, RiskCritical, RiskLow, false},
		{"no verdict, stacked", "execute_sql", stacked, nil, RiskCritical, RiskCritical, true},
		{"engine error, a read", "execute_sql", read, verdict(engines.Error, ""), RiskCritical, RiskLow, false},
		{"engine error, database_read", "database_read", read, verdict(engines.Error, ""), RiskCritical, RiskLow, false},
		{"no query, database_read", "database_read", "", nil, RiskLow, RiskLow, false},
		{"no query, execute_sql", "execute_sql", "", nil, RiskCritical, RiskCritical, false},
	}
	perms := Permissions{AllowedEngines: []string{"sql"}}
	legacy, engine := newGate(t), newGate(t)
	engine.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: DefaultConfig()}})
	if legacy.s.Config.EngineSQLRisk || !engine.s.Config.EngineSQLRisk {
		t.Fatalf("EngineSQLRisk: new state %v, configured %v", legacy.s.Config.EngineSQLRisk, engine.s.Config.EngineSQLRisk)
	}
	la := legacy.register("sqlrisk", "trusted", trustPtr(TrustAutonomous), Limits{}, perms)
	ea := engine.register("sqlrisk", "trusted", trustPtr(TrustAutonomous), Limits{}, perms)
	for i, c := range cases {
		for _, m := range []struct {
			g       *gate
			agent   string
			want    Risk
			violate bool
		}{{legacy, la, c.legacy, c.legacyViolation}, {engine, ea, c.engine, false}} {
			cmd := verifyCmd(m.agent, "sqlrisk", "conv_"+strconv.Itoa(i), "1", c.typ, c.query)
			cmd.Verdict = c.v
			ev := m.g.exec(cmd)
			if ev.Decided == nil {
				t.Fatalf("%s (engine rule %v): %s %v", c.name, m.g == engine, ev.Type, ev.Error)
			}
			if got := ev.Decided.Verification.RiskLevel; got != m.want {
				t.Errorf("%s (engine rule %v): risk %s, want %s", c.name, m.g == engine, got, m.want)
			}
			if got := code(ev) == CodeSecurityViolated; got != m.violate {
				t.Errorf("%s (engine rule %v): SQL security violation %v, want %v (%v)", c.name, m.g == engine, got, m.violate, ev.Error)
			}
		}
	}
}
