package cehttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/streams/cehttp"
)

// replyTime is the time the test server stamps on replies.
var replyTime = time.Date(2026, 1, 15, 10, 0, 2, 0, time.UTC)

// replyData is the data of the test server's replies.
const replyData = `{"decision":"APPROVED"}`

// gateHandler plays the gate's POST /events: decode, reply in the same
// mode, and map decoding errors as the error catalogue does (QWED-REQ-001
// → 400, QWED-REQ-004 → 413).
func gateHandler(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := cehttp.Decode(r)
		if err != nil {
			status, code := http.StatusBadRequest, "QWED-REQ-001"
			if errors.Is(err, cehttp.ErrTooLarge) {
				status, code = http.StatusRequestEntityTooLarge, "QWED-REQ-004"
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": err.Error()})
			return
		}
		if err := cehttp.Write(w, http.StatusOK, cehttp.NewReply(ev, []byte(replyData), replyTime)); err != nil {
			t.Errorf("writing reply: %v", err)
		}
	})
}

func command(mode cehttp.Mode) cehttp.Event {
	return cehttp.Event{
		SpecVersion:     cehttp.SpecVersion,
		Type:            "qwed.agent.action.verify",
		Source:          "//agents/a1",
		ID:              "req-1",
		Subject:         "a1",
		Time:            time.Date(2026, 1, 15, 10, 0, 0, 123456789, time.UTC),
		DataContentType: "application/json",
		Data:            []byte(`{"agent_id":"a1","action":{"type":"execute_sql","query":"SELECT 1"}}`),
		Extensions: map[string]string{
			cehttp.ExtCorrelationID: "corr-9",
			cehttp.ExtReplyTo:       "agentgate.replies",
			cehttp.ExtPartitionKey:  "a1",
		},
		Mode: mode,
	}
}

