package ce

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// FromSDK converts an event decoded by a binding into an Event, enforcing
// the rules of the package doc. mode is how the event arrived; maxType is
// the limit on its type (MaxRequestTypeBytes for a request,
// MaxAttributeBytes for a reply). Every error is a *Error.
func FromSDK(e *event.Event, mode Mode, maxType int) (Event, error) {
	if e == nil {
		return Event{}, Invalid("", "no event", nil)
	}
	if v := e.SpecVersion(); v != SpecVersion {
		return Event{}, Invalid("specversion", fmt.Sprintf("specversion %q is not supported: use %q", v, SpecVersion), nil)
	}
	if verr := e.Validate(); verr != nil {
		attr, cause := firstValidationError(verr)
		return Event{}, Invalid(attr, "missing or malformed", cause)
	}
	ev := Event{
		SpecVersion:     e.SpecVersion(),
		Type:            e.Type(),
		Source:          e.Source(),
		ID:              e.ID(),
		Subject:         e.Subject(),
		DataContentType: e.DataContentType(),
		Data:            e.Data(),
		Mode:            mode,
	}
	if t := e.Time(); !t.IsZero() {
		ev.Time = t.UTC()
	}
	for _, a := range []struct {
		name, value string
		max         int
	}{
		{"id", ev.ID, MaxAttributeBytes},
		{"source", ev.Source, MaxAttributeBytes},
		{"type", ev.Type, maxType},
		{"subject", ev.Subject, MaxAttributeBytes},
		{"datacontenttype", ev.DataContentType, MaxAttributeBytes},
	} {
		if len(a.value) > a.max {
			return Event{}, TooLarge(a.name, fmt.Sprintf("%d bytes exceed the limit of %d", len(a.value), a.max))
		}
	}
	exts := e.Extensions()
	for _, name := range KeptExtensions() {
		v, ok := exts[name]
		if !ok {
			continue
		}
		s, err := types.Format(v)
		if err != nil {
			return Event{}, Invalid(name, "not a string", err)
		}
		if len(s) > MaxAttributeBytes {
			return Event{}, TooLarge(name, fmt.Sprintf("%d bytes exceed the limit of %d", len(s), MaxAttributeBytes))
		}
		if s != "" {
			if ev.Extensions == nil {
				ev.Extensions = make(map[string]string, 3)
			}
			ev.Extensions[name] = s
		}
	}
	if ev.DataContentType == "" {
		if mode == ModeBinary {
			return Event{}, Invalid("datacontenttype", "missing: binary mode needs a content type", nil)
		}
		ev.DataContentType = ContentTypeJSON // the JSON event format's default
	}
	if !IsJSONType(ev.DataContentType) {
		return Event{}, Invalid("datacontenttype", fmt.Sprintf("%q is not JSON: use %s", ev.DataContentType, ContentTypeJSON), nil)
	}
	if len(ev.Data) == 0 {
		return Event{}, Invalid("data", "missing: a command carries a JSON body", nil)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ev.Data); err != nil {
		return Event{}, Invalid("data", "not well-formed JSON", err)
	}
	ev.Data = compact.Bytes()
	return ev, nil
}

// firstValidationError picks the alphabetically first attribute of an SDK
// validation error, so the error does not depend on map order.
func firstValidationError(err error) (string, error) {
	verr, ok := err.(event.ValidationError)
	if !ok || len(verr) == 0 {
		return "", err
	}
	names := make([]string, 0, len(verr))
	for name := range verr {
		names = append(names, name)
	}
	slices.Sort(names)
	return names[0], verr[names[0]]
}

// IsJSONType reports whether a media type is application/json or a +json
// type, parameters aside.
func IsJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == ContentTypeJSON || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// ToSDK converts ev for an SDK writer, refusing what FromSDK would refuse
// on the other side: a Mode that is neither binary nor structured, another
// specversion, a non-JSON datacontenttype (empty means application/json),
// data that is not a JSON value, missing required attributes. Extensions
// are set in sorted order.
func ToSDK(ev Event) (*event.Event, error) {
	if ev.Mode != ModeBinary && ev.Mode != ModeStructured {
		return nil, fmt.Errorf("mode %d is neither binary nor structured", ev.Mode)
	}
	if ev.SpecVersion != "" && ev.SpecVersion != SpecVersion {
		return nil, fmt.Errorf("specversion %q is not %q", ev.SpecVersion, SpecVersion)
	}
	ct := ev.DataContentType
	if ct == "" {
		ct = ContentTypeJSON
	}
	if !IsJSONType(ct) {
		return nil, fmt.Errorf("datacontenttype %q is not JSON", ct)
	}
	if len(ev.Data) == 0 || !json.Valid(ev.Data) {
		return nil, errors.New("data is not a JSON value")
	}
	e := event.New(SpecVersion)
	e.SetID(ev.ID)
	e.SetSource(ev.Source)
	e.SetType(ev.Type)
	if ev.Subject != "" {
		e.SetSubject(ev.Subject)
	}
	if !ev.Time.IsZero() {
		e.SetTime(ev.Time.UTC())
	}
	e.SetDataContentType(ct)
	e.DataEncoded = ev.Data
	names := make([]string, 0, len(ev.Extensions))
	for name := range ev.Extensions {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := e.Context.SetExtension(name, ev.Extensions[name]); err != nil {
			return nil, fmt.Errorf("setting extension %q: %w", name, err)
		}
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("validating: %w", err)
	}
	return &e, nil
}

// JSONFormat is the SDK's JSON event format (application/cloudevents+json)
// without encoding/json's post-processing, which re-compacts data and
// escapes <, > and & in it: the data's bytes reach the wire as they are in
// the Event. It implements the SDK's format.Format.
type JSONFormat struct{}

// MediaType returns application/cloudevents+json.
func (JSONFormat) MediaType() string { return event.ApplicationCloudEventsJSON }

// Marshal writes e as a structured-mode JSON event.
func (JSONFormat) Marshal(e *event.Event) ([]byte, error) {
	var b bytes.Buffer
	if err := event.WriteJson(e, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Unmarshal reads a structured-mode JSON event into e.
func (JSONFormat) Unmarshal(b []byte, e *event.Event) error { return e.UnmarshalJSON(b) }
