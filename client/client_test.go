package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/cekafka"
)

func cluster(t *testing.T) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(3), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	conn, err := kafka.Dial("tcp", c.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, topic := range []string{client.DefaultRequestTopic, client.DefaultReplyTopic} {
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}); err != nil {
			t.Fatal(err)
		}
	}
	return c.ListenAddrs()
}

// The contracts of docs/ARCHITECTURE.md (partitionkey = Kafka key = agent_id):
// PublishBatch writes every command, acknowledged, to the partition of its
// agent, each agent's commands in the order given, as binary-mode CloudEvents
// with the client's source and the command ids.
func TestPublishBatchPartitionsAndOrder(t *testing.T) {
	brokers := cluster(t)
	c, err := client.New(context.Background(), client.Config{Brokers: brokers, Source: "batch-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	agents := []string{"agent_a", "agent_b", "agent_c", "agent_d"}
	var cmds []client.Command
	for i := range 200 {
		ag := agents[i%len(agents)]
		cmd := client.Verify(ag, "tok", domain.VerifyAction{Action: domain.Action{Type: "calculate", Query: "1+1"}})
		cmd.ID = fmt.Sprintf("%s-%03d", ag, i/len(agents))
		cmds = append(cmds, cmd)
	}
	ids, err := c.PublishBatch(context.Background(), cmds...)
	if err != nil || len(ids) != len(cmds) || ids[7].ID != cmds[7].ID || ids[7].Source != "batch-test" {
		t.Fatalf("PublishBatch: %v %v", ids, err)
	}
	next := map[string]int{}
	for p := range 3 {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: client.DefaultRequestTopic, Partition: p, MaxWait: 100 * time.Millisecond})
		conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], client.DefaultRequestTopic, p)
		if err != nil {
			t.Fatal(err)
		}
		end, _ := conn.ReadLastOffset()
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for off := int64(0); off < end; off++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := cekafka.Decode(m)
			if err != nil {
				t.Fatal(err)
			}
			if want := client.PartitionFor(ev.Subject, 3); int32(p) != want {
				t.Fatalf("%s of %s on partition %d, want %d", ev.ID, ev.Subject, p, want)
			}
			if want := fmt.Sprintf("%s-%03d", ev.Subject, next[ev.Subject]); ev.ID != want || ev.Source != "batch-test" {
				t.Fatalf("partition %d: %s/%s, want %s in order", p, ev.Source, ev.ID, want)
			}
			next[ev.Subject]++
		}
		cancel()
		_ = r.Close()
	}
	for _, ag := range agents {
		if next[ag] != 50 {
			t.Fatalf("agent %s: %d commands on the topic, want 50", ag, next[ag])
		}
	}
}
