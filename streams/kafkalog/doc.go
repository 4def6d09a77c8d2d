// Package kafkalog is the event log (streams.Log) on one partition of a
// Kafka topic, the events topic agentgate.events, built on kafka-go's
// request-level Client (explicit partition, no balancer: a record is never
// re-hashed, invariant 3 of docs/ARCHITECTURE.md).
//
// Layout. Each record is one Kafka message on partition P: headers
// agentgate-seq (decimal) and agentgate-prev (hex SHA-256 of the previous
// payload, empty for seq 1), value = the payload, no key. An Append within
// Options.MaxRequestBytes is one produce request (one record batch, so all
// or nothing) with acks=all; a larger one (a worker's batch of 1024 events
// is ~1.5 MB, over Kafka's default max.message.bytes) is written as
// consecutive requests in order, so a failure may leave a prefix of it, the
// chain's extension, and never a gap.
//
// The chain, as every reader applies it. Reading the partition from offset
// 0, a reader keeps a head (seq 0, hash "" at first) and accepts a message
// only if its seq is head.seq+1 and its prev is head.hash; every other
// message (a duplicate from a retried produce, a zombie writer's late
// write, a message without well-formed headers) is skipped, the same way
// by every reader. Open does this to the end of the partition to find the
// head (a lazy Log, Options.Lazy, does it during its first Read, which
// delivers the records as it goes); Read does it from the sparse index (one offset every
// IndexInterval seqs), so reading from seq s does not rescan from offset
// 0. The topic must keep every record (retention.ms=-1, no compaction):
// Open refuses a partition that does not start at offset 0.
//
// Fencing (invariant 3 of docs/ARCHITECTURE.md, issue 3). Append checks the
// batch against the head this Log knows (streams.ErrConflict, nothing
// produced). After the broker acknowledges, it proves its records are the
// chain's extension: the produce response's base offset equals the end this
// Log last saw when nothing intervened (no extra request); otherwise it
// fetches the intervening messages, applies them, then applies its own, and
// returns streams.ErrConflict if another writer's records took the chain
// first. So an old owner that keeps writing after a new one started (a
// zombie) either wrote the chain's extension before the new owner did, and
// the new owner's next Append sees it and gets ErrConflict, or its records
// are skipped and its Append returns ErrConflict: it never replies with
// them. A new owner calls Sync before deciding to pick up the old owner's
// last records.
//
// Caller obligations, as for every streams.Log: Append a batch and wait
// for nil before acting on it (nil = acknowledged by all in-sync replicas
// and the chain's extension); on ErrConflict rebuild state from the log
// (Sync, then Read from the projections' checkpoint) and do not reply; on
// any other error the batch may or may not be in the log: do not reply,
// the next Append or Sync catches up.
//
// Resuming (Options.From). A reader that keeps the Position (seq, hash,
// Kafka offset) of the last record it applied opens the log there: Open
// fetches that one record and checks its seq and hash (ErrNotAtPosition
// when the partition does not hold it), and the chain goes on from it, so
// nothing before it is fetched again. The HTTP instance's read model in
// Kafka mode resumes so after a restart; SyncReadAt hands it each record's
// Position.
//
// StoredTopic reads every partition of the topic as stored, superseded
// messages included, for the audit (streams.StoredLog).
//
// Costs. Open reads the whole partition once (one fetch per
// FetchMaxBytes), or from Options.From on; RecordsFetched counts what a
// Log fetched. Append is one produce round trip per MaxRequestBytes
// (plus one fetch only when another writer produced in between). Read from seq s fetches from
// the index entry at or before s. Memory: the head plus 8 bytes per
// IndexInterval records.
package kafkalog
