package domain

import (
	"encoding/hex"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestEncodeHexMatchesEncodingHex pins the table-driven hex encoding of
// the digests against encoding/hex on every byte value.
func TestEncodeHexMatchesEncodingHex(t *testing.T) {
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i)
	}
	for _, s := range [][]byte{src, src[:0], src[255:], src[17:49]} {
		dst := make([]byte, 2*len(s))
		encodeHex(dst, s)
		if want := hex.EncodeToString(s); string(dst) != want {
			t.Fatalf("encodeHex(%x) = %s", s, dst)
		}
	}
}

// TestWindowStartMatchesBinarySearch pins windowStart (with its shortcut
// for a window whose oldest time is live) against a plain search for the
// first time strictly after now-1h, on random sorted windows that are
// empty, all live, all expired or mixed, including times exactly at the
// cut. Reproduce a failure from the seed.
func TestWindowStartMatchesBinarySearch(t *testing.T) {
	seed := uint64(3600)
	rng := rand.New(rand.NewPCG(seed, 3))
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 20000; i++ {
		w := make([]time.Time, rng.IntN(12))
		for j := range w {
			off := time.Duration(rng.Int64N(int64(3*time.Hour))) - 2*time.Hour
			if rng.IntN(5) == 0 {
				off = -time.Hour // exactly at the cut: outside the window
			}
			w[j] = now.Add(off)
		}
		sort.Slice(w, func(a, b int) bool { return w[a].Before(w[b]) })
		want := len(w)
		for j := range w {
			if w[j].After(now.Add(-time.Hour)) {
				want = j
				break
			}
		}
		if got := windowStart(w, now); got != want {
			t.Fatalf("seed %d: windowStart(%v) = %d, want %d", seed, w, got, want)
		}
	}
}

// TestSeed000_9_8_TokenMatchesEveryByte pins the word-wise constant-time
// token comparison: equal hashes match, and a difference in any one byte
// (every position, every bit) or any other length never does.
func TestSeed000_9_8_TokenMatchesEveryByte(t *testing.T) {
	h := tokenHash("agent")
	if !tokenMatches(h, h) || !tokenMatches(h, string([]byte(h))) {
		t.Fatal("equal hashes do not match")
	}
	for i := 0; i < len(h); i++ {
		for bit := 0; bit < 8; bit++ {
			b := []byte(h)
			b[i] ^= 1 << bit
			if tokenMatches(string(b), h) || tokenMatches(h, string(b)) {
				t.Fatalf("byte %d bit %d flipped still matches", i, bit)
			}
		}
	}
	for _, s := range []string{"", h[:63], h + "0", h[:56]} {
		if tokenMatches(s, s) || tokenMatches(s, h) {
			t.Fatalf("length %d matched", len(s))
		}
	}
}
