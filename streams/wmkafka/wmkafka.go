package wmkafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/segmentio/kafka-go"
)

// Header and metadata names of the wire format.
const (
	// UUIDHeader carries the Watermill message UUID.
	UUIDHeader = "_watermill_message_uuid"
	// PartitionKeyMetadata is the metadata entry used as the Kafka key.
	PartitionKeyMetadata = "partition_key"
)

// Defaults of Options; each is used when the field is zero.
const (
	// DefaultTopicPartitions is the partition count of a created topic.
	DefaultTopicPartitions = 1
	// DefaultMaxWait bounds a fetch's wait; Reader.Close waits up to it.
	DefaultMaxWait = 250 * time.Millisecond
	// DefaultHeartbeatInterval is the consumer group heartbeat; a member
	// notices a rebalance within it.
	DefaultHeartbeatInterval = time.Second
	// DefaultSessionTimeout is how long the group waits for a silent member.
	DefaultSessionTimeout = 10 * time.Second
	// DefaultRebalanceTimeout is how long a rebalance waits for members to
	// rejoin.
	DefaultRebalanceTimeout = 5 * time.Second
	// DefaultRetryBackoff is the pause after a failed fetch or commit.
	DefaultRetryBackoff = 200 * time.Millisecond
)

// Options configures a Publisher and a Subscriber.
type Options struct {
	// Brokers are the bootstrap addresses (host:port). Required.
	Brokers []string
	// ConsumerGroup is the group of every subscription of a Subscriber.
	// Required for a Subscriber.
	ConsumerGroup string
	// CreateTopics creates a missing topic before publishing to or
	// subscribing to it.
	CreateTopics bool
	// TopicPartitions is the partition count of a created topic
	// (DefaultTopicPartitions).
	TopicPartitions int
	// ReplicationFactor of a created topic; zero means 1.
	ReplicationFactor int
	// MaxWait, HeartbeatInterval, SessionTimeout, RebalanceTimeout and
	// RetryBackoff tune the subscriber (the Default* constants).
	MaxWait           time.Duration
	HeartbeatInterval time.Duration
	SessionTimeout    time.Duration
	RebalanceTimeout  time.Duration
	RetryBackoff      time.Duration
	// Logger receives the Pub/Sub's messages; nil means watermill.NopLogger.
	Logger watermill.LoggerAdapter
}

func (o Options) withDefaults() Options {
	if o.TopicPartitions == 0 {
		o.TopicPartitions = DefaultTopicPartitions
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = 1
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.RebalanceTimeout == 0 {
		o.RebalanceTimeout = DefaultRebalanceTimeout
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.Logger == nil {
		o.Logger = watermill.NopLogger{}
	}
	return o
}

// ErrClosed is returned by Publish and Subscribe after Close.
var ErrClosed = errors.New("pub/sub closed")

// topics creates missing topics once per name.
type topics struct {
	opts    Options
	client  *kafka.Client
	mu      sync.Mutex
	created map[string]bool
}

func newTopics(opts Options, transport *kafka.Transport) *topics {
	return &topics{opts: opts, created: map[string]bool{},
		client: &kafka.Client{Addr: kafka.TCP(opts.Brokers...), Timeout: 10 * time.Second, Transport: transport}}
}

func (t *topics) ensure(ctx context.Context, topic string) error {
	if !t.opts.CreateTopics {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.created[topic] {
		return nil
	}
	resp, err := t.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: t.opts.TopicPartitions, ReplicationFactor: t.opts.ReplicationFactor,
	}}})
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	if err := resp.Errors[topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	t.created[topic] = true
	return nil
}

// Publisher is a message.Publisher on Kafka. Safe for concurrent use.
type Publisher struct {
	opts      Options
	writer    *kafka.Writer
	transport *kafka.Transport
	topics    *topics

	mu     sync.RWMutex
	closed bool
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher returns a Publisher producing to opts.Brokers with acks=all.
func NewPublisher(opts Options) (*Publisher, error) {
	if len(opts.Brokers) == 0 {
		return nil, errors.New("creating publisher: no brokers")
	}
	opts = opts.withDefaults()
	tr := &kafka.Transport{}
	return &Publisher{
		opts:      opts,
		transport: tr,
		topics:    newTopics(opts, tr),
		writer: &kafka.Writer{
			Addr:         kafka.TCP(opts.Brokers...),
			Balancer:     &kafka.Hash{},
			RequiredAcks: kafka.RequireAll,
			BatchTimeout: time.Millisecond,
			Transport:    tr,
		},
	}, nil
}

// Publish produces msgs to topic and returns when all are acknowledged
// (or the first error). The messages' contexts bound the write.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrClosed
	}
	if len(msgs) == 0 {
		return nil
	}
	ctx := msgs[0].Context()
	if err := p.topics.ensure(ctx, topic); err != nil {
		return fmt.Errorf("publishing to %s: %w", topic, err)
	}
	kms := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		kms[i] = Marshal(topic, m)
	}
	if err := p.writer.WriteMessages(ctx, kms...); err != nil {
		return fmt.Errorf("publishing %d messages to %s: %w", len(msgs), topic, err)
	}
	return nil
}

// Close flushes and closes the writer. Later Publish calls get ErrClosed.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	err := p.writer.Close()
	p.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("closing writer: %w", err)
	}
	return nil
}

