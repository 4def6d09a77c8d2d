package eventjson_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// FuzzAppendEventMatchesMarshal: for any input, two events built from it
// encode with AppendEvent as json.Marshal encodes them (or fail as it
// fails), and the fast path never answers differently: the input decoded
// as a JSON event (the values a reader of the log holds), and an event
// whose every field is filled from the input's bytes (arbitrary bytes in
// every string, extreme numbers, any time and zone, nil or empty slices
// and maps, error details of every kind, invalid numbers and raw
// messages). The corpus starts from the recorded history's events.
func FuzzAppendEventMatchesMarshal(f *testing.F) {
	for _, p := range recordedHistory(f) {
		f.Add(p)
	}
	f.Add([]byte(`{"error":{"details":{"a":[1e21,1e-7,-0,"\u2028<>&"],"b":{"c":null}}}}`))
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Fuzz(func(t *testing.T, p []byte) {
		var ev domain.Event
		if json.Unmarshal(p, &ev) == nil {
			encodesAsMarshal(t, &ev)
		}
		encodesAsMarshal(t, newBytesFiller(p).event())
	})
}

// recordedHistory returns the payloads of testdata/seeded-history.jsonl.gz
// (a seeded run of the worker, one event a line).
func recordedHistory(tb testing.TB) [][]byte {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "seeded-history.jsonl.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
