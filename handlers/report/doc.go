// Package report builds the compliance report of one agent over a period
// (seed 000 §7.3, issue 5) from the event log, and renders it as JSON,
// CSV and PDF.
//
// # Where the figures come from
//
// Build reads the log from its first record and decodes only the events
// that mention the agent (a byte scan for its ID), folding them with
// domain.Apply: the trust level at the start of the period and its
// changes, the budget used each day against the limits then in force, the
// decisions, their cost (reserved, replaced by the actual figures of a
// logged execution, released when an approval is refused: as the
// projections' activity summary counts), the DENIED, BUDGET_EXCEEDED and
// PENDING decisions with their codes, and the attestations. Nothing is
// read from the projections, so the report is exact for any period, not
// only for what the projections keep.
//
// # The position a report is produced at
//
// A report counts the events up to ProducedAt. Reading stops at the first
// signed checkpoint (a log.checkpointed event) that covers the last event
// of the period, and the report is produced at the position it signs;
// when no checkpoint covers the period yet (the period reaches the log
// head, or the log predates checkpoints), it is produced at the head and
// names the latest checkpoint before it, if any.
//
// # The bundle (the JSON export)
//
// An agent's events are interleaved with every other agent's in one hash
// chain, so the events of one agent alone cannot be checked without
// trusting whoever extracted them. The bundle therefore carries the
// contiguous segment of the chain that covers the period: every event,
// of any agent, from the last event before the period (the anchor: it
// shows that nothing of the period precedes the segment) to ProducedAt
// (the checkpoint event that signs it, when there is one), each as the
// exact bytes the log stores, so that every prev hash can be recomputed.
// With it come the report and the JWKS. Per-event inclusion proofs would
// need a Merkle structure the log does not have: in a linear chain, proving
// one event is in the chain takes every event after it up to a signed
// head anyway. The price is that the bundle discloses the other agents'
// events of the period (never a secret: the log holds none).
//
// VerifyBundle checks a bundle offline: the chain (audit.Verify:
// continuity, checkpoint signatures, attestations against the bundled
// JWKS), the coverage of the period, and the report against the segment
// (rebuilt from it). Members that depend on events before the segment
// (agent identity, trust at start and history, budget usage) are
// rechecked only when the segment holds the agent's registration; the
// check says which were not.
//
// # Determinism
//
// Every list is in log or date order, maps are never iterated into an
// output, and WritePDF fixes the document dates to the report's position:
// the same log gives byte-identical JSON, CSV and PDF.
package report
