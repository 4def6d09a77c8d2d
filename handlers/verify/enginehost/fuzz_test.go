package enginehost

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadAnswer pins that no bytes from a worker make the host panic:
// a frame is read and decoded to an outcome, or refused with an error.
func FuzzReadAnswer(f *testing.F) {
	var b bytes.Buffer
	_ = writeFrame(&b, answer{ID: 3, Status: "VERIFIED", Result: json.RawMessage(`{"a":1}`),
		Err: &problem{Code: "X", Details: map[string]json.RawMessage{"k": json.RawMessage(`[1]`)}}})
	f.Add(b.Bytes())
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 4, 'n', 'u', 'l', 'l'})
	f.Fuzz(func(t *testing.T, in []byte) {
		var a answer
		if err := readFrame(bytes.NewReader(in), &a); err != nil {
			return
		}
		if _, err := json.Marshal(a.outcome()); err != nil {
			t.Fatalf("an outcome decoded from a frame does not encode: %v", err)
		}
	})
}
