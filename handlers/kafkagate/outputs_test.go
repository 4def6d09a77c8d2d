package kafkagate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
)

// outputsOverKafka is a gate configured as serve configures it
// (DefaultConfig) and one HTTP API instance over it whose read model polls
// once an hour: a read after a write's answer finds it only because the
// instance that answered waits for its own writes (read your writes).
func outputsOverKafka(t *testing.T) (*httpOverKafka, *client.Client, *logs) {
	t.Helper()
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	cfg := domain.DefaultConfig()
	dir := t.TempDir()
	startGate(t, brokers, lg, dir, func(c *kafkagate.Config) { c.Config = &cfg })
	kr, err := attest.OpenKeyring(dir) // the gate's signing keys sign the reports' tree heads
	if err != nil {
		t.Fatal(err)
	}
	h := startHTTPOverKafkaPolling(t, brokers, lg, engines(t), 20*time.Second, time.Hour, func(c *httpapi.Config) {
		c.JWKS = kr.JWKS
		c.SignTreeHead = func(cl attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead("node_test", cl) }
	})
	return h, newClient(t, brokers), lg
}

// kafkaAgent registers a trusted agent of principal through h with the
// admin key and returns its id and token.
func kafkaAgent(t *testing.T, h *httpOverKafka, principal string) (string, string) {
	t.Helper()
	st, reg := h.do(t, "POST", "/agents/register", map[string]string{"X-API-Key": adminKey},
		`{"agent":{"name":"out-bot","type":"trusted","principal_id":"`+principal+`"},"permissions":{},"trust_level":3}`)
	id, _ := reg["agent_id"].(string)
	tok, _ := reg["agent_token"].(string)
	if st != 201 || id == "" || tok == "" {
		t.Fatalf("register: %d %v", st, reg)
	}
	return id, tok
}

// executions reads the agent's activity through h: each activity's
// execution block by action id.
func executions(t *testing.T, h *httpOverKafka, agent string) map[string]map[string]any {
	t.Helper()
	st, act := h.do(t, "GET", "/agents/"+agent+"/activity", map[string]string{"X-API-Key": adminKey}, "")
	if st != 200 {
		t.Fatalf("activity: %d %v", st, act)
	}
	out := map[string]map[string]any{}
	list, _ := act["activities"].([]any)
	for _, x := range list {
		e, _ := x.(map[string]any)
		ex, _ := e["execution"].(map[string]any)
		out[fmt.Sprint(e["activity_id"])] = ex
	}
	return out
}

