package kafkaout_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/streams/kafkaout"
)

// The Producer reads (and caches) a topic's partition count, which the gate
// hashes reply keys over, and writes to an explicit partition.
func TestProducerPartitions(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(3), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	conn, err := kafka.Dial("tcp", brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	const topic = "agentgate.replies"
	if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	p := kafkaout.NewProducer(brokers)
	defer p.Close()
	if n, err := p.Partitions(context.Background(), topic); err != nil || n != 3 {
		t.Fatalf("Partitions(%s) = %d, %v; want 3", topic, n, err)
	}
	if err := p.Write(context.Background(), kafka.Message{Topic: topic, Partition: 2, Value: []byte("x")}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 2, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	m, err := r.ReadMessage(context.Background())
	if err != nil || string(m.Value) != "x" {
		t.Fatalf("reading partition 2: %q, %v; want x", m.Value, err)
	}
}

// TopicPartitions lists a topic's partitions from the first broker that
// answers, skipping one that does not, and fails when none answers.
func TestTopicPartitions(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "agentgate.requests"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	// 127.0.0.1:1 refuses connections: the next broker is asked.
	brokers := append([]string{"127.0.0.1:1"}, c.ListenAddrs()...)
	ps, err := kafkaout.TopicPartitions(ctx, brokers, "agentgate.requests")
	// The broker lists partitions in no particular order.
	slices.Sort(ps)
	if err != nil || !slices.Equal(ps, []int{0, 1, 2}) {
		t.Fatalf("TopicPartitions = %v, %v; want partitions 0, 1 and 2", ps, err)
	}
	if _, err := kafkaout.TopicPartitions(ctx, []string{"127.0.0.1:1"}, "agentgate.requests"); err == nil || !strings.Contains(err.Error(), "reading partitions of agentgate.requests") {
		t.Fatalf("no broker answering: %v, want an error naming the topic", err)
	}
}
