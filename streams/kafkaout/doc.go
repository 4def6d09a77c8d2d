// Package kafkaout is what an agentgate process writes to Kafka: the
// Producer of the gate's replies, decisions, dead letters and forwards and
// of the client's commands, and the Requester, which sends a command and
// waits for its reply on one long-lived reply reader per process (the
// request-reply of the Go client and of the HTTP instance in Kafka mode).
//
// Producer has no batching timer (kafka-go's Writer holds a partial batch
// up to its BatchTimeout): a write is one produce request (acks=all) per
// topic-partition, and a caller batches by passing many messages to one
// Write. PartitionFor is the partitioner every writer of the requests
// topic uses (murmur2, as Kafka's Java client), so a command lands where
// its agent's partition worker reads.
//
// The wire names of the headers the gate and its clients share (the reply
// status, the API key, a decision's event type) are defined here, once.
//
// The server (handlers/) imports this package, never client/; client/
// builds its typed commands on top of it.
package kafkaout
