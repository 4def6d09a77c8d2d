package adapter

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// StateReader reads the committed execute state of a partition
// (projections.Store implements it). A lookup of an entity the state does
// not hold fails with projections.ErrNotFound.
type StateReader interface {
	// Business returns the business id of the registry.
	Business(id string) (*domain.Business, error)
	// OpenTransaction returns the open transaction id.
	OpenTransaction(id string) (*domain.Transaction, error)
	// OpenTransactions returns every open transaction.
	OpenTransactions() ([]domain.Transaction, error)
}

// LogSource is the Source of a partition: its state (the transaction and
// its business) and its log (the request, read from the transaction's
// execute.decided event, which the state names by seq).
type LogSource struct {
	State StateReader
	Log   streams.Log
}

// Executing implements Source: the IDs of the executing transactions, in
// order.
func (s LogSource) Executing(context.Context) ([]string, error) {
	txs, err := s.State.OpenTransactions()
	if err != nil {
		return nil, fmt.Errorf("reading open transactions: %w", err)
	}
	var ids []string
	for _, tx := range txs {
		if tx.Status == domain.TxExecuting {
			ids = append(ids, tx.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Lookup implements Source.
func (s LogSource) Lookup(ctx context.Context, id string) (Call, bool, error) {
	tx, err := s.State.OpenTransaction(id)
	if errors.Is(err, projections.ErrNotFound) {
		return Call{}, false, nil
	}
	if err != nil {
		return Call{}, false, fmt.Errorf("reading transaction %s: %w", id, err)
	}
	if tx.Status != domain.TxExecuting {
		return Call{}, false, nil
	}
	c, err := s.call(ctx, tx)
	if err != nil {
		return Call{}, false, err
	}
	return c, true, nil
}

// call builds the call of executing transaction tx.
func (s LogSource) call(ctx context.Context, tx *domain.Transaction) (Call, error) {
	b, err := s.State.Business(tx.BusinessID)
	if errors.Is(err, projections.ErrNotFound) {
		b, err = nil, nil
	}
	if err != nil {
		return Call{}, fmt.Errorf("reading business %s of transaction %s: %w", tx.BusinessID, tx.ID, err)
	}
	d := attest.ExecuteDecision{
		TransactionID: tx.ID, Consumer: tx.Consumer, AgentID: tx.AgentID, BusinessID: tx.BusinessID,
		AmountCents: tx.AmountCents, Currency: tx.Currency, RequestHash: tx.RequestHash,
	}
	if !tx.SameBusiness(b) {
		// Deleted since the decision, or registered again by another
		// owner: nowhere to call; the call fails.
		return Call{Decision: d, DecidedAt: tx.CreatedAt}, nil
	}
	ev, err := handlers.ReadEvent(ctx, s.Log, tx.DecidedSeq)
	if err != nil {
		return Call{}, fmt.Errorf("reading the decision of transaction %s: %w", tx.ID, err)
	}
	if ev.Type != domain.EvExecuteDecided || ev.Transaction == nil || ev.Transaction.ID != tx.ID ||
		ev.Command == nil || ev.Command.Execute == nil {
		return Call{}, fmt.Errorf("transaction %s: the event at seq %d is not its decision", tx.ID, tx.DecidedSeq)
	}
	return Call{
		Endpoint:  b.Endpoint,
		Request:   ev.Command.Execute.Request,
		Decision:  d,
		DecidedAt: ev.Time,
	}, nil
}