// Marshal returns the Kafka message of m for topic (see the package doc).
func Marshal(topic string, m *message.Message) kafka.Message {
	names := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		names = append(names, k)
	}
	slices.Sort(names)
	h := make([]kafka.Header, 0, len(names)+1)
	h = append(h, kafka.Header{Key: UUIDHeader, Value: []byte(m.UUID)})
	for _, k := range names {
		h = append(h, kafka.Header{Key: k, Value: []byte(m.Metadata[k])})
	}
	km := kafka.Message{Topic: topic, Value: m.Payload, Headers: h}
	if pk := m.Metadata.Get(PartitionKeyMetadata); pk != "" {
		km.Key = []byte(pk)
	}
	return km
}

// Unmarshal returns the Watermill message of a Kafka message (see the
// package doc); the payload aliases km.Value.
func Unmarshal(km kafka.Message) *message.Message {
	var uuid string
	md := make(message.Metadata, len(km.Headers))
	for _, h := range km.Headers {
		if h.Key == UUIDHeader {
			uuid = string(h.Value)
			continue
		}
		md[h.Key] = string(h.Value)
	}
	m := message.NewMessage(uuid, km.Value)
	m.Metadata = md
	return m
}

// Subscriber is a message.Subscriber on Kafka: every Subscribe joins
// Options.ConsumerGroup on the topic. Safe for concurrent use.
type Subscriber struct {
	opts      Options
	transport *kafka.Transport
	topics    *topics

	closing chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)

// NewSubscriber returns a Subscriber of opts.ConsumerGroup.
func NewSubscriber(opts Options) (*Subscriber, error) {
	if len(opts.Brokers) == 0 {
		return nil, errors.New("creating subscriber: no brokers")
	}
	if opts.ConsumerGroup == "" {
		return nil, errors.New("creating subscriber: no consumer group")
	}
	opts = opts.withDefaults()
	tr := &kafka.Transport{}
	return &Subscriber{opts: opts, transport: tr, topics: newTopics(opts, tr), closing: make(chan struct{})}, nil
}

// SubscribeInitialize creates topic when Options.CreateTopics is set.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	return s.topics.ensure(context.Background(), topic)
}

// Subscribe joins the consumer group on topic and returns the channel of
// its messages. A message's context is ctx; the next message comes after
// this one is acked (its offset is committed first) and a nacked one comes
// again. The channel is closed when ctx ends or the Subscriber is closed.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if err := s.topics.ensure(ctx, topic); err != nil {
		return nil, fmt.Errorf("subscribing to %s: %w", topic, err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           s.opts.Brokers,
		GroupID:           s.opts.ConsumerGroup,
		Topic:             topic,
		MinBytes:          1,
		MaxBytes:          10 << 20,
		MaxWait:           s.opts.MaxWait,
		StartOffset:       kafka.FirstOffset,
		HeartbeatInterval: s.opts.HeartbeatInterval,
		SessionTimeout:    s.opts.SessionTimeout,
		RebalanceTimeout:  s.opts.RebalanceTimeout,
		JoinGroupBackoff:  s.opts.RetryBackoff,
		ReadBackoffMin:    s.opts.RetryBackoff / 2,
		ReadBackoffMax:    s.opts.RetryBackoff,
		CommitInterval:    0, // synchronous commits
	})
	out := make(chan *message.Message)
	ctx, cancel := context.WithCancel(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		defer close(out)
		defer func() {
			if err := r.Close(); err != nil {
				s.opts.Logger.Error("closing kafka reader", err, watermill.LogFields{"topic": topic})
			}
		}()
		s.consume(ctx, r, topic, out)
	}()
	return out, nil
}

// consume delivers the reader's messages one at a time until ctx ends.
func (s *Subscriber) consume(ctx context.Context, r *kafka.Reader, topic string, out chan<- *message.Message) {
	fields := watermill.LogFields{"topic": topic, "consumer_group": s.opts.ConsumerGroup}
	for {
		km, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.opts.Logger.Error("fetching message", err, fields)
			if !sleep(ctx, s.opts.RetryBackoff) {
				return
			}
			continue
		}
		if !s.deliver(ctx, r, km, out, fields) {
			return
		}
	}
}

// deliver sends km until it is acked and committed; false when ctx ended.
func (s *Subscriber) deliver(ctx context.Context, r *kafka.Reader, km kafka.Message, out chan<- *message.Message, fields watermill.LogFields) bool {
	for {
		m := Unmarshal(km)
		mctx, cancel := context.WithCancel(ctx)
		m.SetContext(mctx)
		select {
		case out <- m:
		case <-ctx.Done():
			cancel()
			return false
		}
		select {
		case <-m.Acked():
			cancel()
			for {
				err := r.CommitMessages(ctx, km)
				if err == nil {
					return true
				}
				if ctx.Err() != nil {
					return false
				}
				s.opts.Logger.Error("committing offset", err, fields.Add(watermill.LogFields{"offset": km.Offset}))
				if !sleep(ctx, s.opts.RetryBackoff) {
					return false
				}
			}
		case <-m.Nacked():
			cancel()
		case <-ctx.Done():
			cancel()
			return false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close ends every subscription, closes their channels and waits for them
// (each reader's Close takes up to MaxWait). Later Subscribe calls get
// ErrClosed; a second Close is a no-op.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.wg.Wait()
	s.transport.CloseIdleConnections()
	return nil
}
