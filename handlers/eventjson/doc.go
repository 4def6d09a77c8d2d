// Package eventjson decodes the log's events fast for the offline readers
// (backtest, compliance report) that decode millions of them: json-iterator
// configured as the standard library (the same field matching, the domain
// types' own UnmarshalJSON), with an exact integer path for plain money
// amounts. It decodes exactly as handlers.DecodeEvent (pinned by the
// backtest tests on a recorded history); the gate itself keeps
// encoding/json.
package eventjson
