package client

import (
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

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// Defaults of a Config.
const (
	DefaultRequestTopic = "agentgate.requests"
	DefaultReplyTopic   = "agentgate.replies"
	DefaultTimeout      = 10 * time.Second
	// HeaderAPIKey carries a principal's API key.
	HeaderAPIKey = "x-api-key"
	// HeaderStatus carries the HTTP status of a reply.
	HeaderStatus = "agentgate-status"
)

// ErrTimeout is returned by Request when no reply came in time (the
// command may still be decided: resend it with the same ID).
var ErrTimeout = errors.New("no reply from the gate in time")

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("client closed")

// Config configures a Client.
type Config struct {
	Brokers      []string
	RequestTopic string
	ReplyTopic   string
	// Source is the CloudEvent source of this client's commands; "" is
	// "agentgate-client/" + a random suffix.
	Source  string
	Timeout time.Duration
	Logger  *slog.Logger
}

// Command is one command to send.
type Command struct {
	Type domain.CommandType
	// ID is the CloudEvent id; "" draws a random one. (Source, ID) is the
	// RequestID: resend with the same ID to get the recorded decision.
	ID string
	// AgentID is the CloudEvent subject and the Kafka key ("" for a
	// registration: the client uses the agent id the gate will mint when
	// the API key is the agent's principal's; the gate forwards it
	// otherwise).
	AgentID string
	// Data is the endpoint's JSON body: []byte or json.RawMessage as is,
	// anything else through encoding/json.
	Data any
	// APIKey is sent in the x-api-key header (principal commands).
	APIKey string
	// principal is the principal a registration's key is expected to
	// authenticate (the agent's principal_id, set by Register): the agent
	// id the gate mints depends on it.
	principal string
}

// Reply is the gate's answer to a Request.
type Reply struct {
	// Status is the HTTP status of the matching endpoint.
	Status int
	// Type is the reply's CloudEvent type (the command type + ".reply").
	Type          string
	CorrelationID string
	// Data is the endpoint's JSON response body.
	Data json.RawMessage
}

// Client sends commands and reads replies. It is safe for concurrent use.
type Client struct {
	cfg        Config
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

// New connects, positions the reply reader at the end of every partition
// of the reply topic and returns the client.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("client: no brokers")
	}
	if cfg.RequestTopic == "" {
		cfg.RequestTopic = DefaultRequestTopic
	}
	if cfg.ReplyTopic == "" {
		cfg.ReplyTopic = DefaultReplyTopic
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Client{cfg: cfg, waiters: map[string]chan *Reply{}, prefix: "c-" + rand.Text()[:12] + "-"}
	if c.cfg.Source == "" {
		c.cfg.Source = "agentgate-client/" + rand.Text()[:12]
	}
	n, err := partitions(ctx, cfg.Brokers, cfg.RequestTopic)
	if err != nil {
		return nil, err
	}
	c.partitions = len(n)
	replies, err := partitions(ctx, cfg.Brokers, cfg.ReplyTopic)
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

// Source returns the CloudEvent source of this client's commands.
func (c *Client) Source() string { return c.cfg.Source }

// Partitions returns the partition count of the requests topic.
func (c *Client) Partitions() int { return c.partitions }

// Close stops the reply reader and the writer.
func (c *Client) Close() error {
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

// Publish sends cmd without replyto and returns its RequestID once the
// broker has it (acks=all); the decision appears on the decisions topic.
func (c *Client) Publish(ctx context.Context, cmd Command) (domain.RequestID, error) {
	msg, id, err := c.message(cmd, "", "")
	if err != nil {
		return id, err
	}
	if c.closed.Load() {
		return id, ErrClosed
	}
	if err := c.w.Write(ctx, msg); err != nil {
		return id, fmt.Errorf("publishing %s: %w", cmd.Type, err)
	}
	return id, nil
}

// PublishBatch sends cmds without replyto in one write (one produce
// request per partition, in parallel) and returns their RequestIDs, in
// order, once the broker has every one (acks=all). The commands of one
// agent keep their order. On an error some may have been written:
// resending the batch with the same IDs gets the recorded decisions.
func (c *Client) PublishBatch(ctx context.Context, cmds ...Command) ([]domain.RequestID, error) {
	ids := make([]domain.RequestID, len(cmds))
	msgs := make([]kafka.Message, len(cmds))
	for i, cmd := range cmds {
		msg, id, err := c.message(cmd, "", "")
		if err != nil {
			return nil, err
		}
		msgs[i], ids[i] = msg, id
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if err := c.w.Write(ctx, msgs...); err != nil {
		return ids, fmt.Errorf("publishing %d commands: %w", len(cmds), err)
	}
	return ids, nil
}

// Request sends cmd with replyto and waits for its reply.
func (c *Client) Request(ctx context.Context, cmd Command) (*Reply, error) {
	corr := c.prefix + strconv.FormatUint(c.seq.Add(1), 36)
	msg, _, err := c.message(cmd, c.cfg.ReplyTopic, corr)
	if err != nil {
		return nil, err
	}
	return c.Send(ctx, msg, corr)
}

// Send writes a prepared message (Topic and Partition set by the caller,
// the ce_correlationid header = corr) and waits for the reply carrying
// corr; corr "" does not wait. It is the transport of Request, exported for
// gate instances that send pre-built commands.
func (c *Client) Send(ctx context.Context, msg kafka.Message, corr string) (*Reply, error) {
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

// NewCorrelationID returns a correlation id this client's reply reader
// will route back to Send.
func (c *Client) NewCorrelationID() string {
	return c.prefix + strconv.FormatUint(c.seq.Add(1), 36)
}

// ReplyTopic returns the topic this client reads replies from.
func (c *Client) ReplyTopic() string { return c.cfg.ReplyTopic }

// message encodes cmd as a binary-mode CloudEvent.
func (c *Client) message(cmd Command, replyTo, corr string) (kafka.Message, domain.RequestID, error) {
	if cmd.ID == "" {
		cmd.ID = rand.Text()
	}
	id := domain.RequestID{Source: c.cfg.Source, ID: cmd.ID}
	var data []byte
	switch d := cmd.Data.(type) {
	case []byte:
		data = d
	case json.RawMessage:
		data = d
	case nil:
		data = []byte("{}")
	default:
		b, err := json.Marshal(d)
		if err != nil {
			return kafka.Message{}, id, fmt.Errorf("encoding %s data: %w", cmd.Type, err)
		}
		data = b
	}
	key := cmd.AgentID
	if cmd.Type == domain.CmdRegisterAgent {
		key = AgentIDFor(id.Source, id.ID, cmd.principal)
	}
	ext := map[string]string{}
	if key != "" {
		ext[ce.ExtPartitionKey] = key
	}
	if replyTo != "" {
		ext[ce.ExtReplyTo] = replyTo
		ext[ce.ExtCorrelationID] = corr
	}
	msg, err := cekafka.Encode(ce.Event{
		SpecVersion: ce.SpecVersion, Type: string(cmd.Type), Source: id.Source, ID: id.ID,
		Subject: cmd.AgentID, DataContentType: ce.ContentTypeJSON, Data: data, Extensions: ext, Mode: ce.ModeBinary,
	})
	if err != nil {
		return kafka.Message{}, id, err
	}
	msg.Topic = c.cfg.RequestTopic
	msg.Partition = int(PartitionFor(key, c.partitions))
	if key == "" {
		msg.Partition = int(PartitionFor(id.ID, c.partitions))
	}
	if cmd.APIKey != "" {
		msg.Headers = append(msg.Headers, kafka.Header{Key: HeaderAPIKey, Value: []byte(cmd.APIKey)})
	}
	return msg, id, nil
}

// readReplies delivers the replies of one partition to their waiters.
func (c *Client) readReplies(ctx context.Context, r *kafka.Reader) {
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
			if h.Key == HeaderStatus {
				rep.Status, _ = strconv.Atoi(string(h.Value))
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

// AgentIDFor returns the agent id a registration sent with this source and
// id, with an API key of principal, mints (domain.AgentIDFor: request ids
// are scoped by the principal of the key, domain.RequestScope).
func AgentIDFor(source, id, principal string) string {
	return domain.AgentIDFor(domain.RequestID{Source: source, ID: id, Scope: domain.RequestScope(principal, "")})
}

func partitions(ctx context.Context, brokers []string, topic string) ([]int, error) {
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
