package projections

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain"
)

// The A2A state of a partition (domain.A2AState) is kept entry by entry,
// so that a boundary change or a verdict writes only what it touched, and
// LoadState restores it:
//
//	b + boundary + kind + entry -> ""        one entry of a trust boundary
//	u + boundary + sender 0x00 receiver -> A2ABucket (JSON), a token bucket
//
// kind is one byte (a2aTrusted, a2aBlocked, a2aPair) and entry the agent
// id, or sender 0x00 receiver for a pair, as raw bytes at the end of the
// key: agent ids hold no control characters (domain.validA2AAgent), so the
// key order is the lexical order of the ids (and of the pairs), the order
// the boundary lists them in.
const (
	a2aTrusted = 't'
	a2aBlocked = 'k'
	a2aPair    = 'p'
)

// a2aEntry names one entry of a boundary the batch touched.
type a2aEntry struct {
	boundary string
	kind     byte
	agent    string // the agent, or the pair's sender
	receiver string // the pair's receiver
}

// entryKey is the key of e.
func (e a2aEntry) key() []byte {
	k := append(key(tA2ABound, e.boundary), e.kind)
	if e.kind == a2aPair {
		return appendPair(k, e.agent, e.receiver)
	}
	return append(k, e.agent...)
}

// appendPair appends sender 0x00 receiver.
func appendPair(b []byte, sender, receiver string) []byte {
	b = append(b, sender...)
	b = append(b, 0)
	return append(b, receiver...)
}

// cutPair splits sender 0x00 receiver.
func cutPair(b []byte) (sender, receiver string, ok bool) {
	s, r, ok := strings.Cut(string(b), "\x00")
	return s, r, ok && s != "" && r != ""
}

// touchA2A notes what ev may change in the A2A state: the boundary
// entry it names, or the token bucket of its verdict's pair.
func (w *batchWriter) touchA2A(ev *domain.Event) {
	switch {
	case ev.A2ABoundary != nil && ev.Command != nil:
		c := ev.A2ABoundary
		e := a2aEntry{boundary: ev.Command.Principal, agent: c.Agent}
		switch c.Op {
		case domain.A2AOpTrust, domain.A2AOpUntrust:
			e.kind = a2aTrusted
		case domain.A2AOpBlock, domain.A2AOpUnblock:
			e.kind = a2aBlocked
		case domain.A2AOpBlockPair, domain.A2AOpUnblockPair:
			e.kind, e.agent, e.receiver = a2aPair, c.Sender, c.Receiver
		default:
			return
		}
		w.a2aEntries = append(w.a2aEntries, e)
	case ev.A2AVerdict != nil:
		v := ev.A2AVerdict
		w.a2aBuckets = append(w.a2aBuckets, domain.A2APair{Boundary: v.Boundary,
			A2AAgents: domain.A2AAgents{Sender: v.Sender, Receiver: v.Receiver}})
	}
}

