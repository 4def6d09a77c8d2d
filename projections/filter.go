package projections

import (
	"hash/maphash"
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

// filterHashes is the number of bits set per key, all in one 64-bit word
// (a blocked Bloom filter: one cache miss per lookup or add rather than
// filterHashes; at 16 bits a key the false positive rate is about 0.4 %
// (TestRequestFilterHasNoFalseNegativesAndFewFalsePositives) rather than
// 0.1 %, one more Pebble read in 300 lookups).
const filterHashes = 6

// newRequestFilter sizes a filter for n keys and growth (16 bits a key,
// at least 2^24 bits).
func newRequestFilter(n int) *requestFilter {
	size := uint64(1) << 24
	for size < uint64(n)*16 {
		size <<= 1
	}
	return &requestFilter{seed: maphash.MakeSeed(), words: make([]atomic.Uint64, size/64), mask: size/64 - 1}
}

// slot returns the word of k and the filterHashes bits k sets in it: the
// word from the hash's low bits, each bit from six of its top 36 bits (the
// two do not overlap below 2^28 words, a 2 GiB filter).
func (f *requestFilter) slot(k []byte) (*atomic.Uint64, uint64) {
	h := maphash.Bytes(f.seed, k)
	var m uint64
	for i := 0; i < filterHashes; i++ {
		m |= 1 << ((h >> (64 - 6*(i+1))) & 63)
	}
	return &f.words[h&f.mask], m
}

func (f *requestFilter) add(k []byte) {
	w, m := f.slot(k)
	if w.Load()&m != m {
		w.Or(m)
	}
}

func (f *requestFilter) mayHave(k []byte) bool {
	w, m := f.slot(k)
	return w.Load()&m == m
}
