package cehttp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentgate/agentgate/streams/cehttp"
)

// FuzzDecode feeds Decode arbitrary headers and bodies: it never panics,
// every error is a typed *cehttp.Error, every accepted event obeys the
// package's rules, and an accepted event re-encoded in its mode decodes to
// itself.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"ce_binary_request.http", "ce_structured_request.http"} {
		raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			f.Fatalf("reading fixture: %v", err)
		}
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			f.Fatalf("parsing fixture: %v", err)
		}
		body, _ := io.ReadAll(r.Body)
		var buf bytes.Buffer
		if err := r.Header.Write(&buf); err != nil {
			f.Fatalf("writing headers: %v", err)
		}
		f.Add(buf.String(), body)
	}
	f.Add("Content-Type: application/cloudevents+json\r\n", []byte(`{"data_base64":1,"specversion":"1.0","id":"i","source":"s","type":"t"}`))
	f.Add("Content-Type: application/cloudevents+json\r\n", []byte(`{"specversion":"1.0","id":"i","source":"s","type":"t","correlationid":1.5,"data":{}}`))
	f.Add("Ce-Specversion: 1.0\r\nCe-: x\r\nCe-Id: i\r\nCe-Source: s\r\nCe-Type: t\r\nContent-Type: application/json\r\n", []byte(`{}`))
	f.Add("Ce-Specversion: 1.0\r\nCe-Id: i\r\nCe-Source: s\r\nCe-Type: t\r\nCe-Time: not a time\r\nContent-Type: application/json\r\n", []byte(`[]`))
	f.Add("Content-Type: application/cloudevents-batch+json\r\n", []byte(`[]`))

	f.Fuzz(func(t *testing.T, headers string, body []byte) {
		h := parseHeaders(headers)
		r := &http.Request{Method: http.MethodPost, Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		ev, err := cehttp.Decode(r)
		if err != nil {
			var e *cehttp.Error
			if !errors.As(err, &e) || !(errors.Is(err, cehttp.ErrInvalid) || errors.Is(err, cehttp.ErrTooLarge)) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if ev.SpecVersion != "1.0" || ev.ID == "" || ev.Source == "" || ev.Type == "" {
			t.Fatalf("accepted an event without required attributes: %+v", ev)
		}
		if ev.Mode != cehttp.ModeBinary && ev.Mode != cehttp.ModeStructured {
			t.Fatalf("accepted an event with mode %v", ev.Mode)
		}
		if len(ev.Data) == 0 || !json.Valid(ev.Data) || len(body) > cehttp.MaxBodyBytes {
			t.Fatalf("accepted bad data %q (body %d bytes)", ev.Data, len(body))
		}
		req, err := cehttp.NewRequest(context.Background(), "http://gate.test/events", ev)
		if err != nil {
			t.Fatalf("re-encoding an accepted event %+v: %v", ev, err)
		}
		again, err := cehttp.Decode(req)
		if err != nil {
			t.Fatalf("decoding a re-encoded event %+v: %v", ev, err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("re-encoding changed the event\n got %+v\nwant %+v", again, ev)
		}
	})
}

// parseHeaders reads "Name: value" lines leniently; names are kept as
// written when they are not canonical-able, as a hand-built header map
// may hold them.
func parseHeaders(s string) http.Header {
	h := http.Header{}
	for line := range bytes.SplitSeq([]byte(s), []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key := http.CanonicalHeaderKey(string(name))
		h[key] = append(h[key], string(bytes.TrimSpace(value)))
	}
	return h
}
