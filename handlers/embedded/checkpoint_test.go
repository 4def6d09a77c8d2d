package embedded_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

// TestCheckpointCadence pins issue 5's cadence: a signed checkpoint at the
// end of the batch in which N events or the interval have passed since the
// last one, covering the event before it, resumed across a restart, and
// reproduced by replay --verify.
func TestCheckpointCadence(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	policy := domain.CheckpointPolicy{Events: 5, Interval: domain.Duration(time.Minute)}
	g := gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: policy})
	agent := g.Submit(t, gatetest.Register("ck", 2)).Registered.AgentID
	for i := 1; i <= 9; i++ { // events 2-5 and 7-11: checkpoints at 6 and 12
		clock.Advance(time.Second)
		g.Submit(t, gatetest.Verify(agent, "v"+string(rune('a'+i)), "c1", i, "1+1"))
	}
	evs := gatetest.LogEvents(t, g.Log)
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
	g.Submit(t, gatetest.Verify(agent, "t1", "c1", 12, "1+1"))
	clock.Advance(time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for g.Worker.Head().Seq != 14 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if h := g.Worker.Head().Seq; h != 14 {
		for _, ev := range gatetest.LogEvents(t, g.Log) {
			t.Logf("%d %s %v", ev.Seq, ev.Type, ev.Time)
		}
		t.Fatalf("head %d after the interval, want the checkpoint at 14", h)
	}
	// A graceful stop with three events after the last checkpoint
	// appends the checkpoint that covers them (issue 11): seq 18 covers
	// 17, and a restart counts the next five events from zero.
	for i := 0; i < 3; i++ {
		clock.Advance(time.Second)
		g.Submit(t, gatetest.Verify(agent, "r"+string(rune('a'+i)), "c1", 13+i, "1+1"))
	}
	g.Stop(t)
	g = gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: policy})
	defer g.Stop(t)
	if ev := gatetest.LogEvents(t, g.Log)[17]; ev.Seq != 18 || ev.Type != domain.EvLogCheckpointed || ev.Checkpoint.Seq != 17 {
		t.Fatalf("event 18 is %s, want the checkpoint of the graceful stop", ev.Type)
	}
	for i := 0; i < 5; i++ {
		clock.Advance(time.Second)
		g.Submit(t, gatetest.Verify(agent, "s"+string(rune('a'+i)), "c1", 16+i, "1+1"))
	}
	if ev := gatetest.LogEvents(t, g.Log)[23]; ev.Seq != 24 || ev.Type != domain.EvLogCheckpointed {
		t.Fatalf("event 24 is %s, want the checkpoint after 5 events", ev.Type)
	}

	rep, err := audit.Verify(context.Background(), audit.LogSource(g.Log, 0), g.Keyring.JWKS(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Partitions[0].Checkpoints != 5 || rep.Partitions[0].LastSeq != 24 {
		t.Fatalf("audit: %+v %v", rep.Partitions, rep.Break)
	}
	rr, err := replay.Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil {
		t.Fatal(err)
	}
	if !rr.OK() {
		t.Fatalf("replay: %s %v", rr.ProjectionDiff, rr.Mismatches)
	}
}

// TestFinalCheckpointOnlyWhenUncovered: a graceful stop right after a
// checkpoint appends nothing more, and one after a stop appends nothing
// either (issue 11).
func TestFinalCheckpointOnlyWhenUncovered(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	policy := domain.CheckpointPolicy{Events: 2, Interval: domain.Duration(time.Hour)}
	g := gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: policy})
	g.Submit(t, gatetest.Register("fc", 2))
	clock.Advance(time.Second)
	g.Submit(t, gatetest.Register("fd", 2)) // seq 3 is the checkpoint of 1-2
	g.Stop(t)
	g = gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: policy})
	g.Stop(t)
	g = gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: policy})
	defer g.Stop(t)
	evs := gatetest.LogEvents(t, g.Log)
	if len(evs) != 3 || evs[2].Type != domain.EvLogCheckpointed {
		t.Fatalf("%d events, want 3 ending with the due checkpoint", len(evs))
	}
}
