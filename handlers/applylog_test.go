package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// TestApplyLogPipelineKeepsLogOrder folds a log longer than several decode
// chunks into a fresh store and checks the state equals the live one: the
// parallel decoders never reorder the fold.
func TestApplyLogPipelineKeepsLogOrder(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("order", 3)).Registered.AgentID
	const n = 3*handlers.DecodeChunk + 17
	for i := range n {
		g.Submit(t, gatetest.Verify(agent, fmt.Sprint("r", i), fmt.Sprint("c", i/40), i%40+1, fmt.Sprint(i, "+1")))
	}
	fresh, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	st := domain.NewState()
	got, err := handlers.ApplyLog(context.Background(), g.Log, fresh, st, projections.Checkpoint{})
	if err != nil {
		t.Fatal(err)
	}
	if want := int(g.Log.Head().Seq); got != want {
		t.Fatalf("applied %d events, the log holds %d", got, want)
	}
	if diff, err := projections.Equal(g.Store, fresh); err != nil || diff != "" {
		t.Fatalf("rebuilt projections differ: %q, %v", diff, err)
	}
	g.Stop(t)
}

// TestApplyLogStopsAtUndecodableRecord appends a chain-valid record whose
// payload is not an event: handlers.ApplyLog applies everything before it, names
// its seq, and returns without hanging on the decoders.
func TestApplyLogStopsAtUndecodableRecord(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("bad", 3)).Registered.AgentID
	for i := range handlers.DecodeChunk + 3 {
		g.Submit(t, gatetest.Verify(agent, fmt.Sprint("r", i), fmt.Sprint("c", i/40), i%40+1, "1+1"))
	}
	g.Cancel() // stop the worker, keep the log open
	if err := <-g.Done; err != nil {
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
	n, err := handlers.ApplyLog(context.Background(), g.Log, fresh, domain.NewState(), projections.Checkpoint{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("decoding log record %d", bad.Seq)) {
		t.Fatalf("handlers.ApplyLog error = %v, want the undecodable record %d named", err, bad.Seq)
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
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("chain", 3)).Registered.AgentID
	for i := range handlers.DecodeChunk + 9 {
		g.Submit(t, gatetest.Verify(agent, fmt.Sprint("r", i), fmt.Sprint("c", i/40), i%40+1, "1+1"))
	}
	defer g.Stop(t)
	at := recordAt(t, g.Log, 5)
	for _, tc := range []struct {
		hash string
		ok   bool
	}{{at.Hash(), true}, {strings.Repeat("0", 64), false}} {
		fresh, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := handlers.ApplyLog(context.Background(), g.Log, fresh, domain.NewState(), projections.Checkpoint{Seq: at.Seq, Hash: tc.hash})
		fresh.Close()
		switch {
		case tc.ok && (err != nil || n != int(g.Log.Head().Seq-at.Seq)):
			t.Errorf("from the true head: applied %d of %d: %v", n, g.Log.Head().Seq-at.Seq, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "does not follow the checkpoint chain") || n != 0):
			t.Errorf("from a wrong head: applied %d, error %v; want nothing applied and the chain named", n, err)
		}
	}
}

// cutLog reads the log underneath up to seq upto, and fails the read
// with errCut after record failAfter (0: never).
type cutLog struct {
	streams.Log
	upto, failAfter uint64
}

var (
	errCut  = errors.New("injected read failure")
	errUpto = errors.New("read up to the cut")
)

func (l *cutLog) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
	err := l.Log.Read(ctx, from, func(r streams.Record) error {
		if l.upto > 0 && r.Seq > l.upto {
			return errUpto
		}
		if err := fn(r); err != nil {
			return err
		}
		if l.failAfter > 0 && r.Seq == l.failAfter {
			return errCut
		}
		return nil
	})
	if errors.Is(err, errUpto) {
		return nil
	}
	return err
}

