package embedded_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// changes is a handlers.PrincipalCopier over a fixed list of changes of
// partition 0.
type changes struct {
	mu    sync.Mutex
	list  []domain.CopiedChange
	ready chan struct{}
}

func (c *changes) Ready() <-chan struct{} { return c.ready }

func (c *changes) CopyAfter(pos domain.CopyPosition) *domain.Command {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rest []domain.CopiedChange
	for _, ch := range c.list {
		if ch.Seq > pos.Seq {
			rest = append(rest, ch)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	last := rest[len(rest)-1].Seq
	return &domain.Command{Type: domain.CmdCopyPrincipalState, Request: domain.RequestID{Source: "agentgate/global", ID: fmt.Sprint("0/", last)},
		Copy: &domain.PrincipalStateCopy{From: domain.GlobalPartition, Seq: last, Hash: strings.Repeat("e", 64), Changes: rest}}
}

// add keeps ch; signal tells the worker.
func (c *changes) add(ch domain.CopiedChange, signal bool) {
	c.mu.Lock()
	c.list = append(c.list, ch)
	c.mu.Unlock()
	if signal {
		c.ready <- struct{}{}
	}
}

// A worker with a Copier copies partition 0's changes when told of them,
// with no request queued, and before the requests of the batch it decides
// next; a copy whose append failed is copied again once the state is
// rebuilt, and never twice.
func TestWorkerCopiesPrincipalWideChanges(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	flog := &faultyLog{Log: g.Log}
	feed := &changes{ready: make(chan struct{}, 1)}
	w, err := handlers.NewWorker(handlers.WorkerConfig{Log: flog, Store: g.Store, Clock: clock.Now, Partition: 1, Copier: feed})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	key := func(id string) *domain.IssuePrincipalKey {
		return &domain.IssuePrincipalKey{PrincipalID: "org_c", KeyID: id, KeyHash: strings.Repeat(id[len(id)-1:], 64)}
	}
	// No request queued: the signal alone makes a batch.
	feed.add(domain.CopiedChange{Seq: 3, Type: domain.EvPrincipalKeyIssued, KeyIssued: key("k1")}, true)
	copied := func(head uint64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); w.Head().Seq < head; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("nothing copied: head %d", w.Head().Seq)
			}
		}
	}
	copied(1)
	// The next change and a request in one batch: the copy is decided
	// first. Its append fails: the state is rebuilt and the copy decided
	// again with the next batch.
	flog.failAt.Store(flog.appends.Load() + 1)
	feed.add(domain.CopiedChange{Seq: 5, Type: domain.EvPrincipalKeyRevoked, KeyRevoked: key("k1")}, false)
	if _, err := w.Submit(ctx, gatetest.Register("org_c", 1)); err == nil {
		t.Fatal("the failed batch was answered")
	}
	reg, err := w.Submit(ctx, gatetest.Register("org_c", 1))
	if err != nil || reg.Registered == nil {
		t.Fatalf("registering after the failure: %v %+v", err, reg)
	}
	var types []domain.EventType
	for seq := uint64(1); seq <= w.Head().Seq; seq++ {
		ev, err := handlers.ReadEvent(ctx, g.Log, seq)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	want := []domain.EventType{domain.EvPrincipalStateCopied, domain.EvPrincipalStateCopied, domain.EvAgentRegistered}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("the log holds %v, want %v", types, want)
	}
	st, err := g.Store.LoadState()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Keys) != 0 || st.Copies[1].Seq != 5 {
		t.Fatalf("after the copies: keys %v, copied %+v", st.Keys, st.Copies)
	}
}
