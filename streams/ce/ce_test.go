package ce_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/streams/ce"
)

func request() ce.Event {
	return ce.Event{
		SpecVersion:     ce.SpecVersion,
		Type:            "qwed.agent.action.verify",
		Source:          "//agents/a1",
		ID:              "req-1",
		Subject:         "a1",
		Time:            time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC),
		DataContentType: ce.ContentTypeJSON,
		Data:            []byte(`{"agent_id":"a1"}`),
		Extensions:      map[string]string{ce.ExtPartitionKey: "a1", ce.ExtReplyTo: "agentgate.replies"},
		Mode:            ce.ModeBinary,
	}
}

// TestSDKRoundTrip pins that ToSDK and FromSDK are inverse on a valid
// event, in both modes.
func TestSDKRoundTrip(t *testing.T) {
	for _, mode := range []ce.Mode{ce.ModeBinary, ce.ModeStructured} {
		in := request()
		in.Mode = mode
		e, err := ce.ToSDK(in)
		if err != nil {
			t.Fatalf("%v: ToSDK: %v", mode, err)
		}
		out, err := ce.FromSDK(e, mode, ce.MaxRequestTypeBytes)
		if err != nil {
			t.Fatalf("%v: FromSDK: %v", mode, err)
		}
		if out.ID != in.ID || out.Type != in.Type || !out.Time.Equal(in.Time) || string(out.Data) != string(in.Data) ||
			len(out.Extensions) != 2 || out.Extensions[ce.ExtReplyTo] != "agentgate.replies" || out.Mode != mode {
			t.Fatalf("%v: round trip = %+v, want %+v", mode, out, in)
		}
	}
}

// TestDesign3ReplyAttributes pins the reply of the contracts
// (docs/ARCHITECTURE.md): type + .reply, correlationid defaulting to the request
// id, a deterministic reply id.
func TestDesign3ReplyAttributes(t *testing.T) {
	req := request()
	r := ce.NewReply(req, []byte(`{"decision":"APPROVED"}`), req.Time)
	if r.Type != req.Type+ce.ReplyTypeSuffix || r.Source != ce.ReplySource || r.CorrelationID() != req.ID ||
		r.Extensions[ce.ExtPartitionKey] != "a1" || r.Mode != req.Mode {
		t.Fatalf("reply = %+v", r)
	}
	if r.ID != ce.ReplyID(req.Source, req.ID) || r.ID == ce.ReplyID("//agents/other", req.ID) || !strings.HasPrefix(r.ID, "r-") {
		t.Fatalf("reply id %q is not the deterministic ReplyID", r.ID)
	}
}

// TestLimitsBothSides pins the type limit of a request on both sides and
// the error kinds callers map to QWED-REQ-001 and QWED-REQ-004.
func TestLimitsBothSides(t *testing.T) {
	for _, n := range []int{ce.MaxRequestTypeBytes, ce.MaxRequestTypeBytes + 1} {
		in := request()
		in.Type = strings.Repeat("t", n)
		e, err := ce.ToSDK(in)
		if err != nil {
			t.Fatalf("ToSDK: %v", err)
		}
		_, err = ce.FromSDK(e, ce.ModeBinary, ce.MaxRequestTypeBytes)
		if over := n > ce.MaxRequestTypeBytes; over != errors.Is(err, ce.ErrTooLarge) {
			t.Fatalf("type of %d bytes: FromSDK = %v", n, err)
		}
	}
	in := request()
	in.Data = []byte(`{"a":`)
	if _, err := ce.ToSDK(in); err == nil {
		t.Fatal("ToSDK accepted data that is not JSON")
	}
	if !ce.IsJSONType("application/cloudevents+json; charset=utf-8") || ce.IsJSONType("text/plain") {
		t.Fatal("IsJSONType misjudges a media type")
	}
	var e *ce.Error
	if err := error(ce.Invalid("id", "missing", nil)); !errors.As(err, &e) || !errors.Is(err, ce.ErrInvalid) || e.Attribute != "id" {
		t.Fatalf("Invalid = %v", err)
	}
}
