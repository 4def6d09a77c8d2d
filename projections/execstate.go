package projections

import (
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

// The state of the consumer policy engine (domain.ExecState) is kept
// entity by entity, so that an execute writes only what it touched, and
// LoadState restores it (a restarted gate decides as the log's fold
// would):
//
//	f + business id  -> domain.Business (JSON)       the business registry
//	K + token hash   -> domain.ExecutePrepared (JSON) a confirmation token not consumed nor expired
//	X + tx id        -> domain.Transaction (JSON)     an open transaction (executing, pending_approval, queued)
//	C + consumer     -> domain.ConsumerExec (JSON)    a consumer's policies, ledger, pairs seen, webhooks
//
// Prepare writes each entity a batch's events touched as the state holds
// it after the batch, and deletes it when the state no longer does. The
// entities an event touches are noted by Fold.Add before the event is
// folded (noteExec), while the state still holds what the event removes:
// the consumer of a token that expires, of a transaction an approval or a
// timer closes.
const (
	tBusiness  = 'f'
	tExecToken = 'K'
	tExecOpen  = 'X'
	tConsumer  = 'C'
)

// businessKey is the key of business id: the id raw at the end (business
// ids are [A-Za-z0-9._:-], domain.Business), so that keys sort as the ids
// do and the registry lists in lexical order.
func businessKey(id string) []byte { return append([]byte{tBusiness}, id...) }

// execTouched are the exec entities a batch touched.
type execTouched struct {
	businesses, tokens, open, consumers []string
}

func (t *execTouched) empty() bool {
	return len(t.businesses) == 0 && len(t.tokens) == 0 && len(t.open) == 0 && len(t.consumers) == 0
}

// noteExec notes, before ev is folded into st, the exec entities ev may
// change.
func (f *Fold) noteExec(st *domain.State, ev *domain.Event) {
	t := &f.exec
	var x *domain.ExecState
	if st != nil {
		x = st.Exec
	}
	tx := func(id string) {
		t.open = append(t.open, id)
		if x != nil {
			if o := x.Open[id]; o != nil {
				t.consumers = append(t.consumers, o.Consumer)
			}
		}
	}
	token := func(h string) {
		if h == "" {
			return
		}
		t.tokens = append(t.tokens, h)
		if x != nil {
			if p := x.Tokens[h]; p != nil {
				t.consumers = append(t.consumers, p.Consumer)
			}
		}
	}
	if ev.Business != nil {
		t.businesses = append(t.businesses, ev.Business.ID)
	}
	if p := ev.Prepared; p != nil {
		token(p.TokenHash)
		t.consumers = append(t.consumers, p.Consumer)
	}
	if tr := ev.Transaction; tr != nil {
		tx(tr.ID)
		t.consumers = append(t.consumers, tr.Consumer)
	}
	if tm := ev.Timers; tm != nil {
		for _, h := range tm.TokensExpired {
			token(h)
		}
		for _, id := range tm.Released {
			tx(id)
		}
		for _, id := range tm.Expired {
			tx(id)
		}
	}
	if w := ev.Webhook; w != nil {
		t.consumers = append(t.consumers, w.Consumer)
	}
	if c := ev.Command; c != nil {
		if c.Execute != nil {
			token(c.Execute.TokenHash)
		}
		if c.Outcome != nil {
			tx(c.Outcome.TransactionID)
		}
		if c.Copy != nil {
			for i := range c.Copy.Changes {
				if b := c.Copy.Changes[i].Business; b != nil {
					t.businesses = append(t.businesses, b.ID)
				}
			}
		}
		switch c.Type {
		case domain.CmdPolicy:
			// A consumer's own settings: the consumer is the principal,
			// or the one the admin names.
			if c.Policy != nil && c.Policy.Consumer != "" {
				t.consumers = append(t.consumers, c.Policy.Consumer)
			} else {
				t.consumers = append(t.consumers, c.Principal)
			}
		case domain.CmdWebhook:
			t.consumers = append(t.consumers, c.Principal)
		}
	}
	approval := func(a *domain.Approval) {
		if a.TransactionID != "" {
			tx(a.TransactionID)
		}
	}
	if ev.Resolved != nil {
		approval(&ev.Resolved.Approval)
	}
	if ev.Expired != nil {
		for i := range ev.Expired.Approvals {
			approval(&ev.Expired.Approvals[i].Approval)
		}
	}
	if d := ev.Decided; d != nil && d.Approval != nil {
		approval(d.Approval)
	}
}

// flushExec writes the exec entities the batch touched as they stand in
// st: set when st holds them, deleted when it does not.
func (w *batchWriter) flushExec(st *domain.State) error {
	t := &w.exec
	if t.empty() {
		return nil
	}
	x := st.Exec
	if x == nil {
		x = &domain.ExecState{}
	}
	put := func(k []byte, v any, present bool) error {
		if !present {
			if err := w.b.Delete(k, nil); err != nil {
				return fmt.Errorf("deleting %q: %w", k, err)
			}
			return nil
		}
		return w.setJSON(k, v)
	}
	for _, id := range dedup(t.businesses) {
		b := x.Businesses[id]
		if err := put(businessKey(id), b, b != nil); err != nil {
			return err
		}
	}
	for _, h := range dedup(t.tokens) {
		p := x.Tokens[h]
		if err := put(key(tExecToken, h), p, p != nil); err != nil {
			return err
		}
	}
	for _, id := range dedup(t.open) {
		o := x.Open[id]
		if err := put(key(tExecOpen, id), o, o != nil); err != nil {
			return err
		}
	}
	for _, c := range dedup(t.consumers) {
		if c == "" {
			continue
		}
		ce := x.Consumers[c]
		if err := put(key(tConsumer, c), ce, ce != nil); err != nil {
			return err
		}
	}
	return nil
}

// loadExec restores st.Exec from the store (nil when it holds none).
func (s *Store) loadExec(st *domain.State) error {
	var x domain.ExecState
	found := false
	load := func(table byte, what string, fn func(k string, v []byte) error) error {
		return s.scan([]byte{table}, func(k, v []byte) error {
			id, _, ok := cutStr(k[1:])
			if table == tBusiness {
				id, ok = string(k[1:]), len(k) > 1
			}
			if !ok {
				return fmt.Errorf("malformed %s key %q", what, k)
			}
			found = true
			if err := fn(id, v); err != nil {
				return fmt.Errorf("decoding %s %q: %w", what, id, err)
			}
			return nil
		})
	}
	err := load(tBusiness, "business", func(id string, v []byte) error {
		b := new(domain.Business)
		if x.Businesses == nil {
			x.Businesses = map[string]*domain.Business{}
		}
		x.Businesses[id] = b
		return json.Unmarshal(v, b)
	})
	if err == nil {
		err = load(tExecToken, "confirmation token", func(h string, v []byte) error {
			p := new(domain.ExecutePrepared)
			if x.Tokens == nil {
				x.Tokens = map[string]*domain.ExecutePrepared{}
			}
			x.Tokens[h] = p
			return json.Unmarshal(v, p)
		})
	}
	if err == nil {
		err = load(tExecOpen, "open transaction", func(id string, v []byte) error {
			t := new(domain.Transaction)
			if x.Open == nil {
				x.Open = map[string]*domain.Transaction{}
			}
			x.Open[id] = t
			return json.Unmarshal(v, t)
		})
	}
	if err == nil {
		err = load(tConsumer, "consumer", func(c string, v []byte) error {
			ce := new(domain.ConsumerExec)
			if x.Consumers == nil {
				x.Consumers = map[string]*domain.ConsumerExec{}
			}
			x.Consumers[c] = ce
			return json.Unmarshal(v, ce)
		})
	}
	if err != nil {
		return err
	}
	if found {
		st.Exec = &x
	}
	return nil
}

// Business returns the business id of the registry.
func (s *Store) Business(id string) (*domain.Business, error) {
	b := new(domain.Business)
	if err := s.getJSON(businessKey(id), b); err != nil {
		return nil, err
	}
	return b, nil
}

// Businesses returns a page of the business registry in lexical id order,
// after the business with id after (""
// from the first), at most limit of them and MaxPageBytes of JSON; next is
// the after of the next page ("" on the last).
func (s *Store) Businesses(after string, limit int) (out []domain.Business, next string, err error) {
	defer s.hold()()
	prefix := []byte{tBusiness}
	lo := prefix
	if after != "" {
		lo = append(businessKey(after), 0)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, "", fmt.Errorf("listing businesses: %w", err)
	}
	defer it.Close()
	pg := newPager(limit, MaxPageBytes)
	for it.First(); it.Valid(); it.Next() {
		var b domain.Business
		if err := json.Unmarshal(it.Value(), &b); err != nil {
			return nil, "", fmt.Errorf("decoding business: %w", err)
		}
		more, err := pg.fits(&b)
		if err != nil {
			return nil, "", err
		}
		if !more {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, b)
	}
	if err := it.Error(); err != nil {
		return nil, "", fmt.Errorf("listing businesses: %w", err)
	}
	return out, "", nil
}

// OpenTransactions returns the open transactions of the state the store
// holds (executing, pending_approval, queued), in id order: what a runner
// resumes after a restart (the adapter calls the executing ones again).
func (s *Store) OpenTransactions() ([]domain.Transaction, error) {
	var out []domain.Transaction
	err := s.scan([]byte{tExecOpen}, func(_, v []byte) error {
		var t domain.Transaction
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decoding open transaction: %w", err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}
