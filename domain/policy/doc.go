// Package policy holds the pure rules of the consumer policy engine (QWED
// Agent Policy Engine §3): the policies a consumer sets on the executes of
// their agents (spending limits, category restrictions, confirmation
// requirements, time windows, per-business overrides, shadow mode), their
// strict decoding, the consumer's set of current policies, the rolling
// spend ledger, the evaluation of one execute against them, and the
// analytics computed from a consumer's history.
//
// Like the rest of domain/ it reads no clock, no randomness, no file and no
// map order: every function is a function of its arguments, so a decision
// recorded in the log is re-decided byte for byte by replay. Time zones
// come from a copy of the IANA time zone database embedded in the package
// (zoneinfo.zip), never from the host, so two hosts with different tzdata
// decide a time window the same way. The package imports nothing of the
// gate's but the strict JSON checker (the domain package imports it), so
// its problems carry the catalogue's codes as plain strings.
package policy
