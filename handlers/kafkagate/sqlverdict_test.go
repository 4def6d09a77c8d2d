package kafkagate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// TestQWEDProtocol_SQL_DestructiveNotVerified on Kafka: a qwed.verify of
// DROP TABLE is BLOCKED (403, QWED-SEC-002, not verified), while a
// trusted agent's verify_action of an unbounded DELETE is decided by its
// risk class (APPROVED, the sql engine's verdict VERIFIED, critical), and
// a MySQL query is read by the MySQL parser.
func TestQWEDProtocol_SQL_DestructiveNotVerified(t *testing.T) {
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
