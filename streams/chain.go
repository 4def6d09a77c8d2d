package streams

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Link says where a record stands relative to the head of the chain it
// should extend (invariant 3 of docs/ARCHITECTURE.md). Head.Link is the one
// place the chain rule is written; what to do with a record that does not
// extend the chain is the caller's policy: a writer refuses the batch
// (CheckBatch: ErrConflict), the Kafka log's reader skips it (a retried
// produce or a fenced-out writer's fork), VerifyChain and the audit report
// it.
type Link uint8

const (
	// LinkNext: the record's Seq is the head's Seq + 1 and its Prev is the
	// head's Hash; it extends the chain.
	LinkNext Link = iota
	// LinkGap: the record's Seq is past the head's Seq + 1; records are
	// missing before it.
	LinkGap
	// LinkBehind: the record's Seq is at or below the head's; a duplicate
	// (a retried produce) or a record of a fork below the head.
	LinkBehind
	// LinkFork: the record's Seq is the head's Seq + 1 but its Prev is not
	// the head's Hash; another writer's record, or the record before it was
	// altered.
	LinkFork
)

// Link classifies a record with seq and prev against h, the last record of
// a chain (Head{} for an empty one: the first record is seq 1 with an empty
// prev).
func (h Head) Link(seq uint64, prev string) Link { return LinkOf(h.Seq, seq, prev == h.Hash) }

// LinkOf is the chain rule itself, for a caller that holds the hashes as
// bytes and compares them without building strings (the audit, which walks
// every record of a log): a record with seq whose prev is (prevIsHead) or is
// not the hash of the head at headSeq.
func LinkOf(headSeq, seq uint64, prevIsHead bool) Link {
	switch {
	case seq == headSeq+1:
		if prevIsHead {
			return LinkNext
		}
		return LinkFork
	case seq > headSeq+1:
		return LinkGap
	default:
		return LinkBehind
	}
}

// CheckBatch checks that batch extends the chain whose last record is
// head, record after record, as Append must before it writes anything.
// sums[i] receives the SHA-256 of batch[i].Payload (sums must be at least
// as long as batch). The error names the first record that does not extend
// the chain and wraps ErrConflict.
func CheckBatch(head Head, batch []Record, sums [][sha256.Size]byte) error {
	var prevHex [2 * sha256.Size]byte // the hex of sums[i-1], on the stack
	for i, r := range batch {
		link := head.Link(r.Seq, r.Prev)
		if i > 0 {
			// Link against the previous record, comparing its hash
			// without building a string of it.
			hex.Encode(prevHex[:], sums[i-1][:])
			head = Head{Seq: batch[i-1].Seq}
			if link = (Head{Seq: head.Seq, Hash: r.Prev}).Link(r.Seq, r.Prev); link == LinkNext && r.Prev != string(prevHex[:]) {
				link = LinkFork
			}
		}
		switch link {
		case LinkNext:
		case LinkFork:
			want := head.Hash
			if i > 0 {
				want = string(prevHex[:])
			}
			return fmt.Errorf("record %d (seq %d) has prev %q, want %q: %w", i, r.Seq, r.Prev, want, ErrConflict)
		default:
			return fmt.Errorf("record %d has seq %d, want %d: %w", i, r.Seq, head.Seq+1, ErrConflict)
		}
		sums[i] = sha256.Sum256(r.Payload)
	}
	return nil
}
