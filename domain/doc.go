// Package domain is agentgate's pure core: the commands an agent or a
// principal can send, the events that record their outcome, the state those
// events fold into, and the rules that decide.
//
// The shape follows etcd-io/raft: Decide takes the state, the command and an
// Env that carries everything from the outside world (the time, the log
// position, the signer), and returns the one Event that records the outcome.
// Apply folds an event into the state and cannot fail. Neither reads a clock,
// draws randomness, performs IO or depends on map iteration order; a test
// enforces the import list.
//
// A caller's obligations, in order:
//
//  1. Decode and authenticate the input into a Command (secrets are replaced
//     by their SHA-256 hashes before they reach this package).
//  2. Call Decide with an Env whose Now is never earlier than the last event
//     and whose Seq is the position the event will take in the log.
//  3. Append the returned Event to the log (the commit point).
//  4. Call Apply with the same event, then render the reply with Reply.
//
// Decide never mutates the state it is given; only Apply does. A batch of
// commands is decided by alternating Decide and Apply on the in-memory state
// before the batch is appended: if the append fails the caller must discard
// the in-memory state and rebuild it from the log.
package domain
