package kafkagate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/kafkaout"
)

// Topics names the topics of the gate (docs/ARCHITECTURE.md, "Contracts").
type Topics struct {
	Requests   string
	Events     string
	Decisions  string
	Replies    string
	A2A        string
	DeadLetter string
	// Changes holds partition 0's principal-wide changes, one partition,
	// kept forever (mirror.go): the other partitions copy them from it.
	Changes string
}

// DefaultTopics returns the default topic names.
func DefaultTopics() Topics {
	return Topics{
		Requests:   "agentgate.requests",
		Events:     "agentgate.events",
		Decisions:  "agentgate.decisions",
		Replies:    "agentgate.replies",
		A2A:        "agentgate.a2a.forwarded",
		DeadLetter: "agentgate.deadletter",
		Changes:    "agentgate.changes",
	}
}

// withDefaults fills empty names with the defaults.
func (t Topics) withDefaults() Topics {
	d := DefaultTopics()
	for _, p := range []struct{ v, def *string }{
		{&t.Requests, &d.Requests}, {&t.Events, &d.Events}, {&t.Decisions, &d.Decisions},
		{&t.Replies, &d.Replies}, {&t.A2A, &d.A2A}, {&t.DeadLetter, &d.DeadLetter}, {&t.Changes, &d.Changes},
	} {
		if *p.v == "" {
			*p.v = *p.def
		}
	}
	return t
}

// All returns every topic name.
func (t Topics) All() []string {
	return []string{t.Requests, t.Events, t.Decisions, t.Replies, t.A2A, t.DeadLetter, t.Changes}
}

// internal reports whether name is one of the gate's topics that a reply
// must never be written to: every topic but Replies (a request's
// ce_replyto naming agentgate.events or agentgate.decisions would
// otherwise make the gate write a tenant's reply where consumers trust
// only the gate's own records).
func (t Topics) internal(name string) bool {
	return name != t.Replies && slices.Contains(t.All(), name)
}

// errInternalReplyTopic is the reason a reply to an internal topic is
// dead-lettered.
var errInternalReplyTopic = errors.New("it is one of the gate's own topics, never a reply topic")

// EnsureTopics creates the missing topics with partitions partitions (the
// events topic with unlimited retention: it is the log) and returns the
// partition count of the requests topic, which must equal the events
// topic's (co-partitioning: invariant 3 of docs/ARCHITECTURE.md).
func EnsureTopics(ctx context.Context, brokers []string, t Topics, partitions int) (int, error) {
	t = t.withDefaults()
	if partitions < 1 {
		return 0, fmt.Errorf("partition count must be at least 1, got %d", partitions)
	}
	conn, err := dialController(ctx, brokers)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var cfgs []kafka.TopicConfig
	for _, name := range t.All() {
		tc := kafka.TopicConfig{Topic: name, NumPartitions: partitions, ReplicationFactor: -1}
		if name == t.Changes {
			tc.NumPartitions = 1
		}
		if name == t.Events || name == t.Changes {
			tc.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "-1"}, {ConfigName: "retention.bytes", ConfigValue: "-1"}}
		}
		cfgs = append(cfgs, tc)
	}
	for _, tc := range cfgs {
		if err := conn.CreateTopics(tc); err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return 0, fmt.Errorf("creating topic %s: %w", tc.Topic, err)
		}
	}
	nReq, err := partitionCount(ctx, brokers, t.Requests)
	if err != nil {
		return 0, err
	}
	nEv, err := partitionCount(ctx, brokers, t.Events)
	if err != nil {
		return 0, err
	}
	if nReq != nEv {
		return 0, fmt.Errorf("topic %s has %d partitions and %s has %d: they must be co-partitioned", t.Requests, nReq, t.Events, nEv)
	}
	return nReq, nil
}

// dialController connects to the cluster's controller (topic creation).
func dialController(ctx context.Context, brokers []string) (*kafka.Conn, error) {
	var lastErr error
	for _, b := range brokers {
		d := kafka.Dialer{Timeout: 10 * time.Second}
		conn, err := d.DialContext(ctx, "tcp", b)
		if err != nil {
			lastErr = err
			continue
		}
		ctl, err := conn.Controller()
		conn.Close()
		if err != nil {
			lastErr = err
			continue
		}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ctl.Host, strconv.Itoa(ctl.Port)))
		if err != nil {
			lastErr = err
			continue
		}
		return c, nil
	}
	return nil, fmt.Errorf("connecting to the Kafka controller via %v: %w", brokers, lastErr)
}

// partitionCount returns the partition count of topic.
func partitionCount(ctx context.Context, brokers []string, topic string) (int, error) {
	ps, err := kafkaout.TopicPartitions(ctx, brokers, topic)
	return len(ps), err
}
