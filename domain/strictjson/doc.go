// Package strictjson refuses the JSON that two readers could read
// differently: the one strict decoding step shared by every transport of
// the gate (the HTTP API, POST /events, POST /verify, the Kafka requests
// and their CloudEvent envelopes).
//
// encoding/json (v1) matches a member name to a struct field without regard
// to case and lets the last of two members with the same name win, so
// {"type":"execute_sql","TYPE":"calculate"} decodes as "calculate" while a
// proxy, a schema validator over a map, or a log reader may see
// "execute_sql". Check walks the raw text once, before any decoder, and
// refuses:
//
//   - a member whose name repeats in its object, at any depth, exactly or
//     only in another case (names are compared as encoding/json compares
//     them to field names: after unescaping, with Unicode simple folding,
//     as bytes.EqualFold does);
//   - where a Shape describes the object (a Go struct: ShapeOf), a member
//     whose name matches one of the shape's names only in another case
//     (KindWrongCase), and, when the shape is closed, a member it does not
//     name at all (KindUnknown).
//
// Values the shape leaves free (json.RawMessage, maps, any, types with
// their own UnmarshalJSON) are still checked for repeated names. Check
// does not decode values or check their types: the decoder that follows
// does. Malformed JSON is always refused: as KindSyntax, which callers
// hand to their decoder so that it reports the error in its own words,
// unless another refusal comes before the fault.
//
// Check allocates nothing for objects of up to 32 members with plain
// names; larger objects use a set, so the check stays linear.
package strictjson
