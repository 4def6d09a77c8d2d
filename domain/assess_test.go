package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// replyOf renders the reply to ev as a generic map.
func replyOf(t *testing.T, ev *Event) map[string]any {
	t.Helper()
	_, body := Reply(ev)
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// QWED-Agent spec v1.1 §5.2: replies carry risk_assessment (base_risk,
// weighted factors, final_risk, requires_approval) and policy_checks,
// derived from the recorded decision.
func TestAgentSpec5_2_RiskAssessmentAndPolicyChecks(t *testing.T) {
	g := newGate(t)
	g.s.Config.ToolVerification = true
	id := g.register("a", "supervised", nil, Limits{}, Permissions{AllowedTools: []string{"database_read"}})
	ev := g.exec(toolCall(id, "a", "database_read", `{"query":"DROP TABLE users"}`, sqlVerdict(engines.Verified, RiskCritical, "query")))
	m := replyOf(t, ev)
	ra, _ := m["risk_assessment"].(map[string]any)
	if ra["base_risk"] != "low" || ra["final_risk"] != "low" || ra["requires_approval"] != false {
		t.Fatalf("risk_assessment %v", ra)
	}
	if f, _ := ra["factors"].([]any); len(f) != 1 || f[0].(map[string]any)["factor"] != "verification_failed" || f[0].(map[string]any)["weight"] != 0.8 {
		t.Fatalf("factors %v, want verification_failed 0.8", ra["factors"])
	}
	checks, _ := m["policy_checks"].([]any)
	last, _ := checks[len(checks)-1].(map[string]any)
	if last["policy"] != checkEngineVerdict || last["passed"] != false || last["code"] != string(CodeVerificationFailed) || last["severity"] != "high" {
		t.Fatalf("policy_checks %v", checks)
	}
	if first, _ := checks[0].(map[string]any); first["policy"] != checkToolAllowed || first["passed"] != true {
		t.Fatalf("policy_checks %v", checks)
	}
	// A PENDING action: approval required, its factor weighed.
	ev = g.exec(verifyCmd(id, "a", "c", "1", "write_file", ""))
	ra, _ = replyOf(t, ev)["risk_assessment"].(map[string]any)
	if decision(ev) != Denied || ra["final_risk"] != "high" {
		t.Fatalf("write_file at trust 1: %s %v", decision(ev), ra)
	}
	ev = g.exec(verifyCmd(id, "a", "c", "1", "send_email", ""))
	ra, _ = replyOf(t, ev)["risk_assessment"].(map[string]any)
	if decision(ev) != Pending || ra["requires_approval"] != true || !strings.Contains(string(mustJSON(t, ra["factors"])), `"approval_required"`) {
		t.Fatalf("send_email at trust 1: %s %v", decision(ev), ra)
	}
	// Deterministic: the same event renders the same bytes.
	_, b1 := Reply(ev)
	_, b2 := Reply(ev)
	if string(mustJSON(t, b1)) != string(mustJSON(t, b2)) {
		t.Fatal("the reply is not deterministic")
	}
}

// QWED-Agent spec v1.1 §9 (QWED-AGENT-TRUST-002, "Action requires
// approval"): a PENDING reply carries it, naming its approval; the
// recorded decision carries no error.
func TestAgentSpec9_Trust002OnPending(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	ev := g.exec(verifyCmd(id, "a", "c", "1", "send_email", ""))
	if decision(ev) != Pending || ev.Decided.Error != nil {
		t.Fatalf("%s %v, want PENDING with no recorded error", decision(ev), ev.Decided.Error)
	}
	e, _ := replyOf(t, ev)["error"].(map[string]any)
	if e["code"] != string(CodeRequiresApproval) || e["details"].(map[string]any)["approval_id"] != ev.Decided.Approval.ID {
		t.Fatalf("error %v, want QWED-AGENT-TRUST-002 naming the approval", e)
	}
	if status, _ := Reply(ev); status != 202 {
		t.Fatalf("status %d, want 202", status)
	}
}

// The QWED-Agent user guide's ToolApprovalSystem answer: a refused tool
// call's reply says {approved: false, blocked_reason} beside the gate's
// error; an approved one says approved: true; an action's says neither.
func TestAgentGuide_ToolApprovalBlockedReason(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	m := replyOf(t, g.exec(toolCall(id, "a", "my_custom_tool", "", nil)))
	want := "Unknown tool 'my_custom_tool' requires explicit allowlisting (risk_score=0.4)"
	if m["approved"] != false || m["blocked_reason"] != want || m["error"].(map[string]any)["message"] != want {
		t.Fatalf("unknown tool: approved %v blocked_reason %v", m["approved"], m["blocked_reason"])
	}
	if m = replyOf(t, g.exec(toolCall(id, "a", "search_web", "", nil))); m["approved"] != true || m["blocked_reason"] != nil {
		t.Fatalf("safe tool: approved %v blocked_reason %v", m["approved"], m["blocked_reason"])
	}
	if m = replyOf(t, g.exec(verifyCmd(id, "a", "c", "1", "calculate", "2+2"))); m["approved"] != nil {
		t.Fatalf("an action's reply carries approved: %v", m["approved"])
	}
}
