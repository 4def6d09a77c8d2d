package timetravel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// TransactionState is one transaction as it stood right after one event
// of the log.
type TransactionState struct {
	// Seq and Time are the event's.
	Seq  uint64
	Time time.Time
	// Transaction is the transaction then, as the read side holds it
	// (projections.TxTally: the store's rules).
	Transaction projections.Transaction
}

// ErrNoTransactionAt is returned by TransactionAt for a transaction the
// log had not decided by the seq (or another consumer's).
var ErrNoTransactionAt = errors.New("no such transaction at that seq")

// TransactionAt folds the log from its first event up to seq into the
// transaction txID of consumer, by the read side's rules. Only the
// records that name the transaction (its id is in their bytes: the
// execute, its outcome, its approval's resolution or expiry, the timers
// that release or expire it) are decoded. In Kafka mode the log is the
// consumer's home partition, where every event of its executes is.
func TransactionAt(ctx context.Context, log streams.Log, consumer, txID string, seq uint64) (*TransactionState, error) {
	if seq == 0 || seq > log.Head().Seq {
		return nil, fmt.Errorf("%w: seq %d (head %d)", ErrBeyondHead, seq, log.Head().Seq)
	}
	needle := []byte(`"` + txID + `"`)
	var tally projections.TxTally
	out := &TransactionState{Seq: seq}
	err := log.Read(ctx, 1, func(r streams.Record) error {
		if r.Seq > seq {
			return errFolded
		}
		if r.Seq != seq && !bytes.Contains(r.Payload, needle) {
			return nil
		}
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return fmt.Errorf("decoding log record %d: %w", r.Seq, err)
		}
		if r.Seq == seq {
			out.Time = ev.Time
		}
		tally.Add(ev)
		if r.Seq == seq {
			return errFolded
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFolded) {
		return nil, fmt.Errorf("folding the log up to seq %d: %w", seq, err)
	}
	t := tally.Get(txID)
	if t == nil || t.Consumer != consumer {
		return nil, fmt.Errorf("%w: %s at seq %d", ErrNoTransactionAt, txID, seq)
	}
	out.Transaction = *t
	return out, nil
}
