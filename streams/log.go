package streams

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// Record is one entry of a log partition. Payload is the encoded event; it
// already contains Seq and Prev (the encoder wrote them), the log checks
// the Record fields and stores Payload verbatim.
type Record struct {
	Seq     uint64
	Prev    string
	Payload []byte
}

// Hash returns the hex SHA-256 of the payload: the next record's Prev.
func (r Record) Hash() string { return HashPayload(r.Payload) }

// HashPayload returns the hex SHA-256 of an encoded record payload.
func HashPayload(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

// Head is the position of the last record of a partition: Seq 0 and Hash ""
// for an empty one.
type Head struct {
	Seq  uint64
	Hash string
}

// ErrConflict is returned by Append when a record does not extend the chain
// (wrong Seq or Prev): another writer got there first, or the writer lost
// its place. Nothing of the batch was written.
var ErrConflict = errors.New("record does not extend the log chain")

// ErrClosed is returned by operations on a closed log.
var ErrClosed = errors.New("log closed")

// ErrNoSpace is returned by a write that was refused because the disk
// holding the data is full (or below the reserve the store keeps free for
// its own work): nothing of it was written, and the same write succeeds
// once space is freed. See streams/diskspace.
var ErrNoSpace = errors.New("no space left on the disk")

// Log is one partition of the append-only event log.
//
// Append is safe to call from one writer at a time; Read and Head may run
// concurrently with Append. Records passed to Append may not be modified
// until it returns; slices handed to Read's callback are only valid during
// the call.
type Log interface {
	// Append writes the batch atomically and durably (all or nothing) and
	// returns only when it is on stable storage.
	Append(ctx context.Context, batch []Record) error
	// Head returns the last record's position.
	Head() Head
	// Read calls fn for every record with Seq >= from, in order, up to the
	// head at the time of the call. An error from fn stops the read and is
	// returned.
	Read(ctx context.Context, from uint64, fn func(Record) error) error
	// Close releases the log.
	Close() error
}

// ChainReader is implemented by a Log whose Read checks the chain itself:
// every record it passes after the first has a Prev equal to the hash of
// the payload of the record passed before it (the Kafka log follows the
// chain to skip a zombie writer's records, so it hashes each one anyway).
// A reader that checks the chain from a known head then needs to compare
// only the first record's Prev, and hash only the records whose hash it
// keeps. ReadChecksChain reports whether this Log does.
type ChainReader interface {
	ReadChecksChain() bool
}

// KeptPayloads is implemented by a Log whose Read hands fn payloads in
// fresh memory that fn may keep (the Kafka log's are copies of the fetch
// response), unlike the Log contract's default (only valid during the
// call). A reader that keeps payloads need not copy them then.
// ReadKeepsPayloads reports whether this Log does.
type KeptPayloads interface {
	ReadKeepsPayloads() bool
}
