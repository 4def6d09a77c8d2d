package kafkaout

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// Wire names shared by the gate and its clients.
const (
	// HeaderAPIKey carries a principal's API key (the X-API-Key of HTTP).
	HeaderAPIKey = "x-api-key"
	// HeaderStatus carries the HTTP status of a reply.
	HeaderStatus = "agentgate-status"
	// HeaderEventType carries the recorded event's type on a decision.
	HeaderEventType = "agentgate-event-type"
	// DecisionType is the CloudEvent type of a message on the decisions
	// topic.
	DecisionType = "agentgate.decision"
	// HeaderAgentToken carries an agent's token ("Bearer <token>", the
	// Authorization of HTTP) on a command whose data has no agent_token
	// member (qwed.a2a.message).
	HeaderAgentToken = "authorization"
	// HeaderConfirmationToken carries a qwed.execute's confirmation token
	// (the X-Confirmation-Token of POST /agp/execute, the Agent Policy
	// Engine spec §2.2).
	HeaderConfirmationToken = "x-confirmation-token"
	// HeaderRetryAfter carries, on a rate-limited reply (status 429), the
	// seconds to wait (the Retry-After of HTTP).
	HeaderRetryAfter = "retry-after"
)

// Wire names of a message on the forwarded topic (agentgate.a2a.forwarded):
// a CloudEvent of type ForwardedType whose data is the AgentMessage, keyed
// by its receiver, with the verdict in these headers.
const (
	// ForwardedType is the CloudEvent type of a forwarded message.
	ForwardedType = "qwed.a2a.forwarded"
	// HeaderEventsPartition and HeaderEventsSeq name the verdict's event
	// in the log (its events partition and seq): unique per verdict, so a
	// consumer drops repeats by them (the CloudEvent id is "P-SEQ" too).
	HeaderEventsPartition = "agentgate-events-partition"
	HeaderEventsSeq       = "agentgate-events-seq"
	// HeaderA2AStatus carries the verdict's status (forwarded).
	HeaderA2AStatus = "qwed-a2a-status"
	// HeaderA2AEngine carries the engine that gave the verdict.
	HeaderA2AEngine = "qwed-a2a-engine"
	// HeaderA2ATraceID carries the verdict's trace id (the attestation's
	// jti).
	HeaderA2ATraceID = "qwed-a2a-trace-id"
	// HeaderA2AAttestation carries the verdict's attestation (an ES256
	// JWT, verifiable offline against the gate's JWKS).
	HeaderA2AAttestation = "qwed-a2a-attestation"
	// HeaderA2ASender carries the sender agent.
	HeaderA2ASender = "qwed-a2a-sender"
	// HeaderA2AShadow is "true" on a message forwarded despite an engine
	// error (shadow mode, block_on_error false).
	HeaderA2AShadow = "qwed-a2a-shadow"
)

// MarshalA2A encodes an AgentMessage (or any value) as JSON without
// encoding/json's HTML escaping: "<", ">" and "&" stay one byte each (in
// the payload too, a json.RawMessage), so the message keeps its size
// (escaped, a payload of "<" grows six times, past the topics' bounds)
// and its bytes as the sender wrote them.
func MarshalA2A(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// DefaultTimeout bounds a Send whose context has no deadline, when
// RequesterConfig.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// ErrTimeout is returned by Send when no reply came in time (the command
// may still be decided: resend it with the same ID).
var ErrTimeout = errors.New("no reply from the gate in time")

// ErrClosed is returned by calls on a closed Requester.
var ErrClosed = errors.New("client closed")

// RequesterConfig configures a Requester.
type RequesterConfig struct {
	Brokers []string
	// RequestTopic is the topic commands go to; its partition count is
	// read once, by NewRequester.
	RequestTopic string
	// ReplyTopic is the topic replies are read from (every partition).
	ReplyTopic string
	// Timeout bounds a Send whose context has no deadline
	// (DefaultTimeout when zero).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Reply is the gate's answer to a request.
type Reply struct {
	// Status is the HTTP status of the matching endpoint.
	Status int
	// Type is the reply's CloudEvent type (the command type + ".reply").
	Type          string
	CorrelationID string
	// Data is the endpoint's JSON response body.
	Data json.RawMessage
	// RetryAfter is the wait a rate-limited reply (status 429) asks for
	// (HeaderRetryAfter), 0 when it names none.
	RetryAfter time.Duration
}

// Requester writes commands and routes the replies of its reply topic to
// the Sends waiting for them, by correlation id. It is safe for concurrent
// use.
type Requester struct {
	cfg        RequesterConfig
	partitions int
	w          *Producer
	readers    []*kafka.Reader
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	seq        atomic.Uint64
	prefix     string
	closed     atomic.Bool

	mu      sync.Mutex
	waiters map[string]chan *Reply
}

// NewRequester reads the partition counts of both topics, positions a
// reply reader at the end of every partition of the reply topic and
// returns the Requester.
func NewRequester(ctx context.Context, cfg RequesterConfig) (*Requester, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafkaout: no brokers")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Requester{cfg: cfg, waiters: map[string]chan *Reply{}, prefix: "c-" + rand.Text()[:12] + "-"}
	n, err := TopicPartitions(ctx, cfg.Brokers, cfg.RequestTopic)
	if err != nil {
		return nil, err
	}
	c.partitions = len(n)
	replies, err := TopicPartitions(ctx, cfg.Brokers, cfg.ReplyTopic)
	if err != nil {
		return nil, err
	}
	c.w = NewProducer(cfg.Brokers)
	rctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for _, p := range replies {
		end, err := lastOffset(ctx, cfg.Brokers, cfg.ReplyTopic, p)
		if err != nil {
			cancel()
			return nil, err
		}
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: cfg.Brokers, Topic: cfg.ReplyTopic, Partition: p,
			MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 100 * time.Millisecond,
			ReadBackoffMin: 5 * time.Millisecond, ReadBackoffMax: 100 * time.Millisecond,
		})
		if err := r.SetOffset(end); err != nil {
			cancel()
			return nil, fmt.Errorf("positioning the reply reader: %w", err)
		}
		c.readers = append(c.readers, r)
		c.wg.Add(1)
		go c.readReplies(rctx, r)
	}
	return c, nil
}

