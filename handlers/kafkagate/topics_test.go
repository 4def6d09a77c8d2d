package kafkagate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// strictBroker is a broker that creates no topic by itself.
func strictBroker(t testing.TB) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func partitionsOf(t testing.TB, brokers []string, topic string) int {
	t.Helper()
	conn, err := kafka.Dial("tcp", brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ps, err := conn.ReadPartitions(topic)
	if err != nil {
		return 0
	}
	return len(ps)
}

func customTopics() kafkagate.Topics {
	return kafkagate.Topics{Requests: "custom.in", Events: "custom.log", Decisions: "custom.out",
		Replies: "custom.replies", A2A: "custom.a2a", DeadLetter: "custom.dead", Changes: "custom.changes"}
}

// Issue 3 "topic names configurable, created if missing with a
// configurable partition count": on a broker that creates nothing by
// itself, EnsureTopics creates every missing topic with the configured
// count (the events topic keeping every record), leaves existing topics
// as they are, and refuses requests and events topics that are not
// co-partitioned.
func TestKafkaEnsureTopicsCreatesMissing(t *testing.T) {
	brokers := strictBroker(t)
	tp := customTopics()
	for _, name := range tp.All() {
		if n := partitionsOf(t, brokers, name); n != 0 {
			t.Fatalf("topic %s exists before EnsureTopics (%d partitions)", name, n)
		}
	}
	n, err := kafkagate.EnsureTopics(context.Background(), brokers, tp, 3)
	if err != nil || n != 3 {
		t.Fatalf("EnsureTopics: %d %v, want 3", n, err)
	}
	for _, name := range tp.All() {
		want := 3
		if name == tp.Changes {
			want = 1 // one order of principal-wide changes
		}
		if got := partitionsOf(t, brokers, name); got != want {
			t.Fatalf("topic %s has %d partitions, want %d", name, got, want)
		}
	}
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	resp, err := cl.DescribeConfigs(context.Background(), &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{
		{ResourceType: kafka.ResourceTypeTopic, ResourceName: tp.Events, ConfigNames: []string{"retention.ms"}}}})
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("describing %s: %v", tp.Events, err)
	}
	retention := ""
	for _, e := range resp.Resources[0].ConfigEntries {
		if e.ConfigName == "retention.ms" {
			retention = e.ConfigValue
		}
	}
	if retention != "-1" {
		t.Fatalf("events topic retention.ms = %q, want -1 (the log keeps every record)", retention)
	}
	// Existing topics are kept: a second start with another count
	// answers the existing count.
	if n, err := kafkagate.EnsureTopics(context.Background(), brokers, tp, 8); err != nil || n != 3 {
		t.Fatalf("EnsureTopics on existing topics: %d %v, want 3", n, err)
	}
	// Requests and events not co-partitioned: refused.
	conn, err := kafka.Dial("tcp", brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.CreateTopics(kafka.TopicConfig{Topic: "skew.in", NumPartitions: 2, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	skew := tp
	skew.Requests = "skew.in"
	if _, err := kafkagate.EnsureTopics(context.Background(), brokers, skew, 4); err == nil || !strings.Contains(err.Error(), "co-partitioned") {
		t.Fatalf("EnsureTopics with 2 request partitions and 3 event partitions: %v, want a co-partitioning error", err)
	}
	if _, err := kafkagate.EnsureTopics(context.Background(), brokers, tp, 0); err == nil {
		t.Fatal("EnsureTopics with 0 partitions: no error")
	}
}

// Issue 3 "topic names configurable": a gate on custom topic names reads
// its requests, writes its log, its replies and its decisions on them, and
// nothing on the default names.
func TestKafkaCustomTopicNames(t *testing.T) {
	brokers := strictBroker(t)
	tp := customTopics()
	n, err := kafkagate.EnsureTopics(context.Background(), brokers, tp, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context, p int32) (streams.Log, error) {
		return kafkalog.Open(ctx, brokers, tp.Events, int(p), kafkalog.Options{Logger: quiet()})
	}
	g, err := kafkagate.New(kafkagate.Config{Brokers: brokers, Topics: tp, GroupID: "custom", DataDir: dir, OpenLog: open,
		Signer: kr.Signer("node_custom"), AdminKeyHash: command.HashSecret(adminKey), Logger: quiet()}, n)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() { cancel(); <-done; _ = g.Close() }()
	c, err := client.New(context.Background(), client.Config{Brokers: brokers, RequestTopic: tp.Requests, ReplyTopic: tp.Replies,
		Timeout: 20 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	agent, token := register(t, c, "custom")
	rep, err := c.Request(context.Background(), verifyCmd(agent, token, "conv-custom", 1))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(rep.Data, &d); err != nil || d.Decision != "APPROVED" {
		t.Fatalf("verify on custom topics: %d %s", rep.Status, rep.Data)
	}
	// The log of the agent's partition holds the registration and the
	// decision; the decisions topic has both.
	p := int(client.PartitionFor(agent, n))
	lg, err := kafkalog.Open(context.Background(), brokers, tp.Events, p, kafkalog.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	if h := lg.Head(); h.Seq < 2 {
		t.Fatalf("custom events topic partition %d has %d events, want the registration and the decision", p, h.Seq)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: tp.Decisions, Partition: p, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer rcancel()
	types := map[string]bool{}
	for !types[string(domain.EvActionDecided)] {
		m, err := r.ReadMessage(rctx)
		if err != nil {
			t.Fatalf("decisions on %s: %v (saw %v)", tp.Decisions, err, types)
		}
		if _, err := cekafka.DecodeReply(m); err != nil {
			t.Fatal(err)
		}
		types[headerOf(m, "agentgate-event-type")] = true
	}
	for _, name := range kafkagate.DefaultTopics().All() {
		if n := partitionsOf(t, brokers, name); n != 0 {
			t.Fatalf("default topic %s was created by a gate on custom names", name)
		}
	}
}
