package verify_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines/sql"
)

// TestQWEDProtocol_5_2_5_SQLDestructiveNotVerified_HTTP pins the two questions the
// sql engine answers. POST /verify (QWED protocol v1.0 §6.1: verified only
// when verification passed) answers a destructive statement BLOCKED, 403,
// QWED-SEC-002, is_valid false and security_violation set, and never
// verified with a failed check. verify_action (QWED-Agent spec v1.1 §2.3)
// decides the same statement by its risk class: a trusted agent may run
// the unbounded DELETE or the sensitive read its trust level allows
// (APPROVED, VERIFIED by the engine, risk critical or high), a supervised
// one is denied by the trust × risk matrix, not as a security violation.
func TestQWEDProtocol_5_2_5_SQLDestructiveNotVerified_HTTP(t *testing.T) {
	s := newServer(t, sql.New())
	for _, q := range []string{"DROP TABLE users", "DELETE FROM sessions", "SELECT password FROM users", "SELECT 1; SELECT 2"} {
		r := s.verify(`{"query":` + strconv.Quote(q) + `,"type":"sql"}`)
		m := r.json(t)
		res, _ := m["result"].(map[string]any)
		failed, _ := res["checks_failed"].([]any)
		if r.status != 403 || m["status"] != "BLOCKED" || m["verified"] != false || res["is_valid"] != false ||
			res["security_violation"] != true || len(failed) == 0 || r.code(t) != "QWED-SEC-002" {
			t.Errorf("/verify %q: %d %s", q, r.status, r.body)
		}
	}
	r := s.verify(`{"query":"DROP TABLE users","type":"sql","params":{"allow":["destructive_operations"]}}`)
	if m := r.json(t); r.status != 200 || m["status"] != "VERIFIED" || m["verified"] != true {
		t.Errorf("/verify with allow: %d %s", r.status, r.body)
	}

	id, tok := s.agent("trusted", "sql")
	for i, q := range []string{"DELETE FROM sessions", "SELECT password FROM users"} {
		m := s.action(id, tok, i+1, "execute_sql", "query", q)
		v, _ := m["verification"].(map[string]any)
		if m["decision"] != "APPROVED" || v["status"] != "VERIFIED" || (v["risk_level"] != "critical" && v["risk_level"] != "high") {
			t.Errorf("trusted %q: %v", q, m)
		}
	}
	// The action's own parameters cannot change what the gate waives.
	m := s.actionWith(id, tok, 3, `{"type":"execute_sql","query":"DELETE FROM sessions","parameters":{"allow":[]}}`)
	if v, _ := m["verification"].(map[string]any); m["decision"] != "APPROVED" || v["status"] != "VERIFIED" {
		t.Errorf("trusted DELETE with parameters.allow: %v", m)
	}
	id, tok = s.agent("supervised", "sql")
	m = s.action(id, tok, 1, "execute_sql", "query", "DELETE FROM sessions")
	if m["decision"] != "DENIED" || errCode(m) != "QWED-AGENT-TRUST-001" || m["trust_change"] != nil {
		t.Errorf("supervised unbounded delete: %v", m)
	}
	// An injection is still a security violation for every agent.
	id, tok = s.agent("trusted", "sql")
	m = s.action(id, tok, 1, "execute_sql", "query", "DELETE FROM users WHERE id = 1 OR 1=1")
	if m["decision"] != "DENIED" || errCode(m) != "QWED-SEC-002" {
		t.Errorf("trusted injection: %v", m)
	}
}

// TestQWEDProtocol_5_2_5_SQLDialects_HTTP: params.dialect mysql and sqlite are read
// by their own parsers on /verify and in verify_action (the action's
// parameters.dialect): MySQL's LIMIT offset, count is a read-only SELECT
// the gate approves for a supervised agent, SQLite's ATTACH is a security
// violation, and /verify of a MySQL DROP TABLE is BLOCKED.
func TestQWEDProtocol_5_2_5_SQLDialects_HTTP(t *testing.T) {
	s := newServer(t, sql.New())
	r := s.verify(`{"query":"DROP TABLE ` + "`users`" + `","type":"sql","params":{"dialect":"mysql"}}`)
	if m := r.json(t); r.status != 403 || m["status"] != "BLOCKED" || r.code(t) != "QWED-SEC-002" {
		t.Errorf("/verify mysql DROP TABLE: %d %s", r.status, r.body)
	}
	r = s.verify(`{"query":"SELECT name FROM customers LIMIT 1, 2","type":"sql","params":{"dialect":"sqlite"}}`)
	if m := r.json(t); r.status != 200 || m["status"] != "VERIFIED" {
		t.Errorf("/verify sqlite LIMIT x,y: %d %s", r.status, r.body)
	}
	id, tok := s.agent("supervised", "sql")
	m := s.actionWith(id, tok, 1, `{"type":"execute_sql","query":"SELECT name FROM customers LIMIT 1, 2","parameters":{"dialect":"mysql"}}`)
	v, _ := m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || v["status"] != "VERIFIED" || v["risk_level"] != "low" {
		t.Errorf("mysql LIMIT x,y in verify_action: %v", m)
	}
	m = s.actionWith(id, tok, 2, `{"type":"execute_sql","query":"ATTACH DATABASE '/etc/x.db' AS x","parameters":{"dialect":"sqlite"}}`)
	if m["decision"] != "DENIED" || errCode(m) != "QWED-SEC-002" {
		t.Errorf("sqlite ATTACH in verify_action: %v", m)
	}
}

// TestQWEDProtocol_5_2_5_TautologyAndChainOverHTTP: over POST /verify, an
// OR with an always-true operand the engine folds (LIKE '%' in MySQL,
// CHAR(49)=CHAR(49) in SQLite, chr(49)=chr(49) in PostgreSQL) is BLOCKED
// (403, QWED-SEC-002) as OR 1=1 is, its near miss VERIFIED, and an
// operator chain past the bound ERROR QWED-REQ-004 before any parser runs.
func TestQWEDProtocol_5_2_5_TautologyAndChainOverHTTP(t *testing.T) {
	s := newServer(t, sql.New())
	for _, tc := range []struct{ dialect, cond string }{
		{"mysql", "name LIKE '%'"}, {"sqlite", "CHAR(49) = CHAR(49)"}, {"postgresql", "chr(49) = chr(49)"},
	} {
		q := strconv.Quote("SELECT id FROM orders WHERE id = 5 OR " + tc.cond)
		r := s.verify(`{"query":` + q + `,"type":"sql","params":{"dialect":"` + tc.dialect + `"}}`)
		if m := r.json(t); r.status != 403 || m["status"] != "BLOCKED" || r.code(t) != "QWED-SEC-002" {
			t.Errorf("/verify %s %s: %d %s", tc.dialect, tc.cond, r.status, r.body)
		}
	}
	r := s.verify(`{"query":"SELECT id FROM orders WHERE id = 5 OR name LIKE 'a%'","type":"sql","params":{"dialect":"mysql"}}`)
	if m := r.json(t); r.status != 200 || m["status"] != "VERIFIED" {
		t.Errorf("/verify mysql LIKE 'a%%': %d %s", r.status, r.body)
	}
	chain := strconv.Quote("SELECT 1" + strings.Repeat("+1", sql.MaxNesting+1))
	r = s.verify(`{"query":` + chain + `,"type":"sql","params":{"dialect":"sqlite"}}`)
	if m := r.json(t); m["status"] != "ERROR" || r.code(t) != "QWED-REQ-004" {
		t.Errorf("/verify sqlite chain: %d %.300s", r.status, r.body)
	}
}
