package streams

import (
	"bytes"
	"testing"
)

// An Arena's allocations never overlap and cannot grow into each other;
// large ones get memory of their own.
func TestArenaAllocationsAreDisjoint(t *testing.T) {
	var a Arena
	var got [][]byte
	for i := range 200 {
		n := (i * 37) % 3000
		if i%50 == 49 {
			n = ArenaChunk / 2
		}
		p := bytes.Repeat([]byte{byte(i)}, n)
		b := a.Copy(p)
		if !bytes.Equal(b, p) || cap(b) != n {
			t.Fatalf("copy %d: len %d cap %d, want %d bytes of %d", i, len(b), cap(b), n, i)
		}
		got = append(got, b)
	}
	// Appending to one must not write into the next.
	_ = append(got[3], 0xFF)
	for i, b := range got {
		for _, c := range b {
			if c != byte(i) {
				t.Fatalf("allocation %d was overwritten", i)
			}
		}
	}
}
