package embedded_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

// BenchmarkDurablePath measures the in-process path of one decision:
// decode the JSON body → decide → append (fsync, batched) → apply the
// projections → answer, with many callers in flight so the worker batches.
// The figure is decisions/s.
func BenchmarkDurablePath(b *testing.B) {
	durablePath(b, 128)
}

// BenchmarkDurablePathInFlight is BenchmarkDurablePath with more callers in
// flight (per GOMAXPROCS): each caller waits for its answer, so with few
// of them the rate is bounded by a request's latency (about three fsync
// cycles), with many by the CPU.
func BenchmarkDurablePathInFlight(b *testing.B) {
	for _, n := range []int{256, 512} {
		b.Run(fmt.Sprintf("callers=%d", n*runtime.GOMAXPROCS(0)), func(b *testing.B) { durablePath(b, n) })
	}
}

func durablePath(b *testing.B, parallelism int) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(b, b.TempDir(), clock.Now)
	defer g.Stop(b)
	tl := domain.TrustLevel(3)
	reg := gatetest.Register("bench", 3)
	reg.Register.TrustLevel = &tl
	reg.Register.Budget = domain.Limits{}
	agent := g.Submit(b, reg).Registered.AgentID
	tokenHash := command.HashSecret(gatetest.Token)
	var conv atomic.Int64
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		c := conv.Add(1)
		step := 0
		for pb.Next() {
			step++
			if step > 50 {
				c, step = conv.Add(1), 1
			}
			body := fmt.Appendf(nil, `{"action":{"type":"calculate","query":"%d+%d"},"context":{"conversation_id":"c%d","step_number":%d}}`, c, step, c, step)
			// Decoded as the HTTP endpoint and the CloudEvent path decode
			// it: the strict fast path, encoding/json for anything else.
			var v domain.VerifyAction
			if _, _, ok := eventjson.DecodeVerifyRequest(body, &v); !ok {
				v = domain.VerifyAction{}
				if err := json.Unmarshal(body, &v); err != nil {
					b.Error(err)
					return
				}
			}
			ev, err := g.Worker.Submit(context.Background(), &domain.Command{
				Type: domain.CmdVerifyAction, AgentID: agent, TokenHash: tokenHash,
				Request: domain.RequestID{Source: "bench", ID: fmt.Sprint(c, "/", step)}, Verify: &v,
			})
			if err != nil {
				b.Error(err)
				return
			}
			if ev.Decided == nil || ev.Decided.Decision != domain.Approved {
				b.Errorf("decision %+v", ev.Decided)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}

// BenchmarkReplay measures rebuilding the projections from the log
// (decode, fold, write projections), in events/s.
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(b, dir, clock.Now)
	agent := g.Submit(b, gatetest.Register("bench", 3)).Registered.AgentID
	const events = 20_000
	ctx := context.Background()
	done := make(chan struct{}, 256)
	for i := 0; i < events; i++ {
		c, step := i/50, i%50+1
		go func() {
			if _, err := g.Worker.Submit(ctx, gatetest.Verify(agent, fmt.Sprint(i), fmt.Sprint("c", c), step, fmt.Sprint(i))); err != nil {
				b.Error(err)
			}
			done <- struct{}{}
		}()
		if i >= 255 {
			<-done
		}
	}
	for i := 0; i < 255; i++ {
		<-done
	}
	b.ResetTimer()
	var total int
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		rep, err := replay.Replay(ctx, g.Log, g.Store, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += rep.Events
		elapsed += rep.Elapsed
	}
	b.StopTimer()
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
	g.Stop(b)
}

// TestSubmitToStoppedWorkerIsUnavailable pins Submit's contract: a stopped
// worker answers handlers.ErrUnavailable, even for a request that got into the
// queue after the worker drained it, never the caller's timeout.
func TestSubmitToStoppedWorkerIsUnavailable(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("s1", 3)).Registered.AgentID
	g.Cancel()
	if err := <-g.Done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			t.Errorf("closing gate: %v", err)
		}
	}()
	// Submit's first select picks at random between the queue and done:
	// enough attempts put some requests into the dead queue.
	for i := 0; i < 64; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := g.Worker.Submit(ctx, gatetest.Verify(agent, fmt.Sprint("late", i), "c", i+1, "1+1"))
		cancel()
		if !errors.Is(err, handlers.ErrUnavailable) {
			t.Fatalf("submit %d to a stopped worker: %v, want handlers.ErrUnavailable", i, err)
		}
	}
}
