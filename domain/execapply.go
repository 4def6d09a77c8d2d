package domain

import (
	"maps"
	"slices"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// The fold of the consumer policy engine's events into ExecState.

// execState returns s.Exec, made on first use.
func execState(s *State) *ExecState {
	if s.Exec == nil {
		s.Exec = &ExecState{}
	}
	return s.Exec
}

// consumer returns the state of consumer c, made on first use.
func (x *ExecState) consumer(c string) *ConsumerExec {
	if x.Consumers == nil {
		x.Consumers = map[string]*ConsumerExec{}
	}
	ce := x.Consumers[c]
	if ce == nil {
		ce = &ConsumerExec{}
		x.Consumers[c] = ce
	}
	return ce
}

// applyExec folds an event of the consumer policy engine; it reports
// whether ev was one.
func applyExec(s *State, ev *Event) bool {
	switch ev.Type {
	case EvExecutePrepared:
		if p := ev.Prepared; p != nil {
			x := execState(s)
			if x.Tokens == nil {
				x.Tokens = map[string]*ExecutePrepared{}
			}
			if _, dup := x.Tokens[p.TokenHash]; !dup {
				c := *p
				x.Tokens[p.TokenHash] = &c
				x.consumer(p.Consumer).Tokens++
			}
		}
	case EvExecuteDecided:
		if ev.Prepared != nil {
			dropToken(s, ev.Prepared.TokenHash)
		}
		if tx := ev.Transaction; tx != nil {
			openTransaction(s, tx, ev.Seq)
		}
	case EvExecuteCompleted:
		if tx := ev.Transaction; tx != nil {
			closeTransaction(s, tx.ID, tx.Status != TxCompleted)
		}
	case EvExecuteTimers:
		if t := ev.Timers; t != nil {
			for _, h := range t.TokensExpired {
				dropToken(s, h)
			}
			for _, id := range t.Released {
				startExecuting(s, id, ev.Time.UTC())
			}
			for _, id := range t.Expired {
				closeTransaction(s, id, true)
			}
		}
	default:
		return false
	}
	return true
}

// dropToken forgets a consumed or expired confirmation token.
func dropToken(s *State, hash string) {
	x := s.Exec
	if x == nil {
		return
	}
	if tok := x.Tokens[hash]; tok != nil {
		delete(x.Tokens, hash)
		if c := x.Consumers[tok.Consumer]; c != nil && c.Tokens > 0 {
			c.Tokens--
		}
	}
}

// openTransaction folds a decided transaction: executing, pending_approval
// and queued ones are open (a pending one holds an execute approval);
// blocked ones change nothing.
func openTransaction(s *State, tx *Transaction, seq uint64) {
	switch tx.Status {
	case TxExecuting, TxPendingApproval, TxQueued:
	default:
		return
	}
	x := execState(s)
	if x.Open == nil {
		x.Open = map[string]*Transaction{}
	}
	if _, dup := x.Open[tx.ID]; dup {
		return
	}
	c := cloneTransaction(tx)
	c.Notices, c.Findings = nil, nil
	c.DecidedSeq = seq
	if b := x.Businesses[tx.BusinessID]; b != nil {
		c.BusinessOwner = b.Owner
	}
	x.Open[tx.ID] = c
	ce := x.consumer(tx.Consumer)
	ce.Open++
	if tx.AmountCents > 0 {
		if ce.Ledger == nil {
			ce.Ledger = &policy.Ledger{}
		}
		if tx.Status == TxExecuting {
			ce.Ledger.Reserve(tx.AgentID, tx.BusinessID, tx.CreatedAt, tx.AmountCents)
		} else {
			ce.Ledger.Hold(tx.AgentID, tx.BusinessID, tx.AmountCents) // until sent: startExecuting
		}
	}
	switch tx.Status {
	case TxExecuting:
		notePair(x, c)
	case TxPendingApproval:
		if _, dup := s.Approvals[tx.ID]; !dup {
			s.Approvals[tx.ID] = executeApprovalFor(s, c)
		}
	}
}

// executeApprovalFor is the approval a transaction pending approval opens
// on the approvals queue: its ID is the transaction's, it expires after
// the configured approval TTL.
func executeApprovalFor(s *State, tx *Transaction) *Approval {
	summary := "execute at " + tx.BusinessID + ": " + formatAmount(tx.AmountCents, tx.Currency) + " " + tx.Currency
	if tx.PolicyID != "" {
		summary += " (policy " + tx.PolicyID + ")"
	}
	return &Approval{
		ID: tx.ID, AgentID: tx.AgentID, PrincipalID: tx.Consumer, Kind: ApprovalKindExecute, Status: ApprovalPending,
		Summary: summary, CreatedAt: tx.CreatedAt, ExpiresAt: tx.CreatedAt.Add(time.Duration(s.Config.ApprovalTTL)),
		TransactionID: tx.ID,
	}
}

// applyExecuteResolution folds the resolution of an execute approval:
// approved, its transaction executes; denied or expired, it closes.
func applyExecuteResolution(s *State, ap *Approval, t time.Time) {
	if ap.TransactionID == "" || s.Exec == nil {
		return
	}
	tx := s.Exec.Open[ap.TransactionID]
	if tx == nil || tx.Status != TxPendingApproval {
		return
	}
	if ap.Status == ApprovalApproved {
		if tx.ReleaseAt != nil && t.Before(*tx.ReleaseAt) {
			// Approved outside its time window: queued, its amount still
			// held, until the execute tick releases it.
			tx.Status = TxQueued
			return
		}
		startExecuting(s, tx.ID, t)
		return
	}
	closeTransaction(s, tx.ID, true)
}

// startExecuting moves an open transaction, pending approval or queued,
// to executing at time at (the approval's or the release's event time):
// the pair is seen, and its amount, held in the ledger since its decision
// (counted in every rolling total, policy.Ledger.Held), is reserved at
// at. The business is called from at on, possibly days after the
// decision: a reservation at the decision would leave the rolling totals
// while the spend is still to come, and the executes decided then would
// see room the business then takes. A released transaction keeps at as
// its ReleaseAt in the state (the time of its reservation; the events
// built from the state clear it), an approved one finds it in its
// approval's ResolvedAt.
func startExecuting(s *State, id string, at time.Time) {
	if s.Exec == nil {
		return
	}
	tx := s.Exec.Open[id]
	if tx == nil {
		return
	}
	if tx.Status == TxExecuting {
		return
	}
	released := tx.Status == TxQueued
	tx.Status = TxExecuting
	tx.ReleaseAt = nil
	if released {
		tx.ReleaseAt = &at
	}
	notePair(s.Exec, tx)
	if c := s.Exec.Consumers[tx.Consumer]; c != nil && c.Ledger != nil && tx.AmountCents > 0 {
		c.Ledger.Unhold(tx.AgentID, tx.BusinessID, tx.AmountCents)
		c.Ledger.Reserve(tx.AgentID, tx.BusinessID, reservedAt(s, tx), tx.AmountCents)
	}
}

// reservedAt returns the time an executing transaction's amount is
// reserved at in its consumer's ledger: its decision's (CreatedAt), or,
// once it was approved or released, when the business is called
// (startExecuting).
func reservedAt(s *State, tx *Transaction) time.Time {
	if tx.ReleaseAt != nil {
		return *tx.ReleaseAt
	}
	if tx.ApprovalID != "" {
		if ap := s.Approvals[tx.ApprovalID]; ap != nil && ap.Status == ApprovalApproved && ap.ResolvedAt != nil {
			return ap.ResolvedAt.UTC()
		}
	}
	return tx.CreatedAt
}

// closeTransaction forgets an open transaction; release takes its amount
// back from the consumer's ledger (it spent nothing: failed, denied,
// expired, or a business's pending_confirmation, whose second call is an
// execute of its own).
func closeTransaction(s *State, id string, release bool) {
	x := s.Exec
	if x == nil {
		return
	}
	tx := x.Open[id]
	if tx == nil {
		return
	}
	delete(x.Open, id)
	if c := x.Consumers[tx.Consumer]; c != nil {
		if c.Open > 0 {
			c.Open--
		}
		switch {
		case c.Ledger == nil:
		case tx.Status != TxExecuting: // pending approval or queued: never sent
			c.Ledger.Unhold(tx.AgentID, tx.BusinessID, tx.AmountCents)
		case release:
			c.Ledger.Release(tx.AgentID, tx.BusinessID, reservedAt(s, tx), tx.AmountCents)
		}
	}
}

// notePair records that tx's agent has dealt with its business (the
// first-time-business rule), up to MaxSeenPairs pairs per consumer.
func notePair(x *ExecState, tx *Transaction) {
	c := x.consumer(tx.Consumer)
	k := pairKey(tx.AgentID, tx.BusinessID)
	if c.Pairs[k] || len(c.Pairs) >= MaxSeenPairs {
		return
	}
	if c.Pairs == nil {
		c.Pairs = map[string]bool{}
	}
	c.Pairs[k] = true
}

// clone returns a deep copy of x.
func (x *ExecState) clone() *ExecState {
	if x == nil {
		return nil
	}
	c := &ExecState{}
	if x.Businesses != nil {
		c.Businesses = make(map[string]*Business, len(x.Businesses))
		for id, b := range x.Businesses {
			bc := *b
			bc.Categories = slices.Clone(b.Categories)
			c.Businesses[id] = &bc
		}
	}
	if x.Tokens != nil {
		c.Tokens = make(map[string]*ExecutePrepared, len(x.Tokens))
		for h, t := range x.Tokens {
			tc := *t
			c.Tokens[h] = &tc
		}
	}
	if x.Open != nil {
		c.Open = make(map[string]*Transaction, len(x.Open))
		for id, tx := range x.Open {
			c.Open[id] = cloneTransaction(tx)
		}
	}
	if x.Consumers != nil {
		c.Consumers = make(map[string]*ConsumerExec, len(x.Consumers))
		for id, ce := range x.Consumers {
			cc := *ce
			cc.Pairs = maps.Clone(ce.Pairs)
			cc.Policies = ce.Policies.Clone()
			if ce.Ledger != nil {
				cc.Ledger = ce.Ledger.Clone()
			}
			if ce.Webhooks != nil {
				cc.Webhooks = make(map[string]*Webhook, len(ce.Webhooks))
				for wid, w := range ce.Webhooks {
					wc := *w
					wc.Events = slices.Clone(w.Events)
					cc.Webhooks[wid] = &wc
				}
			}
			c.Consumers[id] = &cc
		}
	}
	return c
}
