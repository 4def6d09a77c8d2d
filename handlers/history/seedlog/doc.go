// Package seedlog writes recorded histories for the tests and benchmarks
// of the offline readers (compliance export, backtest, bundle audit).
//
// Start runs a real embedded gate (embedded.OpenGate, its worker and its
// Pebble log) on a clock the caller moves, so a test records a history
// exactly as the live gate would. Generate writes a large log fast, for
// benchmarks: it decides commands with domain.Decide on an in-memory state
// and appends the events in large batches, skipping the projections and
// the request path (the log is what the offline readers read).
package seedlog
