// Package sim is a deterministic simulator of the gate, in the manner of
// TigerBeetle's VOPR: one uint64 seed drives clients sending domain
// commands (registrations, verify_action, tool calls, executions,
// approvals, suspensions, trust changes, retries and redeliveries),
// simulated time and ticks, append failures (before and after the write)
// and projection commit failures, crashes and restarts of the partition's
// owner (its store kept or lost), Kafka rebalances that move the
// partition to another instance, and the former owner writing on as a
// zombie to the same partition.
//
// It drives the partition worker's state machine (handlers.Machine) the
// way Worker.Run does, stage by stage and in an order the seed picks —
// deciding a batch while the one before it is appended and the one before
// that projected — over a model of the Kafka partition whose readers
// follow the seq/prev chain (partition.go), with real Pebble projection
// stores on in-memory file systems and attest's real signer.
//
// After every step it checks the invariants (check.go): every
// acknowledged decision is in the log, at the seq it was answered with; a
// request redelivered or retried gets the recorded decision, never a
// second step; no request is decided twice in the log; re-deciding every
// logged command reproduces its bytes (replay --verify); no agent's daily
// cost exceeds its budget; and, whenever nothing is in flight, the
// owner's projections equal a rebuild from the log.
//
// A failure names its seed and step; Run with the same seed and steps
// reproduces it exactly. `make test` runs fixed seeds; `make simulate
// SEED=… TIME=…` runs seeds for as long as asked.
package sim
