// Package report builds the compliance report of one agent over a period
// (QWED-Agent spec v1.1 §7.3) from the event log, and renders it as JSON,
// CSV and PDF.
//
// # Where the figures come from
//
// Build reads the log from its first record and decodes only the events
// that mention the agent (a byte scan for its ID), folding its own events
// (IsOwn) with domain.Apply: the trust level at the start of the period and its
// changes, the budget used each day against the limits then in force, the
// decisions, their cost (reserved, replaced by the actual figures of a
// logged execution, released when an approval is refused or expired: as
// the projections' activity summary counts), the DENIED, BUDGET_EXCEEDED and
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
// A bundle proves the report to someone without the log and shows no
// other agent's event. It holds the agent's own events (IsOwn)
// from seq 1 to ProducedAt, each as the bytes the log stores with its
// inclusion proof in the partition's Merkle tree (RFC 6962: leaf i is the
// SHA-256 of event i+1's bytes, the chain hash), the tree head signed at
// export (attest.TreeHeadClaims: root, size, head, agent, period, and the
// digest of the list of the agent's events, which is what makes omission
// detectable), the checkpoint the report names, the report and the JWKS.
// Its size grows with the agent's events and the logarithm of the log.
//
// The report is built from the own events alone, at the gate and at the
// verifier alike. approvals.expired, which lists every agent's expired
// approvals, is nobody's own: an approval still pending at ProducedAt
// whose expiry has passed is reported expired (the tick's rule).
//
// VerifyBundle checks a bundle offline: the tree head signature and what
// it binds, each event's inclusion proof, attestations and ownership, the
// checkpoint, and the report rebuilt from the events, member by member.
//
// # Determinism
//
// Every list is in log or date order, maps are never iterated into an
// output, and WritePDF fixes the document dates to the report's position:
// the same log gives byte-identical JSON, CSV and PDF.
package report
