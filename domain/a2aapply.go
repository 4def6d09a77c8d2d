package domain

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
)

// The fold of agent-to-agent interception.
//
// Buckets: every event first evicts, least recently used first, the
// buckets idle for the IdleEvict in force at its time and full again
// (a2aEvictable: a new bucket is full, so eviction changes no decision);
// the loop stops at the first that is not. An a2a.verdict whose message passed the trust
// boundary (its engine is not trust_boundary: the message took a token)
// then takes the token from its pair's bucket, as Decide did on a copy,
// and makes it the most recently used. The bucket state is thus a
// function of the log alone, and a projection restores it (RestoreBuckets)
// in the LRU order of its LastSeq.

// applyA2AEvict evicts the buckets idle at t.
func applyA2AEvict(s *State, t time.Time) {
	st := s.A2A
	if st == nil || st.lru.head == nil {
		return
	}
	cfg := s.Config.A2ASettings()
	for b := st.lru.head; a2aEvictable(cfg, b, t); b = st.lru.head {
		st.dropBucket(b)
	}
}

// A2AEvictions returns the pairs whose buckets the Apply of an event at t
// evicts (the projections delete their entries), least recently used
// first; nil when none.
func (s *State) A2AEvictions(t time.Time) []A2APair {
	st := s.A2A
	if st == nil {
		return nil
	}
	cfg := s.Config.A2ASettings()
	var out []A2APair
	for b := st.lru.head; a2aEvictable(cfg, b, t); b = b.next {
		out = append(out, b.Pair)
	}
	return out
}

func a2aState(s *State) *A2AState {
	if s.A2A == nil {
		s.A2A = &A2AState{}
	}
	return s.A2A
}

// applyA2AVerdict takes the token of a message that passed the trust
// boundary.
func applyA2AVerdict(s *State, v *A2AVerdict, seq uint64, t time.Time) {
	if v == nil || v.Engine == a2a.EngineTrust {
		return
	}
	st := a2aState(s)
	key := A2APair{Boundary: v.Boundary, A2AAgents: A2AAgents{Sender: v.Sender, Receiver: v.Receiver}}
	b := st.Buckets[key]
	if b == nil {
		b = &A2ABucket{Pair: key}
		st.addBucket(b)
	} else {
		st.lru.remove(b)
		st.lru.pushBack(b)
	}
	cfg := s.Config.A2ASettings()
	b.Bucket.Take(t, cfg.RatePerMinute, cfg.Burst)
	b.LastSeq = seq
}

// applyA2ABoundary folds a boundary change of principal's boundary.
func applyA2ABoundary(s *State, principal string, c *A2ABoundaryChange) {
	if c == nil {
		return
	}
	st := a2aState(s)
	if st.Boundaries == nil {
		st.Boundaries = map[string]*A2ABoundary{}
	}
	b := st.Boundaries[principal]
	if b == nil {
		b = &A2ABoundary{}
	}
	pair := A2AAgents{Sender: c.Sender, Receiver: c.Receiver}
	switch c.Op {
	case A2AOpTrust:
		b.Trusted = insertSorted(b.Trusted, c.Agent)
	case A2AOpUntrust:
		b.Trusted = removeSorted(b.Trusted, c.Agent)
	case A2AOpBlock:
		b.Blocked = insertSorted(b.Blocked, c.Agent)
	case A2AOpUnblock:
		b.Blocked = removeSorted(b.Blocked, c.Agent)
	case A2AOpBlockPair:
		if i, ok := slices.BinarySearchFunc(b.BlockedPairs, pair, comparePairs); !ok {
			b.BlockedPairs = slices.Insert(b.BlockedPairs, i, pair)
		}
	case A2AOpUnblockPair:
		if i, ok := slices.BinarySearchFunc(b.BlockedPairs, pair, comparePairs); ok {
			b.BlockedPairs = slices.Delete(b.BlockedPairs, i, i+1)
		}
	}
	if len(b.Trusted) == 0 && len(b.Blocked) == 0 && len(b.BlockedPairs) == 0 {
		delete(st.Boundaries, principal)
		return
	}
	st.Boundaries[principal] = b
}

func insertSorted(l []string, x string) []string {
	if i, ok := slices.BinarySearch(l, x); !ok {
		return slices.Insert(l, i, x)
	}
	return l
}

func removeSorted(l []string, x string) []string {
	if i, ok := slices.BinarySearch(l, x); ok {
		l = slices.Delete(l, i, i+1)
	}
	if len(l) == 0 {
		return nil
	}
	return l
}

// a2aStateJSON is the JSON form of A2AState: the buckets as a list, least
// recently used first.
type a2aStateJSON struct {
	Boundaries map[string]*A2ABoundary `json:"boundaries,omitempty"`
	Buckets    []*A2ABucket            `json:"buckets,omitempty"`
}

// MarshalJSON encodes the boundaries and the buckets in LRU order.
func (a *A2AState) MarshalJSON() ([]byte, error) {
	return json.Marshal(a2aStateJSON{Boundaries: a.Boundaries, Buckets: a.BucketList()})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (a *A2AState) UnmarshalJSON(b []byte) error {
	var v struct {
		Boundaries map[string]*A2ABoundary `json:"boundaries"`
		Buckets    []A2ABucket             `json:"buckets"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a.Boundaries = v.Boundaries
	a.Buckets, a.lru, a.perBoundary = nil, a2aLRU{}, nil
	if len(v.Buckets) > 0 {
		a.RestoreBuckets(v.Buckets)
	}
	return nil
}
