package wmkafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/agentgate/agentgate/streams/wmkafka"
)

func receive(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case m := <-ch:
		m.Ack()
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no message within 20 s")
		return nil
	}
}

// TestDesign3DeadLetterRouter shows the router of NewRouter on the Kafka
// Pub/Sub: a handler panic and a handler error both send the input to
// agentgate.deadletter with the reason, the partition moves on, and a good
// input's output carries its correlation id.
func TestDesign3DeadLetterRouter(t *testing.T) {
	brokers := newCluster(t)
	const in, out = "agentgate.requests.router", "agentgate.replies.router"
	pub, sub := pubSub(t, brokers, "gate")
	router, err := wmkafka.NewRouter(pub, "", nil)
	if err != nil {
		t.Fatalf("creating router: %v", err)
	}
	router.AddHandler("gate", in, sub, out, pub, func(m *message.Message) ([]*message.Message, error) {
		switch string(m.Payload) {
		case "panic":
			panic("handler bug")
		case "fail":
			return nil, errors.New("undecodable input")
		}
		return []*message.Message{message.NewMessage("reply-"+m.UUID, []byte(strings.ToUpper(string(m.Payload))))}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- router.Run(ctx) }()
	defer func() {
		if err := router.Close(); err != nil {
			t.Errorf("closing router: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("router run: %v", err)
		}
		_ = sub.Close()
		_ = pub.Close()
	}()
	<-router.Running()

	watchPub, watch := pubSub(t, brokers, "watch")
	_ = watchPub.Close()
	defer func() { _ = watch.Close() }()
	dead, err := watch.Subscribe(ctx, wmkafka.DeadLetterTopic)
	if err != nil {
		t.Fatalf("subscribing to dead letters: %v", err)
	}
	replies, err := watch.Subscribe(ctx, out)
	if err != nil {
		t.Fatalf("subscribing to replies: %v", err)
	}

	var msgs []*message.Message
	for _, p := range []string{"panic", "fail", "ok"} {
		m := message.NewMessage("in-"+p, []byte(p))
		middleware.SetCorrelationID("corr-"+p, m)
		msgs = append(msgs, m)
	}
	if err := pub.Publish(in, msgs...); err != nil {
		t.Fatalf("publishing: %v", err)
	}

	reasons := map[string]string{}
	for range 2 {
		m := receive(t, dead)
		reasons[m.UUID] = m.Metadata.Get(middleware.ReasonForPoisonedKey)
		if got := m.Metadata.Get(middleware.PoisonedTopicKey); got != in {
			t.Fatalf("dead letter %s: topic_poisoned = %q, want %q", m.UUID, got, in)
		}
	}
	if !strings.Contains(reasons["in-panic"], "handler bug") || !strings.Contains(reasons["in-fail"], "undecodable input") {
		t.Fatalf("dead letter reasons = %v", reasons)
	}
	r := receive(t, replies)
	if string(r.Payload) != "OK" || middleware.MessageCorrelationID(r) != "corr-ok" {
		t.Fatalf("reply %s %q with correlation id %q, want OK with corr-ok", r.UUID, r.Payload, middleware.MessageCorrelationID(r))
	}
}
