package cekafka

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/format"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/ce"
)

// Header names and limits of the binding.
const (
	// HeaderPrefix starts the header of every attribute in binary mode.
	HeaderPrefix = "ce_"
	// HeaderContentType carries datacontenttype (binary mode) or the event
	// format (structured mode).
	HeaderContentType = "content-type"
	// MediaStructured is the content type of a structured-mode message.
	MediaStructured = "application/cloudevents+json"
	// MaxHeaderBytes bounds the names and values of all headers of a
	// message together.
	MaxHeaderBytes = 64 << 10
)

const (
	mediaBatch  = "application/cloudevents-batch+json"
	mediaPrefix = "application/cloudevents"
)

var versions = spec.WithPrefix(HeaderPrefix)

// Decode reads the command CloudEvent of msg (binary or structured mode)
// and checks it against the rules of the package doc; a request's type is
// at most ce.MaxRequestTypeBytes. Every error is a *ce.Error.
func Decode(msg kafka.Message) (ce.Event, error) {
	return decode(msg, ce.MaxRequestTypeBytes)
}

// DecodeReply is Decode for a reply, as a client of the gate reads it: its
// type may use the whole ce.MaxAttributeBytes.
func DecodeReply(msg kafka.Message) (ce.Event, error) {
	return decode(msg, ce.MaxAttributeBytes)
}

func decode(msg kafka.Message, maxType int) (ce.Event, error) {
	if len(msg.Value) > ce.MaxBodyBytes {
		return ce.Event{}, ce.TooLarge("", fmt.Sprintf("value of %d bytes exceeds the limit of %d", len(msg.Value), ce.MaxBodyBytes))
	}
	m, err := newMessage(msg)
	if err != nil {
		return ce.Event{}, err
	}
	if m.mode == ce.ModeStructured {
		if err := ce.CheckStructured(m.value); err != nil {
			return ce.Event{}, err
		}
	}
	e, err := toEvent(m)
	if err != nil {
		return ce.Event{}, err
	}
	ev, err := ce.FromSDK(e, m.mode, maxType)
	if err != nil {
		return ce.Event{}, err
	}
	if len(msg.Key) > 0 {
		key := string(msg.Key)
		switch pk, ok := ev.Extensions[ce.ExtPartitionKey]; {
		case !ok:
			if len(key) > ce.MaxAttributeBytes {
				return ce.Event{}, ce.TooLarge(ce.ExtPartitionKey, fmt.Sprintf("message key of %d bytes exceeds the limit of %d", len(key), ce.MaxAttributeBytes))
			}
			if ev.Extensions == nil {
				ev.Extensions = make(map[string]string, 1)
			}
			ev.Extensions[ce.ExtPartitionKey] = key
		case pk != key:
			return ce.Event{}, ce.Invalid(ce.ExtPartitionKey, fmt.Sprintf("%q differs from the message key %q", pk, key), nil)
		}
	}
	return ev, nil
}

// message is a kafka.Message as the SDK's binding.MessageReader.
type message struct {
	mode    ce.Mode
	version spec.Version
	headers []kafka.Header
	value   []byte
}

var (
	_ binding.MessageReader         = (*message)(nil)
	_ binding.MessageMetadataReader = (*message)(nil)
)

// newMessage checks the headers and tells binary from structured mode.
func newMessage(msg kafka.Message) (*message, error) {
	size := 0
	seen := make(map[string]bool, len(msg.Headers))
	var contentType, specVersion string
	var hasSpec bool
	for _, h := range msg.Headers {
		size += len(h.Key) + len(h.Value)
		if size > MaxHeaderBytes {
			return nil, ce.TooLarge("", fmt.Sprintf("headers exceed the limit of %d bytes", MaxHeaderBytes))
		}
		name := strings.ToLower(h.Key)
		if name != HeaderContentType && !strings.HasPrefix(name, HeaderPrefix) {
			continue
		}
		if seen[name] {
			return nil, ce.Invalid(attrName(name), fmt.Sprintf("header %q appears more than once", name), nil)
		}
		seen[name] = true
		switch {
		case name == HeaderContentType:
			contentType = string(h.Value)
		case name == HeaderPrefix:
			return nil, ce.Invalid("", "header ce_ names no attribute", nil)
		case name == versions.PrefixedSpecVersionName():
			specVersion, hasSpec = string(h.Value), true
		}
	}
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.ToLower(strings.TrimSpace(mt))
	m := &message{headers: msg.Headers, value: msg.Value}
	switch {
	case mt == MediaStructured:
		m.mode = ce.ModeStructured
	case mt == mediaBatch:
		return nil, ce.Invalid("", "batch mode is not supported: send one event per message", nil)
	case strings.HasPrefix(mt, mediaPrefix):
		return nil, ce.Invalid("", fmt.Sprintf("event format %q is not supported: use %s", mt, MediaStructured), nil)
	case hasSpec:
		if specVersion != ce.SpecVersion {
			return nil, ce.Invalid("specversion", fmt.Sprintf("specversion %q is not supported: use %q", specVersion, ce.SpecVersion), nil)
		}
		m.mode = ce.ModeBinary
		m.version = versions.Version(specVersion)
	default:
		return nil, ce.Invalid("", "not a CloudEvent: no ce_specversion header and the content type is not "+MediaStructured, nil)
	}
	return m, nil
}

