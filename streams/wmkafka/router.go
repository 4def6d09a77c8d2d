package wmkafka

import (
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
)

// DeadLetterTopic is the default topic of input that could not be handled
// (the Contracts of docs/ARCHITECTURE.md).
const DeadLetterTopic = "agentgate.deadletter"

// NewRouter returns a Watermill router for an asynchronous consumer of
// agentgate's topics (not the gate's decision path, see the package doc)
// whose every handler runs inside, from the outside in:
//   - middleware.CorrelationID: a produced message carries the consumed
//     one's correlation_id metadata;
//   - middleware.PoisonQueue(pub, deadLetterTopic): a handler error (or a
//     panic, below) publishes the consumed message to deadLetterTopic with
//     the metadata reason_poisoned (the error) and topic_poisoned, subscriber_poisoned
//     and handler_poisoned, then acks it, so one bad input never blocks
//     its partition;
//   - middleware.Recoverer: a handler panic becomes an error.
//
// An empty deadLetterTopic means DeadLetterTopic; a nil logger means
// watermill.NopLogger. The caller adds handlers and runs the router.
func NewRouter(pub message.Publisher, deadLetterTopic string, logger watermill.LoggerAdapter) (*message.Router, error) {
	if deadLetterTopic == "" {
		deadLetterTopic = DeadLetterTopic
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, logger)
	if err != nil {
		return nil, fmt.Errorf("creating router: %w", err)
	}
	poison, err := middleware.PoisonQueue(pub, deadLetterTopic)
	if err != nil {
		return nil, fmt.Errorf("creating poison queue middleware: %w", err)
	}
	r.AddMiddleware(middleware.CorrelationID, poison, middleware.Recoverer)
	return r, nil
}
