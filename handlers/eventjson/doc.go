// Package eventjson decodes the log's events fast for everything that
// reads the log in bulk (replay, recovery, the Kafka partition restore,
// audit, backtests, the compliance report).
//
// DecodeEvent decodes exactly as handlers.DecodeEvent (encoding/json)
// does: the same event, or an error exactly when encoding/json fails. The
// frequent event shapes (decisions on actions and tool calls, denials with
// their error details, execution logs, rejections, registrations, trust and
// status changes, approvals, checkpoints, QWED records) take a hand-written
// fast path (DecodeFast, fastevent.go over the scanner of scan.go): a
// single left-to-right pass that allocates the event's structs in one block
// and each string it keeps once. It gives up on anything it is not certain
// to decode as encoding/json does (a key it does not know or that repeats,
// a key in another case, a null, a quoted number, a number out of range, a
// payload it leaves alone: trust elevations, tool registries, principal
// keys, gate configuration), and encoding/json then decodes the payload.
// TestDecodeEventMatchesStandardLibraryOnRecordedHistory, the edge cases,
// FuzzDecodeEventMatchesStandardLibrary and the seeded worker runs of
// package handlers pin the two against each other.
//
// API is json-iterator configured as the standard library, which the
// backtest uses to decode the slim part of the events it re-decides.
package eventjson