// flushA2AState writes the boundary entries and buckets the batch touched
// as they stand in st: set when st holds them, deleted when it does not.
func (w *batchWriter) flushA2AState(st *domain.State) error {
	if len(w.a2aEntries) == 0 && len(w.a2aBuckets) == 0 && len(w.a2aEvicted) == 0 {
		return nil
	}
	a := st.A2A
	if a == nil {
		a = &domain.A2AState{}
	}
	for _, e := range w.a2aEntries {
		var in bool
		if b := a.Boundaries[e.boundary]; b != nil {
			switch e.kind {
			case a2aTrusted:
				_, in = slices.BinarySearch(b.Trusted, e.agent)
			case a2aBlocked:
				_, in = slices.BinarySearch(b.Blocked, e.agent)
			default:
				in = slices.Contains(b.BlockedPairs, domain.A2AAgents{Sender: e.agent, Receiver: e.receiver})
			}
		}
		k := e.key()
		if in {
			if err := w.b.Set(k, nil, nil); err != nil {
				return fmt.Errorf("writing a boundary entry: %w", err)
			}
		} else if err := w.b.Delete(k, nil); err != nil {
			return fmt.Errorf("deleting a boundary entry: %w", err)
		}
	}
	for _, ps := range [][]domain.A2APair{w.a2aBuckets, w.a2aEvicted} {
		for _, p := range ps {
			k := appendPair(key(tA2ABucket, p.Boundary), p.Sender, p.Receiver)
			b := a.Buckets[p]
			if b == nil {
				if err := w.b.Delete(k, nil); err != nil {
					return fmt.Errorf("deleting a token bucket: %w", err)
				}
				continue
			}
			if err := w.setJSON(k, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadA2A restores st.A2A from the store (nil when it holds none).
func (s *Store) loadA2A(st *domain.State) error {
	var a domain.A2AState
	err := s.scan([]byte{tA2ABound}, func(k, _ []byte) error {
		p, rest, ok := cutStr(k[1:])
		if !ok || len(rest) < 2 {
			return fmt.Errorf("malformed boundary key %q", k)
		}
		if a.Boundaries == nil {
			a.Boundaries = map[string]*domain.A2ABoundary{}
		}
		b := a.Boundaries[p]
		if b == nil {
			b = &domain.A2ABoundary{}
			a.Boundaries[p] = b
		}
		entry := rest[1:]
		switch rest[0] {
		case a2aTrusted:
			b.Trusted = append(b.Trusted, string(entry))
		case a2aBlocked:
			b.Blocked = append(b.Blocked, string(entry))
		case a2aPair:
			sn, rc, ok := cutPair(entry)
			if !ok {
				return fmt.Errorf("malformed boundary pair key %q", k)
			}
			b.BlockedPairs = append(b.BlockedPairs, domain.A2AAgents{Sender: sn, Receiver: rc})
		default:
			return fmt.Errorf("malformed boundary key %q", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var buckets []domain.A2ABucket
	err = s.scan([]byte{tA2ABucket}, func(_, v []byte) error {
		var b domain.A2ABucket
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("decoding a token bucket: %w", err)
		}
		buckets = append(buckets, b)
		return nil
	})
	if err != nil {
		return err
	}
	if a.Boundaries == nil && buckets == nil {
		return nil
	}
	if buckets != nil {
		a.RestoreBuckets(buckets)
	}
	st.A2A = &a
	return nil
}

// noteA2AEvictions notes, before ev is folded into st, the token buckets
// its fold evicts (domain.State.A2AEvictions): Prepare deletes their
// entries unless a later event of the batch brought them back.
func (f *Fold) noteA2AEvictions(st *domain.State, ev *domain.Event) {
	if st.A2A != nil {
		f.evicted = append(f.evicted, st.A2AEvictions(ev.Time)...)
	}
}

// A2AList names one list of a trust boundary.
type A2AList byte

// The lists of a trust boundary.
const (
	A2ATrustedAgents A2AList = a2aTrusted
	A2ABlockedAgents A2AList = a2aBlocked
	A2ABlockedPairs  A2AList = a2aPair
)

// A2AListPage is one page of a boundary list: Entries are agent ids, or
// pairs as sender + "\x00" + receiver (SplitA2APair), in lexical order;
// Count is the length of the whole list; Next is the last entry of the
// page when more follow ("" on the last page), the after of the next.
type A2AListPage struct {
	Entries []string
	Count   int
	Next    string
}

// SplitA2APair splits a pair entry of an A2AListPage.
func SplitA2APair(entry string) (sender, receiver string, ok bool) {
	return cutPair([]byte(entry))
}

// A2ABoundaryList returns a page of list l of boundary (a principal, or
// domain.AdminPrincipal for the gate-wide one): the entries after after
// ("" from the first), at most limit of them and MaxPageBytes of JSON.
// A boundary that lists nothing has an empty page.
func (s *Store) A2ABoundaryList(boundary string, l A2AList, after string, limit int) (A2AListPage, error) {
	prefix := append(key(tA2ABound, boundary), byte(l))
	// A list holds at most domain.MaxA2AAgents (MaxA2APairs) entries.
	var entries []string
	err := s.scan(prefix, func(k, _ []byte) error {
		entries = append(entries, string(k[len(prefix):]))
		return nil
	})
	if err != nil {
		return A2AListPage{}, err
	}
	return PageA2AList(entries, after, limit)
}

// GateConfig returns the gate's configuration as of the store's
// checkpoint (the initial one before any gate.configured).
func (s *Store) GateConfig() (domain.Config, error) {
	var meta gateMeta
	switch err := s.getJSON(key(tMeta, "gate"), &meta); {
	case errors.Is(err, ErrNotFound):
		return domain.NewState().Config, nil
	case err != nil:
		return domain.Config{}, err
	}
	return meta.Config, nil
}

// JoinA2APair is the entry of pair (sender, receiver) in an A2AListPage.
func JoinA2APair(sender, receiver string) string {
	return string(appendPair(nil, sender, receiver))
}

// PageA2AList pages entries, a sorted list held in memory (a boundary as
// of a past event), as A2ABoundaryList pages a stored one.
func PageA2AList(entries []string, after string, limit int) (A2AListPage, error) {
	out := A2AListPage{Count: len(entries)}
	pg := newPager(limit, MaxPageBytes)
	for _, e := range entries {
		if after != "" && e <= after {
			continue
		}
		more, err := pg.fits(e)
		if err != nil {
			return out, err
		}
		if !more {
			out.Next = out.Entries[len(out.Entries)-1]
			break
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}
