package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Issue 11 item 16: `agentgate dev-kafka` creates a topic on first use as
// Apache Kafka does with its default auto.create.topics.enable=true: when
// a client's metadata request asks for it (kcat's producer, a kafka-go
// Writer with AllowAutoTopicCreation), and for every metadata request
// older than v4 (which cannot ask; an older client, here franz-go capped
// at Kafka 0.10.0's versions). A client that says not to (kafka-go's
// Writer by default) gets UNKNOWN_TOPIC_OR_PARTITION, as from Apache Kafka.
func TestDevKafkaCreatesTopicsOnFirstUse(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Fatalf("the test needs kcat (make deps installs it): %v", err)
	}
	const partitions = 3
	addr, ctx := testDevKafka(t, partitions)
	countPartitions := func(topic string) int {
		t.Helper()
		conn, err := kafka.DialContext(ctx, "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ps, err := conn.ReadPartitions(topic)
		if err != nil {
			t.Fatalf("topic %s: %v", topic, err)
		}
		return len(ps)
	}

	// kcat produces to a new topic and reads its message back.
	produce := exec.CommandContext(ctx, "kcat", "-b", addr, "-P", "-t", "first.kcat")
	produce.Stdin = strings.NewReader("hello\n")
	if out, err := produce.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P to a new topic: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, "kcat", "-b", addr, "-C", "-t", "first.kcat", "-o", "beginning", "-e", "-q").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "hello" {
		t.Fatalf("kcat -C of the new topic: %v %q", err, out)
	}
	if n := countPartitions("first.kcat"); n != partitions {
		t.Fatalf("first.kcat has %d partitions, want %d", n, partitions)
	}

	// kafka-go: a Writer that asks creates the topic; one that does not
	// is refused.
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "first.kafkago", AllowAutoTopicCreation: true, BatchTimeout: time.Millisecond}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")}); err != nil {
		t.Fatalf("kafka-go Writer with AllowAutoTopicCreation: %v", err)
	}
	plain := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "not.asked", BatchTimeout: time.Millisecond, MaxAttempts: 1}
	defer plain.Close()
	if err := plain.WriteMessages(ctx, kafka.Message{Value: []byte("x")}); !errors.Is(err, kafka.UnknownTopicOrPartition) {
		t.Fatalf("kafka-go Writer without AllowAutoTopicCreation: %v, want %v", err, kafka.UnknownTopicOrPartition)
	}

	// A metadata request older than v4 creates the topic it names.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V0_10_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("first.metadata.v1")
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if req.Version >= 4 || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != partitions {
		t.Fatalf("metadata v%d naming a new topic: %+v, want it created with %d partitions", req.Version, resp.Topics, partitions)
	}
}

// Issue 11 item 16, as Apache Kafka: a topic name it refuses ("..", a
// slash, more than 249 characters) is not created on first use, though
// the client asks; the writer is refused.
func TestDevKafkaCreatesNoTopicApacheKafkaRefuses(t *testing.T) {
	addr, ctx := testDevKafka(t, 1)
	for _, name := range []string{"..", "a/../../escape", strings.Repeat("t", 250)} {
		w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: name, AllowAutoTopicCreation: true, BatchTimeout: time.Millisecond, MaxAttempts: 1}
		if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")}); err == nil {
			t.Fatalf("topic %.20q: written", name)
		}
		w.Close()
		conn, err := kafka.DialContext(ctx, "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := conn.ReadPartitions(name)
		conn.Close()
		if err == nil && len(ps) > 0 {
			t.Fatalf("topic %.20q was created with %d partitions", name, len(ps))
		}
	}
	if !validTopicName("agentgate.replies-2_x") {
		t.Fatal("a valid name refused")
	}
}

// testDevKafka starts a dev broker in process and returns its address and
// a context of a minute, both ended with the test.
func testDevKafka(t *testing.T, partitions int) (string, context.Context) {
	t.Helper()
	c, err := startDevKafka("127.0.0.1:0", t.TempDir(), partitions, false, kafkaTestLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c.ListenAddrs()[0], ctx
}
