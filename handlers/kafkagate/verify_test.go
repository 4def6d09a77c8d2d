package kafkagate_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/handlers/verify/z3pool"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// engines returns the built-in engines, the logic engine on a z3 pool
// when z3 is installed.
func engines(t testing.TB) *verify.Registry {
	t.Helper()
	opts := verify.BuiltinOptions{}
	if path, err := exec.LookPath("z3"); err == nil {
		pool, err := z3pool.New(z3pool.Config{Path: path, Size: 1, Logger: quiet()})
		if err != nil {
			t.Fatalf("starting z3: %v", err)
		}
		t.Cleanup(func() { _ = pool.Close() })
		opts.Solver = pool
	}
	reg, err := verify.NewRegistry(verify.Builtin(opts)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// withEngines configures a gate's verifier and qwed.verify engines.
func withEngines(reg *verify.Registry) func(*kafkagate.Config) {
	return func(c *kafkagate.Config) {
		c.Verifier = verify.NewActionVerifier(reg, 0)
		c.Engines = reg
	}
}

// registerWith registers an agent of type typ allowed the given engines.
func registerWith(t testing.TB, c *client.Client, typ string, allowed ...string) (string, string) {
	t.Helper()
	rep, err := c.Request(context.Background(), client.Register(adminKey,
		domain.AgentInfo{Name: "eng", Type: typ, PrincipalID: "org_a"}, domain.Permissions{AllowedEngines: allowed}, domain.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		AgentID    string `json:"agent_id"`
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal(rep.Data, &m); err != nil || rep.Status != 201 {
		t.Fatalf("register: %d %s", rep.Status, rep.Data)
	}
	return m.AgentID, m.AgentToken
}

// QWED-Agent spec v1.1 §2.3 on Kafka: a verify_action decided by a partition runs the
// verification engine first (Config.Verifier reaches every partition's
// worker): a false calculation is CORRECTED by the math engine and a
// read-only query carries the sql engine's verdict, where the rules alone
// would approve both without a verification block. Under serve's options
// (domain.DefaultConfig) the sql engine's class is the one SQL risk rule:
// a query the engine cannot read has no class and is critical, where the
// tokenizer of older logs would have read it as a low-risk SELECT.
func TestKafkaVerifyActionRunsEngines(t *testing.T) {
	_, brokers := broker(t)
	cfg := domain.DefaultConfig()
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)), func(c *kafkagate.Config) { c.Config = &cfg })
	c := newClient(t, brokers)
	agent, token := registerWith(t, c, "supervised", "math", "sql")
	act := func(step int, typ, query string) map[string]any {
		t.Helper()
		rep, err := c.Request(context.Background(), client.Verify(agent, token, domain.VerifyAction{
			Action:  domain.Action{Type: typ, Query: query},
			Context: domain.ActionContext{ConversationID: "eng", StepNumber: json.Number(string(rune('0' + step)))},
		}))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(rep.Data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := act(1, "calculate", "2+2=5")
	ca, _ := m["corrected_action"].(map[string]any)
	v, _ := m["verification"].(map[string]any)
	if m["decision"] != "CORRECTED" || ca["query"] != "2 + 2 = 4" || v["engine"] != "math" {
		t.Fatalf("2+2=5 over Kafka: %v, want CORRECTED to 2 + 2 = 4 by the math engine", m)
	}
	m = act(2, "execute_sql", "SELECT name FROM customers WHERE id = 1")
	v, _ = m["verification"].(map[string]any)
	if m["decision"] != "APPROVED" || v["engine"] != "sql" || v["status"] != "VERIFIED" || v["risk_level"] != "low" {
		t.Fatalf("read-only SELECT over Kafka: %v, want APPROVED, low, with the sql engine's verdict", m)
	}
	m = act(3, "execute_sql", "SELECT name FROM customers LIMIT 1, 2")
	v, _ = m["verification"].(map[string]any)
	if m["decision"] == "APPROVED" || v["engine"] != "sql" || v["risk_level"] != "critical" {
		t.Fatalf("a query the sql engine cannot read over Kafka: %v, want critical and not APPROVED", m)
	}
}

// verifyReply is the part of a POST /verify answer the tests read.
type verifyReply struct {
	Status      string `json:"status"`
	Verified    bool   `json:"verified"`
	Engine      string `json:"engine"`
	Attestation *struct {
		Token string `json:"token"`
		Seq   uint64 `json:"seq"`
	} `json:"attestation"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
	Metadata struct {
		VerificationID string `json:"verification_id"`
		Seq            uint64 `json:"seq"`
	} `json:"metadata"`
}

// qwedEvents returns the recorded qwed.verify and rejection events of
// source, by request id, across every events partition.
func recordedEvents(t testing.TB, brokers []string, source string) map[string]*domain.Event {
	t.Helper()
	out := map[string]*domain.Event{}
	for p := range testPartitions {
		lg, err := kafkalog.Open(context.Background(), brokers, kafkagate.DefaultTopics().Events, p, kafkalog.Options{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		err = lg.Read(context.Background(), 1, func(r streams.Record) error {
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return err
			}
			if ev.Command != nil && (ev.Command.Request.Source == source || ev.Command.Request.Source == "kafka/"+kafkagate.DefaultTopics().Requests) {
				out[ev.Command.Request.ID] = ev
			}
			return nil
		})
		_ = lg.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// QWED protocol v1.0 §5.1, §10.4 on Kafka (the qwed.verify contract,
// docs/ARCHITECTURE.md): a qwed.verify CloudEvent on agentgate.requests is
// verified by the engines, recorded in the partition's log with its attestation,
// answered on replyto with POST /verify's body, and a redelivery gets the
// recorded verification again.
func TestKafkaQWEDVerifyRequestReply(t *testing.T) {
	_, brokers := broker(t)
	reg := engines(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(reg))
	c := newClient(t, brokers)

	cmd := client.QWEDVerify(adminKey, map[string]any{"query": "2+2=4", "type": "math", "options": map[string]any{"include_attestation": true}})
	cmd.ID = "qv-math-1"
	rep, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	var r verifyReply
	if err := json.Unmarshal(rep.Data, &r); err != nil {
		t.Fatal(err)
	}
	if rep.Status != 200 || rep.Type != "qwed.verify.reply" || r.Status != "VERIFIED" || !r.Verified || r.Engine != "math" ||
		r.Attestation == nil || r.Attestation.Token == "" || r.Metadata.Seq == 0 {
		t.Fatalf("qwed.verify over Kafka: %d %s %s", rep.Status, rep.Type, rep.Data)
	}
	again, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	var r2 verifyReply
	if err := json.Unmarshal(again.Data, &r2); err != nil || r2.Attestation == nil || r2.Attestation.Token != r.Attestation.Token || r2.Metadata.Seq != r.Metadata.Seq {
		t.Fatalf("redelivered qwed.verify answered %s, first %s", again.Data, rep.Data)
	}
	// A false claim: CORRECTED (200), recorded too.
	bad := client.QWEDVerify(adminKey, map[string]any{"query": "2+2=5", "type": "math"})
	bad.ID = "qv-math-2"
	rep, err = c.Request(context.Background(), bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 200 || r.Status != "CORRECTED" || r.Verified {
		t.Fatalf("2+2=5: %d %s", rep.Status, rep.Data)
	}
	if _, err := exec.LookPath("z3"); err == nil {
		lg := client.QWEDVerify(adminKey, map[string]any{"query": "(AND (GT x 5) (LT x 10))", "type": "logic"})
		lg.ID = "qv-logic-1"
		rep, err = c.Request(context.Background(), lg)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 200 || r.Engine != "logic" || r.Status != "VERIFIED" {
			t.Fatalf("logic over Kafka (z3): %d %s", rep.Status, rep.Data)
		}
	}
	evs := recordedEvents(t, brokers, c.Source())
	for _, id := range []string{"qv-math-1", "qv-math-2"} {
		ev := evs[id]
		if ev == nil || ev.Type != domain.EvQWEDVerified || ev.QWEDVerified == nil || ev.Command.Principal != domain.AdminPrincipal {
			t.Fatalf("recorded event of %s: %+v", id, ev)
		}
	}
	if n := decidedRequests(t, brokers, c.Source())["qv-math-1"]; n != 1 {
		t.Fatalf("qv-math-1 recorded %d times, want once", n)
	}
}

// QWED protocol v1.0 §8 on Kafka: a qwed.verify without an API key is refused with
// QWED-AUTH-001 in a §8.4 body; a schema violation is refused with
// QWED-REQ-001, dead-lettered with the reason, and audited; the partition
// goes on.
func TestKafkaQWEDVerifyRefusals(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)))
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)

	nokey := client.QWEDVerify("", map[string]any{"query": "2+2=4", "type": "math"})
	rep, err := c.Request(context.Background(), nokey)
	if err != nil {
		t.Fatal(err)
	}
	var r verifyReply
	if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 401 || r.Error == nil || r.Error.Code != string(domain.CodeMissingAPIKey) {
		t.Fatalf("no API key: %d %s", rep.Status, rep.Data)
	}
	schema := client.QWEDVerify(adminKey, map[string]any{"type": "math"}) // no query
	schema.ID = "qv-schema"
	rep, err = c.Request(context.Background(), schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 400 || r.Error == nil || r.Error.Code != string(domain.CodeMissingField) {
		t.Fatalf("missing query: %d %s", rep.Status, rep.Data)
	}
	m := dl.next(t, "qv-schema")
	if reason := headerOf(m, kafkagate.HeaderReason); reason == "" {
		t.Fatalf("dead letter of qv-schema has no reason")
	}
	// The partition goes on.
	ok := client.QWEDVerify(adminKey, map[string]any{"query": "2+2=4", "type": "math"})
	ok.ID = "qv-schema" + "-ok"
	rep, err = c.Request(context.Background(), ok)
	if err != nil || rep.Status != 200 {
		t.Fatalf("after a refusal: %v %v", rep, err)
	}
	rejections := 0
	for _, ev := range recordedEvents(t, brokers, c.Source()) {
		if ev.Type == domain.EvCommandRejected && ev.Command.Reject != nil && ev.Command.Reject.Endpoint == "kafka agentgate.requests qwed.verify" {
			rejections++
		}
	}
	if rejections != 2 {
		t.Fatalf("%d audit records of refused qwed.verify requests, want 2", rejections)
	}
}

// deadLetterReader reads the dead-letter topic from its start.
type deadLetterReader struct{ r *kafka.Reader }

func deadLetters(t testing.TB, brokers []string) *deadLetterReader {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: kafkagate.DefaultTopics().DeadLetter, Partition: 0, MaxWait: 100 * time.Millisecond})
	t.Cleanup(func() { _ = r.Close() })
	return &deadLetterReader{r: r}
}

// next returns the next dead letter whose ce_id is id (or, for id "", the
// next one), failing after 20 s.
func (d *deadLetterReader) next(t testing.TB, id string) kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		m, err := d.r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("no dead letter %q: %v", id, err)
		}
		if id == "" || headerOf(m, "ce_id") == id {
			return m
		}
		if ev, err := cekafka.Decode(m); err == nil && ev.ID == id {
			return m
		}
	}
}

func headerOf(m kafka.Message, name string) string {
	for _, h := range m.Headers {
		if h.Key == name {
			return string(h.Value)
		}
	}
	return ""
}
