package projections

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// MaxA2APairsPerPrincipal bounds the (sender, receiver) pairs whose
// verdicts are counted one by one under a boundary (a principal, or "*"
// for the admin's gate-wide one): the first pairs seen, in log order, up
// to it; the verdicts of every later pair are counted together in the
// boundary's Other bucket. The bound keeps a tenant that sprays agent ids
// from growing the store (and its metrics answer) without limit.
const MaxA2APairsPerPrincipal = 1000

// StatusCounts counts A2A verdicts by status.
type StatusCounts struct {
	Forwarded   int64 `json:"forwarded"`
	Blocked     int64 `json:"blocked"`
	RateLimited int64 `json:"rate_limited"`
	Errors      int64 `json:"errors"`
}

// Add counts one verdict of status s (a status the domain does not name
// is counted as an error).
func (c *StatusCounts) Add(s a2a.Status) {
	switch s {
	case a2a.StatusForwarded:
		c.Forwarded++
	case a2a.StatusBlocked:
		c.Blocked++
	case a2a.StatusRateLimited:
		c.RateLimited++
	default:
		c.Errors++
	}
}

// Plus adds o to c.
func (c *StatusCounts) Plus(o StatusCounts) {
	c.Forwarded += o.Forwarded
	c.Blocked += o.Blocked
	c.RateLimited += o.RateLimited
	c.Errors += o.Errors
}

// Total is the number of verdicts counted.
func (c StatusCounts) Total() int64 { return c.Forwarded + c.Blocked + c.RateLimited + c.Errors }

// A2ACounts are the A2A verdict counters of one boundary (or of the whole
// gate): by status, by engine and status, the number of pairs counted one
// by one (A2APairCounts, at most MaxA2APairsPerPrincipal) and the verdicts
// of the pairs beyond them. Maps encode sorted, so equal counts are equal
// bytes.
type A2ACounts struct {
	StatusCounts
	ByEngine map[string]StatusCounts `json:"by_engine"`
	// Pairs is the number of pairs counted one by one; Other counts the
	// verdicts of the pairs past MaxA2APairsPerPrincipal.
	Pairs int64        `json:"pairs"`
	Other StatusCounts `json:"other"`
}

// add counts v in c (not its pair: the caller decides where that goes).
func (c *A2ACounts) add(v *domain.A2AVerdict) {
	c.StatusCounts.Add(v.Status)
	if c.ByEngine == nil {
		c.ByEngine = map[string]StatusCounts{}
	}
	e := c.ByEngine[v.Engine]
	e.Add(v.Status)
	c.ByEngine[v.Engine] = e
}

