package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// TestApplyLogPipelineKeepsLogOrder folds a log longer than several decode
// chunks into a fresh store and checks the state equals the live one: the
// parallel decoders never reorder the fold.
func TestApplyLogPipelineKeepsLogOrder(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g := startGate(t, t.TempDir(), clock.Now)
	agent := g.submit(t, registerCmd("order", 3)).Registered.AgentID
	const n = 3*decodeChunk + 17
	for i := range n {
		g.submit(t, verifyCmd(agent, fmt.Sprint("r", i), fmt.Sprint("c", i/40), i%40+1, fmt.Sprint(i, "+1")))
	}
	fresh, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	st := domain.NewState()
	got, err := ApplyLog(context.Background(), g.Log, fresh, st, projections.Checkpoint{})
	if err != nil {
		t.Fatal(err)
	}
	if want := int(g.Log.Head().Seq); got != want {
		t.Fatalf("applied %d events, the log holds %d", got, want)
	}
	if diff, err := projections.Equal(g.Store, fresh); err != nil || diff != "" {
		t.Fatalf("rebuilt projections differ: %q, %v", diff, err)
	}
	g.stop(t)
}

// TestApplyLogStopsAtUndecodableRecord appends a chain-valid record whose
// payload is not an event: ApplyLog applies everything before it, names
// its seq, and returns without hanging on the decoders.
func TestApplyLogStopsAtUndecodableRecord(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g := startGate(t, t.TempDir(), clock.Now)
	agent := g.submit(t, registerCmd("bad", 3)).Registered.AgentID
	for i := range decodeChunk + 3 {
		g.submit(t, verifyCmd(agent, fmt.Sprint("r", i), fmt.Sprint("c", i/40), i%40+1, "1+1"))
	}
	g.cancel() // stop the worker, keep the log open
	if err := <-g.done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	defer g.Close()
	head := g.Log.Head()
	bad := streams.Record{Seq: head.Seq + 1, Prev: head.Hash, Payload: []byte(`{"seq":`)}
	if err := g.Log.Append(context.Background(), []streams.Record{bad}); err != nil {
		t.Fatal(err)
	}
	// A valid event after it must not be applied either.
	ev := &domain.Event{Seq: bad.Seq + 1, Prev: bad.Hash(), Type: domain.EvApprovalsExpired, Expired: &domain.ApprovalsExpired{}}
	p, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Log.Append(context.Background(), []streams.Record{{Seq: ev.Seq, Prev: ev.Prev, Payload: p}}); err != nil {
		t.Fatal(err)
	}
	fresh, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	n, err := ApplyLog(context.Background(), g.Log, fresh, domain.NewState(), projections.Checkpoint{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("decoding log record %d", bad.Seq)) {
		t.Fatalf("ApplyLog error = %v, want the undecodable record %d named", err, bad.Seq)
	}
	if n != int(head.Seq) {
		t.Fatalf("applied %d events before the bad record, want %d", n, head.Seq)
	}
	ck, err := fresh.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if ck.Seq > head.Seq {
		t.Fatalf("store checkpoint %d passed the bad record %d", ck.Seq, bad.Seq)
	}
}

// TestApplyLogChecksTheChainFromItsCheckpoint applies a log tail after a
// checkpoint: with the checkpoint's true head it applies every record (the
// decoders' hashes continue the chain record by record), with another
// head it refuses the first record and applies nothing.
func TestApplyLogChecksTheChainFromItsCheckpoint(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g := startGate(t, t.TempDir(), clock.Now)
	agent := g.submit(t, registerCmd("chain", 3)).Registered.AgentID
	for i := range decodeChunk + 9 {
		g.submit(t, verifyCmd(agent, fmt.Sprint("r", i), fmt.Sprint("c", i/40), i%40+1, "1+1"))
	}
	defer g.stop(t)
	var at streams.Record
	if err := g.Log.Read(context.Background(), 5, func(r streams.Record) error {
		at = streams.Record{Seq: r.Seq, Prev: r.Prev, Payload: append([]byte(nil), r.Payload...)}
		return errStop
	}); err != nil && err != errStop {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hash string
		ok   bool
	}{{at.Hash(), true}, {strings.Repeat("0", 64), false}} {
		fresh, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := ApplyLog(context.Background(), g.Log, fresh, domain.NewState(), projections.Checkpoint{Seq: at.Seq, Hash: tc.hash})
		fresh.Close()
		switch {
		case tc.ok && (err != nil || n != int(g.Log.Head().Seq-at.Seq)):
			t.Errorf("from the true head: applied %d of %d: %v", n, g.Log.Head().Seq-at.Seq, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "does not follow the checkpoint chain") || n != 0):
			t.Errorf("from a wrong head: applied %d, error %v; want nothing applied and the chain named", n, err)
		}
	}
}
