// Package eventjson is the event codec: it encodes the log's events (the
// worker, checkpoints, replay) and decodes them for everything that reads
// the log (recovery, the Kafka partition restore, replay, audit, backtests,
// the compliance report). The format is event format v1, defined by the
// frozen fixtures of schemas/testdata/events/v1 and the escaping and field
// rules of their README; the logs written so far hold it (it is what
// encoding/json v1 wrote), and it does not change.
//
// AppendEvent and Marshal (encode.go) write an event field by field in
// struct order, without reflection. An event they cannot encode — error
// details holding a value that is not a detail value (domain.Details), an
// invalid json.Number or json.RawMessage, a time RFC 3339 cannot write —
// is refused with an *EncodeError: the rules never make one, and the tests
// that encode every event they make would catch one.
//
// DecodeEvent (fastevent.go over the scanner of scan.go) decodes a payload
// in a single left-to-right pass that allocates the event's structs in one
// block and each string it keeps once; members it does not know (an event
// written by a newer version) are skipped. It refuses, with a
// *DecodeError, anything that is not the format: invalid JSON, a type
// mismatch, a number out of range, a repeated member, a key that matches a
// field name only in another case, a null where the encoder writes none.
// DecodeFoldEvent is the same decoding without the members that folding an
// event into the state, and projecting it into a store without activities
// (a Kafka partition worker's), do not read.
//
// encoding/json v1 is the tests' oracle, and only that: no code path of
// the codec calls it (it names json.Number and json.RawMessage, the types
// of the domain's fields), so the codec writes and reads the same bytes
// under GOEXPERIMENT=jsonv2, which encoding/json would not.
//
// DecodeVerifyRequest decodes the body of a verify_action request with the
// same scanner, strictly.
package eventjson
