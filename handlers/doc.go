// Package handlers is the partition worker: the single writer of a
// partition, which decides, appends and applies. It is two halves (etcd/raft's
// Ready pattern): Machine, the worker's logic as a state machine whose output
// is data — each Batch holds the records to append, the projection batch to
// commit after them and the reply to each command —, and Worker, the thin
// driver that does the IO (the queue, the log append, the projection commit,
// the answers, the tick) around it. The simulator (handlers/sim) drives the
// same Machine from a seed.
//
// For each batch of waiting commands, in order (docs/ARCHITECTURE.md, "The
// path of one request"), the worker:
//
//  1. answers commands already decided (same RequestID) with their recorded
//     event, without deciding them again;
//  2. decides each new command on the in-memory state (domain.Decide) and
//     folds the event in at once (domain.Apply), so the next command of the
//     batch sees it;
//  3. appends the batch's events to the log in one durable write (the
//     commit point: nothing is answered before it returns), ending with a
//     signed log.checkpointed event when the checkpoint policy makes one
//     due (checkpoint.go);
//  4. applies the events to the projections with their checkpoint in one
//     Pebble batch;
//  5. answers every waiting caller.
//
// Steps 3 and 4 are pipelined with step 2 of the following batches: while
// batch n is projected and batch n+1 appended, batch n+2 is decided on the
// state that includes both; projections commit in log order and each
// caller is answered after its own batch's projections.
//
// If the append fails, every caller of the batch gets ErrUnavailable, as
// do the callers of a batch already decided on top of it, and the
// in-memory state, which is ahead of the log, is rebuilt from the
// projections and the log before the next batch is decided.
package handlers
