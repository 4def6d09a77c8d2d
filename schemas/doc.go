// Package schemas holds JSON Schemas (draft 2020-12), embedded in the
// binary:
//
//   - the QWED protocol v1.0: the verification request (§5.1),
//     the batch request (§5.3), the response (§6.1 with the error body of
//     §8.4), the batch response (§6.4) and the engine parameters of §5.2;
//   - the gate's own documents (gate/): the body of every command (the
//     HTTP body of its endpoint, which is also the data of its CloudEvent;
//     Command, ValidateCommand), one event of the log (Event), and every
//     reply body (ValidateReply), with the types they share in
//     gate/defs.v1.json. The transports' tests hold them to the Go types.
//
// Validation uses github.com/santhosh-tekuri/jsonschema/v6. Its errors
// come as a tree whose order follows Go map iteration; Validate flattens the
// tree to its leaves and sorts them (instance location, keyword location,
// message), so the same document always gives the same list of violations,
// byte for byte once encoded.
package schemas
