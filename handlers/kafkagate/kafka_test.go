package kafkagate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/schemas"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

const (
	testPartitions = 4
	adminKey       = "qwed_admin_test_key"
)

// broker starts a one-broker kfake cluster on a loopback TCP port.
func broker(t testing.TB) (*kfake.Cluster, []string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(testPartitions),
		kfake.AllowAutoTopicCreation(), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// Registered after c.Close, so it runs before it, once the test's
	// gates have stopped.
	t.Cleanup(func() { checkEventSchema(t, c.ListenAddrs()) })
	return c, c.ListenAddrs()
}

// checkEventSchema validates every event on the events topic against the
// event schema (every test's broker runs it when the test ends, so each
// event the Kafka gate's tests make is checked). A broker without the
// topic is skipped.
func checkEventSchema(t testing.TB, brokers []string) {
	t.Helper()
	if t.Failed() {
		return
	}
	if _, bench := t.(*testing.B); bench {
		return
	}
	sch := schemas.Event()
	lg := &logs{brokers: brokers}
	for p := range int32(testPartitions) {
		l, err := lg.open(context.Background(), p)
		if err != nil {
			return
		}
		_ = l.Read(context.Background(), 1, func(r streams.Record) error {
			if vs, err := sch.ValidateJSON(r.Payload); err != nil || vs != nil {
				t.Errorf("partition %d event %d does not match the event schema: %v %+v\n%s", p, r.Seq, err, vs, r.Payload)
			}
			return nil
		})
		_ = l.Close()
	}
}

// logs opens the event log of a partition: streams/kafkalog on the
// events topic of the test's broker.
type logs struct {
	brokers []string
}

func (l *logs) open(ctx context.Context, p int32) (streams.Log, error) {
	return kafkalog.Open(ctx, l.brokers, kafkagate.DefaultTopics().Events, int(p), kafkalog.Options{Logger: quiet()})
}

// openFrom opens it lazily at from, as agentgate serve opens the read
// model's partitions.
func (l *logs) openFrom(ctx context.Context, p int32, from kafkalog.Position) (*kafkalog.Log, error) {
	return kafkalog.Open(ctx, l.brokers, kafkagate.DefaultTopics().Events, int(p), kafkalog.Options{Logger: quiet(), Lazy: true, From: from})
}

// openLazy opens it lazily, as agentgate serve opens a partition worker's
// log: the worker's restore is the one read of the partition.
func (l *logs) openLazy(ctx context.Context, p int32) (streams.Log, error) {
	return kafkalog.Open(ctx, l.brokers, kafkagate.DefaultTopics().Events, int(p), kafkalog.Options{Logger: quiet(), Lazy: true})
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: testLevel()}))
}

type gate struct {
	g      *kafkagate.Gate
	cancel context.CancelFunc
	done   chan error
}

