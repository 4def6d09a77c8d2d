package eventjson

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// benchEvent reads one recorded event payload of testdata/bench (as the
// log stores it: no trailing newline).
func benchEvent(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bench", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// BenchmarkDecodeEvent decodes the frequent event shapes: an approved
// decision (the typical 1,180-byte action.decided), a budget denial with
// error details and an execution log.
func BenchmarkDecodeEvent(b *testing.B) {
	for _, name := range []string{"approved", "denied", "executed"} {
		p := benchEvent(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeEvent(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
