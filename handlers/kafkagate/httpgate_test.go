package kafkagate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/schemas/openapi"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// httpOverKafka is an HTTP API instance in Kafka mode: HTTPGate sends the
// commands through the broker, ReadModel serves the reads.
type httpOverKafka struct {
	url   string
	reads *kafkagate.ReadModel
	gate  *kafkagate.HTTPGate
}

func startHTTPOverKafka(t testing.TB, brokers []string, lg *logs, reg *verify.Registry, timeout time.Duration, opts ...func(*httpapi.Config)) *httpOverKafka {
	t.Helper()
	return startHTTPOverKafkaPolling(t, brokers, lg, reg, timeout, 50*time.Millisecond, opts...)
}

// startHTTPOverKafkaPolling is startHTTPOverKafka whose read model polls
// the events partitions every poll.
func startHTTPOverKafkaPolling(t testing.TB, brokers []string, lg *logs, reg *verify.Registry, timeout, poll time.Duration, opts ...func(*httpapi.Config)) *httpOverKafka {
	t.Helper()
	reads, err := kafkagate.OpenReadModel(context.Background(), filepath.Join(t.TempDir(), "readmodel"), quiet(), testPartitions, lg.openFrom)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { reads.Follow(ctx, poll); close(done) }()
	c, err := kafkaout.NewRequester(context.Background(), kafkaout.RequesterConfig{Brokers: brokers,
		RequestTopic: kafkagate.DefaultTopics().Requests, ReplyTopic: kafkagate.DefaultTopics().Replies, Timeout: 20 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	hg := kafkagate.NewHTTPGate(c, command.HashSecret(adminKey), kafkagate.DefaultTopics(), "node_http", reads)
	qwed, err := verify.New(verify.Config{Registry: reg, Gate: hg, Logger: quiet(), RecordTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.Config{
		Gate: hg, Store: reads.Store(), Verify: qwed, AdminKeyHash: command.HashSecret(adminKey),
		Logger: quiet(), RequestTimeout: timeout, History: kafkagate.PartitionHistory(testPartitions, lg.open),
		CatchUp: reads.CatchUp,
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv := httptest.NewServer(openapi.Hook(t, httpapi.New(cfg)))
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		_ = reads.Close()
	})
	return &httpOverKafka{url: srv.URL, reads: reads, gate: hg}
}

// raw answers method path with its status and body as they are.
func (h *httpOverKafka) raw(t *testing.T, method, path string, hdr map[string]string) (int, []byte) {
	t.Helper()
	a := h.send(t, method, path, hdr, "")
	return a.Status, a.Body
}

// send sends method path with the headers and body ("": none) and
// returns the answer as it is.
func (h *httpOverKafka) send(t testing.TB, method, path string, hdr map[string]string, body string) gatetest.Answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return gatetest.Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func (h *httpOverKafka) do(t *testing.T, method, path string, hdr map[string]string, body string) (int, map[string]any) {
	t.Helper()
	st, m, err := h.request(method, path, hdr, body)
	if err != nil {
		t.Fatal(err)
	}
	return st, m
}

// request is do for a goroutine other than the test's, which must not call
// t.Fatal: it returns the error instead.
func (h *httpOverKafka) request(method, path string, hdr map[string]string, body string) (int, map[string]any, error) {
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("building %s %s: %w", method, path, err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("sending %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, nil, fmt.Errorf("%s %s: %d %q is not JSON: %w", method, path, resp.StatusCode, b, err)
	}
	return resp.StatusCode, m, nil
}

// Issue 3 "In Kafka mode the HTTP API works unchanged": register and
// verify over HTTP go through the broker to the partition of the agent and
// back; POST /verify runs the engines and records through the broker; the
// activity is readable from the read model; with no gate consuming, the API
// answers a clear 504 (QWED-ENG-003) at its timeout, and the same
// Idempotency-Key once a gate is back gets the decision.
func TestKafkaHTTPAPIThroughKafka(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	g := startGate(t, brokers, lg, dir)
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 2*time.Second)
	admin := map[string]string{"X-API-Key": adminKey}

	st, reg := h.do(t, "POST", "/agents/register", admin,
		`{"agent":{"name":"http-bot","type":"autonomous","principal_id":"org_http"},"permissions":{"allowed_engines":["sql"]},"budget":{}}`)
	agent, _ := reg["agent_id"].(string)
	token, _ := reg["agent_token"].(string)
	if st != 201 || agent == "" || token == "" {
		t.Fatalf("register over HTTP through Kafka: %d %v", st, reg)
	}
	bearer := func(key string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Idempotency-Key": key}
	}
	body := func(step int) string {
		return `{"action":{"type":"execute_sql","query":"SELECT name FROM customers WHERE id = ` + string(rune('0'+step)) +
			`"},"context":{"conversation_id":"http-conv","step_number":` + string(rune('0'+step)) + `}}`
	}
	st, dec := h.do(t, "POST", "/agents/"+agent+"/verify", bearer("v-1"), body(1))
	v, _ := dec["verification"].(map[string]any)
	if st != 200 || dec["decision"] != "APPROVED" || dec["action_id"] == nil || v["engine"] != "sql" {
		t.Fatalf("verify over HTTP through Kafka: %d %v", st, dec)
	}
	// A replayed step is refused by the partition, with the HTTP status.
	st, dec = h.do(t, "POST", "/agents/"+agent+"/verify", bearer("v-1-again"), body(1))
	if e, _ := dec["error"].(map[string]any); st == 200 || e["code"] != "QWED-AGENT-LOOP-002" {
		t.Fatalf("replayed step over HTTP through Kafka: %d %v", st, dec)
	}
	// POST /verify: the engines answer, the gate records through Kafka.
	st, qv := h.do(t, "POST", "/verify", admin, `{"query":"2+2=4","type":"math","options":{"include_attestation":true}}`)
	md, _ := qv["metadata"].(map[string]any)
	if st != 200 || qv["status"] != "VERIFIED" || qv["attestation"] == nil || md["seq"] == nil {
		t.Fatalf("POST /verify through Kafka: %d %v", st, qv)
	}
	// The math engine's calculus answers alike in this deployment: the
	// review's attacks (a divergent integral, a limit over a hidden domain,
	// an extraneous root) are refused or FAILED, never VERIFIED.
	for _, tc := range []struct{ body, status, code string }{
		{`{"query":"1/x**2 = -2","type":"math","params":{"operation":"integrate","lower":-1,"upper":1}}`, "ERROR", "QWED-REQ-001"},
		{`{"query":"exp(log(x)) = -1","type":"math","params":{"operation":"limit","point":-1}}`, "UNSUPPORTED", "QWED-REQ-005"},
		{`{"query":"x/(x-1) = 1/(x-1)","type":"math","params":{"operation":"solve","solutions":[1]}}`, "FAILED", ""},
	} {
		st, mv := h.do(t, "POST", "/verify", admin, tc.body)
		e, _ := mv["error"].(map[string]any)
		if code, _ := e["code"].(string); mv["status"] != tc.status || code != tc.code || mv["verified"] != false {
			t.Fatalf("POST /verify %s through Kafka: %d %v, want %s %s", tc.body, st, mv, tc.status, tc.code)
		}
	}
	// The read model catches up: the decision is in the activity.
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, act := h.do(t, "GET", "/agents/"+agent+"/activity", admin, "")
		if list, _ := act["activities"].([]any); st == 200 && len(list) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("activity never reached the read model: %d %v", st, act)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// No gate consumes: a clear 504 at the API's timeout.
	g.stop()
	start := time.Now()
	st, to := h.do(t, "POST", "/agents/"+agent+"/verify", bearer("v-2"), body(2))
	e, _ := to["error"].(map[string]any)
	if st != http.StatusGatewayTimeout || e["code"] != "QWED-ENG-003" {
		t.Fatalf("no gate: %d %v, want 504 QWED-ENG-003", st, to)
	}
	if took := time.Since(start); took < 2*time.Second || took > 6*time.Second {
		t.Fatalf("504 after %s, want the 2 s timeout", took)
	}
	// The request waits in the topic: once a gate is back, the same
	// Idempotency-Key gets the decision (recorded once).
	startGate(t, brokers, lg, dir)
	for try := 0; ; try++ {
		st, dec = h.do(t, "POST", "/agents/"+agent+"/verify", bearer("v-2"), body(2))
		if st == 200 {
			break
		}
		if st != http.StatusGatewayTimeout || try == 10 {
			t.Fatalf("retry after the gate came back: %d %v", st, dec)
		}
	}
	if dec["decision"] != "APPROVED" || dec["step_number"] != 2.0 {
		t.Fatalf("retry after the gate came back: %v", dec)
	}
}

// Issue 5 in Kafka mode: the compliance report (a bundle that verifies
// offline, and CSV) and time travel read the agent's events partition on
// the broker (kafkagate.PartitionHistory), not the instance's read model.
func TestKafkaComplianceReportAndTimeTravelReadThePartition(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	startGate(t, brokers, lg, dir)
	kr, err := attest.OpenKeyring(dir) // the gate's signing keys
	if err != nil {
		t.Fatal(err)
	}
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second, func(c *httpapi.Config) {
		c.JWKS = kr.JWKS
		c.SignTreeHead = func(cl attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead("node_test", cl) }
	})
	admin := map[string]string{"X-API-Key": adminKey}
	st, reg := h.do(t, "POST", "/agents/register", admin,
		`{"agent":{"name":"audit-bot","type":"autonomous","principal_id":"org_audit"},"permissions":{},"budget":{}}`)
	agent, _ := reg["agent_id"].(string)
	token, _ := reg["agent_token"].(string)
	if st != 201 || agent == "" {
		t.Fatalf("register: %d %v", st, reg)
	}
	// An agent of another principal in the same partition, whose queries
	// carry a marker that A's bundle must not hold (issue 11 item 3).
	const marker = "Q-KAFKA-MARKER-9d02b6"
	var other, otherToken string
	for i := 0; i < 64 && other == ""; i++ {
		st, reg := h.do(t, "POST", "/agents/register", admin,
			`{"agent":{"name":"other-bot","type":"autonomous","principal_id":"org_other"},"permissions":{},"budget":{}}`)
		id, _ := reg["agent_id"].(string)
		if st != 201 {
			t.Fatalf("register: %d %v", st, reg)
		}
		if kafkagate.PartitionFor(id, testPartitions) == kafkagate.PartitionFor(agent, testPartitions) {
			other, otherToken = id, reg["agent_token"].(string)
		}
	}
	if other == "" {
		t.Fatal("no agent of the other principal shares the partition")
	}
	for step := 1; step <= 3; step++ {
		st, dec := h.do(t, "POST", "/agents/"+other+"/verify", map[string]string{"Authorization": "Bearer " + otherToken},
			fmt.Sprintf(`{"action":{"type":"calculate","query":"%d+2"},"context":{"conversation_id":"%s","step_number":%d}}`, step, marker, step))
		if st != 200 {
			t.Fatalf("verify other step %d: %d %v", step, st, dec)
		}
		st, dec = h.do(t, "POST", "/agents/"+agent+"/verify", map[string]string{"Authorization": "Bearer " + token},
			fmt.Sprintf(`{"action":{"type":"calculate","query":"%d+1"},"context":{"conversation_id":"audit-conv","step_number":%d},"options":{"require_attestation":true}}`, step, step))
		if st != 200 || dec["decision"] != "APPROVED" {
			t.Fatalf("verify step %d: %d %v", step, st, dec)
		}
	}
	// Reads authenticate against the read model: let it catch up.
	for deadline := time.Now().Add(20 * time.Second); ; {
		st, act := h.do(t, "GET", "/agents/"+agent+"/activity", admin, "")
		if list, _ := act["activities"].([]any); st == 200 && len(list) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read model never caught up: %d %v", st, act)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Time travel: now, the conversation is at step 3 after three actions.
	now := time.Now().UTC().Add(time.Second).Format(time.RFC3339Nano)
	st, view := h.do(t, "GET", "/agents/"+agent+"/state?at_time="+now, admin, "")
	convs, _ := view["conversations"].([]any)
	if st != 200 || view["total_actions"] != 3.0 || len(convs) != 1 {
		t.Fatalf("state now: %d %v", st, view)
	}
	if c, _ := convs[0].(map[string]any); c["last_step"] != 3.0 {
		t.Fatalf("conversation now: %v", convs[0])
	}
	// Walking back (other events, such as a checkpoint, may follow the
	// third decision), the state just before the third decision has two
	// actions and the conversation at step 2.
	at := uint64(view["at_seq"].(float64))
	found := false
	for seq := at - 1; seq > 0 && !found; seq-- {
		st, before := h.do(t, "GET", fmt.Sprintf("/agents/%s/state?at_seq=%d", agent, seq), admin, "")
		if st != 200 {
			t.Fatalf("state at seq %d: %d %v", seq, st, before)
		}
		switch before["total_actions"] {
		case 3.0:
			continue
		case 2.0:
			c, _ := before["conversations"].([]any)
			if len(c) != 1 || c[0].(map[string]any)["last_step"] != 2.0 {
				t.Fatalf("state at seq %d: %v", seq, before)
			}
			found = true
		default:
			t.Fatalf("state at seq %d skipped from 3 actions: %v", seq, before)
		}
	}
	if !found {
		t.Fatalf("no position before seq %d shows two actions", at)
	}
	if st, past := h.do(t, "GET", fmt.Sprintf("/agents/%s/state?at_seq=%d", agent, at+1000), admin, ""); st != 400 {
		t.Fatalf("state past the partition's head: %d %v", st, past)
	}
	// The compliance report: a bundle of the agent's events in the
	// partition's tree that verifies offline, with the three approved,
	// attested actions.
	st, body := h.raw(t, "GET", "/agents/"+agent+"/compliance-report?format=json", admin)
	if st != 200 {
		t.Fatalf("report: %d %s", st, body)
	}
	for _, s := range []string{marker, other, "org_other"} {
		if bytes.Contains(body, []byte(s)) {
			t.Errorf("the bundle of %s holds %q", agent, s)
		}
	}
	b, err := report.ReadBundle(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Report.Summary; s.TotalActions != 3 || s.Approved != 3 {
		t.Fatalf("report summary %+v", s)
	}
	chk, err := report.VerifyBundle(context.Background(), b, report.VerifyOptions{})
	if err != nil || !chk.OK() || len(b.Report.Attestations) != 3 || chk.Attestations != 3 {
		t.Fatalf("bundle: %v %+v, %d attestations", err, chk, len(b.Report.Attestations))
	}
	st, body = h.raw(t, "GET", "/agents/"+agent+"/compliance-report?format=csv", admin)
	if st != 200 || !strings.Contains(string(body), "summary,,total_actions,number,3") {
		t.Fatalf("csv report: %d %s", st, body)
	}
}
