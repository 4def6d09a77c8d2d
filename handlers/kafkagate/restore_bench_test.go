package kafkagate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// restoreEvents is the size of the events partition the restore benchmark
// restores.
const restoreEvents = 100_000

// restoreFixture is one broker whose events partition 0 holds
// restoreEvents events written by a real worker (registrations and
// verify_action decisions of 64 agents), shared by the benchmark's runs.
var restoreFixture struct {
	once    sync.Once
	dir     string
	cluster *kfake.Cluster
	brokers []string
	signer  domain.Signer
	events  uint64
	err     error
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// buildRestoreFixture decides restoreEvents commands on partition 0 of the
// events topic of a dev broker (kfake with a data dir, as dev-kafka).
func buildRestoreFixture(dir string) error {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1), kfake.AllowAutoTopicCreation(), kfake.DataDir(filepath.Join(dir, "broker")))
	if err != nil {
		return err
	}
	restoreFixture.cluster = c
	brokers := c.ListenAddrs()
	ctx := context.Background()
	if _, err := EnsureTopics(ctx, brokers, DefaultTopics(), 1); err != nil {
		return err
	}
	kr, err := attest.OpenKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		return err
	}
	lg, err := kafkalog.Open(ctx, brokers, DefaultTopics().Events, 0, kafkalog.Options{Logger: discard()})
	if err != nil {
		return err
	}
	defer lg.Close()
	store, err := projections.Open(filepath.Join(dir, "writer"), discard())
	if err != nil {
		return err
	}
	defer store.Close()
	w, err := handlers.NewWorker(handlers.WorkerConfig{Log: lg, Store: store, Signer: kr.Signer("node_bench"), Logger: discard()})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { cancel(); <-done }()

	type agent struct{ id, token string }
	var agents []agent
	for i := range 64 {
		data := fmt.Sprintf(`{"agent":{"name":"r%d","type":"autonomous","principal_id":"org_bench"},"permissions":{},"budget":{}}`, i)
		ec, rej := command.Kafka.BuildEvent(string(domain.CmdRegisterAgent), "", []byte(data),
			domain.RequestID{Source: "restore-bench", ID: fmt.Sprintf("reg-%d", i)}, command.Credentials{Principal: domain.AdminPrincipal})
		if rej != nil {
			return rej
		}
		ev, err := w.Submit(ctx, ec.Command)
		if err != nil {
			return err
		}
		_, body, rej := ec.Reply(ev)
		if rej != nil {
			return rej
		}
		var m struct {
			AgentID    string `json:"agent_id"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return err
		}
		agents = append(agents, agent{m.AgentID, m.AgentToken})
	}
	for n := len(agents); n < restoreEvents; {
		var pend []*handlers.Pending
		for ; n < restoreEvents && len(pend) < 4096; n++ {
			a := agents[n%len(agents)]
			step := n / len(agents)
			data := fmt.Sprintf(`{"agent_token":%q,"action":{"type":"execute_sql","query":"SELECT name FROM customers WHERE id = %d"},"context":{"conversation_id":"c%d","step_number":%d}}`,
				a.token, n, step/40, step%40+1)
			ec, rej := command.Kafka.BuildEvent(string(domain.CmdVerifyAction), a.id, []byte(data),
				domain.RequestID{Source: "restore-bench", ID: fmt.Sprintf("v-%d", n)}, command.Credentials{})
			if rej != nil {
				return rej
			}
			p, err := w.Enqueue(ctx, ec.Command)
			if err != nil {
				return err
			}
			pend = append(pend, p)
		}
		for _, p := range pend {
			if _, err := p.Wait(ctx); err != nil {
				return err
			}
		}
	}
	restoreFixture.brokers, restoreFixture.signer, restoreFixture.events = brokers, kr.Signer("node_bench"), w.Head().Seq
	return nil
}

// BenchmarkKafkaPartitionRestore measures what a new owner does before it
// decides (issue 3 "partition restore speed"): openPartition on a fresh
// data dir — open the events partition lazily, as agentgate serve does,
// open an empty Pebble store, and let handlers.NewWorker apply every event
// of the partition to it (one read of the partition, which also finds its
// head) — reported in events/s. The partition holds 100,000 events
// (registrations and verify_action decisions of 64 agents) on the dev
// broker.
func BenchmarkKafkaPartitionRestore(b *testing.B) {
	restoreFixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "restore-bench-")
		if err != nil {
			restoreFixture.err = err
			return
		}
		restoreFixture.dir = dir
		restoreFixture.err = buildRestoreFixture(dir)
	})
	if restoreFixture.err != nil {
		b.Fatalf("building the events partition: %v", restoreFixture.err)
	}
	brokers := restoreFixture.brokers
	g, err := New(Config{
		Brokers: brokers, DataDir: b.TempDir(), Signer: restoreFixture.signer, Logger: discard(),
		OpenLog: func(ctx context.Context, p int32) (streams.Log, error) {
			return kafkalog.Open(ctx, brokers, DefaultTopics().Events, int(p), kafkalog.Options{Logger: discard(), Lazy: true})
		},
	}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	b.ResetTimer()
	var restore time.Duration
	for i := range b.N {
		b.StopTimer()
		g.cfg.DataDir = filepath.Join(b.TempDir(), fmt.Sprint(i))
		b.StartTimer()
		start := time.Now()
		pr, err := g.openPartition(context.Background(), 0)
		if err != nil {
			b.Fatal(err)
		}
		restore += time.Since(start)
		b.StopTimer()
		if got := pr.worker.Head().Seq; got != restoreFixture.events {
			b.Fatalf("restored to seq %d, want %d", got, restoreFixture.events)
		}
		pr.close()
		_ = os.RemoveAll(g.cfg.DataDir)
		b.StartTimer()
	}
	b.ReportMetric(float64(restoreFixture.events)*float64(b.N)/restore.Seconds(), "events/s")
}

// TestMain runs the package's tests and benchmarks, then stops the restore
// benchmark's broker and removes its partition (about 150 MB), which its
// runs share and so cannot clean up themselves.
func TestMain(m *testing.M) {
	code := m.Run()
	if restoreFixture.cluster != nil {
		restoreFixture.cluster.Close()
	}
	if restoreFixture.dir != "" {
		_ = os.RemoveAll(restoreFixture.dir)
	}
	os.Exit(code)
}
