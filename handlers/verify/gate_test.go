package verify_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/code"
	"github.com/agentgate/agentgate/domain/engines/sql"
)

// agent registers an agent of the given type allowed every engine and
// returns its id and token.
func (s *server) agent(typ string, engineList ...string) (string, string) {
	s.t.Helper()
	list, _ := json.Marshal(engineList)
	r := s.do("POST", "/agents/register", map[string]string{"X-API-Key": adminKey},
		fmt.Sprintf(`{"agent":{"name":"a","type":%q,"principal_id":"org_1"},"permissions":{"allowed_engines":%s}}`, typ, list))
	m := r.json(s.t)
	id, _ := m["agent_id"].(string)
	tok, _ := m["agent_token"].(string)
	if r.status != 201 || id == "" || tok == "" {
		s.t.Fatalf("register: %d %s", r.status, r.body)
	}
	return id, tok
}

func (s *server) action(id, tok string, step int, typ, field, content string) map[string]any {
	s.t.Helper()
	body := fmt.Sprintf(`{"action":{"type":%q,%q:%q},"context":{"conversation_id":"c","step_number":%d}}`, typ, field, content, step)
	r := s.do("POST", "/agents/"+id+"/verify", map[string]string{"Authorization": "Bearer " + tok}, body)
	m := r.json(s.t)
	m["http"] = float64(r.status)
	return m
}

// TestSeed000_2_3_EnginesInsideVerifyAction runs verify_action through the
// HTTP API and the worker with the real sql and code engines (and a
// scripted math engine for CORRECTED): the verdict is attached before
// Decide and combined as QWED-Agent spec v1.1 §2.3 says.
func TestSeed000_2_3_EnginesInsideVerifyAction(t *testing.T) {
	s := newServer(t, sql.New(), code.New(), byQuery("math", map[string]engines.Outcome{
		"3*3=6": {Status: engines.Corrected, Corrected: "3*3=9", Result: map[string]any{"message": "3 * 3 = 9"}},
		"2+2=5": {Status: engines.Failed, Result: map[string]any{"message": "2 + 2 = 4, not 5"}},
	}))
	id, tok := s.agent("supervised", "math", "sql", "code")

	// execute_sql: the sql engine's class (read-only SELECT: low) sets the
	// risk; supervised + low = APPROVED.
	m := s.action(id, tok, 1, "execute_sql", "query", "SELECT * FROM customers WHERE status = 'active'")
	v, _ := m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || v["engine"] != "sql" || v["risk_level"] != "low" || v["status"] != "VERIFIED" {
		t.Fatalf("select: %v", m)
	}
	// FAILED: DENIED with QWED-AGENT-005 and the engine's reason.
	m = s.action(id, tok, 2, "calculate", "query", "2+2=5")
	if e, _ := m["error"].(map[string]any); m["decision"] != "DENIED" || e["code"] != "QWED-AGENT-005" || e["message"] != "verification failed: 2 + 2 = 4, not 5" {
		t.Fatalf("failed: %v", m)
	}
	// CORRECTED + low: the corrected action is returned.
	m = s.action(id, tok, 2, "calculate", "query", "3*3=6")
	ca, _ := m["corrected_action"].(map[string]any)
	if m["decision"] != "CORRECTED" || m["http"] != 200.0 || ca["query"] != "3*3=9" || m["corrected_digest"] == nil {
		t.Fatalf("corrected: %v", m)
	}
	// A dangerous call: BLOCKED by the code engine, DENIED with
	// QWED-SEC-002 and a security violation (trust 1 -> 0).
	m = s.action(id, tok, 3, "execute_code", "code", "import os; os.system('rm -rf /')")
	e, _ := m["error"].(map[string]any)
	tc, _ := m["trust_change"].(map[string]any)
	if m["decision"] != "DENIED" || e["code"] != "QWED-SEC-002" || tc["to"] != 0.0 {
		t.Fatalf("blocked: %v", m)
	}
	// The verdict is recorded with the command: the log re-decides it.
	r := s.do("GET", "/agents/"+id+"/activity", map[string]string{"X-API-Key": adminKey}, "")
	if r.status != 200 {
		t.Fatalf("activity: %d %s", r.status, r.body)
	}
}
