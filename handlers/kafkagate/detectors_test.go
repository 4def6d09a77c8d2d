package kafkagate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// QWED-Agent spec v1.1 §2.2 over Kafka: a gate configured as serve
// configures it (DefaultConfig, Detectors on) refuses read_file
// /etc/shadow and a request to the metadata service as security
// violations, an email carrying a card number as PII (QWED-SEC-003), and
// approves a path inside the agent's allowed root.
func TestAgentSpec_2_2_FileAndNetworkPolicy_Kafka(t *testing.T) {
	_, brokers := broker(t)
	cfg := domain.DefaultConfig()
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg })
	c := newClient(t, brokers)
	rep, err := c.Request(context.Background(), client.Register(adminKey,
		domain.AgentInfo{Name: "files", Type: "autonomous", PrincipalID: "org_a"},
		domain.Permissions{AllowedPaths: []string{"/srv/data"}}, domain.Limits{}))
	if err != nil || rep.Status != 201 {
		t.Fatalf("register: %v %v", rep, err)
	}
	var reg struct {
		AgentID    string `json:"agent_id"`
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal(rep.Data, &reg); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		act      domain.Action
		decision string
		code     string
	}{
		{domain.Action{Type: "read_file", Target: "/srv/data/q1.csv"}, "APPROVED", ""},
		{domain.Action{Type: "read_file", Target: "/etc/shadow"}, "DENIED", "QWED-SEC-002"},
		{domain.Action{Type: "network_request", Target: "http://[::ffff:169.254.169.254]/"}, "DENIED", "QWED-SEC-002"},
		{domain.Action{Type: "send_email", Parameters: json.RawMessage(`{"body":"card 4111-1111-1111-1111"}`)}, "DENIED", "QWED-SEC-003"},
	}
	for i, tc := range cases {
		rep, err := c.Request(context.Background(), client.Verify(reg.AgentID, reg.AgentToken, domain.VerifyAction{
			Action: tc.act, Context: domain.ActionContext{ConversationID: "files", StepNumber: json.Number(string(rune('1' + i)))}}))
		if err != nil {
			t.Fatal(err)
		}
		if decision, code := decided(t, rep.Data); decision != tc.decision || code != tc.code {
			t.Errorf("%+v: %d %s; want %s %s", tc.act, rep.Status, rep.Data, tc.decision, tc.code)
		}
	}
}

// QWED-Agent spec v1.1 §2.2, §5.2 and §5.3 over Kafka (second review of
// the guards, Config.StrictGuards): each agent's sensitive path beside a
// benign target, the metadata service in parameters.url beside a public
// target, tool read_file on /etc/shadow, DROP TABLE in a built-in SQL
// tool's "statement" and a card number written with dots are refused.
func TestAgentSpec_2_2_GuardsEveryOperand_Kafka(t *testing.T) {
	_, brokers := broker(t)
	cfg := domain.DefaultConfig()
	withSQL := withEngines(engines(t))
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg; withSQL(c) })
	c := newClient(t, brokers)
	cases := []struct {
		act      *domain.Action
		tool     *domain.ToolCall
		decision string
		code     string
	}{
		{act: &domain.Action{Type: "read_file", Target: "/tmp/ok", Parameters: json.RawMessage(`{"path":"/etc/shadow"}`)}, decision: "DENIED", code: "QWED-SEC-002"},
		{act: &domain.Action{Type: "network_request", Target: "https://example.com/", Parameters: json.RawMessage(`{"url":"http://169.254.169.254/"}`)}, decision: "DENIED", code: "QWED-SEC-002"},
		{act: &domain.Action{Type: "send_email", Parameters: json.RawMessage(`{"body":"card 4111.1111.1111.1111"}`)}, decision: "DENIED", code: "QWED-SEC-003"},
		{tool: &domain.ToolCall{ToolName: "read_file", Parameters: json.RawMessage(`{"path":"/etc/shadow"}`)}, decision: "DENIED", code: "QWED-SEC-002"},
		{tool: &domain.ToolCall{ToolName: "query_data", Parameters: json.RawMessage(`{"statement":"DROP TABLE users"}`)}, decision: "DENIED", code: "QWED-AGENT-005"},
		{tool: &domain.ToolCall{ToolName: "read_file", Parameters: json.RawMessage(`{"path":"/tmp/report.txt"}`)}, decision: "APPROVED"},
	}
	for i, tc := range cases {
		// a fresh agent each: a refusal demotes the agent's trust
		rep, err := c.Request(context.Background(), client.Register(adminKey,
			domain.AgentInfo{Name: "guards", Type: "autonomous", PrincipalID: "org_a"},
			domain.Permissions{AllowedTools: []string{"read_file"}}, domain.Limits{}))
		if err != nil || rep.Status != 201 {
			t.Fatalf("register: %v %v", rep, err)
		}
		var reg struct {
			AgentID    string `json:"agent_id"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(rep.Data, &reg); err != nil {
			t.Fatal(err)
		}
		ctx := domain.ActionContext{ConversationID: "guards", StepNumber: "1"}
		if tc.act != nil {
			rep, err = c.Request(context.Background(), client.Verify(reg.AgentID, reg.AgentToken, domain.VerifyAction{Action: *tc.act, Context: ctx}))
		} else {
			rep, err = c.Request(context.Background(), client.VerifyTool(reg.AgentID, reg.AgentToken, domain.VerifyToolCall{ToolCall: *tc.tool, Context: &ctx}))
		}
		if err != nil {
			t.Fatal(err)
		}
		if decision, code := decided(t, rep.Data); decision != tc.decision || code != tc.code {
			t.Errorf("%d: %d %s; want %s %s", i, rep.Status, rep.Data, tc.decision, tc.code)
		}
	}
}

// decided reads a decision reply's decision and error code ("" for none).
func decided(t *testing.T, data []byte) (decision, code string) {
	t.Helper()
	var d struct {
		Decision string `json:"decision"`
		Error    *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Error != nil {
		code = d.Error.Code
	}
	return d.Decision, code
}
