package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkaout"
	"github.com/agentgate/agentgate/streams/wmkafka"
)

// Defaults of a DecisionsConfig.
const (
	DefaultDecisionsTopic  = "agentgate.decisions"
	DefaultDeadLetterTopic = wmkafka.DeadLetterTopic
	// HeaderEventType carries the recorded event's type on a decision.
	HeaderEventType = kafkaout.HeaderEventType
	// DecisionType is the CloudEvent type of a message on the decisions
	// topic.
	DecisionType = kafkaout.DecisionType
)

// Decision is one message of the decisions topic: a recorded event of the
// gate as its async consumers see it.
type Decision struct {
	// ID is "PARTITION-SEQ": unique per recorded event, the same on a
	// redelivery (drop repeats by ID).
	ID string
	// RequestID is the id of the request that caused it (its
	// correlationid).
	RequestID string
	// AgentID is the agent (the CloudEvent subject), "" for none.
	AgentID string
	// EventType is the recorded event's type (action.decided,
	// agent.registered, …).
	EventType string
	// Time is the decision time recorded in the event.
	Time time.Time
	// Data is the body the matching HTTP endpoint answers (domain.Reply).
	Data json.RawMessage
}

// DecisionsConfig configures ConsumeDecisions.
type DecisionsConfig struct {
	Brokers []string
	// Group is the consumer group: the members of a group share the
	// decisions; each group gets every decision. Required.
	Group string
	// Topic is the decisions topic (DefaultDecisionsTopic).
	Topic string
	// DeadLetterTopic receives the decisions the handler failed on
	// (DefaultDeadLetterTopic).
	DeadLetterTopic string
	Logger          *slog.Logger
}

// ConsumeDecisions runs handle on every decision of the decisions topic
// in the consumer group cfg.Group until ctx ends, then returns nil. It
// runs on Watermill's router (streams/wmkafka.NewRouter) over the kafka-go
// Pub/Sub: delivery is at least once, in order per partition (per agent);
// a decision's offset is committed once handle returns. When handle
// returns an error or panics, the decision goes to the dead-letter topic
// with the reason (metadata reason_poisoned) and the consumer moves on:
// one bad decision never blocks the others. A message of the topic that is
// not a decision is dead-lettered the same way.
func ConsumeDecisions(ctx context.Context, cfg DecisionsConfig, handle func(context.Context, Decision) error) error {
	if len(cfg.Brokers) == 0 || cfg.Group == "" || handle == nil {
		return errors.New("consuming decisions: Brokers, Group and a handler are required")
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultDecisionsTopic
	}
	if cfg.DeadLetterTopic == "" {
		cfg.DeadLetterTopic = DefaultDeadLetterTopic
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	logger := watermill.NewSlogLogger(cfg.Logger)
	pub, err := wmkafka.NewPublisher(wmkafka.Options{Brokers: cfg.Brokers, Logger: logger})
	if err != nil {
		return fmt.Errorf("consuming decisions: %w", err)
	}
	defer pub.Close()
	sub, err := wmkafka.NewSubscriber(wmkafka.Options{Brokers: cfg.Brokers, ConsumerGroup: cfg.Group, Logger: logger})
	if err != nil {
		return fmt.Errorf("consuming decisions: %w", err)
	}
	defer sub.Close()
	router, err := wmkafka.NewRouter(pub, cfg.DeadLetterTopic, logger)
	if err != nil {
		return fmt.Errorf("consuming decisions: %w", err)
	}
	router.AddConsumerHandler("agentgate-decisions", cfg.Topic, sub, func(m *message.Message) error {
		d, err := DecodeDecision(m)
		if err != nil {
			return err
		}
		return handle(m.Context(), d)
	})
	if err := router.Run(ctx); err != nil {
		return fmt.Errorf("consuming decisions: %w", err)
	}
	return nil
}

// DecodeDecision reads a decision from a Watermill message of the
// decisions topic (metadata = the Kafka headers, payload = the value).
func DecodeDecision(m *message.Message) (Decision, error) {
	km := kafka.Message{Value: m.Payload}
	for k, v := range m.Metadata {
		km.Headers = append(km.Headers, kafka.Header{Key: k, Value: []byte(v)})
	}
	ev, err := cekafka.DecodeReply(km)
	if err != nil {
		return Decision{}, fmt.Errorf("decoding a decision: %w", err)
	}
	if ev.Type != DecisionType {
		return Decision{}, fmt.Errorf("decoding a decision: CloudEvent type %q is not %s", ev.Type, DecisionType)
	}
	return Decision{
		ID: ev.ID, RequestID: ev.Extensions[ce.ExtCorrelationID], AgentID: ev.Subject,
		EventType: m.Metadata.Get(HeaderEventType), Time: ev.Time, Data: json.RawMessage(ev.Data),
	}, nil
}