// TestApplyLogCommitsEveryBatchInOrderBehindTheFold pins handlers.ApplyLog's commit
// stage over a log of several projection batches: a full rebuild equals
// the live projections; a rebuild cut short by a read failure leaves the
// store at a batch boundary holding exactly the projections of the log up
// to its checkpoint (none of a batch folded but not committed), and
// resuming from that checkpoint and the state the store gives back
// completes it to the live projections.
func TestApplyLogCommitsEveryBatchInOrderBehindTheFold(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("batches", 3)).Registered.AgentID
	submitSpread(t, g, agent, 3*handlers.RecoverBatch+200, 64)
	defer g.Stop(t)
	head := g.Log.Head().Seq
	open := func() *projections.Store {
		s, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	ctx := context.Background()

	full := open()
	if got, err := handlers.ApplyLog(ctx, g.Log, full, domain.NewState(), projections.Checkpoint{}); err != nil || uint64(got) != head {
		t.Fatalf("full rebuild: applied %d of %d: %v", got, head, err)
	}
	if diff, err := projections.Equal(g.Store, full); err != nil || diff != "" {
		t.Fatalf("rebuilt projections differ: %q, %v", diff, err)
	}

	cut := open()
	failAfter := uint64(2*handlers.RecoverBatch + 100)
	if _, err := handlers.ApplyLog(ctx, &cutLog{Log: g.Log, failAfter: failAfter}, cut, domain.NewState(), projections.Checkpoint{}); !errors.Is(err, errCut) {
		t.Fatalf("cut rebuild: %v, want the read failure", err)
	}
	ck, err := cut.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if ck.Seq < handlers.RecoverBatch || ck.Seq >= failAfter {
		t.Fatalf("cut rebuild committed up to %d, want a batch boundary in [%d, %d)", ck.Seq, handlers.RecoverBatch, failAfter)
	}
	ref := open()
	if _, err := handlers.ApplyLog(ctx, &cutLog{Log: g.Log, upto: ck.Seq}, ref, domain.NewState(), projections.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	if diff, err := projections.Equal(ref, cut); err != nil || diff != "" {
		t.Fatalf("the cut store is not the projections of the log up to its checkpoint %d: %q, %v", ck.Seq, diff, err)
	}
	st, err := cut.LoadState()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := handlers.ApplyLog(ctx, g.Log, cut, st, ck); err != nil || uint64(got) != head-ck.Seq {
		t.Fatalf("resuming from %d: applied %d of %d: %v", ck.Seq, got, head-ck.Seq, err)
	}
	if diff, err := projections.Equal(g.Store, cut); err != nil || diff != "" {
		t.Fatalf("resumed projections differ: %q, %v", diff, err)
	}
}

// chainReadLog claims that its Read checks the chain (as the Kafka log's
// does), over a log underneath whose records it passes as they are.
type chainReadLog struct{ streams.Log }

func (chainReadLog) ReadChecksChain() bool { return true }

// TestApplyLogOverAChainCheckingLogHashesOnlyTheCheckpoints: over a log
// whose Read checks the chain, handlers.ApplyLog still compares the first record
// with the checkpoint's head, and the checkpoints it commits hold the
// true hashes (computed at batch ends only): a rebuild equals the live
// projections and ends at the log's head.
func TestApplyLogOverAChainCheckingLogHashesOnlyTheCheckpoints(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("checked", 3)).Registered.AgentID
	submitSpread(t, g, agent, handlers.RecoverBatch+300, 32)
	defer g.Stop(t)
	log := chainReadLog{g.Log}
	ctx := context.Background()
	fresh, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := handlers.ApplyLog(ctx, log, fresh, domain.NewState(), projections.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	if diff, err := projections.Equal(g.Store, fresh); err != nil || diff != "" {
		t.Fatalf("rebuilt projections differ: %q, %v", diff, err)
	}
	ck, err := fresh.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if head := g.Log.Head(); ck.Seq != head.Seq || ck.Hash != head.Hash {
		t.Fatalf("checkpoint %d %s, want the log head %d %s", ck.Seq, ck.Hash, head.Seq, head.Hash)
	}
	// From the middle: the right head is followed, a wrong one refused.
	mid := recordAt(t, g.Log, 100)
	for _, tc := range []struct {
		hash string
		ok   bool
	}{{mid.Hash(), true}, {strings.Repeat("0", 64), false}} {
		s, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := handlers.ApplyLog(ctx, log, s, domain.NewState(), projections.Checkpoint{Seq: mid.Seq, Hash: tc.hash})
		ck, cerr := s.Checkpoint()
		s.Close()
		switch {
		case cerr != nil:
			t.Fatal(cerr)
		case tc.ok && (err != nil || ck.Hash != g.Log.Head().Hash):
			t.Errorf("from the true head: applied %d, checkpoint %s: %v", got, ck.Hash, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "does not follow the checkpoint chain") || got != 0):
			t.Errorf("from a wrong head: applied %d, error %v; want nothing applied and the chain named", got, err)
		}
	}
}

// submitSpread decides n verify_action commands of agent from callers
// goroutines at once (so the worker batches them), each caller walking
// its own conversations.
func submitSpread(t *testing.T, g *gatetest.Gate, agent string, n, callers int) {
	t.Helper()
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += callers {
				if _, err := g.Worker.Submit(context.Background(), gatetest.Verify(agent, fmt.Sprint("r", i), fmt.Sprint("c", c, "/", i/(40*callers)), i/callers%40+1, fmt.Sprint(i, "+1"))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// recordAt reads the record at seq from log.
func recordAt(t *testing.T, log streams.Log, seq uint64) streams.Record {
	t.Helper()
	var at streams.Record
	if err := log.Read(context.Background(), seq, func(r streams.Record) error {
		at = streams.Record{Seq: r.Seq, Prev: r.Prev, Payload: append([]byte(nil), r.Payload...)}
		return errUpto
	}); err != nil && err != errUpto {
		t.Fatal(err)
	}
	return at
}
