package verify_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/math"
	"github.com/agentgate/agentgate/handlers/verify"
)

// actionWith posts a verify_action with the given action JSON object.
func (s *server) actionWith(id, tok string, step int, action string) map[string]any {
	s.t.Helper()
	body := fmt.Sprintf(`{"action":%s,"context":{"conversation_id":"c","step_number":%d}}`, action, step)
	r := s.do("POST", "/agents/"+id+"/verify", map[string]string{"Authorization": "Bearer " + tok}, body)
	m := r.json(s.t)
	m["http"] = float64(r.status)
	return m
}

func errCode(m map[string]any) any {
	e, _ := m["error"].(map[string]any)
	return e["code"]
}

// TestSeed000_2_3_BuiltinEnginesInsideVerifyAction: verify_action through
// HTTP and the worker with the engines the binary ships (logic on a real
// z3 pool, math, sql, code), the action's parameters reaching the engine.
func TestSeed000_2_3_BuiltinEnginesInsideVerifyAction(t *testing.T) {
	s := newServer(t, verify.Builtin(verify.BuiltinOptions{Solver: solver(t)})...)
	id, tok := s.agent("supervised")

	// verify_logic -> logic: SAT is VERIFIED, low risk: APPROVED.
	m := s.actionWith(id, tok, 1, `{"type":"verify_logic","query":"(AND (GT x 5) (LT y 10))"}`)
	v, _ := m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || v["engine"] != "logic" || v["status"] != "VERIFIED" {
		t.Fatalf("sat: %v", m)
	}
	// UNSAT is FAILED: DENIED with QWED-AGENT-005 (the step is not consumed).
	m = s.actionWith(id, tok, 2, `{"type":"verify_logic","query":"(AND (GT x 5) (LT x 3))"}`)
	if m["decision"] != "DENIED" || errCode(m) != "QWED-AGENT-005" {
		t.Fatalf("unsat: %v", m)
	}
	// calculate -> math: a wrong number is CORRECTED by the real engine.
	m = s.actionWith(id, tok, 2, `{"type":"calculate","query":"2+2=5"}`)
	ca, _ := m["corrected_action"].(map[string]any)
	if m["decision"] != "CORRECTED" || ca == nil || ca["query"] == "2+2=5" || m["corrected_digest"] == nil {
		t.Fatalf("corrected: %v", m)
	}
	// execute_sql with parameters.schema_ddl: the sql engine validates the
	// query against the schema; an unknown column is FAILED: DENIED.
	m = s.actionWith(id, tok, 3, `{"type":"execute_sql","query":"SELECT nope FROM users","parameters":{"schema_ddl":"CREATE TABLE users (id INT, name TEXT)","database":"prod"}}`)
	if m["decision"] != "DENIED" || errCode(m) != "QWED-AGENT-005" {
		t.Fatalf("schema: %v", m)
	}
	// The same query without the schema is a read-only SELECT: APPROVED.
	m = s.actionWith(id, tok, 3, `{"type":"execute_sql","query":"SELECT nope FROM users","parameters":{"database":"prod"}}`)
	if m["decision"] != "APPROVED" {
		t.Fatalf("no schema: %v", m)
	}
	// parameters.language selects the code engine's language: JavaScript
	// spawning a shell is BLOCKED (QWED-SEC-002, a security violation).
	js := `const cp = require('child_process'); cp.execSync('rm -rf /');`
	m = s.actionWith(id, tok, 4, fmt.Sprintf(`{"type":"execute_code","code":%q,"parameters":{"language":"javascript"}}`, js))
	tc, _ := m["trust_change"].(map[string]any)
	if m["decision"] != "DENIED" || errCode(m) != "QWED-SEC-002" || tc["to"] != 0.0 {
		t.Fatalf("javascript: %v", m)
	}
}

// counting is an engine that counts its runs and answers VERIFIED.
type counting struct {
	engines.Engine
	runs atomic.Int64
}

func (c *counting) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	c.runs.Add(1)
	return c.Engine.Verify(ctx, req)
}

// TestDesign2_5_EngineRunsOnlyForAuthenticatedAllowedAgents: a request
// the gate will refuse (unknown agent, wrong token, engine not allowed,
// suspended agent) costs no engine time; an authenticated one runs it.
func TestDesign2_5_EngineRunsOnlyForAuthenticatedAllowedAgents(t *testing.T) {
	eng := &counting{Engine: math.New()}
	s := newServer(t, eng)
	id, tok := s.agent("supervised", "math")
	other, otherTok := s.agent("supervised", "sql")

	calc := `{"type":"calculate","query":"2+2=4"}`
	refused := []struct {
		name, agent, token, code string
	}{
		{"unknown agent", "agent_nope", tok, "QWED-AGENT-001"},
		{"wrong token", id, otherTok, "QWED-AGENT-002"},
		{"engine not allowed", other, otherTok, "QWED-AGENT-005"},
	}
	for _, c := range refused {
		m := s.actionWith(c.agent, c.token, 1, calc)
		if m["decision"] == "APPROVED" || errCode(m) != c.code {
			t.Fatalf("%s: %v", c.name, m)
		}
		if n := eng.runs.Load(); n != 0 {
			t.Fatalf("%s: the engine ran %d times for a refused request", c.name, n)
		}
	}
	m := s.actionWith(id, tok, 1, calc)
	if m["decision"] != "APPROVED" || eng.runs.Load() != 1 {
		t.Fatalf("authenticated: %v (runs %d)", m, eng.runs.Load())
	}
	// Suspended by its principal: refused, no engine run.
	r := s.do("POST", "/agents/"+id+"/suspend", map[string]string{"X-API-Key": adminKey}, `{"suspended":true,"reason":"test"}`)
	if r.status != 200 {
		t.Fatalf("suspend: %d %s", r.status, r.body)
	}
	m = s.actionWith(id, tok, 2, calc)
	if m["decision"] == "APPROVED" || errCode(m) != "QWED-AGENT-003" || eng.runs.Load() != 1 {
		t.Fatalf("suspended: %v (runs %d)", m, eng.runs.Load())
	}
}