// startGate runs a gate instance on brokers with its own data dir; opts
// adjust its configuration.
func startGate(t testing.TB, brokers []string, lg *logs, dataDir string, opts ...func(*kafkagate.Config)) *gate {
	t.Helper()
	n, err := kafkagate.EnsureTopics(context.Background(), brokers, kafkagate.DefaultTopics(), testPartitions)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := attest.OpenKeyring(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	// The group's session and rebalance timeouts are the production
	// default (6 s): at 1 s a loaded machine (the broker runs in the test
	// process) missed heartbeats and rebalances, and the gate left its
	// generation again and again while a request waited for its reply.
	cfg := kafkagate.Config{
		Brokers: brokers, DataDir: dataDir, OpenLog: lg.openLazy, Signer: kr.Signer("node_test"),
		AdminKeyHash: command.HashSecret(adminKey), Logger: quiet(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	g, err := kafkagate.New(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gt := &gate{g: g, cancel: cancel, done: make(chan error, 1)}
	go func() { gt.done <- g.Run(ctx) }()
	t.Cleanup(gt.stop)
	return gt
}

func (g *gate) stop() {
	if g.cancel == nil {
		return
	}
	g.cancel()
	<-g.done
	_ = g.g.Close()
	g.cancel = nil
}

func newClient(t testing.TB, brokers []string) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), client.Config{Brokers: brokers, Timeout: 20 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// register registers an agent through Kafka and returns its id and token.
func register(t testing.TB, c *client.Client, name string) (string, string) {
	t.Helper()
	rep, err := c.Request(context.Background(), client.Register(adminKey,
		domain.AgentInfo{Name: name, Type: "autonomous", PrincipalID: "org_a"}, domain.Permissions{}, domain.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != 201 {
		t.Fatalf("register: status %d %s", rep.Status, rep.Data)
	}
	var m struct {
		AgentID    string `json:"agent_id"`
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal(rep.Data, &m); err != nil || m.AgentID == "" || m.AgentToken == "" {
		t.Fatalf("register reply %s: %v", rep.Data, err)
	}
	return m.AgentID, m.AgentToken
}

// verifyCmd is a verify_action of a read-only query that differs at each
// step (so that no repetition rule, LOOP-003, applies).
func verifyCmd(agent, token, conv string, step int) client.Command {
	return actionCmd(agent, token, conv, step, "SELECT name FROM customers WHERE id = "+strconv.Itoa(step))
}

// actionCmd is a verify_action of query at step of conv.
func actionCmd(agent, token, conv string, step int, query string) client.Command {
	return client.Verify(agent, token, domain.VerifyAction{
		Action:  domain.Action{Type: "execute_sql", Query: query},
		Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(strconv.Itoa(step))},
	})
}

// The request path (docs/ARCHITECTURE.md): request-reply over Kafka: register,
// then verify; the reply carries the endpoint's body and status; a redelivered
// request (same source + id) gets the recorded decision again.
func TestKafkaRequestReply(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "bot")

	cmd := verifyCmd(agent, token, "conv-1", 1)
	cmd.ID = "verify-1"
	rep, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(rep.Data, &d); err != nil {
		t.Fatal(err)
	}
	if rep.Type != string(domain.CmdVerifyAction)+".reply" || d["decision"] == nil || d["action_id"] == nil {
		t.Fatalf("verify reply %s %d %s", rep.Type, rep.Status, rep.Data)
	}
	again, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Data) != string(rep.Data) || again.Status != rep.Status {
		t.Fatalf("redelivered request answered %s, first %s", again.Data, rep.Data)
	}
}

// The contracts (docs/ARCHITECTURE.md): a principal command over Kafka needs the
// API key header; a bad key or none is refused with the code of HTTP, and
// nothing is registered.
func TestKafkaPrincipalCommandNeedsAPIKey(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	for _, tc := range []struct {
		key  string
		code domain.Code
	}{{"", domain.CodeMissingAPIKey}, {"qwed_key_wrong", domain.CodeInvalidAPIKey}} {
		rep, err := c.Request(context.Background(), client.Register(tc.key,
			domain.AgentInfo{Name: "x", Type: "autonomous", PrincipalID: "org_a"}, domain.Permissions{}, domain.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error domain.Error `json:"error"`
		}
		if err := json.Unmarshal(rep.Data, &body); err != nil || rep.Status != 401 || body.Error.Code != tc.code {
			t.Fatalf("key %q: reply %d %s, want 401 %s", tc.key, rep.Status, rep.Data, tc.code)
		}
	}
}

// The request path, step 6 (docs/ARCHITECTURE.md): an async request (no replyto)
// is decided and its decision published on agentgate.decisions.
func TestKafkaAsyncPublishDecision(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "async")
	id, err := c.Publish(context.Background(), verifyCmd(agent, token, "conv-a", 1))
	if err != nil {
		t.Fatal(err)
	}
	p := int(client.PartitionFor(agent, testPartitions))
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: kafkagate.DefaultTopics().Decisions, Partition: p, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		msg, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("no decision for %v: %v", id, err)
		}
		ev, err := cekafka.DecodeReply(msg)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != kafkagate.DecisionType || ev.Subject != agent {
			t.Fatalf("decision %s subject %s", ev.Type, ev.Subject)
		}
		if ev.Extensions["correlationid"] == id.ID {
			var d map[string]any
			if err := json.Unmarshal(ev.Data, &d); err != nil || d["decision"] == nil {
				t.Fatalf("decision data %s", ev.Data)
			}
			return
		}
	}
}

// The request path, step 1 (docs/ARCHITECTURE.md): input that is not a
// CloudEvent goes to the dead letter topic with the reason, gets an error reply,
// and the partition goes on deciding.
func TestKafkaUndecodableToDeadLetter(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "dl")
	p := client.PartitionFor(agent, testPartitions)
	corr := c.NewCorrelationID()
	bad := kafka.Message{Topic: kafkagate.DefaultTopics().Requests, Partition: int(p), Key: []byte(agent), Value: []byte("not json"),
		Headers: []kafka.Header{{Key: "ce_replyto", Value: []byte(c.ReplyTopic())}, {Key: "ce_correlationid", Value: []byte(corr)}}}
	rep, err := c.Send(context.Background(), bad, corr)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != 400 {
		t.Fatalf("reply to garbage: %d %s", rep.Status, rep.Data)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: kafkagate.DefaultTopics().DeadLetter, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg, err := r.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reason := ""
	for _, h := range msg.Headers {
		if h.Key == kafkagate.HeaderReason {
			reason = string(h.Value)
		}
	}
	if string(msg.Value) != "not json" || reason == "" {
		t.Fatalf("dead letter %q reason %q", msg.Value, reason)
	}
	if rep, err := c.Request(context.Background(), verifyCmd(agent, token, "conv-dl", 1)); err != nil || rep.Status >= 500 || rep.Type != string(domain.CmdVerifyAction)+".reply" {
		t.Fatalf("partition stopped after bad input: %v %v", rep, err)
	}
}

// testLevel is the log level of the tests: Warn, or Debug with
// AGENTGATE_TEST_DEBUG set.
func testLevel() slog.Level {
	if os.Getenv("AGENTGATE_TEST_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// decidedRequests reads every events partition and counts the events of
// each RequestID of source.
func decidedRequests(t testing.TB, brokers []string, source string) map[string]int {
	t.Helper()
	out := map[string]int{}
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
			if ev.Command != nil && ev.Command.Request.Source == source {
				out[ev.Command.Request.ID]++
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

// waitDecided waits until every id in ids has an event, then checks that
// none has two (invariant 4).
func waitDecided(t *testing.T, brokers []string, source string, ids []string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := decidedRequests(t, brokers, source)
		missing := 0
		for _, id := range ids {
			if got[id] == 0 {
				missing++
			}
		}
		for id, n := range got {
			if n > 1 {
				t.Fatalf("request %s decided %d times", id, n)
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests never decided", missing, len(ids))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// publishSteps publishes n verify requests of one conversation per agent
// (steps from..from+n-1) and returns their ids.
func publishSteps(t *testing.T, c *client.Client, agents, tokens []string, from, n int) []string {
	t.Helper()
	var ids []string
	for step := from; step < from+n; step++ {
		for i, a := range agents {
			cmd := verifyCmd(a, tokens[i], "conv-"+a, step)
			cmd.ID = fmt.Sprintf("%s-step-%d", a, step)
			if _, err := c.Publish(context.Background(), cmd); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, cmd.ID)
		}
	}
	return ids
}

// Invariants 2 and 4: the gate restarted mid-stream (same data dir) loses
// no decision and duplicates none: the events topic holds exactly one
// event per published request.
func TestKafkaRestartMidStreamNoLossNoDuplicate(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	a := startGate(t, brokers, lg, dir)
	c := newClient(t, brokers)
	var agents, tokens []string
	for i := range 4 {
		id, tok := register(t, c, fmt.Sprintf("r%d", i))
		agents, tokens = append(agents, id), append(tokens, tok)
	}
	ids := publishSteps(t, c, agents, tokens, 1, 10)
	a.stop()
	ids = append(ids, publishSteps(t, c, agents, tokens, 11, 10)...)
	startGate(t, brokers, lg, dir)
	waitDecided(t, brokers, c.Source(), ids)
}

// Invariant 3 (docs/ARCHITECTURE.md): two gates in one group, one stopped
// mid-load: its partitions move to the other, which restores them from the log
// (a fresh data dir) and continues; every request is decided exactly once and
// each conversation keeps its step and loop state across the move: a step
// decided before the move is refused as a replay (LOOP-002), and the third
// identical action in a row, two of them decided by the old owner, as a loop
// (LOOP-003).
func TestKafkaPartitionMoveBetweenGates(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	a := startGate(t, brokers, lg, t.TempDir())
	b := startGate(t, brokers, lg, t.TempDir())
	c := newClient(t, brokers)
	// Agents on every partition, so that some live on a's partitions.
	var agents, tokens []string
	covered := map[int32]bool{}
	for i := 0; len(covered) < testPartitions; i++ {
		if i == 40 {
			t.Fatalf("40 agents cover only partitions %v", covered)
		}
		id, tok := register(t, c, fmt.Sprintf("m%d", i))
		agents, tokens = append(agents, id), append(tokens, tok)
		covered[client.PartitionFor(id, testPartitions)] = true
	}
	waitOwned(t, a, b)
	fromA := map[int32]bool{}
	for _, p := range a.g.Owned() {
		fromA[p] = true
	}
	// Steps 1..8, the last two the same action: the loop state to carry.
	const loopQuery = "SELECT balance FROM accounts WHERE id = 7"
	ids := publishSteps(t, c, agents, tokens, 1, 6)
	for step := 7; step <= 8; step++ {
		for i, ag := range agents {
			cmd := actionCmd(ag, tokens[i], "conv-"+ag, step, loopQuery)
			cmd.ID = fmt.Sprintf("%s-step-%d", ag, step)
			if _, err := c.Publish(context.Background(), cmd); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, cmd.ID)
		}
	}
	waitDecided(t, brokers, c.Source(), ids)
	a.stop()
	moved := 0
	for i, ag := range agents {
		p := client.PartitionFor(ag, testPartitions)
		if fromA[p] {
			moved++
		}
		// A replayed step (a new request for step 8) is refused.
		replay := decision(t, c, verifyCmd(ag, tokens[i], "conv-"+ag, 8))
		if replay.Error == nil || replay.Error.Code != domain.CodeReplay {
			t.Fatalf("agent %s (partition %d, moved %v): step 8 again answered %+v, want %s", ag, p, fromA[p], replay, domain.CodeReplay)
		}
		// The third identical action in a row is a loop.
		loop := decision(t, c, actionCmd(ag, tokens[i], "conv-"+ag, 9, loopQuery))
		if loop.Error == nil || loop.Error.Code != domain.CodeRepetitiveLoop {
			t.Fatalf("agent %s (partition %d, moved %v): a third identical action answered %+v, want %s", ag, p, fromA[p], loop, domain.CodeRepetitiveLoop)
		}
	}
	if moved == 0 {
		t.Fatalf("no agent lived on the stopped gate's partitions %v", fromA)
	}
	// The conversations go on after the move, every request once.
	ids = append(ids, publishSteps(t, c, agents, tokens, 9, 8)...)
	waitDecided(t, brokers, c.Source(), ids)
	for i, ag := range agents {
		if d := decision(t, c, verifyCmd(ag, tokens[i], "conv-"+ag, 17)); d.Decision != "APPROVED" || d.StepNumber != 17 {
			t.Fatalf("agent %s: step 17 answered %+v", ag, d)
		}
		if d := decision(t, c, verifyCmd(ag, tokens[i], "conv-"+ag, 16)); d.Error == nil || d.Error.Code != domain.CodeReplay {
			t.Fatalf("agent %s: step 16 after 17 answered %+v, want %s", ag, d, domain.CodeReplay)
		}
	}
}

// waitOwned waits until the gates share every partition, each owning some.
func waitOwned(t *testing.T, gates ...*gate) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		total, each := 0, true
		for _, g := range gates {
			n := len(g.g.Owned())
			total += n
			each = each && n > 0
		}
		if total == testPartitions && each {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gates never shared the %d partitions", testPartitions)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// verdict is the part of a verify reply the tests read.
type verdict struct {
	Decision   string        `json:"decision"`
	StepNumber int           `json:"step_number"`
	Error      *domain.Error `json:"error"`
}

// decision sends cmd and decodes its reply.
func decision(t *testing.T, c *client.Client, cmd client.Command) verdict {
	t.Helper()
	rep, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	var d verdict
	if err := json.Unmarshal(rep.Data, &d); err != nil {
		t.Fatalf("reply %s: %v", rep.Data, err)
	}
	return d
}