// attrName is the attribute a header carries, for error messages.
func attrName(header string) string {
	if header == HeaderContentType {
		return "datacontenttype"
	}
	return strings.TrimPrefix(header, HeaderPrefix)
}

// ReadEncoding implements binding.MessageReader.
func (m *message) ReadEncoding() binding.Encoding {
	if m.mode == ce.ModeStructured {
		return binding.EncodingStructured
	}
	return binding.EncodingBinary
}

// ReadStructured implements binding.MessageReader.
func (m *message) ReadStructured(ctx context.Context, w binding.StructuredWriter) error {
	if m.mode != ce.ModeStructured {
		return binding.ErrNotStructured
	}
	return w.SetStructuredEvent(ctx, format.JSON, bytes.NewReader(m.value))
}

// ReadBinary implements binding.MessageReader.
func (m *message) ReadBinary(_ context.Context, w binding.BinaryWriter) error {
	if m.mode != ce.ModeBinary {
		return binding.ErrNotBinary
	}
	for _, h := range m.headers {
		name := strings.ToLower(h.Key)
		var err error
		switch {
		case name == HeaderContentType:
			err = w.SetAttribute(m.version.AttributeFromKind(spec.DataContentType), string(h.Value))
		case !strings.HasPrefix(name, HeaderPrefix):
			continue
		case m.version.Attribute(name) != nil:
			err = w.SetAttribute(m.version.Attribute(name), string(h.Value))
		default:
			err = w.SetExtension(strings.TrimPrefix(name, HeaderPrefix), string(h.Value))
		}
		if err != nil {
			return err
		}
	}
	if len(m.value) > 0 {
		return w.SetData(bytes.NewReader(m.value))
	}
	return nil
}

// GetAttribute implements binding.MessageMetadataReader (binary mode).
func (m *message) GetAttribute(k spec.Kind) (spec.Attribute, any) {
	if m.version == nil {
		return nil, nil
	}
	attr := m.version.AttributeFromKind(k)
	if attr == nil {
		return nil, nil
	}
	name := attr.PrefixedName()
	if k == spec.DataContentType {
		name = HeaderContentType
	}
	if v, ok := m.header(name); ok {
		return attr, v
	}
	return attr, nil
}

// GetExtension implements binding.MessageMetadataReader (binary mode).
func (m *message) GetExtension(name string) any {
	if v, ok := m.header(HeaderPrefix + strings.ToLower(name)); ok {
		return v
	}
	return nil
}

// header returns the value of the header named name (lower case); names
// are unique (newMessage refused duplicates).
func (m *message) header(name string) (string, bool) {
	for _, h := range m.headers {
		if strings.EqualFold(h.Key, name) {
			return string(h.Value), true
		}
	}
	return "", false
}

// toEvent runs the SDK's decoder. The SDK is not hardened against every
// malformed input, so a panic inside it is turned into ErrInvalid: bad
// input never crashes the gate.
func toEvent(m *message) (e *event.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, err = nil, ce.Invalid("", "malformed event", fmt.Errorf("cloudevents sdk: %v", p))
		}
	}()
	e, err = binding.ToEvent(context.Background(), m)
	if err != nil {
		return nil, ce.Invalid("", "malformed event", err)
	}
	return e, nil
}

// Encode returns ev as a Kafka message in ev.Mode, Key = the partitionkey
// extension (none when absent), Topic and Partition unset. It refuses what
// Decode would refuse on the other side (ce.ToSDK's rules, a value larger
// than ce.MaxBodyBytes). Binary-mode headers come in a fixed order:
// specversion, id, source, type, subject, time, the extensions sorted by
// name, content-type.
func Encode(ev ce.Event) (kafka.Message, error) {
	e, err := ce.ToSDK(ev)
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encoding cloudevent: %w", err)
	}
	var msg kafka.Message
	if pk := ev.Extensions[ce.ExtPartitionKey]; pk != "" {
		msg.Key = []byte(pk)
	}
	if ev.Mode == ce.ModeStructured {
		v, err := ce.JSONFormat{}.Marshal(e)
		if err != nil {
			return kafka.Message{}, fmt.Errorf("encoding structured cloudevent: %w", err)
		}
		msg.Value = v
		msg.Headers = []kafka.Header{{Key: HeaderContentType, Value: []byte(MediaStructured)}}
	} else {
		msg.Value = ev.Data
		h := make([]kafka.Header, 0, 8+len(ev.Extensions))
		add := func(name, value string) {
			h = append(h, kafka.Header{Key: HeaderPrefix + name, Value: []byte(value)})
		}
		add("specversion", e.SpecVersion())
		add("id", e.ID())
		add("source", e.Source())
		add("type", e.Type())
		if s := e.Subject(); s != "" {
			add("subject", s)
		}
		if t := e.Time(); !t.IsZero() {
			s, err := types.Format(t)
			if err != nil {
				return kafka.Message{}, fmt.Errorf("encoding time: %w", err)
			}
			add("time", s)
		}
		names := make([]string, 0, len(ev.Extensions))
		for name := range ev.Extensions {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			add(name, ev.Extensions[name])
		}
		h = append(h, kafka.Header{Key: HeaderContentType, Value: []byte(e.DataContentType())})
		msg.Headers = h
	}
	if len(msg.Value) > ce.MaxBodyBytes {
		return kafka.Message{}, fmt.Errorf("encoding cloudevent: value of %d bytes exceeds the limit of %d", len(msg.Value), ce.MaxBodyBytes)
	}
	return msg, nil
}
