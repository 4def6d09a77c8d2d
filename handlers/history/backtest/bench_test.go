package backtest_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/handlers/history/backtest"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// BenchmarkBacktest re-decides the 100,000 recorded commands of one agent
// (50,000 decisions, each followed by its execution log, $0.01 each)
// under budget.max_daily_usd=100: after the first 10,000 decisions the
// rest are BUDGET_EXCEEDED and their execution logs refused. It reads a
// Pebble log, decodes, decides and folds, as the command does (issue 5
// target: ≥ 100,000 re-decisions/s).
func BenchmarkBacktest(b *testing.B) {
	const events = 50_000
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil))) // keep Pebble's messages out of the results
	dir := b.TempDir()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ids, err := seedlog.Generate(context.Background(), dir, seedlog.GenOptions{
		Agents: 1, Events: events, Start: start, Step: 200 * time.Millisecond, CheckpointEvents: 1000, Executions: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	var ch backtest.Changes
	if err := ch.ParseSet([]string{"budget.max_daily_usd=100"}); err != nil {
		b.Fatal(err)
	}
	opts := backtest.Options{AgentID: ids[0], From: start, To: start.Add(30 * 24 * time.Hour), Changes: ch}
	b.ResetTimer()
	var redecided int64
	for b.Loop() {
		res, err := backtest.Run(context.Background(), lg, opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.Totals.Redecided != 2*events || res.Totals.Changed != 2*(events-10_000) {
			b.Fatalf("re-decided %d, changed %d", res.Totals.Redecided, res.Totals.Changed)
		}
		redecided += res.Totals.Redecided
	}
	b.ReportMetric(float64(redecided)/b.Elapsed().Seconds(), "redecisions/s")
}
