package timetravel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
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
	var tally projections.TxTally
	out := &TransactionState{Seq: seq}
	var err error
	out.Time, err = foldUpTo(ctx, log, seq, []byte(`"`+txID+`"`), func(ev *domain.Event, _ bool) { tally.Add(ev) })
	if err != nil {
		return nil, err
	}
	t := tally.Get(txID)
	if t == nil || t.Consumer != consumer {
		return nil, fmt.Errorf("%w: %s at seq %d", ErrNoTransactionAt, txID, seq)
	}
	out.Transaction = *t
	return out, nil
}
