package embedded_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/fair"
)

// heldVerifier is an handlers.ActionVerifier whose verdicts wait for the test: each
// run reports its tenant on entered, then answers VERIFIED on a token from
// release, or TIMEOUT when its context ends.
type heldVerifier struct {
	entered chan fair.Tenant
	release chan struct{}
}

func (v *heldVerifier) Verdict(ctx context.Context, act *domain.Action) *domain.EngineVerdict {
	v.entered <- fair.TenantOf(ctx)
	select {
	case <-v.release:
		return &domain.EngineVerdict{Engine: "math", EngineVersion: "0", Status: engines.Verified}
	case <-ctx.Done():
		return &domain.EngineVerdict{Engine: "math", EngineVersion: "0", Status: engines.Timeout}
	}
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case x := <-ch:
		return x
	case <-time.After(20 * time.Second):
		t.Fatalf("waiting for %s", what)
		var zero T
		return zero
	}
}

// Issue 11 item 11: Enqueue does not run the engine on its caller's
// goroutine (a Kafka partition's reader): it returns while the verdict
// runs, with the agent and its principal as the verdict's tenant. The
// commands enqueued after it are decided after it, in order; and when the
// enqueuer's context ends before the verdict, the command is answered
// handlers.ErrUnavailable undecided (the next owner decides it) and the worker
// goes on.
func TestIssue11_EnqueueDoesNotWaitForTheEngine(t *testing.T) {
	v := &heldVerifier{entered: make(chan fair.Tenant, 4), release: make(chan struct{})}
	g, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	rg := gatetest.Run(g)
	defer rg.Stop(t)
	agent := rg.Submit(t, gatetest.Register("r1", 3)).AgentID

	enqueued := make(chan *handlers.Pending, 1)
	go func() {
		p, err := g.Worker.Enqueue(context.Background(), gatetest.Verify(agent, "v1", "c", 1, "2+2=4"))
		if err != nil {
			t.Error(err)
		}
		enqueued <- p
	}()
	p1 := within(t, enqueued, "Enqueue to return while the engine runs")
	if tn := within(t, v.entered, "the engine to run"); tn != (fair.Tenant{Principal: "org_1", Agent: agent}) {
		t.Fatalf("the verdict's tenant is %+v", tn)
	}
	// Queued after v1: a command without an engine waits for v1's verdict.
	p2, err := g.Worker.Enqueue(context.Background(), gatetest.Register("r2", 3))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p2.Done():
		t.Fatal("a command queued after a verdict in progress was decided before it")
	default:
	}
	v.release <- struct{}{}
	ev1, err1 := p1.Wait(context.Background())
	ev2, err2 := p2.Wait(context.Background())
	if err1 != nil || err2 != nil || ev1.Command.Verdict == nil || ev1.Command.Verdict.Status != engines.Verified || ev2.Seq <= ev1.Seq {
		t.Fatalf("v1 %+v %v, r2 %+v %v: want v1 decided on its verdict, then r2", ev1, err1, ev2, err2)
	}

	// The enqueuer's context ends before the verdict: undecided.
	ectx, ecancel := context.WithCancel(context.Background())
	p3, err := g.Worker.Enqueue(ectx, gatetest.Verify(agent, "v3", "c", 2, "3+3=6"))
	if err != nil {
		t.Fatal(err)
	}
	within(t, v.entered, "the engine to run")
	p4, err := g.Worker.Enqueue(context.Background(), gatetest.Register("r4", 3))
	if err != nil {
		t.Fatal(err)
	}
	ecancel()
	if ev, err := p3.Wait(context.Background()); !errors.Is(err, handlers.ErrUnavailable) || ev != nil {
		t.Fatalf("v3, its enqueuer gone: %+v %v, want handlers.ErrUnavailable", ev, err)
	}
	if ev, err := p4.Wait(context.Background()); err != nil || ev == nil || ev.Seq <= ev2.Seq {
		t.Fatalf("r4 after the stale v3: %+v %v", ev, err)
	}
	if seq, err := g.Store.RequestSeq(domain.RequestID{Source: "test", ID: "v3"}); err == nil {
		t.Fatalf("v3 was recorded at %d", seq)
	}
}
