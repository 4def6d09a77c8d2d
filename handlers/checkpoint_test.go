package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/audit"
	"github.com/agentgate/agentgate/streams"
)

func startGateWith(t testing.TB, dir string, clock func() time.Time, p domain.CheckpointPolicy) *runningGate {
	t.Helper()
	g, err := OpenGate(Options{DataDir: dir, AdminKey: "admin", Clock: clock, Checkpoint: p})
	if err != nil {
		t.Fatalf("opening gate: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rg := &runningGate{Gate: g, cancel: cancel, done: make(chan error, 1)}
	go func() { rg.done <- g.Worker.Run(ctx) }()
	return rg
}

// logEvents decodes the whole log.
func logEvents(t testing.TB, l streams.Log) []*domain.Event {
	t.Helper()
	var out []*domain.Event
	err := l.Read(context.Background(), 1, func(r streams.Record) error {
		ev, err := DecodeEvent(r.Payload)
		out = append(out, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckpointCadence pins issue 5's cadence: a signed checkpoint at the
// end of the batch in which N events or the interval have passed since the
// last one, covering the event before it, resumed across a restart, and
// reproduced by replay --verify.
func TestCheckpointCadence(t *testing.T) {
	dir := t.TempDir()
	clock := &testClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	policy := domain.CheckpointPolicy{Events: 5, Interval: domain.Duration(time.Minute)}
	g := startGateWith(t, dir, clock.Now, policy)
	agent := g.submit(t, registerCmd("ck", 2)).Registered.AgentID
	for i := 1; i <= 9; i++ { // events 2-5 and 7-11: checkpoints at 6 and 12
		clock.Advance(time.Second)
		g.submit(t, verifyCmd(agent, "v"+string(rune('a'+i)), "c1", i, "1+1"))
	}
	evs := logEvents(t, g.Log)
	var cks []uint64
	for _, ev := range evs {
		if ev.Type == domain.EvLogCheckpointed {
			cks = append(cks, ev.Seq)
			if ev.Checkpoint.Seq != ev.Seq-1 || ev.Checkpoint.Head != ev.Prev || ev.Checkpoint.Next != policy {
				t.Fatalf("checkpoint %d = %+v, prev %s", ev.Seq, ev.Checkpoint, ev.Prev)
			}
		}
	}
	if len(cks) != 2 || cks[0] != 6 || cks[1] != 12 {
		t.Fatalf("checkpoints at %v (of %d events), want [6 12]", cks, len(evs))
	}
	// Time: one event, then the interval passes with nothing else: the
	// worker's tick appends the checkpoint alone.
	clock.Advance(time.Second)
	g.submit(t, verifyCmd(agent, "t1", "c1", 12, "1+1"))
	clock.Advance(time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for g.Worker.Head().Seq != 14 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if h := g.Worker.Head().Seq; h != 14 {
		for _, ev := range logEvents(t, g.Log) {
			t.Logf("%d %s %v", ev.Seq, ev.Type, ev.Time)
		}
		t.Fatalf("head %d after the interval, want the checkpoint at 14", h)
	}
	// Restart: three events after the last checkpoint, then two more make
	// five, counted across the restart.
	for i := 0; i < 3; i++ {
		clock.Advance(time.Second)
		g.submit(t, verifyCmd(agent, "r"+string(rune('a'+i)), "c1", 13+i, "1+1"))
	}
	g.stop(t)
	g = startGateWith(t, dir, clock.Now, policy)
	defer g.stop(t)
	for i := 0; i < 2; i++ {
		clock.Advance(time.Second)
		g.submit(t, verifyCmd(agent, "s"+string(rune('a'+i)), "c1", 16+i, "1+1"))
	}
	if ev := logEvents(t, g.Log)[19]; ev.Seq != 20 || ev.Type != domain.EvLogCheckpointed {
		t.Fatalf("event 20 is %s, want the checkpoint after 5 events across the restart", ev.Type)
	}

	rep, err := audit.Verify(context.Background(), audit.LogSource(g.Log, 0), g.Keyring.JWKS(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Partitions[0].Checkpoints != 4 || rep.Partitions[0].LastSeq != 20 {
		t.Fatalf("audit: %+v %v", rep.Partitions, rep.Break)
	}
	rr, err := Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil {
		t.Fatal(err)
	}
	if !rr.OK() {
		t.Fatalf("replay: %s %v", rr.ProjectionDiff, rr.Mismatches)
	}
}
