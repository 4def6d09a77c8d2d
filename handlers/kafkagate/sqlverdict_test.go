package kafkagate_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines/sql"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// TestQWEDProtocol_5_2_5_SQLDestructiveNotVerified_Kafka: a qwed.verify of
// DROP TABLE is BLOCKED (403, QWED-SEC-002, not verified), while a
// trusted agent's verify_action of an unbounded DELETE is decided by its
// risk class (APPROVED, the sql engine's verdict VERIFIED, critical), and
// a MySQL query is read by the MySQL parser.
func TestQWEDProtocol_5_2_5_SQLDestructiveNotVerified_Kafka(t *testing.T) {
	_, brokers := broker(t)
	cfg := domain.DefaultConfig()
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)), func(c *kafkagate.Config) { c.Config = &cfg })
	c := newClient(t, brokers)

	cmd := client.QWEDVerify(adminKey, map[string]any{"query": "DROP TABLE users", "type": "sql"})
	cmd.ID = "qv-sql-drop"
	rep, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	var r verifyReply
	if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 403 || r.Status != "BLOCKED" || r.Verified ||
		r.Error == nil || r.Error.Code != "QWED-SEC-002" {
		t.Fatalf("DROP TABLE over Kafka: %d %s", rep.Status, rep.Data)
	}

	agent, token := registerWith(t, c, "trusted", "sql")
	rep, err = c.Request(context.Background(), client.Verify(agent, token, domain.VerifyAction{
		Action:  domain.Action{Type: "execute_sql", Query: "DELETE FROM sessions"},
		Context: domain.ActionContext{ConversationID: "sql", StepNumber: json.Number("1")},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(rep.Data, &m); err != nil {
		t.Fatal(err)
	}
	v, _ := m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || v["status"] != "VERIFIED" || v["risk_level"] != "critical" {
		t.Fatalf("trusted unbounded DELETE over Kafka: %v", m)
	}
	// params.dialect reaches the engine over Kafka too: MySQL's LIMIT
	// offset, count is a read-only SELECT.
	rep, err = c.Request(context.Background(), client.Verify(agent, token, domain.VerifyAction{
		Action: domain.Action{Type: "execute_sql", Query: "SELECT name FROM customers LIMIT 1, 2",
			Parameters: json.RawMessage(`{"dialect":"mysql"}`)},
		Context: domain.ActionContext{ConversationID: "sql", StepNumber: json.Number("2")},
	}))
	if err != nil {
		t.Fatal(err)
	}
	m = nil
	if err := json.Unmarshal(rep.Data, &m); err != nil {
		t.Fatal(err)
	}
	v, _ = m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || v["status"] != "VERIFIED" || v["risk_level"] != "low" {
		t.Fatalf("mysql LIMIT x,y over Kafka: %v", m)
	}
}

// TestQWEDProtocol_5_1_NaturalLanguageOverKafka: a qwed.verify of type
// natural_language is routed by parsing over Kafka too: an arithmetic
// claim goes to math, prose is UNSUPPORTED (400, QWED-REQ-005) naming
// what is accepted.
func TestQWEDProtocol_5_1_NaturalLanguageOverKafka(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)))
	c := newClient(t, brokers)
	for i, tc := range []struct {
		query, status, engine string
		http                  int
	}{
		{"2+2=4", "VERIFIED", "math", 200},
		{"Is the sky blue?", "UNSUPPORTED", "", 400},
	} {
		cmd := client.QWEDVerify(adminKey, map[string]any{"query": tc.query, "type": "natural_language"})
		cmd.ID = "qv-nl-" + string(rune('a'+i))
		rep, err := c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Status string `json:"status"`
			Engine string `json:"engine"`
			Error  *struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rep.Data, &m); err != nil || rep.Status != tc.http || m.Status != tc.status || m.Engine != tc.engine {
			t.Fatalf("%q over Kafka: %d %s", tc.query, rep.Status, rep.Data)
		}
		if tc.status == "UNSUPPORTED" && (m.Error == nil || m.Error.Code != "QWED-REQ-005" || m.Error.Details["accepted"] == nil) {
			t.Fatalf("%q over Kafka: %s", tc.query, rep.Data)
		}
	}
}

// TestQWEDProtocol_5_2_5_TautologyAndChainOverKafka: over Kafka, a
// qwed.verify whose OR holds a tautology the engine folds (LIKE '%') is
// BLOCKED (403, QWED-SEC-002), and an operator chain past the bound is
// ERROR QWED-REQ-004, as over HTTP.
func TestQWEDProtocol_5_2_5_TautologyAndChainOverKafka(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)))
	c := newClient(t, brokers)
	for i, tc := range []struct {
		query         string
		status        int
		verdict, code string
	}{
		{"SELECT id FROM orders WHERE id = 5 OR name LIKE '%'", 403, "BLOCKED", "QWED-SEC-002"},
		{"SELECT 1" + strings.Repeat("+1", sql.MaxNesting+1), 0, "ERROR", "QWED-REQ-004"},
	} {
		cmd := client.QWEDVerify(adminKey, map[string]any{"query": tc.query, "type": "sql", "params": map[string]any{"dialect": "mysql"}})
		cmd.ID = "qv-sql-taut-" + strconv.Itoa(i)
		rep, err := c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		var r verifyReply
		if err := json.Unmarshal(rep.Data, &r); err != nil || (tc.status != 0 && rep.Status != tc.status) ||
			r.Status != tc.verdict || r.Verified || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%.40q over Kafka: %d %.300s", tc.query, rep.Status, rep.Data)
		}
	}
}
