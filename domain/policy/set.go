package policy

import (
	"slices"
	"strings"
)

// MaxTombstones bounds the deleted policies a Set remembers the version of.
const MaxTombstones = 256

// Set is a consumer's current policies, and what it needs to version the
// next change: each change of a policy gives it the version after its last
// one, a deleted policy re-created included.
type Set struct {
	// Policies are the current policies, sorted by id, at most
	// MaxPolicies.
	Policies []Policy `json:"policies,omitempty"`
	// Tombstones are the ids and last versions of deleted policies, oldest
	// deletion first, at most MaxTombstones.
	Tombstones []Tombstone `json:"tombstones,omitempty"`
	// Floor is the highest version of a tombstone dropped to keep
	// MaxTombstones: a policy id not in Policies nor in Tombstones gets
	// Floor+1, so that no id's versions ever go back.
	Floor int64 `json:"floor,omitempty"`
}

// Tombstone is the last version of a deleted policy.
type Tombstone struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
}

func (s *Set) index(id string) (int, bool) {
	return slices.BinarySearchFunc(s.Policies, id, func(p Policy, id string) int { return strings.Compare(p.ID, id) })
}

// Len returns the number of current policies (0 for nil).
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.Policies)
}

// Get returns the current policy with the id, or nil. The policy is the
// set's: the caller must not change it.
func (s *Set) Get(id string) *Policy {
	if s == nil {
		return nil
	}
	if i, ok := s.index(id); ok {
		return &s.Policies[i]
	}
	return nil
}

// NextVersion returns the version the next change of the policy id gets:
// its current or last version plus one, else Floor+1.
func (s *Set) NextVersion(id string) int64 {
	if s == nil {
		return 1
	}
	if p := s.Get(id); p != nil {
		return p.Version + 1
	}
	for _, t := range s.Tombstones {
		if t.ID == id {
			return t.Version + 1
		}
	}
	return s.Floor + 1
}

// Put stores p (a copy), replacing the current policy of its id; its
// version is the caller's (NextVersion). A tombstone of its id is dropped.
func (s *Set) Put(p Policy) {
	s.Tombstones = slices.DeleteFunc(s.Tombstones, func(t Tombstone) bool { return t.ID == p.ID })
	c := p.Clone()
	i, ok := s.index(p.ID)
	if ok {
		s.Policies[i] = c
		return
	}
	s.Policies = slices.Insert(s.Policies, i, c)
}

// Delete removes the policy id, remembering version as its last (the
// version of the deletion: NextVersion), and reports whether there was
// one.
func (s *Set) Delete(id string, version int64) bool {
	i, ok := s.index(id)
	if !ok {
		return false
	}
	s.Tombstones = append(s.Tombstones, Tombstone{ID: id, Version: version})
	s.Policies = slices.Delete(s.Policies, i, i+1)
	if n := len(s.Tombstones) - MaxTombstones; n > 0 {
		for _, t := range s.Tombstones[:n] {
			s.Floor = max(s.Floor, t.Version)
		}
		s.Tombstones = slices.Delete(s.Tombstones, 0, n)
	}
	return true
}

// Clone returns a deep copy of s (nil for nil).
func (s *Set) Clone() *Set {
	if s == nil {
		return nil
	}
	c := &Set{Tombstones: slices.Clone(s.Tombstones), Floor: s.Floor}
	if s.Policies != nil {
		c.Policies = make([]Policy, len(s.Policies))
		for i := range s.Policies {
			c.Policies[i] = s.Policies[i].Clone()
		}
	}
	return c
}

// Clone returns a deep copy of p.
func (p *Policy) Clone() Policy {
	c := *p
	c.Scope.Agents = slices.Clone(p.Scope.Agents)
	if p.Spending != nil {
		v := *p.Spending
		c.Spending = &v
	}
	if p.Category != nil {
		c.Category = &Category{Mode: p.Category.Mode, Categories: slices.Clone(p.Category.Categories)}
	}
	if p.Confirmation != nil {
		v := *p.Confirmation
		c.Confirmation = &v
	}
	if p.TimeWindow != nil {
		v := *p.TimeWindow
		v.Windows = make([]Window, len(p.TimeWindow.Windows))
		for i, w := range p.TimeWindow.Windows {
			v.Windows[i] = Window{Days: slices.Clone(w.Days), Start: w.Start, End: w.End}
		}
		c.TimeWindow = &v
	}
	return c
}
