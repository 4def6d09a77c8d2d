package cehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/cloudevents/sdk-go/v2/types"
)

const (
	mediaStructured = "application/cloudevents+json"
	mediaBatch      = "application/cloudevents-batch+json"
	mediaPrefix     = "application/cloudevents"
	headerSpec      = "Ce-Specversion"
)

// Decode reads the CloudEvent of an HTTP request (binary or structured
// mode) and checks it against the package's limits and rules. It reads at
// most MaxBodyBytes+1 bytes of r.Body and does not close it. Every error
// is a *Error (ErrInvalid or ErrTooLarge).
func Decode(r *http.Request) (Event, error) {
	if r == nil {
		return Event{}, invalid("", "no request", nil)
	}
	return decode(r.Header, r.Body, r.ContentLength, MaxAttributeBytes-len(ReplyTypeSuffix))
}

// DecodeResponse reads the reply CloudEvent of an HTTP response, as a
// client of the gate does, with the same rules as Decode (a reply's type
// may use the whole MaxAttributeBytes). It does not close resp.Body.
func DecodeResponse(resp *http.Response) (Event, error) {
	if resp == nil {
		return Event{}, invalid("", "no response", nil)
	}
	return decode(resp.Header, resp.Body, resp.ContentLength, MaxAttributeBytes)
}

func decode(h http.Header, body io.Reader, contentLength int64, maxType int) (Event, error) {
	if contentLength > MaxBodyBytes {
		return Event{}, tooLarge("", fmt.Sprintf("body of %d bytes exceeds the limit of %d", contentLength, MaxBodyBytes))
	}
	mode, err := detectMode(h)
	if err != nil {
		return Event{}, err
	}
	var data []byte
	if body != nil {
		data, err = io.ReadAll(io.LimitReader(body, MaxBodyBytes+1))
		if err != nil {
			return Event{}, invalid("", "reading body", err)
		}
	}
	if len(data) > MaxBodyBytes {
		return Event{}, tooLarge("", fmt.Sprintf("body exceeds the limit of %d bytes", MaxBodyBytes))
	}
	e, err := toEvent(h, data)
	if err != nil {
		return Event{}, err
	}
	return fromSDK(e, mode, maxType)
}

// detectMode tells binary from structured mode and refuses batch mode and
// anything that is not a CloudEvent.
func detectMode(h http.Header) (Mode, error) {
	ct := h.Get("Content-Type")
	mt := ct
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == mediaStructured:
		return ModeStructured, nil
	case mt == mediaBatch:
		return 0, invalid("", "batch mode is not supported: send one event per request", nil)
	case strings.HasPrefix(mt, mediaPrefix):
		return 0, invalid("", fmt.Sprintf("event format %q is not supported: use %s", mt, mediaStructured), nil)
	case len(h.Values(headerSpec)) > 0:
		if v := h.Get(headerSpec); v != SpecVersion {
			return 0, invalid("specversion", fmt.Sprintf("specversion %q is not supported: use %q", v, SpecVersion), nil)
		}
		for k := range h {
			// An empty extension name ("ce-") is not an attribute; the
			// SDK would index past its end.
			if len(k) <= len("Ce-") && strings.EqualFold(k, "Ce-") {
				return 0, invalid("", "header ce- names no attribute", nil)
			}
		}
		return ModeBinary, nil
	}
	return 0, invalid("", "not a CloudEvent: no ce-specversion header and the content type is not "+mediaStructured, nil)
}

// toEvent runs the SDK's decoder. The SDK is not hardened against every
// malformed input (an empty data_base64 token can index out of range), so
// a panic inside it is turned into ErrInvalid: bad input never crashes the
// gate.
func toEvent(h http.Header, data []byte) (e *event.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, err = nil, invalid("", "malformed event", fmt.Errorf("cloudevents sdk: %v", p))
		}
	}()
	msg := sdkhttp.NewMessage(h, io.NopCloser(bytes.NewReader(data)))
	e, err = binding.ToEvent(context.Background(), msg)
	if err != nil {
		return nil, invalid("", "malformed event", err)
	}
	return e, nil
}

func fromSDK(e *event.Event, mode Mode, maxType int) (Event, error) {
	if v := e.SpecVersion(); v != SpecVersion {
		return Event{}, invalid("specversion", fmt.Sprintf("specversion %q is not supported: use %q", v, SpecVersion), nil)
	}
	if verr := e.Validate(); verr != nil {
		attr, cause := firstValidationError(verr)
		return Event{}, invalid(attr, "missing or malformed", cause)
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
			return Event{}, tooLarge(a.name, fmt.Sprintf("%d bytes exceed the limit of %d", len(a.value), a.max))
		}
	}
	exts := e.Extensions()
	for _, name := range keptExtensions {
		v, ok := exts[name]
		if !ok {
			continue
		}
		s, err := types.Format(v)
		if err != nil {
			return Event{}, invalid(name, "not a string", err)
		}
		if len(s) > MaxAttributeBytes {
			return Event{}, tooLarge(name, fmt.Sprintf("%d bytes exceed the limit of %d", len(s), MaxAttributeBytes))
		}
		if s != "" {
			if ev.Extensions == nil {
				ev.Extensions = make(map[string]string, len(keptExtensions))
			}
			ev.Extensions[name] = s
		}
	}
	if ev.DataContentType == "" {
		if mode == ModeBinary {
			return Event{}, invalid("datacontenttype", "missing: binary mode needs a Content-Type header", nil)
		}
		ev.DataContentType = ContentTypeJSON // the JSON event format's default
	}
	if !isJSONType(ev.DataContentType) {
		return Event{}, invalid("datacontenttype", fmt.Sprintf("%q is not JSON: use %s", ev.DataContentType, ContentTypeJSON), nil)
	}
	if len(ev.Data) == 0 {
		return Event{}, invalid("data", "missing: a command carries a JSON body", nil)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ev.Data); err != nil {
		return Event{}, invalid("data", "not well-formed JSON", err)
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

// isJSONType reports whether a media type is application/json or a +json
// type, parameters aside.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == ContentTypeJSON || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}
