package projections

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// BenchmarkApply measures the projections' part of the durable path alone:
// one Apply (Prepare and Commit: the touched agents and conversations, the
// activity entries, summaries, request and action indexes and the
// checkpoint, in one Pebble batch) of a batch of 256 approved
// verify_action decisions by 16 agents, as the worker applies a full
// batch. Deciding the events is outside the timer. The figure is events/s.
func BenchmarkApply(b *testing.B) {
	const agents, batch = 16, 256
	s := benchStore(b)
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

// BenchmarkApplyA2A is BenchmarkApply for A2A verdicts: one Apply of a
// batch of 256 forwarded messages over 64 pairs of 4 boundaries (their
// token buckets copied from the state, the counters of the gate, each
// boundary and each pair read and written). The figure is events/s.
func BenchmarkApplyA2A(b *testing.B) {
	const batch, pairs = 256, 64
	s := benchStore(b)
	st := domain.NewState()
	cfg := domain.DefaultConfig()
	c := domain.DefaultA2AConfig()
	c.DefaultAllow, c.RatePerMinute, c.Burst = true, domain.MaxA2ARatePerMinute, domain.MaxA2ARatePerMinute
	cfg.A2A = &c
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var seq uint64
	signer := a2aSigner{}
	decide := func(f *Fold, cmd *domain.Command) *domain.Event {
		ev := domain.Decide(st, domain.Env{Now: now, Seq: seq + 1, Signer: signer}, cmd)
		seq = ev.Seq
		f.Add(st, ev)
		return ev
	}
	var setup Fold
	decide(&setup, &domain.Command{Type: domain.CmdConfigure, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "bench", ID: "configure"}, Configure: &domain.Configure{Config: cfg}})
	if err := s.Apply(st, &setup, Checkpoint{Seq: seq, Hash: "h", Time: now}); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		b.StopTimer()
		var f Fold
		f.Grow(batch)
		for range batch {
			p := n % pairs
			ev := decide(&f, &domain.Command{Type: domain.CmdA2AMessage, Principal: fmt.Sprint("org_", p%4),
				Request: domain.RequestID{Source: "bench", ID: fmt.Sprint("m-", n)},
				A2A: &a2a.Message{SenderAgentID: fmt.Sprint("s", p), ReceiverAgentID: "r", PayloadType: a2a.PayloadGeneral,
					Payload: json.RawMessage(`{"m":1}`)}})
			if ev.A2AVerdict == nil || ev.A2AVerdict.Status != a2a.StatusForwarded {
				b.Fatalf("message %d not forwarded: %+v", n, ev)
			}
			n++
		}
		now = now.Add(time.Millisecond)
		b.StartTimer()
		if err := s.Apply(st, &f, Checkpoint{Seq: seq, Hash: fmt.Sprint("h", seq), Time: now}); err != nil {
			b.Fatalf("applying: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
}

// benchStore opens a store in b's temporary directory, closed when the
// benchmark ends.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := OpenWith(b.TempDir(), Options{})
	if err != nil {
		b.Fatalf("opening store: %v", err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("closing store: %v", err)
		}
	})
	return s
}
