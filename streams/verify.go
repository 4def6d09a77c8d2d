package streams

import (
	"context"
	"errors"
	"fmt"
)

// ErrBrokenChain is matched (errors.Is) by every *ChainError: the log's
// records do not form the chain of invariant 3 of docs/ARCHITECTURE.md.
var ErrBrokenChain = errors.New("log chain is broken")

// ErrTooLarge is returned by Append when a record or a batch exceeds a
// limit of the log implementation. Nothing of the batch was written.
var ErrTooLarge = errors.New("record or batch exceeds the log's limit")

// ChainError reports the first position at which a log stops being a chain.
// It matches ErrBrokenChain with errors.Is.
type ChainError struct {
	// Seq is the position of the first record (or the first missing
	// record) that does not extend the chain.
	Seq uint64
	// Reason says what is wrong at Seq, in words.
	Reason string
}

// Error implements the error interface.
func (e *ChainError) Error() string {
	return fmt.Sprintf("log chain broken at seq %d: %s", e.Seq, e.Reason)
}

// Is reports whether target is ErrBrokenChain.
func (e *ChainError) Is(target error) bool { return target == ErrBrokenChain }

// VerifyChain reads log from seq from (0 is read as 1) up to the head
// observed when it starts, and checks that the records form a chain: Seq
// increases by one with no gap, each Prev is the hash of the previous
// record's payload ("" for seq 1), and the last record checked hashes to the
// observed head. When from > 1 the record before it is read too, to anchor
// the first Prev. It returns nil for an intact range (and for from beyond
// the head), a *ChainError for the first broken position, and the read or
// context error otherwise. Memory use does not depend on the log's length.
func VerifyChain(ctx context.Context, log Log, from uint64) error {
	if from == 0 {
		from = 1
	}
	head := log.Head()
	if from > head.Seq {
		return nil
	}
	start := from - 1 // the anchor record; 0 = the start of the log
	if start == 0 {
		start = 1
	}
	next := start  // the Seq the next record must have
	prevHash := "" // the hash the next record's Prev must equal
	anchored := from == 1
	err := log.Read(ctx, start, func(r Record) error {
		if r.Seq > head.Seq {
			return errStopVerify
		}
		link := Head{Seq: next - 1, Hash: prevHash}.Link(r.Seq, r.Prev)
		if link == LinkFork && !anchored {
			link = LinkNext // the anchor's own Prev is checked by no one here
		}
		switch link {
		case LinkBehind:
			return &ChainError{Seq: r.Seq, Reason: fmt.Sprintf("record out of order after seq %d", next-1)}
		case LinkGap:
			return &ChainError{Seq: next, Reason: fmt.Sprintf("record missing (next record read is seq %d)", r.Seq)}
		case LinkFork:
			return &ChainError{Seq: r.Seq, Reason: fmt.Sprintf("prev %q does not match the hash %q of seq %d", r.Prev, prevHash, r.Seq-1)}
		}
		anchored = true
		prevHash = r.Hash()
		next++
		return nil
	})
	if err != nil && !errors.Is(err, errStopVerify) {
		if _, ok := errors.AsType[*ChainError](err); ok {
			return err
		}
		return fmt.Errorf("reading log from seq %d: %w", start, err)
	}
	if next <= head.Seq {
		return &ChainError{Seq: next, Reason: fmt.Sprintf("record missing (head is seq %d)", head.Seq)}
	}
	if prevHash != head.Hash {
		return &ChainError{Seq: head.Seq, Reason: fmt.Sprintf("record hash %q does not match the head hash %q", prevHash, head.Hash)}
	}
	return nil
}

// errStopVerify ends VerifyChain's read at the head it observed.
var errStopVerify = errors.New("verification reached the observed head")
