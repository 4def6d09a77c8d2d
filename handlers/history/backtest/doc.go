// Package backtest re-decides the recorded commands of an agent (or of
// every agent of a principal) under changed settings, and reports which
// decisions would have come out differently.
//
// Semantics. The log is read from its first event (a private copy of it:
// see streams/pebblelog/snapshot; the live log is never written). Events before the
// period are folded as recorded. At the period start (and, for an agent
// registered during the period, right after its registration) the changed
// settings are written into the agent's state; from then on every command
// of a selected agent is re-decided with domain.Decide on the changed
// state and the re-decided event, not the recorded one, is folded in. The
// change is therefore carried forward: a denial frees the budget it would
// have reserved, a request that was PENDING at a lower trust level opens
// an approval that the recorded resolution may no longer find, an
// execution log of an action that is now denied is refused. Later
// recorded commands that change a setting (a principal setting the trust
// level, a trust degradation) are re-decided too and take effect as they
// would have.
//
// Engine verdicts are part of the recorded command (domain.EngineVerdict),
// so re-deciding needs no engine. Attestations are not issued: a decision
// that carried one is re-decided with a signer that returns an unsigned
// marker, which decides the same way; the backtest compares decisions and
// error codes, never attestation bytes. Approvals that exist only in the
// backtest expire at the first command of a selected agent that comes more
// than handlers.TickInterval after their expiry time (the live worker
// ticks every TickInterval); recorded expiries are re-decided at their
// recorded time.
//
// Only the events that concern the selected agents are decoded (a byte
// scan for their agent IDs), plus the global events that change decisions
// (gate configuration, principal tool registries): the state of other
// agents never influences a selected agent's decision.
package backtest