// bundle reads the agent's compliance report (JSON) through h.
func bundle(t *testing.T, h *httpOverKafka, agent string) *report.Report {
	t.Helper()
	st, body := h.raw(t, "GET", "/agents/"+agent+"/compliance-report?format=json", map[string]string{"X-API-Key": adminKey})
	if st != 200 {
		t.Fatalf("report: %d %s", st, body)
	}
	b, err := report.ReadBundle(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return b.Report
}

// TestAgentSpec_5_3_SandboxRequiredAttested_Kafka is QWED-Agent spec v1.1
// §5.3 sandbox_required on Kafka: a tool the registry marks
// sandbox_required is decided so on its partition; an execution that does
// not attest sandboxed: true is recorded flagged (sandbox_violation) in
// the reply, one that does is not, and both show in the activity entry
// and the compliance report read through the instance that answered.
func TestAgentSpec_5_3_SandboxRequiredAttested_Kafka(t *testing.T) {
	h, _, _ := outputsOverKafka(t)
	admin := map[string]string{"X-API-Key": adminKey}
	if st, r := h.do(t, "PUT", "/principals/org_sb/tools", admin, `{"tools":[{"name":"run_code","risk_level":"low","sandbox_required":true}]}`); st != 200 {
		t.Fatalf("tool registry: %d %v", st, r)
	}
	agent, token := kafkaAgent(t, h, "org_sb")
	bearer := map[string]string{"Authorization": "Bearer " + token}
	call := func() string {
		t.Helper()
		st, m := h.do(t, "POST", "/agents/"+agent+"/tools/run_code", bearer, `{"tool_call":{"parameters":{"code":"print(1)"}}}`)
		ver, _ := m["verification"].(map[string]any)
		id, _ := m["action_id"].(string)
		if st != 200 || m["decision"] != "APPROVED" || ver["sandbox_required"] != true || id == "" {
			t.Fatalf("tool call: %d %v, want APPROVED with sandbox_required", st, m)
		}
		return id
	}
	logExec := func(id, extra string) map[string]any {
		t.Helper()
		st, m := h.do(t, "POST", "/agents/"+agent+"/executions", bearer, fmt.Sprintf(`{"action_id":%q,"success":true%s}`, id, extra))
		if st != 200 || m["logged"] != true {
			t.Fatalf("executions: %d %v", st, m)
		}
		return m
	}
	flagged, attested := call(), call()
	if m := logExec(flagged, ""); m["sandbox_violation"] != true {
		t.Fatalf("an unattested execution is not flagged: %v", m)
	}
	if m := logExec(attested, `,"sandboxed":true,"sandbox":"gvisor sha256:ab"`); m["sandbox_violation"] != nil {
		t.Fatalf("an attested execution is flagged: %v", m)
	}
	execs := executions(t, h, agent)
	if ex := execs[flagged]; ex["sandbox_violation"] != true || ex["sandboxed"] != nil {
		t.Fatalf("activity of the flagged execution: %v", ex)
	}
	if ex := execs[attested]; ex["sandbox_violation"] != nil || ex["sandboxed"] != true || ex["sandbox"] != "gvisor sha256:ab" {
		t.Fatalf("activity of the attested execution: %v", ex)
	}
	if v := bundle(t, h, agent).SandboxViolations; len(v) != 1 || v[0].ActionID != flagged {
		t.Fatalf("report sandbox violations %+v, want the flagged action only", v)
	}
}

// TestAgentSpec_5_2_NoPIILeakageInOutputs_Kafka is QWED-Agent spec v1.1 §5.2
// no_pii_leakage on Kafka, for both places a caller declares an output:
// an action's declared output holding a card number is DENIED with
// QWED-SEC-003 (on the requests topic and over HTTP); an execution log's
// output holding one is recorded flagged (pii_violation) with its hash and
// findings, never its text, and the flag shows in the activity entry and
// the compliance report read through the instance that answered; an
// oversized output is QWED-REQ-004.
func TestAgentSpec_5_2_NoPIILeakageInOutputs_Kafka(t *testing.T) {
	h, c, _ := outputsOverKafka(t)
	agent, token := kafkaAgent(t, h, "org_out")
	denier, denierToken := kafkaAgent(t, h, "org_out")
	bearer := map[string]string{"Authorization": "Bearer " + token}
	const card = "4111 1111 1111 1111"

	// Before the action runs, on the requests topic.
	rep, err := c.Request(context.Background(), client.Verify(denier, denierToken, domain.VerifyAction{
		Action:  domain.Action{Type: "send_message", Output: "your card " + card},
		Context: domain.ActionContext{ConversationID: "out", StepNumber: "1"}}))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(rep.Data, &d); err != nil {
		t.Fatal(err)
	}
	if e, _ := d["error"].(map[string]any); d["decision"] != "DENIED" || e["code"] != string(domain.CodePIIDetected) || strings.Contains(string(rep.Data), "4111") {
		t.Fatalf("a card in a declared output on Kafka: %d %s; want DENIED QWED-SEC-003 without the value", rep.Status, rep.Data)
	}
	// Over HTTP, through the broker.
	st, m := h.do(t, "POST", "/agents/"+agent+"/verify", bearer,
		`{"action":{"type":"send_message","output":"write to ann@example.com"},"context":{"conversation_id":"out","step_number":1}}`)
	if c := m["policy_checks"]; st != 200 || m["decision"] != "APPROVED" || !strings.Contains(fmt.Sprint(m["risk_assessment"]), "pii_in_content") ||
		!strings.Contains(fmt.Sprint(c), "map[passed:true policy:no_pii_leakage]") {
		t.Fatalf("an address in a declared output: %d %v; want APPROVED with pii_in_content", st, m)
	}
	clean, _ := m["action_id"].(string)
	st, m = h.do(t, "POST", "/agents/"+agent+"/verify", bearer,
		`{"action":{"type":"calculate","query":"1+1"},"context":{"conversation_id":"out","step_number":2}}`)
	flagged, _ := m["action_id"].(string)
	if st != 200 || flagged == "" {
		t.Fatalf("verify: %d %v", st, m)
	}

	// After it ran: the execution logs.
	if st, m = h.do(t, "POST", "/agents/"+agent+"/executions", bearer,
		fmt.Sprintf(`{"action_id":%q,"success":true,"output":%q}`, flagged, strings.Repeat("x", domain.MaxOutputBytes+1))); st != 400 {
		t.Fatalf("an oversized output: %d %v; want 400", st, m)
	}
	if e, _ := m["error"].(map[string]any); e["code"] != string(domain.CodeTooLong) {
		t.Fatalf("an oversized output: %v; want QWED-REQ-004", m)
	}
	st, m = h.do(t, "POST", "/agents/"+agent+"/executions", bearer,
		fmt.Sprintf(`{"action_id":%q,"success":true,"output":"charged %s"}`, flagged, card))
	if st != 200 || m["pii_violation"] != true || !strings.HasPrefix(fmt.Sprint(m["result_hash"]), "sha256:") {
		t.Fatalf("an execution whose output holds a card: %d %v; want logged, flagged, the output's hash", st, m)
	}
	if st, m = h.do(t, "POST", "/agents/"+agent+"/executions", bearer,
		fmt.Sprintf(`{"action_id":%q,"success":true,"output":"sent"}`, clean)); st != 200 || m["pii_violation"] != nil {
		t.Fatalf("a clean execution: %d %v", st, m)
	}
	execs := executions(t, h, agent)
	if ex := execs[flagged]; ex["pii_violation"] != true || fmt.Sprint(ex["output_findings"]) != "[map[kind:card_number location:output offset:8]]" {
		t.Fatalf("activity of the flagged execution: %v", ex)
	}
	if ex := execs[clean]; ex["pii_violation"] != nil || ex["output_findings"] != nil {
		t.Fatalf("activity of the clean execution: %v", ex)
	}
	r := bundle(t, h, agent)
	if v := r.PIIViolations; len(v) != 1 || v[0].ActionID != flagged || !slices.Equal(v[0].Kinds, []string{"card_number"}) {
		t.Fatalf("report pii violations %+v; want the flagged action only", v)
	}
	if st, body := h.raw(t, "GET", "/agents/"+agent+"/compliance-report?format=json", map[string]string{"X-API-Key": adminKey}); st != 200 ||
		bytes.Contains(body, []byte("4111")) {
		t.Fatalf("the report holds the output: %d", st)
	}
}

// TestAgentSpec_5_2_NoPIILeakageInJSONEscapedOutput_Kafka is QWED-Agent
// spec v1.1 §5.2 no_pii_leakage on Kafka for an output that is a JSON
// document writing its card number with escapes ("\u0034111…"), which its
// reader decodes: the declared output is DENIED with QWED-SEC-003 on the
// requests topic, the execution's is flagged, and no record of the events
// topic holds the execution's output.
func TestAgentSpec_5_2_NoPIILeakageInJSONEscapedOutput_Kafka(t *testing.T) {
	h, c, lg := outputsOverKafka(t)
	agent, token := kafkaAgent(t, h, "org_esc")
	denier, denierToken := kafkaAgent(t, h, "org_esc")
	const out = `{"order":"order-77","card":"\u0034111 1111 1111 1111"}`
	rep, err := c.Request(context.Background(), client.Verify(denier, denierToken, domain.VerifyAction{
		Action:  domain.Action{Type: "send_message", Output: out},
		Context: domain.ActionContext{ConversationID: "esc", StepNumber: "1"}}))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(rep.Data, &d); err != nil {
		t.Fatal(err)
	}
	if e, _ := d["error"].(map[string]any); d["decision"] != "DENIED" || e["code"] != string(domain.CodePIIDetected) {
		t.Fatalf("an escaped card in a declared output on Kafka: %d %s; want DENIED QWED-SEC-003", rep.Status, rep.Data)
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	st, m := h.do(t, "POST", "/agents/"+agent+"/verify", bearer,
		`{"action":{"type":"calculate","query":"1+1"},"context":{"conversation_id":"esc","step_number":1}}`)
	id, _ := m["action_id"].(string)
	if st != 200 || id == "" {
		t.Fatalf("verify: %d %v", st, m)
	}
	body, _ := json.Marshal(map[string]any{"action_id": id, "success": true, "output": out})
	if st, m = h.do(t, "POST", "/agents/"+agent+"/executions", bearer, string(body)); st != 200 || m["pii_violation"] != true {
		t.Fatalf("an execution whose output escapes a card: %d %v; want logged and flagged", st, m)
	}
	// The declared output is recorded with its action (it re-decides from
	// the log): that one record holds the marker, and no other.
	held := 0
	for p := range int32(testPartitions) {
		l, err := lg.open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		err = l.Read(context.Background(), 1, func(r streams.Record) error {
			if !bytes.Contains(r.Payload, []byte("order-77")) {
				return nil
			}
			if held++; !bytes.Contains(r.Payload, []byte(`"decision":"DENIED"`)) {
				t.Errorf("partition %d event %d holds the execution's output: %s", p, r.Seq, r.Payload)
			}
			return nil
		})
		_ = l.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if held != 1 {
		t.Fatalf("%d records hold the output's marker; want the denied declaration's only", held)
	}
}
