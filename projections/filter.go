package projections

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// requestFilter is an in-memory Bloom filter over the request index: a
// request it does not hold is certainly not in the store, so the worker's
// lookup of a new request (almost every command) costs no Pebble read. It
// is a superset of the index (keys are added before their batch commits);
// a false positive costs one Pebble read. Safe for concurrent use.
type requestFilter struct {
	seed  maphash.Seed
	words []atomic.Uint64
	mask  uint64
}

// filterHashes is the number of bits set per key.
const filterHashes = 4

// newRequestFilter sizes a filter for n keys and growth (16 bits a key,
// at least 2^24 bits).
func newRequestFilter(n int) *requestFilter {
	size := uint64(1) << 24
	for size < uint64(n)*16 {
		size <<= 1
	}
	return &requestFilter{seed: maphash.MakeSeed(), words: make([]atomic.Uint64, size/64), mask: size - 1}
}

func (f *requestFilter) hashes(k []byte) (uint64, uint64) {
	h := maphash.Bytes(f.seed, k)
	return h, bits.RotateLeft64(h, 32) | 1
}

func (f *requestFilter) add(k []byte) {
	h1, h2 := f.hashes(k)
	for i := uint64(0); i < filterHashes; i++ {
		b := (h1 + i*h2) & f.mask
		f.words[b/64].Or(1 << (b % 64))
	}
}

func (f *requestFilter) mayHave(k []byte) bool {
	h1, h2 := f.hashes(k)
	for i := uint64(0); i < filterHashes; i++ {
		b := (h1 + i*h2) & f.mask
		if f.words[b/64].Load()&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}
