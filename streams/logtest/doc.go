// Package logtest is the acceptance suite of streams.Log: every log
// implementation (the embedded Pebble log, the Kafka log) runs Run from its
// own tests and must pass it unchanged.
//
// The suite pins the contract of streams.Log and DESIGN.md §2.2–2.3: an
// empty log has head {0, ""}; Append is atomic (all or nothing), refuses a
// batch that does not extend the chain with streams.ErrConflict and writes
// none of it; Read returns records in order from any position, sees only
// whole batches while Appends run, and stops on context cancellation or a
// callback error; a persistent log keeps its head and records across a
// reopen; a closed log answers streams.ErrClosed.
//
// Guarantees that not every implementation gives are switched on by fields
// of Suite, in the manner of watermill's Features.
package logtest
