package client

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// Defaults of a Config.
const (
	DefaultRequestTopic = "agentgate.requests"
	DefaultReplyTopic   = "agentgate.replies"
	DefaultTimeout      = kafkaout.DefaultTimeout
	// HeaderAPIKey carries a principal's API key.
	HeaderAPIKey = kafkaout.HeaderAPIKey
	// HeaderStatus carries the HTTP status of a reply.
	HeaderStatus = kafkaout.HeaderStatus
)

// ErrTimeout is returned by Request when no reply came in time (the
// command may still be decided: resend it with the same ID).
var ErrTimeout = kafkaout.ErrTimeout

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = kafkaout.ErrClosed

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
	// AgentToken is sent in the authorization header ("Bearer <token>"),
	// for a command whose data carries no agent_token (qwed.a2a.message).
	AgentToken string
	// ConfirmationToken is sent in the x-confirmation-token header: a
	// qwed.execute's confirmation token from qwed.execute.prepare (the
	// Agent Policy Engine spec §2.2).
	ConfirmationToken string
	// principal is the principal a registration's key is expected to
	// authenticate (the agent's principal_id, set by Register): the agent
	// id the gate mints depends on it.
	principal string
}

// Reply is the gate's answer to a Request: its HTTP status, CloudEvent
// type (the command type + ".reply"), correlation id and the endpoint's
// JSON response body.
type Reply = kafkaout.Reply

// Client sends commands and reads replies. It is safe for concurrent use.
type Client struct {
	cfg Config
	rq  *kafkaout.Requester
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
	c := &Client{cfg: cfg}
	if c.cfg.Source == "" {
		c.cfg.Source = "agentgate-client/" + rand.Text()[:12]
	}
	rq, err := kafkaout.NewRequester(ctx, kafkaout.RequesterConfig{
		Brokers: cfg.Brokers, RequestTopic: cfg.RequestTopic, ReplyTopic: cfg.ReplyTopic,
		Timeout: cfg.Timeout, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	c.rq = rq
	return c, nil
}

// Source returns the CloudEvent source of this client's commands.
func (c *Client) Source() string { return c.cfg.Source }

// Partitions returns the partition count of the requests topic.
func (c *Client) Partitions() int { return c.rq.Partitions() }

// Close stops the reply reader and the writer.
func (c *Client) Close() error { return c.rq.Close() }

// Publish sends cmd without replyto and returns its RequestID once the
// broker has it (acks=all); the decision appears on the decisions topic.
func (c *Client) Publish(ctx context.Context, cmd Command) (domain.RequestID, error) {
	msg, id, err := c.message(cmd, "", "")
	if err != nil {
		return id, err
	}
	if c.rq.Closed() {
		return id, ErrClosed
	}
	if err := c.rq.Producer().Write(ctx, msg); err != nil {
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
	if c.rq.Closed() {
		return nil, ErrClosed
	}
	if err := c.rq.Producer().Write(ctx, msgs...); err != nil {
		return ids, fmt.Errorf("publishing %d commands: %w", len(cmds), err)
	}
	return ids, nil
}

// Request sends cmd with replyto and waits for its reply.
func (c *Client) Request(ctx context.Context, cmd Command) (*Reply, error) {
	corr := c.rq.NewCorrelationID()
	msg, _, err := c.message(cmd, c.cfg.ReplyTopic, corr)
	if err != nil {
		return nil, err
	}
	return c.rq.Send(ctx, msg, corr)
}

// Send writes a prepared message (Topic and Partition set by the caller,
// the ce_correlationid header = corr) and waits for the reply carrying
// corr; corr "" does not wait. It is the transport of Request, for callers
// that build their own messages.
func (c *Client) Send(ctx context.Context, msg kafka.Message, corr string) (*Reply, error) {
	return c.rq.Send(ctx, msg, corr)
}

// NewCorrelationID returns a correlation id this client's reply reader
// will route back to Send.
func (c *Client) NewCorrelationID() string { return c.rq.NewCorrelationID() }

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
	msg.Partition = int(PartitionFor(key, c.rq.Partitions()))
	if key == "" {
		msg.Partition = int(PartitionFor(id.ID, c.rq.Partitions()))
	}
	if cmd.APIKey != "" {
		msg.Headers = append(msg.Headers, kafka.Header{Key: HeaderAPIKey, Value: []byte(cmd.APIKey)})
	}
	if cmd.AgentToken != "" {
		msg.Headers = append(msg.Headers, kafka.Header{Key: kafkaout.HeaderAgentToken, Value: []byte("Bearer " + cmd.AgentToken)})
	}
	if cmd.ConfirmationToken != "" {
		msg.Headers = append(msg.Headers, kafka.Header{Key: kafkaout.HeaderConfirmationToken, Value: []byte(cmd.ConfirmationToken)})
	}
	return msg, id, nil
}

// PartitionFor returns the partition of key among n partitions: murmur2,
// as Kafka's Java client (kcat: -X partitioner=murmur2_random).
func PartitionFor(key string, n int) int32 { return kafkaout.PartitionFor(key, n) }

// AgentIDFor returns the agent id a registration sent with this source and
// id, with an API key of principal, mints (domain.AgentIDFor: request ids
// are scoped by the principal of the key, domain.RequestScope).
func AgentIDFor(source, id, principal string) string {
	return domain.AgentIDFor(domain.RequestID{Source: source, ID: id, Scope: domain.RequestScope(principal, "")})
}
