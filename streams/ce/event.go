package ce

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain/strictjson"
)

// Limits and fixed values of the codec.
const (
	// MaxBodyBytes is the largest body a binding decodes (an HTTP body,
	// a Kafka message value): the data in binary mode, the whole event in
	// structured mode.
	MaxBodyBytes = 1 << 20
	// MaxAttributeBytes is the longest value of a string attribute or a
	// kept extension.
	MaxAttributeBytes = 1024
	// MaxRequestTypeBytes is the longest type of a request: its reply
	// type (type + ReplyTypeSuffix) must fit in MaxAttributeBytes.
	MaxRequestTypeBytes = MaxAttributeBytes - len(ReplyTypeSuffix)
	// SpecVersion is the only CloudEvents version accepted.
	SpecVersion = "1.0"
	// ReplyTypeSuffix is appended to a request's type to name its reply.
	ReplyTypeSuffix = ".reply"
	// ReplySource is the source of every reply.
	ReplySource = "agentgate"
	// ContentTypeJSON is the datacontenttype of replies.
	ContentTypeJSON = "application/json"
)

// The extensions the codec keeps (the Contracts of docs/ARCHITECTURE.md).
const (
	// ExtCorrelationID ties a reply to its request.
	ExtCorrelationID = "correlationid"
	// ExtReplyTo names the topic a reply goes to.
	ExtReplyTo = "replyto"
	// ExtPartitionKey is the Kafka key: the agent id.
	ExtPartitionKey = "partitionkey"
)

// KeptExtensions lists, sorted, the extensions an Event keeps; a binding
// ignores the others.
func KeptExtensions() []string {
	return []string{ExtCorrelationID, ExtPartitionKey, ExtReplyTo}
}

// Mode is how a CloudEvent travels (the binary or structured content mode
// of every CloudEvents protocol binding).
type Mode int

// The modes. The zero Mode is invalid: Write refuses it.
const (
	// ModeBinary carries attributes in headers (ce-* over HTTP, ce_* on
	// Kafka) and the data as the body.
	ModeBinary Mode = iota + 1
	// ModeStructured carries the whole event as application/cloudevents+json.
	ModeStructured
)

// String returns "binary", "structured" or "invalid".
func (m Mode) String() string {
	switch m {
	case ModeBinary:
		return "binary"
	case ModeStructured:
		return "structured"
	}
	return "invalid"
}

// Event is a decoded CloudEvent, free of any SDK type. Time is the zero
// time when the event has none. Data holds the JSON of the data: as it
// arrived with insignificant whitespace removed (json.Compact) after a
// binding decoded it (FromSDK), and written verbatim by the encoders.
// Extensions holds only the kept extensions that are present. Mode says
// how the event arrived (decode) or is to be sent (encode).
type Event struct {
	SpecVersion     string
	Type            string
	Source          string
	ID              string
	Subject         string
	Time            time.Time
	DataContentType string
	Data            []byte
	Extensions      map[string]string
	Mode            Mode
}

// CorrelationID returns the correlationid extension, or the event's id
// when it has none (the Contracts of docs/ARCHITECTURE.md).
func (e Event) CorrelationID() string {
	if c := e.Extensions[ExtCorrelationID]; c != "" {
		return c
	}
	return e.ID
}

// ReplyID returns the id of the reply to the request identified by source
// and id: "r-" and the first 32 hex digits of SHA-256(source, NUL, id). A
// request and its redelivery get the same reply id; requests from two
// sources that reuse an id do not.
func ReplyID(source, id string) string {
	h := sha256.New()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return "r-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// NewReply returns the reply to req carrying data (a JSON value) at time
// at, to be written in req's mode (see the package doc for its attributes).
func NewReply(req Event, data []byte, at time.Time) Event {
	ext := map[string]string{ExtCorrelationID: req.CorrelationID()}
	if pk := req.Extensions[ExtPartitionKey]; pk != "" {
		ext[ExtPartitionKey] = pk
	}
	return Event{
		SpecVersion:     SpecVersion,
		Type:            req.Type + ReplyTypeSuffix,
		Source:          ReplySource,
		ID:              ReplyID(req.Source, req.ID),
		Subject:         req.Subject,
		Time:            at,
		DataContentType: ContentTypeJSON,
		Data:            data,
		Extensions:      ext,
		Mode:            req.Mode,
	}
}

// ErrInvalid is the Kind of a decoding error the caller answers with
// QWED-REQ-001 (invalid request format).
var ErrInvalid = errors.New("invalid cloudevent")

// ErrTooLarge is the Kind of a decoding error the caller answers with
// QWED-REQ-004 (request too large).
var ErrTooLarge = errors.New("cloudevent too large")

// Error is a decoding failure. It matches its Kind and its cause with
// errors.Is.
type Error struct {
	// Kind is ErrInvalid or ErrTooLarge.
	Kind error
	// Attribute names the attribute at fault ("id", "data",
	// "datacontenttype", an extension…), or is "" when the fault is the
	// message as a whole (mode, body size, syntax).
	Attribute string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Attribute != "" {
		fmt.Fprintf(&b, ": attribute %s", e.Attribute)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the Kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Invalid returns an ErrInvalid *Error about attr (or the message as a
// whole when attr is "").
func Invalid(attr, reason string, cause error) *Error {
	return &Error{Kind: ErrInvalid, Attribute: attr, Reason: reason, Err: cause}
}

// TooLarge returns an ErrTooLarge *Error about attr (or the message as a
// whole when attr is "").
func TooLarge(attr, reason string) *Error {
	return &Error{Kind: ErrTooLarge, Attribute: attr, Reason: reason}
}

// envelopeShape is the JSON event format's object: its context attributes,
// data and the kept extensions by name; other extensions are accepted.
var envelopeShape = strictjson.Object(map[string]*strictjson.Shape{
	"specversion": nil, "id": nil, "source": nil, "type": nil, "subject": nil, "time": nil,
	"datacontenttype": nil, "dataschema": nil, "data": nil, "data_base64": nil,
	ExtCorrelationID: nil, ExtReplyTo: nil, ExtPartitionKey: nil,
}, false)

// CheckStructured refuses a structured-mode event (the JSON event format)
// that two readers could read differently: an attribute or a member of
// its data repeated (exactly or in another case), or an attribute named
// in another case ("TYPE"; CloudEvents attribute names are lower case).
// The error is an ErrInvalid *Error whose Attribute is the member's path
// ("type", "data.action.TYPE"). Malformed JSON is left to the decoder.
func CheckStructured(b []byte) error {
	err := strictjson.Check(b, envelopeShape)
	if err == nil {
		return nil
	}
	var e *strictjson.Error
	if !errors.As(err, &e) || e.Kind == strictjson.KindSyntax {
		return nil
	}
	return Invalid(e.Path, e.Error(), nil)
}
