package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// Items of issue 16 end to end over HTTP (the embedded deployment), each
// named after the spec section it pins; their Kafka twins are in
// handlers/kafkagate/specsections_test.go, and docs/ARCHITECTURE.md ("The
// README's tables and the spec-section tests") maps every item to its
// tests.

// specTool sends a tool call of name with parameters as a's and returns
// the reply.
func specTool(t *testing.T, g *testGate, a agent, name, params string) (response, map[string]any) {
	t.Helper()
	r := g.do("POST", "/agents/"+a.id+"/tools/"+name, bearerH(a.token), `{"tool_call": {"parameters": `+params+`}}`)
	return r, r.json(t)
}

// policyCheck returns the policy check named policy of a reply, nil when
// it has none.
func policyCheck(m map[string]any, policy string) map[string]any {
	checks, _ := m["policy_checks"].([]any)
	for _, c := range checks {
		if pc, _ := c.(map[string]any); pc["policy"] == policy {
			return pc
		}
	}
	return nil
}

// riskFactor reports whether a risk assessment names factor with weight.
func riskFactor(ra map[string]any, factor string, weight float64) bool {
	factors, _ := ra["factors"].([]any)
	for _, f := range factors {
		if f, _ := f.(map[string]any); f["factor"] == factor && f["weight"] == weight {
			return true
		}
	}
	return false
}

// TestAgentSpec_5_2_RiskAssessmentAndPolicyChecks_HTTP pins QWED-Agent
// spec v1.1 §5.2 over HTTP: a tool call's reply carries risk_assessment
// (base_risk, factors with weights, final_risk, requires_approval) and
// policy_checks, derived from the decision: a safe tool passes its checks,
// its one factor §5.2's own pii_in_content (the address it writes to), an
// unknown tool fails tool_allowed, critical, its factor weighed.
func TestAgentSpec_5_2_RiskAssessmentAndPolicyChecks_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	a := g.register(g.issueKey("org_a"), "org_a", 3, nil)
	r, m := specTool(t, g, a, "send_email", `{"to": "ann@example.com", "body": "your order has shipped"}`)
	ra, _ := m["risk_assessment"].(map[string]any)
	if factors, ok := ra["factors"].([]any); r.status != http.StatusOK || m["decision"] != "APPROVED" || ra["base_risk"] != "medium" ||
		ra["final_risk"] != "medium" || ra["requires_approval"] != false || !ok || len(factors) != 1 || !riskFactor(ra, "pii_in_content", 0.5) {
		t.Fatalf("a plain email: %d %s, want APPROVED with a medium risk assessment and pii_in_content alone", r.status, r.body)
	}
	if pc := policyCheck(m, "tool_allowed"); pc == nil || pc["passed"] != true {
		t.Fatalf("a plain email: policy_checks %v, want tool_allowed passed", m["policy_checks"])
	}
	r, m = specTool(t, g, a, "my_custom_tool", `{}`)
	ra, _ = m["risk_assessment"].(map[string]any)
	pc := policyCheck(m, "tool_allowed")
	if r.status != http.StatusForbidden || ra["final_risk"] != "critical" || !riskFactor(ra, "unknown_tool", 0.9) ||
		pc == nil || pc["passed"] != false || pc["code"] != "QWED-AGENT-004" {
		t.Fatalf("an unknown tool: %d %s, want critical, unknown_tool weighed 0.9 and tool_allowed failed", r.status, r.body)
	}
}

