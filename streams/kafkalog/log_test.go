package kafkalog_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/logtest"
)

// partition is the partition the tests use, not 0, to show that records go
// to the partition asked for and nowhere else.
const (
	partition  = 1
	partitions = 3
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type broker struct {
	addrs  []string
	client *kafka.Client
	topics atomic.Int64
}

// newBroker starts a one-broker kfake cluster whose record batches may be
// up to 8 MiB (the suite appends a 1 MiB payload).
func newBroker(tb testing.TB) *broker {
	tb.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.BrokerConfigs(map[string]string{"message.max.bytes": "8388608"}))
	if err != nil {
		tb.Fatalf("starting kfake: %v", err)
	}
	tb.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	return &broker{addrs: addrs, client: &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 10 * time.Second}}
}

// newBrokerDefault starts a one-broker kfake cluster with Kafka's default
// max.message.bytes.
func newBrokerDefault(tb testing.TB) *broker {
	tb.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		tb.Fatalf("starting kfake: %v", err)
	}
	tb.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	return &broker{addrs: addrs, client: &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 10 * time.Second}}
}

// topic creates a fresh topic of 3 partitions.
func (b *broker) topic(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("agentgate.events.%d", b.topics.Add(1))
	resp, err := b.client.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: name, NumPartitions: partitions, ReplicationFactor: 1}},
	})
	if err != nil {
		tb.Fatalf("creating topic %s: %v", name, err)
	}
	if err := resp.Errors[name]; err != nil {
		tb.Fatalf("creating topic %s: %v", name, err)
	}
	return name
}

func (b *broker) open(tb testing.TB, topic string, opts kafkalog.Options) *kafkalog.Log {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	l, err := kafkalog.Open(context.Background(), b.addrs, topic, partition, opts)
	if err != nil {
		tb.Fatalf("opening kafka log on %s/%d: %v", topic, partition, err)
	}
	tb.Cleanup(func() {
		if err := l.Close(); err != nil && !errors.Is(err, streams.ErrClosed) {
			tb.Errorf("closing: %v", err)
		}
	})
	return l
}

var suiteOpts = kafkalog.Options{MaxRecordBytes: 2 << 20, MaxBatchBytes: 4 << 20}

// TestLogAcceptanceSuite runs streams/logtest against the Kafka log on a
// kfake broker: one Log is the partition's single writer (ExclusiveAppend),
// and it is durable across a new Log over the same topic (Reopen).
func TestLogAcceptanceSuite(t *testing.T) {
	b := newBroker(t)
	topics := map[streams.Log]string{}
	logtest.Run(t, logtest.Suite{
		Open: func(t *testing.T) streams.Log {
			topic := b.topic(t)
			l := b.open(t, topic, suiteOpts)
			topics[l] = topic
			return l
		},
		Reopen: func(t *testing.T, old streams.Log) streams.Log {
			if err := old.Close(); err != nil {
				t.Fatalf("closing before reopen: %v", err)
			}
			l := b.open(t, topics[old], suiteOpts)
			topics[l] = topics[old]
			return l
		},
		ExclusiveAppend: true,
		MaxRecordBytes:  suiteOpts.MaxRecordBytes,
	})
}

// TestLogAcceptanceSuiteDenseIndex runs the suite again with an index
// entry every 3 seqs, so Read starts mid-partition.
func TestLogAcceptanceSuiteDenseIndex(t *testing.T) {
	b := newBroker(t)
	opts := suiteOpts
	opts.IndexInterval = 3
	topics := map[streams.Log]string{}
	logtest.Run(t, logtest.Suite{
		Open: func(t *testing.T) streams.Log {
			topic := b.topic(t)
			l := b.open(t, topic, opts)
			topics[l] = topic
			return l
		},
		Reopen: func(t *testing.T, old streams.Log) streams.Log {
			if err := old.Close(); err != nil {
				t.Fatalf("closing before reopen: %v", err)
			}
			l := b.open(t, topics[old], opts)
			topics[l] = topics[old]
			return l
		},
		ExclusiveAppend: true,
	})
}
