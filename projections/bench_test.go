package projections

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// BenchmarkApply measures the projections' part of the durable path alone:
// one Apply (Prepare and Commit: the touched agents and conversations, the
// activity entries, summaries, request and action indexes and the
// checkpoint, in one Pebble batch) of a batch of 256 approved
// verify_action decisions by 16 agents, as the worker applies a full
// batch. Deciding the events is outside the timer. The figure is events/s.
func BenchmarkApply(b *testing.B) {
	const agents, batch = 16, 256
	s, err := OpenWith(b.TempDir(), Options{})
	if err != nil {
		b.Fatalf("opening store: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			b.Errorf("closing store: %v", err)
		}
	}()
	st := domain.NewState()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var seq uint64
	decide := func(f *Fold, cmd *domain.Command) *domain.Event {
		ev := domain.Decide(st, domain.Env{Now: now, Seq: seq + 1}, cmd)
		if ev == nil {
			b.Fatalf("no event for %+v", cmd.Request)
		}
		seq = ev.Seq
		f.Add(st, ev)
		return ev
	}
	apply := func(f *Fold) {
		if err := s.Apply(st, f, Checkpoint{Seq: seq, Hash: fmt.Sprint("h", seq), Time: now}); err != nil {
			b.Fatalf("applying: %v", err)
		}
	}
	var reg Fold
	ids := make([]string, agents)
	trust := domain.TrustLevel(3)
	for i := range ids {
		ev := decide(&reg, &domain.Command{
			Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal,
			Request: domain.RequestID{Source: "bench", ID: fmt.Sprint("reg-", i)},
			Register: &domain.RegisterAgent{
				Agent:      domain.AgentInfo{Name: fmt.Sprint("bot-", i), Type: "autonomous", PrincipalID: "org_bench"},
				TrustLevel: &trust,
				TokenHash:  testTokenHash,
			},
		})
		if ev.Registered == nil {
			b.Fatalf("registration refused: %+v", ev.Error)
		}
		ids[i] = ev.Registered.AgentID
	}
	apply(&reg)

	n := 0 // verify requests so far: agent n%agents, its (n/agents)th
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		var f Fold
		f.Grow(batch)
		for range batch {
			k := n / agents
			ev := decide(&f, &domain.Command{
				Type: domain.CmdVerifyAction, AgentID: ids[n%agents], TokenHash: testTokenHash,
				Request: domain.RequestID{Source: "bench", ID: fmt.Sprint("v-", n)},
				Verify: &domain.VerifyAction{
					Action: calc(fmt.Sprint(k, "+1"), 1000),
					Context: domain.ActionContext{ConversationID: fmt.Sprint("c", k/40),
						StepNumber: json.Number(fmt.Sprint(k%40 + 1))},
				},
			})
			if ev.Decided == nil || ev.Decided.Decision != domain.Approved {
				b.Fatalf("request %d not approved: %+v", n, ev)
			}
			n++
		}
		now = now.Add(time.Millisecond)
		b.StartTimer()
		apply(&f)
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
}