// TestAgentSpec_5_2_NoPIILeakage_HTTP pins QWED-Agent spec v1.1 §5.2
// (no_pii_leakage) and QWED protocol v1.0 §8.3 (QWED-SEC-003) over HTTP:
// an email whose body carries a card number is DENIED, no_pii_leakage
// failed with QWED-SEC-003 naming the kind and where, never the number;
// the security violation weighs in the risk factors. An address alone
// passes.
func TestAgentSpec_5_2_NoPIILeakage_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	a := g.register(g.issueKey("org_a"), "org_a", 3, nil)
	r, m := specTool(t, g, a, "send_email", `{"to": "ann@example.com", "body": "hello"}`)
	if pc := policyCheck(m, "no_pii_leakage"); r.status != http.StatusOK || pc == nil || pc["passed"] != true {
		t.Fatalf("an address alone: %d %s, want no_pii_leakage passed", r.status, r.body)
	}
	r, m = specTool(t, g, a, "send_email", `{"to": "ann@example.com", "body": "card 4111 1111 1111 1111"}`)
	ra, _ := m["risk_assessment"].(map[string]any)
	pc := policyCheck(m, "no_pii_leakage")
	if r.status != http.StatusForbidden || m["decision"] != "DENIED" || r.errorCode(t) != "QWED-SEC-003" || pc == nil ||
		pc["passed"] != false || pc["code"] != "QWED-SEC-003" || ra["final_risk"] != "critical" || !riskFactor(ra, "security_violation", 1) {
		t.Fatalf("a card number in an email: %d %s, want DENIED QWED-SEC-003 with no_pii_leakage failed", r.status, r.body)
	}
	if strings.Contains(string(r.body), "4111") {
		t.Fatalf("the refusal repeats the card number: %s", r.body)
	}
}

// TestAgentSpec_4_3_PendingCarriesTrust002_HTTP pins QWED-Agent spec v1.1
// §4.3 (PENDING: requires human approval) and Appendix A
// (QWED-AGENT-TRUST-002, "Action requires approval") over HTTP: a
// supervised agent's medium-risk tool call is 202 PENDING, its error
// QWED-AGENT-TRUST-002 naming the approval to wait for, which its
// principal reads.
func TestAgentSpec_4_3_PendingCarriesTrust002_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 1, nil)
	r, m := specTool(t, g, a, "send_email", `{"to": "ann@example.com", "body": "hello"}`)
	e, _ := m["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	id, _ := d["approval_id"].(string)
	ra, _ := m["risk_assessment"].(map[string]any)
	if r.status != http.StatusAccepted || m["decision"] != "PENDING" || e["code"] != "QWED-AGENT-TRUST-002" || id == "" ||
		ra["requires_approval"] != true || m["approved"] != false {
		t.Fatalf("a supervised agent's email: %d %s, want 202 PENDING with QWED-AGENT-TRUST-002 naming its approval", r.status, r.body)
	}
	if ap := g.do("GET", "/approvals/"+id, apiKey(key), nil); ap.status != http.StatusOK || ap.json(t)["status"] != "pending" {
		t.Fatalf("the approval the reply names: %d %s", ap.status, ap.body)
	}
}

// TestAgentGuide_ToolApprovalSystem_HTTP pins the QWED-Agent user guide's
// ToolApprovalSystem over HTTP: a safe tool is approved (approved: true),
// an unknown one is denied by default whatever its risk score, the reply
// carrying {approved: false, blocked_reason} as the guide shows it beside
// the gate's error (QWED-AGENT-004).
func TestAgentGuide_ToolApprovalSystem_HTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	a := g.register(g.issueKey("org_a"), "org_a", 3, nil)
	if r, m := specTool(t, g, a, "search_web", `{"q": "weather"}`); r.status != http.StatusOK || m["approved"] != true {
		t.Fatalf("a safe tool: %d %s, want approved", r.status, r.body)
	}
	r, m := specTool(t, g, a, "my_custom_tool", `{}`)
	reason, _ := m["blocked_reason"].(string)
	if r.status != http.StatusForbidden || m["decision"] != "DENIED" || m["approved"] != false || r.errorCode(t) != "QWED-AGENT-004" ||
		!strings.HasPrefix(reason, "Unknown tool 'my_custom_tool' requires explicit allowlisting (risk_score=") {
		t.Fatalf("an unknown tool: %d %s, want DENIED, approved false and the guide's blocked_reason", r.status, r.body)
	}
}
