// Package streams holds agentgate's logs and transports: the append-only
// event log (embedded Pebble now, Kafka later), behind one interface and one
// acceptance suite (streams/logtest).
//
// The log stores opaque records. It does not decode them; it enforces the
// chain of DESIGN.md §2.3: a record's Seq is the head's Seq + 1 and its Prev
// is the hex SHA-256 of the head record's payload. A writer that lost its
// place (a zombie, a retried append) is refused with ErrConflict and never
// corrupts the log.
//
// Caller obligations: Append a batch and wait for it to return nil before
// acting on the records (a nil return means durable: fsync'd); only then
// apply and reply.
//
// VerifyChain walks any Log and reports the first position where the chain
// breaks (a *ChainError); audit and recovery use it.
//
// The packages below:
//   - streams/pebblelog: the embedded log, one Pebble database per partition.
//   - streams/logtest: the acceptance suite every Log implementation runs.
//   - streams/cehttp: the CloudEvents codec for HTTP (POST /events).
package streams
