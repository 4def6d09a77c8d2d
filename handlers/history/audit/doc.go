// Package audit verifies that an agentgate event log is the unbroken,
// signed chain the gate wrote: `agentgate audit verify` and the
// offline bundle verifier call Verify.
//
// # What Verify checks
//
// Records come from a Source, one partition after another or interleaved;
// each partition is a chain of its own. For every record, in order:
//
//  1. the payload is an event whose leading fields are seq, prev,
//     partition, time and type (the gate's encoding; other JSON layouts are
//     decoded the slow way), and the seq and prev the log stores beside the
//     payload (Pebble's key and header, Kafka's headers) equal the ones in it;
//  2. seq is the previous record's seq + 1, from 1 (no gap, no repeat);
//  3. prev is the hex SHA-256 of the previous record's payload bytes exactly
//     as the log stores them ("" for seq 1);
//  4. a log.checkpointed event covers the record just before it (its seq is
//     the event's seq − 1 and its head the event's prev) and its ES256
//     signature verifies against the JWKS, with claims equal to its content;
//  5. every attestation in the events (action.decided, qwed.verified)
//     verifies against the JWKS and is bound to its event (seq, partition,
//     action or verification ID, decision, request digest, time);
//  6. checkpoints keep their own cadence: once a checkpoint declared
//     "the next one within N events or D", the event that made the next one
//     due must be followed by a checkpoint in the same batch (before any
//     event with a later time), since the gate appends it in the same
//     atomic write;
//  7. the log reaches every head recorded elsewhere (Options.Heads: the
//     projections' checkpoint of a data directory, a head noted by an
//     earlier audit) and hashes to it there.
//
// The first failure stops the walk and is reported as a *Break with its
// partition, seq, source offset, what was expected and what was found.
// Options.SkipSignatures leaves out 4's signature and 5 (the hash chain
// only: the speed figure of docs/benchmarks.md).
//
// # What a truncated tail can and cannot be told from
//
// A cut that removes a record in the middle is a gap (2). A cut of the tail
// leaves a shorter chain that is intact in itself, so it is detected only
// against something outside the removed part:
//
//   - a recorded head past the new end (7): the projections' checkpoint of
//     the data directory, unless it was cut too;
//   - a due checkpoint that is missing (6): when the cut falls after the
//     event that made a checkpoint due but before that checkpoint.
//
// A cut right after a checkpoint, or inside the uncovered tail (the at most
// N−1 events or D of time after the last checkpoint, whose checkpoint was
// not yet due), leaves a log that is indistinguishable from one whose gate
// simply stopped there: without an outside head it cannot be detected.
// Report.Partitions[i].Uncovered says how many events that window holds.
// Likewise a log cut and then re-extended with forged events needs the
// signing key to forge a checkpoint over them; without it, the first
// forged checkpoint fails (4), and without any checkpoint only the cadence
// rule (6) and outside heads (7) can tell.
//
// # Kafka
//
// On the events topic a retried produce or a fenced-out writer (a zombie)
// can leave records that readers skip (streams/kafkalog): with
// Options.Superseded, a record whose seq is at or below the chain's head,
// or whose prev is the hash of such a skipped record, is counted as
// superseded instead of a break. Any other record that does not extend the
// chain is a break.
//
// Verify holds O(1) memory per partition (plus the superseded hashes).
package audit
