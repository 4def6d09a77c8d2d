package streams

// Arena hands out payload memory from shared chunks: one allocation per
// ArenaChunk bytes of records rather than one per record, for readers that
// keep many payloads (a restore, a replay). What it hands out is never
// handed out again, so a holder may keep it as long as it likes; a kept
// payload keeps its chunk alive. The zero Arena is ready; it is not safe
// for concurrent use.
type Arena struct{ free []byte }

// ArenaChunk is the size of an Arena's chunks; a request of more than a
// quarter of it gets memory of its own.
const ArenaChunk = 64 << 10

// Alloc returns n bytes of fresh memory (its capacity is n).
func (a *Arena) Alloc(n int) []byte {
	if n > len(a.free) {
		if n > ArenaChunk/4 {
			return make([]byte, n)
		}
		a.free = make([]byte, ArenaChunk)
	}
	b := a.free[:n:n]
	a.free = a.free[n:]
	return b
}

// Copy returns a copy of p in fresh memory.
func (a *Arena) Copy(p []byte) []byte {
	b := a.Alloc(len(p))
	copy(b, p)
	return b
}
