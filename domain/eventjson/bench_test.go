package eventjson

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/domain"
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
// error details, an execution log, and the fallback: the typical decision
// with its reserved amount quoted ("0.01", which domain.USD accepts and the
// fast path leaves to encoding/json).
func BenchmarkDecodeEvent(b *testing.B) {
	for _, name := range []string{"approved", "denied", "executed", "fallback"} {
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

// BenchmarkDecodeEventJsoniter decodes the same events as DecodeEvent did
// before the fast path (json-iterator configured as the standard
// library), for comparison in the same run.
func BenchmarkDecodeEventJsoniter(b *testing.B) {
	for _, name := range []string{"approved", "denied", "executed", "fallback"} {
		p := benchEvent(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				ev := new(domain.Event)
				if err := API.Unmarshal(p, ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
