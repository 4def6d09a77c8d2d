// Package ce is agentgate's plain CloudEvent, shared by the protocol
// bindings (streams/cehttp for HTTP, streams/cekafka for Kafka): the Event
// type, its limits and rules, the typed decoding errors and the reply
// builder. It knows no transport.
//
// A binding turns its wire message into a cloudevents/sdk-go event and
// calls FromSDK, which enforces the rules every binding shares:
//   - specversion is "1.0" and id, source and type are present (ErrInvalid);
//   - every string attribute and kept extension value is at most
//     MaxAttributeBytes, a request's type MaxRequestTypeBytes so its reply
//     type fits too (ErrTooLarge);
//   - datacontenttype is JSON (application/json or a +json type) and data
//     is a non-empty, well-formed JSON value (ErrInvalid). In structured
//     mode an absent datacontenttype means application/json, as the JSON
//     event format specifies.
//
// The binding itself bounds the body at MaxBodyBytes (ErrTooLarge). Of the
// extensions only correlationid, replyto and partitionkey are kept
// (the Contracts of docs/ARCHITECTURE.md). ToSDK is the way back, refusing
// what FromSDK would refuse.
//
// Errors. Every decoding failure is a *Error whose Kind is ErrInvalid (the
// caller answers QWED-REQ-001) or ErrTooLarge (QWED-REQ-004); both match
// with errors.Is.
//
// Replies. NewReply builds the reply of a request: type = request type +
// ".reply", source "agentgate", id = ReplyID(request source, request id)
// (deterministic, so a redelivered request gets the same reply id),
// correlationid = the request's correlationid or else its id, subject and
// partitionkey copied, mode = the request's mode.
package ce
