package kafkagate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// TestKafkaAgentSpec5_3_ToolParametersVerified is QWED-Agent spec v1.1
// §5.3 on Kafka: a partition's worker runs the sql engine on a
// database_read call's query before its decision, so a DROP TABLE is
// DENIED (QWED-AGENT-005) and a SELECT APPROVED with the engine's verdict;
// the reply carries the risk assessment and the tool approval answer.
func TestKafkaAgentSpec5_3_ToolParametersVerified(t *testing.T) {
	_, brokers := broker(t)
	cfg := domain.DefaultConfig()
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)), func(c *kafkagate.Config) { c.Config = &cfg })
	c := newClient(t, brokers)
	rep, err := c.Request(context.Background(), client.Register(adminKey,
		domain.AgentInfo{Name: "db", Type: "supervised", PrincipalID: "org_a"}, domain.Permissions{AllowedTools: []string{"database_read"}}, domain.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		AgentID    string `json:"agent_id"`
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal(rep.Data, &reg); err != nil || rep.Status != 201 {
		t.Fatalf("register: %d %s", rep.Status, rep.Data)
	}
	call := func(query string) map[string]any {
		t.Helper()
		params, _ := json.Marshal(map[string]string{"query": query})
		rep, err := c.Request(context.Background(), client.VerifyTool(reg.AgentID, reg.AgentToken, domain.VerifyToolCall{
			ToolCall: domain.ToolCall{ToolName: "database_read", Parameters: params}}))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(rep.Data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := call("DROP TABLE users")
	if e, _ := m["error"].(map[string]any); m["decision"] != "DENIED" || e["code"] != string(domain.CodeVerificationFailed) || m["approved"] != false {
		t.Fatalf("DROP TABLE through database_read: %v, want DENIED QWED-AGENT-005, approved false", m)
	}
	m = call("SELECT name FROM users WHERE id = 1")
	v, _ := m["verification"].(map[string]any)
	ra, _ := m["risk_assessment"].(map[string]any)
	if m["decision"] != "APPROVED" || v["engine"] != "sql" || ra["final_risk"] != "low" || m["approved"] != true {
		t.Fatalf("SELECT through database_read: %v, want APPROVED by the sql engine", m)
	}
}