func post(t *testing.T, url string, ev cehttp.Event) *http.Response {
	t.Helper()
	req, err := cehttp.NewRequest(context.Background(), url, ev)
	if err != nil {
		t.Fatalf("building request: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("posting: %v", err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// The contracts (docs/ARCHITECTURE.md): a command round-trips in both modes over
// a real socket, and the reply comes back in the request's mode with type +
// ".reply", source "agentgate", the correlation id and a deterministic id.
func TestRoundTripBothModes(t *testing.T) {
	srv := httptest.NewServer(gateHandler(t))
	defer srv.Close()
	for _, mode := range []cehttp.Mode{cehttp.ModeBinary, cehttp.ModeStructured} {
		t.Run(mode.String(), func(t *testing.T) {
			ev := command(mode)
			resp := post(t, srv.URL+"/events", ev)
			if resp.StatusCode != http.StatusOK {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			ct := resp.Header.Get("Content-Type")
			switch mode {
			case cehttp.ModeBinary:
				if ct != "application/json" || resp.Header.Get("Ce-Id") == "" {
					t.Fatalf("binary reply has Content-Type %q and ce-id %q", ct, resp.Header.Get("Ce-Id"))
				}
			case cehttp.ModeStructured:
				if ct != "application/cloudevents+json" || resp.Header.Get("Ce-Id") != "" {
					t.Fatalf("structured reply has Content-Type %q and ce-id %q", ct, resp.Header.Get("Ce-Id"))
				}
			}
			got, err := cehttp.DecodeResponse(resp)
			if err != nil {
				t.Fatalf("decoding reply: %v", err)
			}
			want := cehttp.Event{
				SpecVersion:     "1.0",
				Type:            "qwed.agent.action.verify.reply",
				Source:          "agentgate",
				ID:              cehttp.ReplyID("//agents/a1", "req-1"),
				Subject:         "a1",
				Time:            replyTime,
				DataContentType: "application/json",
				Data:            []byte(replyData),
				Extensions:      map[string]string{"correlationid": "corr-9", "partitionkey": "a1"},
				Mode:            mode,
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("reply\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// Decode returns exactly what NewRequest encoded, in both modes.
func TestDecodeInvertsNewRequest(t *testing.T) {
	for _, mode := range []cehttp.Mode{cehttp.ModeBinary, cehttp.ModeStructured} {
		ev := command(mode)
		req, err := cehttp.NewRequest(context.Background(), "http://gate.test/events", ev)
		if err != nil {
			t.Fatalf("%s: building request: %v", mode, err)
		}
		got, err := cehttp.Decode(req)
		if err != nil {
			t.Fatalf("%s: decoding: %v", mode, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("%s: decoded\n got %+v\nwant %+v", mode, got, ev)
		}
	}
}

// The contracts (docs/ARCHITECTURE.md): correlationid defaults to the request id.
func TestReplyCorrelationDefaultsToRequestID(t *testing.T) {
	req := command(cehttp.ModeBinary)
	delete(req.Extensions, cehttp.ExtCorrelationID)
	reply := cehttp.NewReply(req, []byte(`{}`), replyTime)
	if got := reply.Extensions[cehttp.ExtCorrelationID]; got != "req-1" {
		t.Fatalf("correlationid = %q, want the request id %q", got, "req-1")
	}
	if _, ok := reply.Extensions[cehttp.ExtReplyTo]; ok {
		t.Fatal("the reply carries the request's replyto")
	}
}

// Invariant 4 (docs/ARCHITECTURE.md: exactly-once effects): the reply id is a
// function of the request's source and id only.
func TestReplyIDIsDeterministic(t *testing.T) {
	a, b := cehttp.ReplyID("//agents/a1", "req-1"), cehttp.ReplyID("//agents/a1", "req-1")
	if a != b || len(a) != 34 || !strings.HasPrefix(a, "r-") {
		t.Fatalf("ReplyID = %q and %q, want equal, 34 chars, prefixed r-", a, b)
	}
	distinct := []string{
		cehttp.ReplyID("//agents/a1", "req-2"),
		cehttp.ReplyID("//agents/a2", "req-1"),
		cehttp.ReplyID("//agents/a1re", "q-1"), // the separator matters
	}
	for _, d := range distinct {
		if d == a {
			t.Fatalf("ReplyID collides: %q", d)
		}
	}
}

// rawRequest builds a request by hand, independent of the package's
// encoder.
func rawRequest(headers map[string]string, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/events", strings.NewReader(body))
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}

func binaryHeaders() map[string]string {
	return map[string]string{
		"Content-Type":   "application/json",
		"Ce-Specversion": "1.0",
		"Ce-Id":          "req-1",
		"Ce-Source":      "//agents/a1",
		"Ce-Type":        "qwed.agent.action.verify",
	}
}

func structuredBody(fields map[string]any) string {
	ev := map[string]any{
		"specversion": "1.0",
		"id":          "req-1",
		"source":      "//agents/a1",
		"type":        "qwed.agent.action.verify",
		"data":        map[string]any{"agent_id": "a1"},
	}
	for k, v := range fields {
		if v == nil {
			delete(ev, k)
		} else {
			ev[k] = v
		}
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

func structuredRequest(fields map[string]any) *http.Request {
	return rawRequest(map[string]string{"Content-Type": "application/cloudevents+json"}, structuredBody(fields))
}

func wantError(t *testing.T, err error, kind error, attr string) {
	t.Helper()
	var e *cehttp.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want a *cehttp.Error", err)
	}
	if !errors.Is(err, kind) || e.Attribute != attr {
		t.Fatalf("error = %v (kind %v, attribute %q), want kind %v on attribute %q", err, e.Kind, e.Attribute, kind, attr)
	}
}

// Invariant 5 (docs/ARCHITECTURE.md: fail closed): every missing required attribute is
// refused with ErrInvalid naming it, in both modes.
func TestDecodeRefusesMissingRequiredAttributes(t *testing.T) {
	for _, attr := range []string{"id", "source", "type"} {
		h := binaryHeaders()
		delete(h, "Ce-"+strings.ToUpper(attr[:1])+attr[1:])
		_, err := cehttp.Decode(rawRequest(h, `{"agent_id":"a1"}`))
		wantError(t, err, cehttp.ErrInvalid, attr)

		_, err = cehttp.Decode(structuredRequest(map[string]any{attr: nil}))
		wantError(t, err, cehttp.ErrInvalid, attr)
	}
	_, err := cehttp.Decode(structuredRequest(map[string]any{"specversion": nil}))
	wantError(t, err, cehttp.ErrInvalid, "")
}

// The contracts (docs/ARCHITECTURE.md): only CloudEvents 1.0 in binary or
// structured mode.
func TestDecodeRefusesOtherVersionsAndModes(t *testing.T) {
	h := binaryHeaders()
	h["Ce-Specversion"] = "0.3"
	_, err := cehttp.Decode(rawRequest(h, `{}`))
	wantError(t, err, cehttp.ErrInvalid, "specversion")

	_, err = cehttp.Decode(structuredRequest(map[string]any{"specversion": "0.3"}))
	wantError(t, err, cehttp.ErrInvalid, "specversion")

	batch := rawRequest(map[string]string{"Content-Type": "application/cloudevents-batch+json"}, "["+structuredBody(nil)+"]")
	_, err = cehttp.Decode(batch)
	wantError(t, err, cehttp.ErrInvalid, "")
	if !strings.Contains(err.Error(), "batch mode is not supported") {
		t.Fatalf("batch refusal does not say so: %v", err)
	}

	_, err = cehttp.Decode(rawRequest(map[string]string{"Content-Type": "application/json"}, `{"agent_id":"a1"}`))
	wantError(t, err, cehttp.ErrInvalid, "")

	_, err = cehttp.Decode(rawRequest(map[string]string{"Content-Type": "application/cloudevents+xml"}, `<e/>`))
	wantError(t, err, cehttp.ErrInvalid, "")

	_, err = cehttp.Decode(nil)
	wantError(t, err, cehttp.ErrInvalid, "")
}

// The data content type must be JSON and the data a JSON value.
func TestDecodeRequiresJSONData(t *testing.T) {
	h := binaryHeaders()
	h["Content-Type"] = "text/plain"
	_, err := cehttp.Decode(rawRequest(h, `hello`))
	wantError(t, err, cehttp.ErrInvalid, "datacontenttype")

	h = binaryHeaders()
	delete(h, "Content-Type")
	_, err = cehttp.Decode(rawRequest(h, `{}`))
	wantError(t, err, cehttp.ErrInvalid, "datacontenttype")

	_, err = cehttp.Decode(rawRequest(binaryHeaders(), `{"agent_id":`))
	wantError(t, err, cehttp.ErrInvalid, "data")

	_, err = cehttp.Decode(rawRequest(binaryHeaders(), ``))
	wantError(t, err, cehttp.ErrInvalid, "data")

	_, err = cehttp.Decode(structuredRequest(map[string]any{"data": nil}))
	wantError(t, err, cehttp.ErrInvalid, "data")

	_, err = cehttp.Decode(structuredRequest(map[string]any{"datacontenttype": "text/plain", "data": "hello"}))
	wantError(t, err, cehttp.ErrInvalid, "datacontenttype")

	// Accepted: a +json type with parameters, an absent type in
	// structured mode, and data_base64 holding JSON.
	h = binaryHeaders()
	h["Content-Type"] = "application/vnd.agentgate+json; charset=utf-8"
	if _, err := cehttp.Decode(rawRequest(h, `{}`)); err != nil {
		t.Fatalf("decoding a +json data content type: %v", err)
	}
	ev, err := cehttp.Decode(structuredRequest(map[string]any{"datacontenttype": nil}))
	if err != nil || ev.DataContentType != "application/json" {
		t.Fatalf("structured event without datacontenttype: %+v, %v; want application/json", ev, err)
	}
	ev, err = cehttp.Decode(structuredRequest(map[string]any{"data": nil, "data_base64": "eyJhIjoxfQ=="}))
	if err != nil || string(ev.Data) != `{"a":1}` {
		t.Fatalf("data_base64: %q, %v; want {\"a\":1}", ev.Data, err)
	}
}

// paddedJSON returns a JSON object of exactly n bytes.
func paddedJSON(n int) string {
	const open, closing = `{"p":"`, `"}`
	return open + strings.Repeat("a", n-len(open)-len(closing)) + closing
}

// Invariant 7 (docs/ARCHITECTURE.md: bounded everything): the body limit holds on both
// sides, in both modes, over a real socket (413 = QWED-REQ-004).
func TestBodyLimitBothSides(t *testing.T) {
	srv := httptest.NewServer(gateHandler(t))
	defer srv.Close()
	for _, mode := range []cehttp.Mode{cehttp.ModeBinary, cehttp.ModeStructured} {
		t.Run(mode.String(), func(t *testing.T) {
			// The data that makes the body exactly the limit.
			size := cehttp.MaxBodyBytes
			if mode == cehttp.ModeStructured {
				ev := command(mode)
				ev.Data = []byte(paddedJSON(100))
				req, err := cehttp.NewRequest(context.Background(), srv.URL, ev)
				if err != nil {
					t.Fatalf("building request: %v", err)
				}
				size -= int(req.ContentLength) - 100
			}
			for _, c := range []struct {
				dataBytes  int
				wantStatus int
			}{{size, http.StatusOK}, {size + 1, http.StatusRequestEntityTooLarge}} {
				ev := command(mode)
				ev.Data = []byte(paddedJSON(c.dataBytes))
				resp := post(t, srv.URL, ev)
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != c.wantStatus {
					t.Fatalf("%d bytes of data: status %d (%.200s), want %d", c.dataBytes, resp.StatusCode, body, c.wantStatus)
				}
				if c.wantStatus == http.StatusRequestEntityTooLarge && !bytes.Contains(body, []byte("QWED-REQ-004")) {
					t.Fatalf("too large answered %s, want QWED-REQ-004", body)
				}
			}
		})
	}
}

// Decode stops reading at the limit even when no Content-Length tells it
// the size (a chunked body).
func TestBodyLimitWithoutContentLength(t *testing.T) {
	r := rawRequest(binaryHeaders(), "")
	r.Body = io.NopCloser(io.MultiReader(strings.NewReader(paddedJSON(cehttp.MaxBodyBytes)), strings.NewReader("x")))
	r.ContentLength = -1
	_, err := cehttp.Decode(r)
	wantError(t, err, cehttp.ErrTooLarge, "")

	r = rawRequest(binaryHeaders(), "")
	r.Body = io.NopCloser(strings.NewReader(paddedJSON(cehttp.MaxBodyBytes)))
	r.ContentLength = -1
	if _, err := cehttp.Decode(r); err != nil {
		t.Fatalf("decoding a body of exactly the limit: %v", err)
	}
}

// invariant 7 (docs/ARCHITECTURE.md): attribute and extension lengths are
// limited, on both sides; the type leaves room for ".reply".
func TestAttributeLimitsBothSides(t *testing.T) {
	max := cehttp.MaxAttributeBytes
	typeMax := max - len(cehttp.ReplyTypeSuffix)
	cases := []struct {
		attr, header string
		limit        int
	}{
		{"id", "Ce-Id", max},
		{"source", "Ce-Source", max},
		{"subject", "Ce-Subject", max},
		{"type", "Ce-Type", typeMax},
		{"correlationid", "Ce-Correlationid", max},
		{"replyto", "Ce-Replyto", max},
		{"partitionkey", "Ce-Partitionkey", max},
	}
	for _, c := range cases {
		h := binaryHeaders()
		h[c.header] = strings.Repeat("x", c.limit)
		if _, err := cehttp.Decode(rawRequest(h, `{}`)); err != nil {
			t.Fatalf("%s of %d bytes: %v", c.attr, c.limit, err)
		}
		h[c.header] = strings.Repeat("x", c.limit+1)
		_, err := cehttp.Decode(rawRequest(h, `{}`))
		wantError(t, err, cehttp.ErrTooLarge, c.attr)
	}
	// The reply of a request whose type is at its limit still decodes.
	h := binaryHeaders()
	h["Ce-Type"] = strings.Repeat("t", typeMax)
	req, err := cehttp.Decode(rawRequest(h, `{}`))
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	rec := httptest.NewRecorder()
	if err := cehttp.Write(rec, http.StatusOK, cehttp.NewReply(req, []byte(`{}`), replyTime)); err != nil {
		t.Fatalf("writing reply: %v", err)
	}
	if _, err := cehttp.DecodeResponse(rec.Result()); err != nil {
		t.Fatalf("decoding the reply of a maximal type: %v", err)
	}
}

// Extensions other than the three kept ones are ignored; kept ones given
// as JSON numbers in structured mode become strings.
func TestDecodeKeepsOnlyKnownExtensions(t *testing.T) {
	ev, err := cehttp.Decode(structuredRequest(map[string]any{"partitionkey": 42, "traceparent": "00-abc", "replyto": "topic"}))
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	want := map[string]string{"partitionkey": "42", "replyto": "topic"}
	if !reflect.DeepEqual(ev.Extensions, want) {
		t.Fatalf("extensions = %v, want %v", ev.Extensions, want)
	}
}

// Write refuses what Decode would refuse on the other side, before
// writing anything.
func TestWriteRefusesInvalidEvents(t *testing.T) {
	good := cehttp.NewReply(command(cehttp.ModeBinary), []byte(`{}`), replyTime)
	cases := map[string]func(e *cehttp.Event){
		"no mode":       func(e *cehttp.Event) { e.Mode = 0 },
		"no id":         func(e *cehttp.Event) { e.ID = "" },
		"data not JSON": func(e *cehttp.Event) { e.Data = []byte("{") },
		"no data":       func(e *cehttp.Event) { e.Data = nil },
		"text data":     func(e *cehttp.Event) { e.DataContentType = "text/plain" },
		"version 0.3":   func(e *cehttp.Event) { e.SpecVersion = "0.3" },
	}
	for name, mutate := range cases {
		ev := good
		mutate(&ev)
		rec := httptest.NewRecorder()
		if err := cehttp.Write(rec, http.StatusOK, ev); err == nil {
			t.Fatalf("%s: Write accepted the event", name)
		}
		if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
			t.Fatalf("%s: Write wrote before refusing", name)
		}
	}
	if err := cehttp.Write(httptest.NewRecorder(), 100, good); err == nil {
		t.Fatal("Write accepted status 100")
	}
}

// Errors print their kind, attribute and reason.
func TestErrorMessage(t *testing.T) {
	h := binaryHeaders()
	delete(h, "Ce-Id")
	_, err := cehttp.Decode(rawRequest(h, `{}`))
	if got := err.Error(); !strings.HasPrefix(got, "invalid cloudevent: attribute id: missing or malformed") {
		t.Fatalf("error message %q", got)
	}
}

// invariant 5 (docs/ARCHITECTURE.md): inputs that crash the CloudEvents SDK's
// own decoder (a data_base64 token shorter than a quoted string, met before
// specversion; an empty "ce-" extension header) are refused as invalid, not a
// panic.
func TestDecodeRefusesInputsThatCrashTheSDK(t *testing.T) {
	r := rawRequest(map[string]string{"Content-Type": "application/cloudevents+json"},
		`{"data_base64":1,"specversion":"1.0","id":"i","source":"s","type":"t"}`)
	_, err := cehttp.Decode(r)
	wantError(t, err, cehttp.ErrInvalid, "")

	r = rawRequest(binaryHeaders(), `{}`)
	r.Header["Ce-"] = []string{"x"}
	_, err = cehttp.Decode(r)
	wantError(t, err, cehttp.ErrInvalid, "")

	r = rawRequest(binaryHeaders(), `{}`)
	r.Header["Ce-Subject"] = []string{}
	_, err = cehttp.Decode(r)
	wantError(t, err, cehttp.ErrInvalid, "")
}

// Issue 11 item 9: over HTTP as on Kafka, a structured-mode event with a
// repeated attribute (exactly or in another case), an attribute in
// another case, or a repeated member in its data is refused naming it.
func TestIssue11_9_StructuredEnvelopeIsStrict(t *testing.T) {
	h := map[string]string{"Content-Type": "application/cloudevents+json"}
	const head = `{"specversion":"1.0","id":"r1","source":"s","datacontenttype":"application/json",`
	_, err := cehttp.Decode(rawRequest(h, head+`"type":"qwed.agent.action.verify","Type":"qwed.agent.suspend","data":{}}`))
	wantError(t, err, cehttp.ErrInvalid, "Type")
	_, err = cehttp.Decode(rawRequest(h, head+`"type":"t","subject":"a","subject":"b","data":{}}`))
	wantError(t, err, cehttp.ErrInvalid, "subject")
	_, err = cehttp.Decode(rawRequest(h, head+`"type":"t","data":{"context":{"conversation_id":"a","CONVERSATION_ID":"b"}}}`))
	wantError(t, err, cehttp.ErrInvalid, "data.context.CONVERSATION_ID")
	if _, err := cehttp.Decode(rawRequest(h, head+`"type":"t","data":{"context":{"conversation_id":"a"}}}`)); err != nil {
		t.Fatalf("a strict event is refused: %v", err)
	}
}
