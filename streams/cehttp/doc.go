// Package cehttp is agentgate's CloudEvents codec for HTTP (the HTTP
// protocol binding of CloudEvents 1.0, on top of cloudevents/sdk-go's
// binding/http): it decodes a command CloudEvent from an *http.Request into
// a plain Event and writes the reply CloudEvent to an http.ResponseWriter.
// Event, Error and the reply builder are streams/ce's (aliased here), shared
// with the Kafka binding streams/cekafka.
//
// Modes. Binary mode (attributes in ce-* headers, the data as the body,
// Content-Type = datacontenttype) and structured mode (the whole event as
// an application/cloudevents+json body) are both accepted; batch mode
// (application/cloudevents-batch+json) is refused. The reply is written in
// the mode the request came in (Event.Mode).
//
// What Decode enforces, each with a named limit or rule:
//   - the body is at most MaxBodyBytes (ErrTooLarge);
//   - specversion is "1.0" and id, source and type are present (ErrInvalid);
//   - every string attribute and extension value is at most
//     MaxAttributeBytes, the type MaxAttributeBytes-len(ReplyTypeSuffix) so
//     its reply type fits too (ErrTooLarge);
//   - datacontenttype is JSON (application/json or a +json type) and data
//     is a non-empty, well-formed JSON value (ErrInvalid). In structured
//     mode an absent datacontenttype means application/json, as the JSON
//     event format specifies.
//
// Of the extensions only correlationid, replyto and partitionkey are kept
// (the Contracts of docs/ARCHITECTURE.md); others are ignored, as
// CloudEvents consumers may.
//
// Errors. Every decoding failure is a *Error whose Kind is ErrInvalid (the
// caller answers QWED-REQ-001) or ErrTooLarge (QWED-REQ-004); both match
// with errors.Is. Decode never panics on any input.
//
// Replies. NewReply builds the reply of a request: type = request type +
// ".reply", source "agentgate", id = ReplyID(request source, request id)
// (deterministic, so a redelivered request gets the same reply id),
// correlationid = the request's correlationid or else its id, subject and
// partitionkey copied. Write puts it on the wire.
package cehttp