// A2APair is the verdict counts of one (sender, receiver) pair under a
// boundary.
type A2APair struct {
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`
	StatusCounts
}

// A2ATally folds A2A verdicts into counters per boundary and per pair,
// in memory, with the store's rules (MaxA2APairsPerPrincipal): time
// travel and the tests count with it what the store counts. The zero
// value is empty.
type A2ATally struct {
	Gate       A2ACounts
	Boundaries map[string]*A2ACounts
	// PairCounts are the pairs counted one by one, by boundary.
	PairCounts map[string]map[[2]string]*StatusCounts
}

// Add counts the verdict of ev, if it is one.
func (t *A2ATally) Add(ev *domain.Event) {
	v := ev.A2AVerdict
	if v == nil {
		return
	}
	if t.Boundaries == nil {
		t.Boundaries, t.PairCounts = map[string]*A2ACounts{}, map[string]map[[2]string]*StatusCounts{}
	}
	t.Gate.add(v)
	c := t.Boundaries[v.Boundary]
	if c == nil {
		c = &A2ACounts{}
		t.Boundaries[v.Boundary] = c
	}
	c.add(v)
	ps := t.PairCounts[v.Boundary]
	if ps == nil {
		ps = map[[2]string]*StatusCounts{}
		t.PairCounts[v.Boundary] = ps
	}
	k := [2]string{v.Sender, v.Receiver}
	p := ps[k]
	if p == nil {
		if c.Pairs >= MaxA2APairsPerPrincipal {
			c.Other.Add(v.Status)
			return
		}
		c.Pairs++
		p = &StatusCounts{}
		ps[k] = p
	}
	p.Add(v.Status)
}

// a2aBatch is what one projection batch changes in the A2A counters: the
// entries it read or created, written back by flush.
type a2aBatch struct {
	gate   *A2ACounts
	counts map[string]*A2ACounts
	pairs  map[[3]string]*StatusCounts
	// countKeys and pairKeys are the maps' keys in the order added: flush
	// writes in that order.
	countKeys []string
	pairKeys  [][3]string
}

// a2aVerdict counts the verdict of ev in the batch. A store without
// activity entries keeps no counters either: they are read by the HTTP
// API, from the store that keeps activities (NoActivity).
func (w *batchWriter) a2aVerdict(v *domain.A2AVerdict) error {
	if w.s.noActivity {
		return nil
	}
	b := &w.a2a
	if b.gate == nil {
		b.gate = new(A2ACounts)
		if err := w.s.getJSONHeld(key(tMeta, "a2a"), b.gate); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("reading the gate's A2A counters: %w", err)
		}
		b.counts, b.pairs = map[string]*A2ACounts{}, map[[3]string]*StatusCounts{}
	}
	b.gate.add(v)
	c := b.counts[v.Boundary]
	if c == nil {
		c = new(A2ACounts)
		if err := w.s.getJSONHeld(key(tA2ACount, v.Boundary), c); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("reading the A2A counters of %q: %w", v.Boundary, err)
		}
		b.counts[v.Boundary] = c
		b.countKeys = append(b.countKeys, v.Boundary)
	}
	c.add(v)
	pk := [3]string{v.Boundary, v.Sender, v.Receiver}
	p := b.pairs[pk]
	if p == nil {
		p = new(StatusCounts)
		err := w.s.getJSONHeld(pairCountKey(pk), p)
		switch {
		case errors.Is(err, ErrNotFound) && c.Pairs >= MaxA2APairsPerPrincipal:
			c.Other.Add(v.Status)
			return nil
		case errors.Is(err, ErrNotFound):
			c.Pairs++
		case err != nil:
			return fmt.Errorf("reading the A2A counters of a pair: %w", err)
		}
		b.pairs[pk] = p
		b.pairKeys = append(b.pairKeys, pk)
	}
	p.Add(v.Status)
	return nil
}

// pairCountKey is the key of the counters of pair k (boundary, sender,
// receiver): the pair at the end, raw (a2astate.go), so that a boundary's
// pairs are listed in lexical order.
func pairCountKey(k [3]string) []byte {
	return appendPair(key(tA2APair, k[0]), k[1], k[2])
}

// flushA2A writes the counters the batch changed.
func (w *batchWriter) flushA2A() error {
	b := &w.a2a
	if b.gate == nil {
		return nil
	}
	for _, k := range b.countKeys {
		if err := w.setJSON(key(tA2ACount, k), b.counts[k]); err != nil {
			return err
		}
	}
	for _, k := range b.pairKeys {
		if err := w.setJSON(pairCountKey(k), b.pairs[k]); err != nil {
			return err
		}
	}
	return w.setJSON(key(tMeta, "a2a"), b.gate)
}

// A2AGateCounts returns the A2A verdict counters of the whole gate (every
// boundary).
func (s *Store) A2AGateCounts() (A2ACounts, error) {
	var c A2ACounts
	if err := s.getJSON(key(tMeta, "a2a"), &c); err != nil && !errors.Is(err, ErrNotFound) {
		return c, err
	}
	return c, nil
}

// A2ACountsOf returns the A2A verdict counters of boundary (a principal,
// or domain.AdminPrincipal for the admin's): zero when it has none.
func (s *Store) A2ACountsOf(boundary string) (A2ACounts, error) {
	var c A2ACounts
	if err := s.getJSON(key(tA2ACount, boundary), &c); err != nil && !errors.Is(err, ErrNotFound) {
		return c, err
	}
	return c, nil
}

// A2APairs returns a page of the pairs counted one by one under boundary,
// in (sender, receiver) order, starting after the pair after (nil: from
// the first), at most limit of them and MaxPageBytes of JSON; next is the
// last pair of the page when more follow (nil on the last page).
func (s *Store) A2APairs(boundary string, after *[2]string, limit int) (out []A2APair, next *[2]string, err error) {
	defer s.hold()()
	prefix := key(tA2APair, boundary)
	lo := prefix
	if after != nil {
		// Past the pair itself: its key with a byte appended sorts right
		// after it and before every longer key.
		lo = append(appendPair(append([]byte(nil), prefix...), after[0], after[1]), 0)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, nil, fmt.Errorf("listing A2A pairs: %w", err)
	}
	defer it.Close()
	pg := newPager(limit, MaxPageBytes)
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		sender, receiver, ok := cutPair(k[len(prefix):])
		if !ok {
			return nil, nil, fmt.Errorf("malformed A2A pair key %q", k)
		}
		p := A2APair{Sender: sender, Receiver: receiver}
		if err := json.Unmarshal(it.Value(), &p.StatusCounts); err != nil {
			return nil, nil, fmt.Errorf("decoding A2A pair counters: %w", err)
		}
		more, err := pg.fits(p)
		if err != nil {
			return nil, nil, err
		}
		if !more {
			last := out[len(out)-1]
			return out, &[2]string{last.Sender, last.Receiver}, nil
		}
		out = append(out, p)
	}
	if err := it.Error(); err != nil {
		return nil, nil, fmt.Errorf("listing A2A pairs: %w", err)
	}
	return out, nil, nil
}
