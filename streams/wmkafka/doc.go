// Package wmkafka is a Watermill message.Publisher and message.Subscriber
// on Kafka, built on github.com/segmentio/kafka-go (Watermill's own Kafka
// Pub/Sub uses sarama), plus NewRouter: a Watermill router with the
// middleware an asynchronous consumer of agentgate's topics wants (poison
// queue to agentgate.deadletter, recoverer, correlation id).
//
// What it is for, and what it is not. It is the building block for
// consumers outside the decision path — a service reacting to
// agentgate.decisions (client.ConsumeDecisions runs on it) or
// agentgate.a2a.forwarded, a dead-letter reader —
// which want at-least-once delivery through a consumer group and Watermill's
// handler model. The gate itself (handlers/kafkagate) does not run on it:
// deciding a partition needs the partition assignment itself (restore the
// partition's state from the events topic before deciding, stop before the
// next owner starts), batches many requests into one append, and answers
// them in offset order, none of which a Subscriber's one-message-at-a-time
// channel with a synchronous commit per Ack expresses; and each of those
// per-message steps would sit on the request-reply latency. See
// docs/ARCHITECTURE.md, "Kafka".
//
// Wire format. A Watermill message is one Kafka message: value = payload,
// one header per metadata entry (sorted by name), the message UUID in the
// header _watermill_message_uuid, key = the metadata entry partition_key
// (PartitionKeyMetadata) when set, so messages of one key keep their order.
// Messages without a key are spread over partitions by kafka-go's hash
// balancer (round robin for a nil key).
//
// Guarantees (what the Watermill Pub/Sub test suite is run with):
// consumer groups (every Subscriber has one; the members of a group share
// the partitions), at-least-once delivery (an offset is committed after
// Ack; a Nack redelivers the same message at once; a rebalance or crash may
// redeliver), order per partition, persistence (a new group starts at the
// earliest offset and sees old messages). No exactly-once: agentgate's
// exactly-once effects come from the event log's chain and the request id
// (invariants 3 and 4 of docs/ARCHITECTURE.md).
//
// Publish is synchronous: it returns when the broker acknowledged every
// message with acks=all. Subscribe delivers one message at a time per
// subscription and waits for its Ack or Nack before the next one.
//
// Topics. Kafka-go's writer does not create topics; with
// Options.CreateTopics the Publisher and the Subscriber create a missing
// topic (TopicPartitions partitions) before using it, and Subscriber
// implements message.SubscribeInitializer.
package wmkafka
