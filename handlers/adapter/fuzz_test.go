package adapter

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseAnswer: a business's answer never panics the parser, and what
// it accepts is within the recorded bounds: a printable status, data that
// is compact valid JSON of at most MaxDataBytes, a confirmation token only
// with pending_confirmation.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"status":"completed","data":{"a":[1,2,{"b":null}]}}`,
		`{"status":"pending_confirmation","confirmationToken":"c-1"}`, `{"data":null}`,
		`{"status":"ok","confirmationToken":"x"}`, `[1]`, `{"status":"\u0000"}`, `{"a":1} {}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseAnswer(body)
		if err != nil {
			return
		}
		if !printable(r.Status, MaxStatusBytes) {
			t.Fatalf("status %q accepted", r.Status)
		}
		if r.Data != nil {
			var c bytes.Buffer
			if len(r.Data) > MaxDataBytes || !json.Valid(r.Data) || json.Compact(&c, r.Data) != nil || !bytes.Equal(c.Bytes(), r.Data) {
				t.Fatalf("data %q accepted", r.Data)
			}
		}
		if (r.ConfirmationToken != "") != (r.Status == StatusPendingConfirmation) {
			t.Fatalf("token %q with status %q", r.ConfirmationToken, r.Status)
		}
	})
}
