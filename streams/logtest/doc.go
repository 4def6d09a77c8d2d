// Package logtest is the acceptance suite of streams.Log: every log
// implementation (the embedded Pebble log, the Kafka log) runs Run from its
// own tests and must pass it unchanged.
//
// The suite pins the contract of streams.Log and invariants 2 and 3 of
// docs/ARCHITECTURE.md: an empty log has head {0, ""}; Append is atomic (all
// or nothing), refuses a batch that does not extend the chain with
// streams.ErrConflict and writes none of it; Read returns records in order
// from any position, sees only whole batches while Appends run, and stops on
// context cancellation or a callback error; a persistent log keeps its head
// and records across a reopen; a closed log answers streams.ErrClosed.
//
// Run also checks that an Append refused for the chain says what
// streams.CheckBatch says, and that streams.VerifyChain accepts what the log
// stored; the tests of this package pin the chain rule itself
// (streams.Head.Link and CheckBatch), which every log and reader calls.
//
// Guarantees that not every implementation gives are switched on by fields
// of Suite, in the manner of watermill's Features.
package logtest
