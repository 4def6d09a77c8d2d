package projections

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// On a full disk the store refuses to prepare a batch (ErrNoSpace, before
// anything is written) and keeps answering reads; it closes without
// trying to flush, opens read-only when started on a full disk, and takes
// writes again once space returns, without being reopened by the caller.
func TestStoreOnFullDisk(t *testing.T) {
	fs := diskspace.NewFullFS(nil)
	dir := t.TempDir()
	o := Options{FS: fs, MinFreeBytes: 1 << 20}
	open := func() *Store {
		t.Helper()
		s, err := OpenWith(dir, o)
		if err != nil {
			t.Fatalf("opening store: %v", err)
		}
		return s
	}
	g := &testGate{t: t, st: domain.NewState(), store: open(), now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), batch: 100}
	agent := g.register("a1", 2, domain.Limits{})
	g.verify(agent, "r1", "c1", 1, calc("1+1", 0))
	g.flush()

	refused := func(step int) {
		t.Helper()
		g.verify(agent, fmt.Sprint("r-full-", step), "c1", step, calc("2+2", 0))
		if _, err := g.store.Prepare(g.st, &g.pending); !errors.Is(err, streams.ErrNoSpace) {
			t.Fatalf("prepare on a full disk: %v, want ErrNoSpace", err)
		}
		if a, err := g.store.Agent(agent); err != nil || a.ID != agent {
			t.Fatalf("reading on a full disk: %v %v", a, err)
		}
		if ck, err := g.store.Checkpoint(); err != nil || ck.Seq != g.seq-1 {
			t.Fatalf("checkpoint on a full disk: %+v %v, want seq %d", ck, err, g.seq-1)
		}
		if fs.Failed() != 0 {
			t.Fatalf("%d writes reached the full disk", fs.Failed())
		}
	}
	fs.Fill()
	refused(2)
	fs.Free()
	g.flush()
	if err := g.store.Close(); err != nil {
		t.Fatal(err)
	}

	fs.Fill()
	g.store = open()
	if !g.store.readOnly.Load() {
		t.Fatal("the store did not open read-only on a full disk")
	}
	refused(3)
	fs.Free()
	g.flush()
	if ck, err := g.store.Checkpoint(); err != nil || ck.Seq != g.seq {
		t.Fatalf("checkpoint after space returned: %+v %v, want seq %d", ck, err, g.seq)
	}
	g.assertLoadStateEqual()

	fs.Fill()
	done := make(chan error, 1)
	go func() { done <- g.store.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("closing on a full disk: %+v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("closing on a full disk hangs (a flush retried forever)")
	}
	// What the unflushed memtable held is lost: the checkpoint is behind
	// (the worker re-applies the log from it), and the store is whole.
	fs.Free()
	g.store = open()
	defer g.store.Close()
	if ck, err := g.store.Checkpoint(); err != nil || ck.Seq > g.seq {
		t.Fatalf("checkpoint after closing on a full disk: %+v %v", ck, err)
	}
	if _, err := g.store.LoadState(); err != nil {
		t.Fatalf("loading the state after closing on a full disk: %v", err)
	}
}
