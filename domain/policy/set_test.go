package policy

import (
	"strconv"
	"testing"
)

// TestSet_Versions: versions go up by one per change of an id, across a
// delete, and past forgotten tombstones never back.
func TestSet_Versions(t *testing.T) {
	var s Set
	put := func(id string) int64 {
		v := s.NextVersion(id)
		p := Policy{ID: id, Type: TypeConfirmation, Confirmation: &Confirmation{Always: true}, Version: v}
		s.Put(p)
		return v
	}
	if put("a") != 1 || put("a") != 2 || put("b") != 1 {
		t.Fatal("first versions")
	}
	if !s.Delete("a", s.NextVersion("a")) || s.Delete("a", 9) || s.Get("a") != nil || s.Len() != 1 {
		t.Fatal("delete")
	}
	if put("a") != 4 { // 3 was the deletion
		t.Fatal("re-created after delete")
	}
	for i := range MaxTombstones + 5 {
		id := "t" + strconv.Itoa(i)
		put(id)
		put(id)
		s.Delete(id, s.NextVersion(id)) // version 3
	}
	if len(s.Tombstones) != MaxTombstones || s.Floor != 3 {
		t.Fatalf("%d tombstones, floor %d", len(s.Tombstones), s.Floor)
	}
	if v := s.NextVersion("t0"); v != 4 { // forgotten: Floor+1
		t.Fatalf("forgotten tombstone: version %d", v)
	}
	if v := s.NextVersion("t200"); v != 4 {
		t.Fatalf("remembered tombstone: version %d", v)
	}
	c := s.Clone()
	c.Put(Policy{ID: "a", Version: 99, Confirmation: &Confirmation{}})
	if s.Get("a").Version != 4 {
		t.Fatal("the clone shares its policies")
	}
	var nilSet *Set
	if nilSet.Len() != 0 || nilSet.Get("a") != nil || nilSet.NextVersion("a") != 1 || nilSet.Clone() != nil {
		t.Fatal("nil set")
	}
}
