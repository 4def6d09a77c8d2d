package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// decidedChain encodes n action.decided events shaped as the gate records
// them (the command, the verification block, the budget left), chained,
// with a checkpoint every 1,000 (unsigned: the benchmark skips
// signatures). The payloads are ~1 KB, the size of a real decision
// without an attestation.
func decidedChain(tb testing.TB, n int) [][]byte {
	tb.Helper()
	out := make([][]byte, 0, n)
	prev := ""
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	left := domain.USD(90 * domain.MicrosPerUSD)
	reqs := int64(900)
	policy := domain.DefaultCheckpointPolicy()
	uncovered := 0
	for i := 1; i <= n; i++ {
		t := at.Add(time.Duration(i) * time.Millisecond)
		var ev *domain.Event
		if uncovered == 1000 {
			ev = &domain.Event{Seq: uint64(i), Prev: prev, Time: t, Type: domain.EvLogCheckpointed,
				Checkpoint: &domain.LogCheckpoint{Seq: uint64(i - 1), Head: prev, Next: policy, Signature: "x"}}
			uncovered = 0
		} else {
			agent := fmt.Sprintf("agent_%012x", i%97)
			ev = &domain.Event{Seq: uint64(i), Prev: prev, Time: t, Type: domain.EvActionDecided, AgentID: agent,
				Command: &domain.Command{Type: domain.CmdVerifyAction, AgentID: agent,
					TokenHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
					Request:   domain.RequestID{Source: "http", ID: fmt.Sprintf("req-%d", i)},
					Verify: &domain.VerifyAction{
						Action:  domain.Action{Type: "database_query", Query: fmt.Sprintf("SELECT id, name, total FROM orders WHERE customer_id = %d LIMIT 50", i)},
						Context: domain.ActionContext{ConversationID: "conv_7f3a", StepNumber: json.Number(fmt.Sprint(i))},
					}},
				Decided: &domain.ActionDecided{ActionID: fmt.Sprintf("act_%020x", i), Kind: domain.KindAction, ActionType: "database_query",
					Decision: domain.Approved, Verification: domain.Verification{Status: "VERIFIED", Engine: "sql", RiskLevel: "low",
						ChecksPassed: []string{"permission", "budget", "loop_detection", "sql_safety"}},
					RequestDigest:  "4a44dc15364204a80fe80e9039455cc1608281820fe2b24f1e5233ade6af1dd5",
					Fingerprint:    "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b",
					ConversationID: "conv_7f3a", Step: int64(i), StepConsumed: true, ReservedCost: 1000,
					Budget: domain.BudgetRemaining{DailyCost: &left, HourlyRequests: &reqs, DailyRequests: &reqs}},
			}
			uncovered++
		}
		b, err := json.Marshal(ev)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
		prev = streams.HashPayload(b)
	}
	return out
}

// BenchmarkVerifyChain is issue 5's figure: chain verification without
// signature checks (seq, prev = SHA-256 of the stored bytes, checkpoint
// content and cadence), in events/s.
func BenchmarkVerifyChain(b *testing.B) {
	const n = 100_000
	chain := decidedChain(b, n)
	bytes := 0
	for _, p := range chain {
		bytes += len(p)
	}
	b.SetBytes(int64(bytes))
	b.ResetTimer()
	for b.Loop() {
		rep, err := audit.Verify(context.Background(), audit.Payloads(0, chain), nil, audit.Options{SkipSignatures: true})
		if err != nil || !rep.OK() || rep.Partitions[0].Events != n {
			b.Fatalf("verify: %v %+v", err, rep)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkVerifyPebbleLog is the same walk reading the records from an
// embedded Pebble log on disk (what `audit verify --data` does).
func BenchmarkVerifyPebbleLog(b *testing.B) {
	const n = 100_000
	chain := decidedChain(b, n)
	lg, err := pebblelog.Open(b.TempDir(), pebblelog.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	prev := ""
	for i := 0; i < n; i += 1000 {
		batch := make([]streams.Record, 0, 1000)
		for j := i; j < i+1000; j++ {
			batch = append(batch, streams.Record{Seq: uint64(j + 1), Prev: prev, Payload: chain[j]})
			prev = streams.HashPayload(chain[j])
		}
		if err := lg.Append(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		rep, err := audit.Verify(context.Background(), audit.LogSource(lg, 0), nil, audit.Options{SkipSignatures: true})
		if err != nil || !rep.OK() || rep.Partitions[0].Events != n {
			b.Fatalf("verify: %v %+v", err, rep)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}
