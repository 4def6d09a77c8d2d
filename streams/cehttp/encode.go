package cehttp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cloudevents/sdk-go/v2/binding"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/agentgate/agentgate/streams/ce"
)

// Write writes ev as the HTTP response in ev.Mode with the given status
// (200–599). ev's Data must be a JSON value. An error before anything was
// written (an invalid event) leaves w untouched; an error after is the
// connection's.
func Write(w http.ResponseWriter, status int, ev Event) error {
	if status < 200 || status > 599 {
		return fmt.Errorf("writing cloudevent: status %d is outside 200-599", status)
	}
	e, err := ce.ToSDK(ev)
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
	e, err := ce.ToSDK(ev)
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
		return binding.UseFormatForEvent(ctx, ce.JSONFormat{})
	}
	return binding.WithForceBinary(context.Background())
}
