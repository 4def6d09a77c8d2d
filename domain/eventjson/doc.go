// Package eventjson decodes the log's events fast for everything that
// reads the log in bulk (replay, recovery, the Kafka partition restore,
// audit, backtests, the compliance report), and encodes them fast for the
// worker that writes them.
//
// DecodeEvent decodes exactly as handlers.DecodeEvent (encoding/json)
// does: the same event, or an error exactly when encoding/json fails.
// Every event type takes a hand-written fast path (DecodeFast: fastevent.go
// over the scanner of scan.go), a single left-to-right pass that allocates
// the event's structs in one block and each string it keeps once; members
// it does not know (an event written by a newer version) are skipped, as
// encoding/json skips them. It gives up on anything it is not certain to
// decode as encoding/json does (a key that repeats, or that matches a
// field name only in another case, a null but for a list, a quoted
// number, a number out of range, invalid JSON), and encoding/json then
// decodes the payload. TestDecodeEventMatchesStandardLibraryOnRecordedHistory,
// the edge cases, FuzzDecodeEventMatchesStandardLibrary and the seeded
// worker runs of package handlers pin the two against each other.
//
// DecodeFoldEvent is the same decoding without the members that folding an
// event into the state, and projecting it into a store without activities
// (a Kafka partition worker's), do not read: request bodies, errors,
// verification blocks, digests and budget snapshots are skipped as JSON.
// The seeded worker runs pin that a store rebuilt through it holds the
// live state.
//
// AppendEvent and Marshal (encode.go) write exactly json.Marshal's bytes
// for an event — the log payload that the hash chain and replay --verify
// compare — by a hand-written path for every event type, and hand anything
// they do not reproduce to json.Marshal; handlers.EncodeEvent is Marshal.
//
// API is json-iterator configured as the standard library, which the
// backtest uses to decode the slim part of the events it re-decides.
package eventjson
