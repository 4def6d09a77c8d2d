package wmkafka_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/streams/wmkafka"
)

func newCluster(t *testing.T) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func options(brokers []string, group string) wmkafka.Options {
	return wmkafka.Options{Brokers: brokers, ConsumerGroup: group, CreateTopics: true}
}

func pubSub(t *testing.T, brokers []string, group string) (message.Publisher, message.Subscriber) {
	t.Helper()
	pub, err := wmkafka.NewPublisher(options(brokers, group))
	if err != nil {
		t.Fatalf("creating publisher: %v", err)
	}
	sub, err := wmkafka.NewSubscriber(options(brokers, group))
	if err != nil {
		t.Fatalf("creating subscriber: %v", err)
	}
	return pub, sub
}

// TestWatermillPubSubSuite runs Watermill's own Pub/Sub test suite against
// the kafka-go Publisher/Subscriber on a kfake broker, with the features
// this implementation honestly claims (see the package doc). Topics have
// one partition, so order is guaranteed per topic; -short runs the
// suite's short variants.
func TestWatermillPubSubSuite(t *testing.T) {
	brokers := newCluster(t)
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups:                      true,
		ExactlyOnceDelivery:                 false,
		GuaranteedOrder:                     true,
		GuaranteedOrderWithSingleSubscriber: false,
		Persistent:                          true,
		// Every subscriber has a consumer group: a new member of a group
		// does not see what the group already consumed.
		NewSubscriberReceivesOldMessages: false,
		ForceShort:                       true,
	},
		func(t *testing.T) (message.Publisher, message.Subscriber) { return pubSub(t, brokers, "test") },
		func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
			return pubSub(t, brokers, group)
		},
	)
}