// Partitions returns the partition count of the requests topic.
func (c *Requester) Partitions() int { return c.partitions }

// Producer returns the Requester's producer (closed by Close).
func (c *Requester) Producer() *Producer { return c.w }

// Closed reports whether Close was called.
func (c *Requester) Closed() bool { return c.closed.Load() }

// Close stops the reply readers and the producer.
func (c *Requester) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.cancel()
	var errs []error
	for _, r := range c.readers {
		errs = append(errs, r.Close())
	}
	c.wg.Wait()
	errs = append(errs, c.w.Close())
	return errors.Join(errs...)
}

// Send writes a prepared message (Topic and Partition set by the caller,
// the ce_correlationid header = corr) and waits for the reply carrying
// corr; corr "" does not wait.
func (c *Requester) Send(ctx context.Context, msg kafka.Message, corr string) (*Reply, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	var ch chan *Reply
	if corr != "" {
		ch = make(chan *Reply, 1)
		c.mu.Lock()
		c.waiters[corr] = ch
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.waiters, corr)
			c.mu.Unlock()
		}()
	}
	if err := c.w.Write(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sending request: %w: %w", ErrTimeout, ctx.Err())
		}
		return nil, fmt.Errorf("sending request: %w", err)
	}
	if ch == nil {
		return nil, nil
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for reply %s: %w: %w", corr, ErrTimeout, ctx.Err())
	}
}

// NewCorrelationID returns a correlation id this Requester's reply reader
// will route back to Send.
func (c *Requester) NewCorrelationID() string {
	return c.prefix + strconv.FormatUint(c.seq.Add(1), 36)
}

// ReplyTopic returns the topic this Requester reads replies from.
func (c *Requester) ReplyTopic() string { return c.cfg.ReplyTopic }

// readReplies delivers the replies of one partition to their waiters.
func (c *Requester) readReplies(ctx context.Context, r *kafka.Reader) {
	defer c.wg.Done()
	for {
		msg, err := r.ReadMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.cfg.Logger.Warn("reading replies", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		ev, err := cekafka.DecodeReply(msg)
		if err != nil {
			c.cfg.Logger.Debug("dropping an undecodable reply", "partition", msg.Partition, "offset", msg.Offset, "err", err)
			continue
		}
		corr := ev.Extensions[ce.ExtCorrelationID]
		c.mu.Lock()
		ch := c.waiters[corr]
		c.mu.Unlock()
		if ch == nil {
			c.cfg.Logger.Debug("dropping a reply nobody waits for", "correlationid", corr)
			continue
		}
		rep := &Reply{Type: ev.Type, CorrelationID: corr, Data: json.RawMessage(ev.Data)}
		for _, h := range msg.Headers {
			switch h.Key {
			case HeaderStatus:
				rep.Status, _ = strconv.Atoi(string(h.Value))
			case HeaderRetryAfter:
				if s, err := strconv.ParseInt(string(h.Value), 10, 64); err == nil && s > 0 && s < 1<<31 {
					rep.RetryAfter = time.Duration(s) * time.Second
				}
			}
		}
		select {
		case ch <- rep:
		default:
		}
	}
}

// PartitionFor returns the partition of key among n partitions: murmur2,
// as Kafka's Java client (kcat: -X partitioner=murmur2_random).
func PartitionFor(key string, n int) int32 {
	if n <= 1 {
		return 0
	}
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	return int32(kafka.Murmur2Balancer{}.Balance(kafka.Message{Key: []byte(key)}, parts...))
}

// TopicPartitions returns the partition IDs of topic, asking the brokers in
// turn until one answers (no producer or client needed: the gate reads its
// topics' partition counts with it at start-up). A topic without
// partitions is an error.
func TopicPartitions(ctx context.Context, brokers []string, topic string) ([]int, error) {
	var lastErr error
	for _, b := range brokers {
		d := kafka.Dialer{Timeout: 10 * time.Second}
		conn, err := d.DialContext(ctx, "tcp", b)
		if err != nil {
			lastErr = err
			continue
		}
		ps, err := conn.ReadPartitions(topic)
		conn.Close()
		if err != nil {
			lastErr = err
			continue
		}
		out := make([]int, 0, len(ps))
		for _, p := range ps {
			out = append(out, p.ID)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("reading partitions of %s: none", topic)
		}
		return out, nil
	}
	return nil, fmt.Errorf("reading partitions of %s: %w", topic, lastErr)
}

func lastOffset(ctx context.Context, brokers []string, topic string, p int) (int64, error) {
	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, p)
	if err != nil {
		return 0, fmt.Errorf("dialing the leader of %s/%d: %w", topic, p, err)
	}
	defer conn.Close()
	off, err := conn.ReadLastOffset()
	if err != nil {
		return 0, fmt.Errorf("reading the end of %s/%d: %w", topic, p, err)
	}
	return off, nil
}
