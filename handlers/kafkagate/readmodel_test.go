package kafkagate

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// Issue 11 item 6: on a full disk the read model keeps the batch it could
// not project and projects it once space returns, rather than logging an
// error and going on without it (its events would never be readable).
func TestReadModelWaitsForSpace(t *testing.T) {
	fs := diskspace.NewFullFS(nil)
	s, err := projections.OpenWith(t.TempDir(), projections.Options{NoSnapshots: true, FS: fs, MinFreeBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &ReadModel{store: s, st: domain.NewState(), log: slog.New(slog.NewTextHandler(io.Discard, nil)), pos: map[int32]projections.Position{}}
	tl := domain.TrustLevel(1)
	ev := domain.Decide(domain.NewState(), domain.Env{Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Seq: 1}, &domain.Command{
		Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal, Request: domain.RequestID{Source: "test", ID: "reg"},
		Register: &domain.RegisterAgent{Agent: domain.AgentInfo{Name: "bot", Type: "autonomous", PrincipalID: "org_a"}, TrustLevel: &tl, TokenHash: strings.Repeat("ab", 32)},
	})
	if ev == nil || ev.Registered == nil {
		t.Fatalf("registration: %+v", ev)
	}
	pr := &progress{changed: make(chan struct{}), kick: make(chan struct{}, 1)}
	fs.Fill()
	done := make(chan struct{})
	go func() {
		m.apply(context.Background(), pr, []*domain.Event{ev}, projections.Position{Seq: ev.Seq})
		close(done)
	}()
	for deadline := time.Now().Add(30 * time.Second); fs.FullReports() < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the read model did not retry the refused batch")
		}
		select {
		case <-done:
			t.Fatal("the read model gave up the batch it could not project")
		case <-time.After(10 * time.Millisecond):
		}
	}
	fs.Free()
	<-done
	if _, err := s.Agent(ev.Registered.AgentID); err != nil {
		t.Fatalf("the agent registered while the disk was full is not in the read model: %v", err)
	}
	if pr.applied != ev.Seq || m.failed {
		t.Fatalf("after space returned: applied seq %d (want %d), failed %v", pr.applied, ev.Seq, m.failed)
	}
}
