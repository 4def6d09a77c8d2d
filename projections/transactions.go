package projections

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

// The transaction history (issue 14): every execute the gate decided, by
// consumer, with the status its later events gave it. It is derived from
// the store as of the earlier batches, like the activity log, and kept
// only by a store that keeps activities (the embedded gate's, the Kafka
// read model; not the Kafka partition workers'):
//
//	j + tx id                                   -> Transaction (JSON)
//	z + consumer + created time(8) + seq(8)     -> tx id
//
// The record holds the transaction as its last event states it (an
// execute.decided, an execute.completed, an approval.resolved of an
// execute approval carry the whole transaction; an approvals.expired and
// an execute.timers name it, and the record takes the status they give).
// The index lists a consumer's transactions in the order they were
// decided; a consumer's executes are all decided on its home partition,
// so (time, seq) is unique within the consumer.
const (
	tTx     = 'j'
	tTxTime = 'z'
)

// TxExecuting is the status of a transaction the business has not
// answered yet (AwaitTransaction waits for it to change).
const TxExecuting = domain.TxExecuting

// Transaction is one execute as the read side holds it: the transaction
// as of its last event, where and when it was decided, and when it last
// changed.
type Transaction struct {
	domain.Transaction
	// Partition and Seq are the execute.decided event's (its time is
	// the transaction's CreatedAt).
	Partition int32  `json:"partition"`
	Seq       uint64 `json:"seq"`
	// UpdatedSeq and UpdatedAt are the last event's that changed it.
	UpdatedSeq uint64    `json:"updated_seq"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Error is the refusal of a blocked transaction (the policy and the
	// limit), or the failure of a failed one.
	Error *domain.Error `json:"error,omitempty"`
}

// txBatch holds the transaction records a projection batch read or
// created, written back by flushTxs, in the order added.
type txBatch struct {
	m    map[string]*Transaction
	keys []string
}

// txKey is the key of transaction id's record.
func txKey(id string) []byte { return key(tTx, id) }

// txTimeKey is the index key of a transaction of consumer decided at t
// by the event at seq.
func txTimeKey(consumer string, t time.Time, seq uint64) []byte {
	b := key(tTxTime, consumer)
	b = binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
	return binary.BigEndian.AppendUint64(b, seq)
}

// tx returns the record of id as of the batch (nil when there is none).
func (w *batchWriter) tx(id string) (*Transaction, error) {
	if t, ok := w.txs.m[id]; ok {
		return t, nil
	}
	t := new(Transaction)
	switch err := w.s.getJSONHeld(txKey(id), t); {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading transaction %s: %w", id, err)
	}
	w.addTx(t)
	return t, nil
}

func (w *batchWriter) addTx(t *Transaction) {
	if w.txs.m == nil {
		w.txs.m = map[string]*Transaction{}
	}
	if _, ok := w.txs.m[t.ID]; !ok {
		w.txs.keys = append(w.txs.keys, t.ID)
	}
	w.txs.m[t.ID] = t
}

// txRecords is where a fold of transaction events reads and keeps the
// records: the store's batch (batchWriter), or memory (TxTally).
type txRecords interface {
	// tx returns the record of id (nil when there is none); a record it
	// returns may be changed in place, and is kept.
	tx(id string) (*Transaction, error)
	// decided keeps rec, a record the event at rec.Seq created; prev is
	// the record it replaces (nil: none).
	decided(rec, prev *Transaction) error
}

// txEvent writes what ev changes in the transaction history.
func (w *batchWriter) txEvent(ev *domain.Event) error {
	if w.s.noActivity {
		return nil
	}
	return foldTx(w, ev)
}

// decided keeps a new record and its index entry (the one of the record
// it replaces is deleted).
func (w *batchWriter) decided(rec, prev *Transaction) error {
	if prev != nil {
		if err := w.b.Delete(txTimeKey(prev.Consumer, prev.CreatedAt, prev.Seq), nil); err != nil {
			return fmt.Errorf("deleting a transaction's index entry: %w", err)
		}
	}
	if err := w.b.Set(txTimeKey(rec.Consumer, rec.CreatedAt, rec.Seq), []byte(rec.ID), nil); err != nil {
		return fmt.Errorf("indexing a transaction: %w", err)
	}
	w.addTx(rec)
	return nil
}

// foldTx applies ev to the transactions of rs: an event carrying a
// transaction (execute.decided, execute.completed, an approval.resolved
// of an execute approval) sets it whole, an execute.decided creating the
// record; execute.timers and approvals.expired set the status of those
// they name.
func foldTx(rs txRecords, ev *domain.Event) error {
	if t := ev.Transaction; t != nil {
		rec, err := rs.tx(t.ID)
		if err != nil {
			return err
		}
		created := ev.Time.UTC()
		if ev.Type == domain.EvExecuteDecided || rec == nil {
			prev := rec
			if prev != nil && prev.Seq == ev.Seq && prev.Partition == ev.Partition {
				prev = nil // the same event again: the index entry stays
			}
			rec = &Transaction{Partition: ev.Partition, Seq: ev.Seq}
			rec.Transaction = *t
			if rec.CreatedAt.IsZero() {
				rec.CreatedAt = created
			}
			if err := rs.decided(rec, prev); err != nil {
				return err
			}
		}
		created = rec.CreatedAt
		rec.Transaction = *t
		if rec.CreatedAt.IsZero() {
			rec.CreatedAt = created
		}
		if ev.Error != nil {
			rec.Error = ev.Error
		}
		rec.UpdatedSeq, rec.UpdatedAt = ev.Seq, ev.Time.UTC()
		return nil
	}
	status := func(id, s string) error {
		rec, err := rs.tx(id)
		if err != nil || rec == nil {
			return err
		}
		rec.Status = s
		rec.UpdatedSeq, rec.UpdatedAt = ev.Seq, ev.Time.UTC()
		return nil
	}
	if tm := ev.Timers; tm != nil {
		for _, id := range tm.Released {
			if err := status(id, domain.TxExecuting); err != nil {
				return err
			}
		}
		for _, id := range tm.Expired {
			if err := status(id, domain.TxExpired); err != nil {
				return err
			}
		}
	}
	resolved := func(a *domain.Approval) error {
		if a.TransactionID == "" {
			return nil
		}
		switch a.Status {
		case domain.ApprovalApproved:
			if tx := ev.Transaction; tx != nil && tx.ID == a.TransactionID && tx.Status == domain.TxQueued {
				return status(a.TransactionID, domain.TxQueued) // approved outside its time window
			}
			return status(a.TransactionID, domain.TxExecuting)
		case domain.ApprovalDenied:
			return status(a.TransactionID, domain.TxDenied)
		case domain.ApprovalExpired:
			return status(a.TransactionID, domain.TxExpired)
		}
		return nil
	}
	if ev.Resolved != nil {
		if err := resolved(&ev.Resolved.Approval); err != nil {
			return err
		}
	}
	if ev.Expired != nil {
		for i := range ev.Expired.Approvals {
			if err := resolved(&ev.Expired.Approvals[i].Approval); err != nil {
				return err
			}
		}
	}
	return nil
}

// TxTally folds transaction events into records in memory, by the
// store's rules (foldTx): time travel and the compliance report show
// transactions as the store does. The zero value is empty.
type TxTally struct {
	m map[string]*Transaction
	// order holds the ids in the order they were first decided.
	order []string
}

func (t *TxTally) tx(id string) (*Transaction, error) { return t.m[id], nil }

func (t *TxTally) decided(rec, prev *Transaction) error {
	if t.m == nil {
		t.m = map[string]*Transaction{}
	}
	if _, ok := t.m[rec.ID]; !ok {
		t.order = append(t.order, rec.ID)
	}
	t.m[rec.ID] = rec
	return nil
}

// Add folds ev.
func (t *TxTally) Add(ev *domain.Event) {
	_ = foldTx(t, ev) // memory: no errors
}

// Get returns transaction id as folded (nil when none).
func (t *TxTally) Get(id string) *Transaction { return t.m[id] }

// SetStatus sets the status of transaction id, as of the event at seq and
// time at (a reader deriving what an event it does not see would do: the
// compliance report expires an execute approval from the agent's own
// events).
func (t *TxTally) SetStatus(id, status string, seq uint64, at time.Time) {
	if rec := t.m[id]; rec != nil {
		rec.Status, rec.UpdatedSeq, rec.UpdatedAt = status, seq, at.UTC()
	}
}

// All returns the transactions in the order they were decided.
func (t *TxTally) All() []*Transaction {
	out := make([]*Transaction, 0, len(t.order))
	for _, id := range t.order {
		out = append(out, t.m[id])
	}
	return out
}

// flushTxs writes the transaction records the batch changed.
func (w *batchWriter) flushTxs() error {
	for _, id := range w.txs.keys {
		if err := w.setJSON(txKey(id), w.txs.m[id]); err != nil {
			return err
		}
	}
	return nil
}

// Transaction returns the transaction id of consumer (of any consumer for
// domain.AdminPrincipal); another consumer's is ErrNotFound, as is one the
// store does not hold.
func (s *Store) Transaction(consumer, id string) (Transaction, error) {
	var t Transaction
	if err := s.getJSON(txKey(id), &t); err != nil {
		return Transaction{}, err
	}
	if consumer != domain.AdminPrincipal && t.Consumer != consumer {
		return Transaction{}, ErrNotFound
	}
	return t, nil
}

// TxFilter selects transactions: each set member must match (Category:
// one of the transaction's categories); From and To bound the time it
// was decided, [From, To) (zero: unbounded).
type TxFilter struct {
	Agent, Business, Category, Status string
	From, To                          time.Time
}

// Match reports whether t passes the filter.
func (f *TxFilter) Match(t *Transaction) bool {
	switch {
	case f.Agent != "" && t.AgentID != f.Agent,
		f.Business != "" && t.BusinessID != f.Business,
		f.Status != "" && t.Status != f.Status,
		f.Category != "" && !slices.Contains(t.Categories, f.Category),
		!f.From.IsZero() && t.CreatedAt.Before(f.From),
		!f.To.IsZero() && !t.CreatedAt.Before(f.To):
		return false
	}
	return true
}

// MaxTxScan bounds the index entries one page of transactions reads: a
// filter that matches few of a consumer's transactions answers a shorter
// page (maybe an empty one) with a cursor to read on from, never a scan of
// the whole history.
const MaxTxScan = 10_000

// TxPage is one page of a consumer's transactions, newest first. Next is
// set when more may follow: pass it as the after of the next page.
type TxPage struct {
	Transactions []Transaction
	Next         string
}

// Transactions returns a page of consumer's transactions matching f,
// newest first, after the cursor after ("" from the newest), at most limit
// of them and MaxPageBytes of JSON, reading at most MaxTxScan index
// entries. A cursor is opaque (base64url); one that is not a page's Next
// is an error wrapping ErrBadCursor.
func (s *Store) Transactions(consumer string, f TxFilter, after string, limit int) (TxPage, error) {
	defer s.hold()()
	var page TxPage
	prefix := key(tTxTime, consumer)
	lo, hi := prefix, prefixEnd(prefix)
	if !f.From.IsZero() {
		lo = txTimeKey(consumer, f.From, 0)
	}
	if !f.To.IsZero() {
		hi = txTimeKey(consumer, f.To, 0)
	}
	if after != "" {
		c, err := base64.RawURLEncoding.DecodeString(after)
		if err != nil || len(c) != 16 {
			return page, fmt.Errorf("%w: %q", ErrBadCursor, after)
		}
		// The cursor is the key of the first transaction the next page
		// holds: the page reads the keys up to it, inclusive.
		if k := append(append(append([]byte(nil), prefix...), c...), 0); string(k) < string(hi) {
			hi = k
		}
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return page, fmt.Errorf("listing transactions: %w", err)
	}
	defer it.Close()
	pg := newPager(limit, MaxPageBytes)
	cursor := func(k []byte) string { return base64.RawURLEncoding.EncodeToString(k[len(prefix):]) }
	scanned := 0
	for it.Last(); it.Valid(); it.Prev() {
		k := it.Key()
		if scanned == MaxTxScan {
			page.Next = cursor(k)
			break
		}
		scanned++
		var t Transaction
		if err := s.getJSONHeld(txKey(string(it.Value())), &t); err != nil {
			return page, fmt.Errorf("reading a transaction of the index: %w", err)
		}
		if !f.Match(&t) {
			continue
		}
		more, err := pg.fits(&t)
		if err != nil {
			return page, err
		}
		if !more {
			page.Next = cursor(k)
			break
		}
		page.Transactions = append(page.Transactions, t)
	}
	if err := it.Error(); err != nil {
		return page, fmt.Errorf("listing transactions: %w", err)
	}
	return page, nil
}

// ErrBadCursor marks a page cursor that no page gave.
var ErrBadCursor = errors.New("not a page cursor")

// ScanTransactions calls fn for each of consumer's transactions decided in
// [from, to), oldest first, and stops with ErrTooMany (fn having seen the
// first max) when there are more than max.
func (s *Store) ScanTransactions(consumer string, from, to time.Time, max int, fn func(*Transaction) error) error {
	defer s.hold()()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: txTimeKey(consumer, from, 0), UpperBound: txTimeKey(consumer, to, 0)})
	if err != nil {
		return fmt.Errorf("reading transactions: %w", err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n == max {
			return ErrTooMany
		}
		n++
		var t Transaction
		if err := s.getJSONHeld(txKey(string(it.Value())), &t); err != nil {
			return fmt.Errorf("reading a transaction of the index: %w", err)
		}
		if err := fn(&t); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("reading transactions: %w", err)
	}
	return nil
}

// ErrTooMany is returned by ScanTransactions past its bound.
var ErrTooMany = errors.New("too many transactions")
