package kafkagate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/httpapi"
)

// Issue 13 item 10 on Kafka: the A2A reads of an HTTP instance in Kafka
// mode are served by its read model, folded from every events partition:
// each answer reads its own writes (the read model polls once an hour
// here, so only the write's own wait makes it readable), the counters and
// boundaries are tenant-scoped, and the gate-wide counters reach
// /metrics.
func TestKafkaA2AReadsFromTheReadModel(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	startGate(t, brokers, lg, dir)
	kr, err := attest.OpenKeyring(dir) // the gate's signing keys
	if err != nil {
		t.Fatal(err)
	}
	var gate httpapi.Gate
	h := startHTTPOverKafkaPolling(t, brokers, lg, engines(t), 20*time.Second, time.Hour, func(c *httpapi.Config) {
		gate = c.Gate
		c.JWKS = kr.JWKS
		c.SignTreeHead = func(cl attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead("node_test", cl) }
	})
	admin := map[string]string{"X-API-Key": adminKey}
	key := func(p string) map[string]string {
		st, k := h.do(t, "POST", "/principals/"+p+"/keys", admin, "")
		s, _ := k["api_key"].(string)
		if st != 201 || s == "" {
			t.Fatalf("issuing a key of %s: %d %v", p, st, k)
		}
		return map[string]string{"X-API-Key": s}
	}
	ka, kb := key("org_a"), key("org_b")
	n := 0
	submit := func(cmd *domain.Command) *domain.Event {
		t.Helper()
		n++
		cmd.Request = domain.RequestID{Source: "kafka-a2a-reads", ID: fmt.Sprint(n)}
		ev, err := gate.Submit(context.Background(), cmd)
		if err != nil {
			t.Fatalf("submitting %s: %v", cmd.Type, err)
		}
		return ev
	}
	// Deny-all off and a burst of one, on every partition.
	cfg := domain.DefaultConfig()
	c := domain.DefaultA2AConfig()
	c.DefaultAllow, c.Burst, c.RatePerMinute = true, 1, 1
	cfg.A2A = &c
	if ev := submit(&domain.Command{Type: domain.CmdConfigure, Principal: domain.AdminPrincipal, Configure: &domain.Configure{Config: cfg}}); ev.Error != nil {
		t.Fatalf("configuring: %+v", ev.Error)
	}
	var messageEvent func(principal, sender, receiver string, pt a2a.PayloadType, payload string) *domain.Event
	boundary := func(principal, op, agent string) {
		t.Helper()
		ev := submit(&domain.Command{Type: domain.CmdA2ABoundary, Principal: principal, A2ABoundary: &domain.A2ABoundaryChange{Op: op, Agent: agent}})
		if ev.Type != domain.EvA2ABoundaryChanged {
			t.Fatalf("boundary change: %+v", ev.Error)
		}
	}
	message := func(principal, sender, receiver string, pt a2a.PayloadType, payload string) a2a.Status {
		t.Helper()
		return messageEvent(principal, sender, receiver, pt, payload).A2AVerdict.Status
	}
	messageEvent = func(principal, sender, receiver string, pt a2a.PayloadType, payload string) *domain.Event {
		t.Helper()
		ev := submit(&domain.Command{Type: domain.CmdA2AMessage, Principal: principal, AgentID: sender,
			A2A: &a2a.Message{SenderAgentID: sender, ReceiverAgentID: receiver, PayloadType: pt, Payload: json.RawMessage(payload)}})
		if ev.A2AVerdict == nil {
			t.Fatalf("message refused: %+v", ev.Error)
		}
		return ev
	}
	boundary("org_a", domain.A2AOpTrust, "alice")
	boundary("org_a", domain.A2AOpBlock, "mallory")
	boundary("org_b", domain.A2AOpTrust, "zed")
	// Read at once: each write is readable when its answer arrives.
	st, b := h.do(t, "GET", "/a2a/boundary", ka, "")
	if tr, _ := b["trusted_agents"].(map[string]any); st != 200 || tr["count"] != 1.0 || fmt.Sprint(tr["agents"]) != "[alice]" {
		t.Fatalf("org_a's boundary: %d %v", st, b)
	}
	got := []a2a.Status{
		message("org_a", "alice", "bob", a2a.PayloadGeneral, `{}`),
		message("org_a", "alice", "bob", a2a.PayloadGeneral, `{}`),
		message("org_a", "carol", "bob", a2a.PayloadFinancial, `{"data":{"claimed_total":5,"line_items":[{"description":"w","amount":2,"quantity":2}]}}`),
		message("org_b", "zed", "yan", a2a.PayloadGeneral, `{}`),
	}
	if want := []a2a.Status{a2a.StatusForwarded, a2a.StatusRateLimited, a2a.StatusBlocked, a2a.StatusForwarded}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	st, m := h.do(t, "GET", "/a2a/metrics", ka, "")
	if st != 200 || m["scope"] != "org_a" || m["total_intercepted"] != 3.0 || m["forwarded"] != 1.0 || m["rate_limited"] != 1.0 ||
		m["blocked"] != 1.0 || m["pairs_counted"] != 2.0 {
		t.Fatalf("org_a's metrics: %d %v", st, m)
	}
	st, m = h.do(t, "GET", "/a2a/metrics", kb, "")
	if st != 200 || m["total_intercepted"] != 1.0 || strings.Contains(fmt.Sprint(m), "alice") {
		t.Fatalf("org_b's metrics: %d %v", st, m)
	}
	st, b = h.do(t, "GET", "/a2a/boundary", kb, "")
	if st != 200 || strings.Contains(fmt.Sprint(b), "alice") || strings.Contains(fmt.Sprint(b), "mallory") {
		t.Fatalf("org_b's boundary shows org_a's: %d %v", st, b)
	}
	if st, _ := h.do(t, "GET", "/a2a/metrics?principal=org_a", kb, ""); st != 403 {
		t.Fatalf("org_b reading org_a's metrics: %d", st)
	}
	st, m = h.do(t, "GET", "/a2a/metrics", admin, "")
	if st != 200 || m["scope"] != "gate" || m["total_intercepted"] != 4.0 {
		t.Fatalf("the gate's metrics: %d %v", st, m)
	}
	st, hl := h.do(t, "GET", "/a2a/health", nil, "")
	if cfgv, _ := hl["config"].(map[string]any); st != 200 || cfgv["default_allow"] != true || cfgv["burst"] != 1.0 {
		t.Fatalf("health: %d %v", st, hl)
	}
	_, prom := h.raw(t, "GET", "/metrics", nil)
	if !strings.Contains(string(prom), `agentgate_a2a_verdicts_total{engine="passthrough",status="forwarded"} 2`) ||
		!strings.Contains(string(prom), `agentgate_a2a_verdicts_total{engine="finance_guard",status="blocked"} 1`) {
		t.Fatalf("/metrics lacks the gate's A2A counters:\n%s", prom)
	}

	// The compliance report of an agent of org_a counts the verdicts on
	// its messages, read from its events partition (messages are keyed by
	// their sender), and its bundle verifies.
	st, reg := h.do(t, "POST", "/agents/register", ka, `{"agent":{"name":"a2a-bot","type":"autonomous","principal_id":"org_a"},"permissions":{},"budget":{}}`)
	bot, _ := reg["agent_id"].(string)
	if st != 201 || bot == "" {
		t.Fatalf("registering: %d %v", st, reg)
	}
	first := messageEvent("org_a", bot, "bob", a2a.PayloadGeneral, `{}`)
	messageEvent("org_a", bot, "carol", a2a.PayloadFinancial, `{"data":{"claimed_total":5,"line_items":[{"description":"w","amount":2,"quantity":2}]}}`)
	messageEvent("org_b", bot, "carol", a2a.PayloadGeneral, `{}`) // org_b's, not the agent's principal's
	st, body := h.raw(t, "GET", "/agents/"+bot+"/compliance-report?format=json", ka)
	if st != 200 {
		t.Fatalf("report: %d %s", st, body)
	}
	rb, err := report.ReadBundle(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if x := rb.Report.A2A; x == nil || x.Total != 2 || x.Forwarded != 1 || x.Blocked != 1 || len(x.Pairs) != 2 {
		t.Fatalf("the report's A2A section: %+v", rb.Report.A2A)
	}
	if chk, err := report.VerifyBundle(context.Background(), rb, report.VerifyOptions{}); err != nil || !chk.OK() {
		t.Fatalf("bundle: %v %+v", err, chk)
	}
	// Time travel in the partition of the sender's messages.
	st, m = h.do(t, "GET", fmt.Sprintf("/a2a/metrics?at_seq=%d&sender=%s", first.Seq, bot), ka, "")
	if v, _ := m["verdict"].(map[string]any); st != 200 || v["sender"] != bot || v["status"] != "forwarded" {
		t.Fatalf("metrics as of the agent's first message: %d %v", st, m)
	}
	// Over the public endpoints: each read follows the write before it.
	if st, res := h.do(t, "POST", "/a2a/boundary/trust/erin", ka, ""); st/100 != 2 {
		t.Fatalf("trusting erin over HTTP: %d %v", st, res)
	}
	if st, b := h.do(t, "GET", "/a2a/boundary", ka, ""); st != 200 || !strings.Contains(fmt.Sprint(b["trusted_agents"]), "erin") {
		t.Fatalf("boundary after the trust over HTTP: %d %v", st, b)
	}
	if st, res := h.do(t, "POST", "/a2a/intercept", ka, `{"sender_agent_id":"erin","receiver_agent_id":"alice","payload_type":"general","payload":{}}`); st != 200 || res["status"] != "forwarded" {
		t.Fatalf("intercept over HTTP: %d %v", st, res)
	}
	if st, m := h.do(t, "GET", "/a2a/metrics", ka, ""); st != 200 || m["total_intercepted"] != 6.0 {
		t.Fatalf("metrics after the intercept over HTTP: %d %v", st, m)
	}
}
