package cehttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/agentgate/agentgate/streams/ce"
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
	return decode(r.Header, r.Body, r.ContentLength, ce.MaxRequestTypeBytes)
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
	if mode == ModeStructured {
		if err := ce.CheckStructured(data); err != nil {
			return Event{}, err
		}
	}
	e, err := toEvent(h, data)
	if err != nil {
		return Event{}, err
	}
	return ce.FromSDK(e, mode, maxType)
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
