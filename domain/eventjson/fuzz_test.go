package eventjson

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeEventMatchesStandardLibrary: for any input, DecodeEvent fails
// exactly when encoding/json fails, and otherwise decodes the same event;
// so does the fast path whenever it answers. The corpus starts from real
// events (the recorded history, the benchmark events), events of every
// type with every field set, and the hand-written edge cases.
func FuzzDecodeEventMatchesStandardLibrary(f *testing.F) {
	for _, p := range readHistory(f) {
		f.Add(p)
	}
	for _, name := range []string{"approved", "denied", "executed", "fallback"} {
		f.Add(benchEvent(f, name))
	}
	for _, ev := range fullEvents() {
		p, err := json.Marshal(ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	for _, c := range edgeCases(f) {
		f.Add(c.p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		sameAsStandardLibrary(t, p)
	})
}
