// Package projections keeps agentgate's read models in Pebble: agents,
// conversations, approvals, principals, keys, the activity log with daily
// summaries, and the request index that makes retries idempotent.
//
// A Store is written by exactly one goroutine (the partition worker) through
// Apply, which writes the touched entities of a batch of events together
// with the checkpoint (the last applied seq and its hash) in one atomic
// Pebble batch. Readers (the HTTP API) may call the query methods
// concurrently with Apply; they see the state of some checkpoint, never a
// half-applied batch.
//
// The Store is derived data: every key can be rebuilt by folding the log
// into an empty Store (handlers.ApplyLog), and Equal compares two stores
// key by key. Values have deterministic encodings (JSON, and for the entities
// every decision writes a strict binary form, codec.go), so a rebuilt
// store is byte-identical to the live one. The store records its layout;
// one of another layout is emptied on open and rebuilt from the log.
//
// Apply does not write the state's entities on its own: the caller folds
// the events into its in-memory domain.State through a Fold (domain.Apply,
// noting the keys of the open actions an event closes) and passes both;
// Apply copies the entities the events touched from that state. Its
// obligations: Apply only events that are durably in the log, in log
// order.
package projections
