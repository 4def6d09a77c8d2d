// Package cekafka is agentgate's CloudEvents binding for Kafka messages of
// github.com/segmentio/kafka-go (the Kafka protocol binding of CloudEvents
// 1.0; cloudevents/sdk-go has none for kafka-go). It decodes a command
// CloudEvent from a kafka.Message into a plain ce.Event and encodes an
// ce.Event (a reply, a notification, a client's request) into a
// kafka.Message.
//
// Modes. Binary mode: each attribute in a ce_<name> header (ce_specversion,
// ce_id, ce_source, ce_type, ce_subject, ce_time and the extensions
// ce_correlationid, ce_replyto, ce_partitionkey), datacontenttype in the
// content-type header, the data as the message value. Structured mode: a
// content-type header of application/cloudevents+json and the whole JSON
// event as the value. Batch mode is refused. Header names are matched
// without regard to case; a header that appears twice is refused, so no
// reader can pick a different copy than another.
//
// Key. The message key is the partitionkey extension (the Contracts of
// docs/ARCHITECTURE.md: the agent id): Encode sets Key from it, Decode fills
// partitionkey from a non-empty Key when the event has none, and refuses an
// event whose partitionkey differs from the Key (the partition the message
// landed on would not be the agent's).
//
// What Decode enforces: the value is at most ce.MaxBodyBytes and the
// headers at most MaxHeaderBytes in all (ErrTooLarge), then the rules of
// streams/ce shared with the HTTP binding (specversion 1.0, required
// attributes, attribute lengths, JSON data). Every error is a *ce.Error
// whose Kind is ce.ErrInvalid (the caller answers QWED-REQ-001) or
// ce.ErrTooLarge (QWED-REQ-004). Decode never panics on any input.
//
// Ownership. Decode copies what it keeps: the message may be reused once
// it returns. Encode's message owns fresh slices, except Value in binary
// mode, which is the Event's Data.
package cekafka
