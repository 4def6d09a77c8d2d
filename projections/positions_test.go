package projections

import (
	"slices"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// ApplyAt records the positions of a store that folds several partitions
// with its batch, under a key of their own (the checkpoint is untouched),
// and Positions reads them back across a reopen.
func TestApplyAtRecordsPositions(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := s.Positions(); err != nil || ps != nil {
		t.Fatalf("a new store's positions: %v %v, want none", ps, err)
	}
	st := domain.NewState()
	want := []Position{{Partition: 0, Seq: 7, Hash: "h7", Offset: 9}, {Partition: 1, Seq: 3, Hash: "h3", Offset: 3}}
	if err := s.ApplyAt(st, new(Fold), want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ps, err := s.Positions(); err != nil || !slices.Equal(ps, want) {
		t.Fatalf("positions after a reopen: %v %v, want %v", ps, err, want)
	}
	if ck, err := s.Checkpoint(); err != nil || ck != (Checkpoint{}) {
		t.Fatalf("checkpoint of a store written by ApplyAt: %+v %v, want zero", ck, err)
	}
}
