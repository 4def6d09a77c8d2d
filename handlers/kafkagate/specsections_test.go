package kafkagate_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines/sql"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/verify"
)

// Items of issue 16 end to end in the Kafka deployment (the HTTP API over
// a gate whose partitions decide, configured as serve configures it:
// domain.DefaultConfig), each named after the spec section it pins; the
// embedded twins are in handlers/httpapi/specsections_test.go, and
// docs/ARCHITECTURE.md ("The README's tables and the spec-section tests")
// maps every item to its tests.

// specAgent is an agent registered through specGateway.
type specAgent struct {
	h         *httpOverKafka
	id, token string
}

// specGateway starts a broker, a gate and an HTTP instance over them, and
// registers an agent of org_a at trust level trust.
func specGateway(t *testing.T, trust int) specAgent {
	t.Helper()
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	cfg := domain.DefaultConfig()
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg })
	reg, err := verify.NewRegistry(sql.New())
	if err != nil {
		t.Fatal(err)
	}
	h := startHTTPOverKafka(t, brokers, lg, reg, 10*time.Second)
	body, _ := json.Marshal(map[string]any{"agent": map[string]any{"name": "spec", "type": "autonomous", "principal_id": "org_a"},
		"permissions": map[string]any{}, "trust_level": trust})
	st, m := h.do(t, "POST", "/agents/register", map[string]string{"X-API-Key": adminKey}, string(body))
	id, _ := m["agent_id"].(string)
	tok, _ := m["agent_token"].(string)
	if st != http.StatusCreated || id == "" || tok == "" {
		t.Fatalf("registering over Kafka: %d %v", st, m)
	}
	return specAgent{h: h, id: id, token: tok}
}

// tool sends a tool call of name with parameters as the agent's.
func (a specAgent) tool(t *testing.T, name, params string) (int, map[string]any) {
	t.Helper()
	return a.h.do(t, "POST", "/agents/"+a.id+"/tools/"+name, map[string]string{"Authorization": "Bearer " + a.token},
		`{"tool_call": {"parameters": `+params+`}}`)
}

// specCheck returns the policy check named policy of a reply, nil when it
// has none.
func specCheck(m map[string]any, policy string) map[string]any {
	checks, _ := m["policy_checks"].([]any)
	for _, c := range checks {
		if pc, _ := c.(map[string]any); pc["policy"] == policy {
			return pc
		}
	}
	return nil
}

// TestAgentSpec_5_2_RiskAssessmentAndPolicyChecks_Kafka pins QWED-Agent
// spec v1.1 §5.2 on Kafka: a tool call's reply carries risk_assessment and
// policy_checks, derived from the decision: a safe tool passes
// tool_allowed, an unknown one fails it, critical.
func TestAgentSpec_5_2_RiskAssessmentAndPolicyChecks_Kafka(t *testing.T) {
	a := specGateway(t, 3)
	st, m := a.tool(t, "send_email", `{"to": "ann@example.com", "body": "your order has shipped"}`)
	ra, _ := m["risk_assessment"].(map[string]any)
	if pc := specCheck(m, "tool_allowed"); st != http.StatusOK || m["decision"] != "APPROVED" || ra["base_risk"] != "medium" ||
		ra["requires_approval"] != false || pc == nil || pc["passed"] != true {
		t.Fatalf("a plain email: %d %v, want APPROVED, medium, tool_allowed passed", st, m)
	}
	st, m = a.tool(t, "my_custom_tool", `{}`)
	ra, _ = m["risk_assessment"].(map[string]any)
	if pc := specCheck(m, "tool_allowed"); st != http.StatusForbidden || ra["final_risk"] != "critical" || pc == nil || pc["passed"] != false {
		t.Fatalf("an unknown tool: %d %v, want critical with tool_allowed failed", st, m)
	}
}

