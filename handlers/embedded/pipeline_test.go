package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/streams"
)

// faultyLog fails the appends it is told to fail and passes the rest to
// the real log underneath.
type faultyLog struct {
	streams.Log
	appends atomic.Int64
	// failAt fails the append with this 1-based number (0: none);
	// failAll fails every append while set.
	failAt  atomic.Int64
	failAll atomic.Bool
}

var errInjected = errors.New("injected append failure")

func (l *faultyLog) Append(ctx context.Context, batch []streams.Record) error {
	n := l.appends.Add(1)
	if l.failAll.Load() || n == l.failAt.Load() {
		return errInjected
	}
	return l.Log.Append(ctx, batch)
}

// TestDesign2_2_PipelinedWorkerNeverAnswersWhatTheLogRefused pins the
// worker's pipeline (decide n+2 ∥ append n+1 ∥ project n) under append
// failures, with many callers in flight: every request answered with an
// event has exactly that event in the log, every request answered
// handlers.ErrUnavailable has nothing there, a retry after the failures is decided
// once, and the projections rebuilt from the log equal the live ones.
func TestDesign2_2_PipelinedWorkerNeverAnswersWhatTheLogRefused(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now})
	if err != nil {
		t.Fatalf("opening gate: %v", err)
	}
	defer g.Close()
	flog := &faultyLog{Log: g.Log}
	w, err := handlers.NewWorker(handlers.WorkerConfig{Log: flog, Store: g.Store, Clock: clock.Now})
	if err != nil {
		t.Fatalf("starting worker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}
	}
	defer stop()
	reg, err := w.Submit(ctx, gatetest.Register("p1", 3))
	if err != nil || reg.Registered == nil {
		t.Fatalf("registering: %v %+v", err, reg)
	}
	agent := reg.Registered.AgentID

	type outcome struct {
		ev  *domain.Event
		err error
	}
	var mu sync.Mutex
	got := map[string]outcome{}
	run := func(prefix string, n int) {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprint(prefix, i)
				ev, err := w.Submit(ctx, gatetest.Verify(agent, id, fmt.Sprint("c", prefix, i), 1, fmt.Sprint(i, "+1")))
				mu.Lock()
				got[id] = outcome{ev, err}
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	// One append fails in the middle of a load of concurrent callers: the
	// batches decided on top of it fail with it.
	flog.failAt.Store(flog.appends.Load() + 3)
	run("a", 600)
	// Every append fails for a while.
	flog.failAll.Store(true)
	run("b", 200)
	flog.failAll.Store(false)
	// The refused requests of the failures, retried, and new ones.
	retried := 0
	for id, o := range got {
		if o.err != nil {
			retried++
			delete(got, id)
		}
	}
	if retried < 200 {
		t.Fatalf("only %d requests were refused; the injected failures refused nothing?", retried)
	}
	run("a", 600)
	run("b", 200)

	stop()
	// What the log holds, by request.
	inLog := map[string]*domain.Event{}
	bg := context.Background()
	err = g.Log.Read(bg, 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return err
		}
		if ev.Command != nil && ev.Command.Type == domain.CmdVerifyAction {
			if _, dup := inLog[ev.Command.Request.ID]; dup {
				t.Errorf("request %s decided twice in the log", ev.Command.Request.ID)
			}
			inLog[ev.Command.Request.ID] = ev
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading log: %v", err)
	}
	for id, o := range got {
		if o.err != nil {
			t.Errorf("request %s refused after the log recovered: %v", id, o.err)
			continue
		}
		rec := inLog[id]
		if rec == nil {
			t.Errorf("request %s answered with event %d, which is not in the log", id, o.ev.Seq)
			continue
		}
		if rec.Seq != o.ev.Seq || rec.Decided == nil || o.ev.Decided == nil || rec.Decided.ActionID != o.ev.Decided.ActionID {
			t.Errorf("request %s answered with event %d, the log holds event %d", id, o.ev.Seq, rec.Seq)
		}
	}
	if len(inLog) != 800 {
		t.Errorf("the log holds %d decided requests, want 800", len(inLog))
	}
	rep, err := replay.Replay(bg, g.Log, g.Store, false, nil)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("projections rebuilt from the log differ from the live ones: %s", rep.ProjectionDiff)
	}
}
