// Package streams holds agentgate's logs and transports: the append-only
// event log behind one interface (Log), its one chain check, and the
// packages that put it on Pebble or Kafka and carry commands, replies and
// decisions as CloudEvents.
//
// The log stores opaque records. It does not decode them; it keeps the
// hash chain of invariant 3 of docs/ARCHITECTURE.md: a record's Seq is the
// previous record's Seq + 1 (gap-free from 1) and its Prev is the hex
// SHA-256 of the previous record's payload ("" for seq 1).
//
// One chain check. Head.Link classifies a record against the chain's last
// record (the next one, a gap, a duplicate or record behind the head, a
// fork) and is the only place that rule is written. What to do with a
// record that does not extend the chain is each caller's policy:
//   - CheckBatch: a writer refuses the whole batch with ErrConflict before
//     writing any of it (both logs' Append), so a zombie writer or a
//     retried append never corrupts the log;
//   - the Kafka log's readers skip it (a retried produce, a fenced-out
//     writer's fork), the same way on every reader;
//   - VerifyChain reports the first broken position as a *ChainError;
//     recovery (handlers.ApplyLog) and the audit (handlers/history/audit)
//     report theirs in their own words.
//
// Caller obligations: Append a batch and wait for it to return nil before
// acting on the records (nil means durable: fsync'd by the Pebble log,
// acknowledged by all in-sync replicas and proven the chain's extension by
// the Kafka log); only then apply and reply. On ErrConflict rebuild from the
// log and do not reply.
//
// StoredLog is a log read as stored, without the chain check (a Kafka
// partition's superseded records included): what the audit verifies, opened
// by cmd/agentgate and passed in, so the readers of the log in
// handlers/history import no log implementation.
//
// The packages below:
//   - streams/logtest: the acceptance suite every Log runs, and the tests
//     of the chain check;
//   - streams/pebblelog: the embedded log, one Pebble database per
//     partition (pebblelog/snapshot: a private read-only copy of one, for
//     the offline readers);
//   - streams/kafkalog: the log on one partition of a Kafka topic, fenced
//     by the chain; StoredTopic reads a whole topic as stored;
//   - streams/kafkaout: what a process writes to Kafka: the Producer
//     (acks=all, no batching timer), the Requester (request-reply on one
//     reply reader) and the partitioner;
//   - streams/ce: the plain CloudEvent shared by the bindings;
//     streams/cehttp and streams/cekafka: its HTTP and Kafka bindings;
//   - streams/wmkafka: Watermill's Publisher and Subscriber on kafka-go,
//     for consumers beside the gate;
//   - streams/diskspace: keeps the Pebble stores working on a full disk.
package streams