// TestAgentSpec_5_2_NoPIILeakage_Kafka pins QWED-Agent spec v1.1 §5.2
// (no_pii_leakage) and QWED protocol v1.0 §8.3 (QWED-SEC-003) on Kafka: an
// email carrying a card number fails no_pii_leakage with QWED-SEC-003 and
// never repeats the number; an address alone passes.
func TestAgentSpec_5_2_NoPIILeakage_Kafka(t *testing.T) {
	a := specGateway(t, 3)
	if st, m := a.tool(t, "send_email", `{"to": "ann@example.com", "body": "hello"}`); st != http.StatusOK ||
		specCheck(m, "no_pii_leakage") == nil || specCheck(m, "no_pii_leakage")["passed"] != true {
		t.Fatalf("an address alone: %d %v, want no_pii_leakage passed", st, m)
	}
	st, m := a.tool(t, "send_email", `{"to": "ann@example.com", "body": "card 4111 1111 1111 1111"}`)
	ra, _ := m["risk_assessment"].(map[string]any)
	pc := specCheck(m, "no_pii_leakage")
	if st != http.StatusForbidden || m["decision"] != "DENIED" || pc == nil || pc["passed"] != false || pc["code"] != "QWED-SEC-003" ||
		ra["final_risk"] != "critical" {
		t.Fatalf("a card number in an email: %d %v, want DENIED with no_pii_leakage failed (QWED-SEC-003)", st, m)
	}
	if b, _ := json.Marshal(m); strings.Contains(string(b), "4111") {
		t.Fatalf("the refusal repeats the card number: %s", b)
	}
}

// TestAgentSpec_4_3_PendingCarriesTrust002_Kafka pins QWED-Agent spec v1.1
// §4.3 and Appendix A (QWED-AGENT-TRUST-002) on Kafka: a supervised
// agent's medium-risk tool call is 202 PENDING with QWED-AGENT-TRUST-002
// naming its approval.
func TestAgentSpec_4_3_PendingCarriesTrust002_Kafka(t *testing.T) {
	a := specGateway(t, 1)
	st, m := a.tool(t, "send_email", `{"to": "ann@example.com", "body": "hello"}`)
	e, _ := m["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if id, _ := d["approval_id"].(string); st != http.StatusAccepted || m["decision"] != "PENDING" || e["code"] != "QWED-AGENT-TRUST-002" || id == "" {
		t.Fatalf("a supervised agent's email: %d %v, want 202 PENDING with QWED-AGENT-TRUST-002 naming its approval", st, m)
	}
}

// TestAgentGuide_ToolApprovalSystem_Kafka pins the QWED-Agent user guide's
// ToolApprovalSystem on Kafka: an unknown tool is denied by default with
// {approved: false, blocked_reason} beside QWED-AGENT-004; a safe one is
// approved.
func TestAgentGuide_ToolApprovalSystem_Kafka(t *testing.T) {
	a := specGateway(t, 3)
	if st, m := a.tool(t, "search_web", `{"q": "weather"}`); st != http.StatusOK || m["approved"] != true {
		t.Fatalf("a safe tool: %d %v, want approved", st, m)
	}
	st, m := a.tool(t, "my_custom_tool", `{}`)
	e, _ := m["error"].(map[string]any)
	reason, _ := m["blocked_reason"].(string)
	if st != http.StatusForbidden || m["approved"] != false || e["code"] != "QWED-AGENT-004" ||
		!strings.HasPrefix(reason, "Unknown tool 'my_custom_tool' requires explicit allowlisting (risk_score=") {
		t.Fatalf("an unknown tool: %d %v, want DENIED, approved false and the guide's blocked_reason", st, m)
	}
}

// TestAgentGuide_ActivityActionType_Kafka pins the QWED-Agent user
// guide's activity loop (entry['action_type'] -> entry['decision']) on
// Kafka: the read model's activity entries carry action_type at the top
// level, for actions and tool calls.
func TestAgentGuide_ActivityActionType_Kafka(t *testing.T) {
	a := specGateway(t, 1)
	bearer := map[string]string{"Authorization": "Bearer " + a.token}
	if st, m := a.h.do(t, "POST", "/agents/"+a.id+"/verify", bearer,
		`{"action": {"type": "calculate", "query": "2+2"}, "context": {"conversation_id": "c", "step_number": 1}}`); st != http.StatusOK {
		t.Fatalf("verify: %d %v", st, m)
	}
	if st, m := a.tool(t, "search_web", `{"q": "x"}`); st != http.StatusOK {
		t.Fatalf("tool: %d %v", st, m)
	}
	// The read model follows the events partitions: wait until it holds
	// both decisions.
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, m := a.h.do(t, "GET", "/agents/"+a.id+"/activity?limit=10", bearer, "")
		acts, _ := m["activities"].([]any)
		got := map[string]bool{}
		for _, x := range acts {
			e, _ := x.(map[string]any)
			at, _ := e["action_type"].(string)
			dec, _ := e["decision"].(string)
			got[at+"->"+dec] = true
		}
		if st == http.StatusOK && len(acts) == 2 && got["calculate->APPROVED"] && got["tool_call->APPROVED"] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("activity %d %v, want action_type calculate and tool_call", st, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
