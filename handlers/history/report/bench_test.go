package report_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// benchEvents is the size of the export benchmark's log
// (AGENTGATE_EXPORT_BENCH_EVENTS, default 1,000,000).
func benchEvents() int {
	if n, err := strconv.Atoi(os.Getenv("AGENTGATE_EXPORT_BENCH_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

var (
	benchOnce  sync.Once
	benchDir   string
	benchAgent string
	benchErr   error
)

// benchLog generates, once per process, a log of benchEvents decisions
// by 10 agents, 200 ms apart (about 2.3 days for 1,000,000), with a
// signed checkpoint every 1,000 events.
func benchLog(b *testing.B) (string, string) {
	benchOnce.Do(func() {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil))) // keep Pebble's messages out of the results
		benchDir, benchErr = os.MkdirTemp("", "agentgate-export-bench-")
		if benchErr != nil {
			return
		}
		var ids []string
		ids, benchErr = seedlog.Generate(context.Background(), benchDir, seedlog.GenOptions{
			Agents: 10, Events: benchEvents(), Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			Step: 200 * time.Millisecond, CheckpointEvents: 1000,
		})
		if benchErr == nil {
			benchAgent = ids[0]
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir, benchAgent
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkExport1M exports one agent's compliance report over the whole
// period from a log of 1,000,000 events (10 agents; the agent has a
// tenth of them): the JSON bundle carries the agent's events with their
// inclusion proofs (the log is read twice), the PDF the rendered report. Issue 5 asks for
// the export time of 1,000,000 events.
func BenchmarkExport1M(b *testing.B) {
	dir, agent := benchLog(b)
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		b.Fatal(err)
	}
	opts := report.Options{AgentID: agent, From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			rep, err := report.WriteBundle(context.Background(), io.Discard, lg, opts, kr.JWKS(),
				func(c attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead("node_bench", c) })
			if err != nil {
				b.Fatal(err)
			}
			if rep.Summary.TotalActions != int64(benchEvents()/10) {
				b.Fatalf("actions %d", rep.Summary.TotalActions)
			}
		}
		b.ReportMetric(float64(lg.Head().Seq)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("pdf", func(b *testing.B) {
		for b.Loop() {
			rep, err := report.Build(context.Background(), lg, opts, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := report.WritePDF(io.Discard, rep); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(lg.Head().Seq)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}
