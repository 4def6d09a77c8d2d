package cehttp

import (
	"time"

	"github.com/agentgate/agentgate/streams/ce"
)

// The plain event, its limits and its errors live in streams/ce, shared
// with the Kafka binding; these names keep cehttp's callers unchanged.

// Limits and fixed values of the codec (see streams/ce).
const (
	// MaxBodyBytes is the largest HTTP body Decode reads: the data in
	// binary mode, the whole event in structured mode.
	MaxBodyBytes = ce.MaxBodyBytes
	// MaxAttributeBytes is the longest value of a string attribute or a
	// kept extension.
	MaxAttributeBytes = ce.MaxAttributeBytes
	// SpecVersion is the only CloudEvents version accepted.
	SpecVersion = ce.SpecVersion
	// ReplyTypeSuffix is appended to a request's type to name its reply.
	ReplyTypeSuffix = ce.ReplyTypeSuffix
	// ReplySource is the source of every reply.
	ReplySource = ce.ReplySource
	// ContentTypeJSON is the datacontenttype of replies.
	ContentTypeJSON = ce.ContentTypeJSON
)

// The extensions the codec keeps (the Contracts of docs/ARCHITECTURE.md).
const (
	// ExtCorrelationID ties a reply to its request.
	ExtCorrelationID = ce.ExtCorrelationID
	// ExtReplyTo names the topic a reply goes to.
	ExtReplyTo = ce.ExtReplyTo
	// ExtPartitionKey is the Kafka key: the agent id.
	ExtPartitionKey = ce.ExtPartitionKey
)

// Mode is how a CloudEvent travels over HTTP (ce.Mode).
type Mode = ce.Mode

// The modes. The zero Mode is invalid: Write refuses it.
const (
	// ModeBinary carries attributes in ce-* headers and the data as the body.
	ModeBinary = ce.ModeBinary
	// ModeStructured carries the whole event as application/cloudevents+json.
	ModeStructured = ce.ModeStructured
)

// Event is a decoded CloudEvent, free of any SDK type (ce.Event).
type Event = ce.Event

// Error is a decoding failure (ce.Error). It matches its Kind and its
// cause with errors.Is.
type Error = ce.Error

// ErrInvalid is the Kind of a decoding error the caller answers with
// QWED-REQ-001 (invalid request format).
var ErrInvalid = ce.ErrInvalid

// ErrTooLarge is the Kind of a decoding error the caller answers with
// QWED-REQ-004 (request too large).
var ErrTooLarge = ce.ErrTooLarge

// ReplyID returns the id of the reply to the request identified by source
// and id (ce.ReplyID).
func ReplyID(source, id string) string { return ce.ReplyID(source, id) }

// NewReply returns the reply to req carrying data (a JSON value) at time
// at, to be written in req's mode (ce.NewReply).
func NewReply(req Event, data []byte, at time.Time) Event { return ce.NewReply(req, data, at) }

func invalid(attr, reason string, cause error) *Error { return ce.Invalid(attr, reason, cause) }

func tooLarge(attr, reason string) *Error { return ce.TooLarge(attr, reason) }
