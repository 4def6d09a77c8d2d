package cehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"
)

// Write writes ev as the HTTP response in ev.Mode with the given status
// (200–599). ev's Data must be a JSON value. An error before anything was
// written (an invalid event) leaves w untouched; an error after is the
// connection's.
func Write(w http.ResponseWriter, status int, ev Event) error {
	if status < 200 || status > 599 {
		return fmt.Errorf("writing cloudevent: status %d is outside 200-599", status)
	}
	e, err := toSDK(ev)
	if err != nil {
		return fmt.Errorf("encoding cloudevent: %w", err)
	}
	if err := sdkhttp.WriteResponseWriter(modeContext(ev.Mode), binding.ToMessage(e), status, w); err != nil {
		return fmt.Errorf("writing cloudevent: %w", err)
	}
	return nil
}

// NewRequest returns a POST request to url carrying ev in ev.Mode: what a
// client of the gate sends to POST /events.
func NewRequest(ctx context.Context, url string, ev Event) (*http.Request, error) {
	e, err := toSDK(ev)
	if err != nil {
		return nil, fmt.Errorf("encoding cloudevent: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	if err := sdkhttp.WriteRequest(modeContext(ev.Mode), binding.ToMessage(e), req); err != nil {
		return nil, fmt.Errorf("encoding cloudevent into request: %w", err)
	}
	return req, nil
}

func modeContext(m Mode) context.Context {
	if m == ModeStructured {
		ctx := binding.WithForceStructured(context.Background())
		return binding.UseFormatForEvent(ctx, verbatimJSON{})
	}
	return binding.WithForceBinary(context.Background())
}

// verbatimJSON is the SDK's JSON event format without encoding/json's
// post-processing (which re-compacts data and escapes <, > and & in it):
// the data's bytes reach the wire as they are in the Event.
type verbatimJSON struct{}

func (verbatimJSON) MediaType() string { return event.ApplicationCloudEventsJSON }

func (verbatimJSON) Marshal(e *event.Event) ([]byte, error) {
	var b bytes.Buffer
	if err := event.WriteJson(e, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (verbatimJSON) Unmarshal(b []byte, e *event.Event) error { return e.UnmarshalJSON(b) }

// toSDK converts ev for the SDK's writers, refusing what Decode would
// refuse on the other side.
func toSDK(ev Event) (*event.Event, error) {
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
	if !isJSONType(ct) {
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
