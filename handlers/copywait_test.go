package handlers_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// oneCopy is a handlers.PrincipalCopier of one change of partition 0.
type oneCopy struct {
	change domain.CopiedChange
	ready  chan struct{}
}

func (c *oneCopy) Ready() <-chan struct{} { return c.ready }

func (c *oneCopy) CopyAfter(pos domain.CopyPosition) *domain.Command {
	if pos.Seq >= c.change.Seq {
		return nil
	}
	return &domain.Command{Type: domain.CmdCopyPrincipalState, Request: domain.RequestID{Source: "agentgate/global", ID: "0/3"},
		Copy: &domain.PrincipalStateCopy{From: domain.GlobalPartition, Seq: c.change.Seq, Hash: strings.Repeat("e", 64),
			Changes: []domain.CopiedChange{c.change}}}
}

// A copied key change is in the log, and so acknowledged to the HTTP
// instance waiting for it, before the partition's projections hold it:
// WaitCopiesProjected holds a key lookup until they do, so a key answered
// as issued (or revoked) is read as such at once on every partition.
func TestWaitCopiesProjected(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	hash := strings.Repeat("a", 64)
	feed := &oneCopy{ready: make(chan struct{}, 1), change: domain.CopiedChange{Seq: 3, Type: domain.EvPrincipalKeyIssued,
		KeyIssued: &domain.IssuePrincipalKey{PrincipalID: "org_w", KeyID: "k1", KeyHash: hash}}}
	w, err := handlers.NewWorker(handlers.WorkerConfig{Log: g.Log, Store: g.Store, Clock: clock.Now, Partition: 1, Copier: feed})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitCopiesProjected(context.Background()); err != nil {
		t.Fatalf("nothing copied yet, yet the wait failed: %v", err)
	}
	release := make(chan struct{})
	released := false
	let := func() {
		if !released {
			released = true
			close(release)
		}
	}
	defer handlers.HoldProjections(release)()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { let(); cancel(); <-done }()

	feed.ready <- struct{}{}
	for deadline := time.Now().Add(10 * time.Second); w.Head().Seq < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the copy was never appended")
		}
	}
	// The copy is in the log; its projections are held.
	ended, stop := context.WithCancel(context.Background())
	stop()
	if err := w.WaitCopiesProjected(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("the copy is not projected, yet the wait answered %v", err)
	}
	if p, err := g.Store.KeyPrincipal(hash); err == nil {
		t.Fatalf("the held projections already hold the key (of %q): the test holds nothing", p)
	}
	let()
	if err := w.WaitCopiesProjected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, err := g.Store.KeyPrincipal(hash); err != nil || p != "org_w" {
		t.Fatalf("after the wait the key reads %q, %v; want org_w", p, err)
	}
}
