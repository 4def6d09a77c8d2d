package handlers

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// TestApplyLogCommitterStopsAtTheFirstFailure: once a commit fails, the
// committer discards every later batch, refuses new ones, and reports the
// first failure.
func TestApplyLogCommitterStopsAtTheFirstFailure(t *testing.T) {
	store, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st := domain.NewState()
	ev := &domain.Event{Seq: 1, Type: domain.EvApprovalsExpired, Expired: &domain.ApprovalsExpired{}}
	prep := func() *projections.Prepared {
		var f projections.Fold
		f.Add(st, ev)
		p, err := store.Prepare(st, &f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := startCommitter(store)
	p := prep()
	if err := c.commit(p, projections.Checkpoint{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	// The same batch again: its Commit fails.
	if err := c.commit(p, projections.Checkpoint{Seq: 1}); err != nil {
		t.Fatalf("handing over the second batch: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.commit(prep(), projections.Checkpoint{Seq: 2})
		if errors.Is(err, errCommitFailed) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("after a failed commit: %v, want errCommitFailed", err)
		}
	}
	if err := c.close(); err == nil || !strings.Contains(err.Error(), "committing a discarded or committed projection batch") {
		t.Fatalf("close: %v, want the first failure", err)
	}
	ck, err := store.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if ck.Seq != 1 {
		t.Fatalf("store checkpoint %d, want 1 (nothing after the failure)", ck.Seq)
	}
}
