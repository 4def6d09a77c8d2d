package kafkagate

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// eventsWriter is a partition worker deciding commands on events
// partition 0 of a one-partition cluster.
type eventsWriter struct {
	brokers []string
	w       *handlers.Worker
	agents  []string // agent ids, in order of registration
	tokens  []string
	n       int // verify commands sent
}

func startEventsWriter(t *testing.T, name string) *eventsWriter {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	ctx := context.Background()
	if _, err := EnsureTopics(ctx, brokers, DefaultTopics(), 1); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kr, err := attest.OpenKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	lg, err := kafkalog.Open(ctx, brokers, DefaultTopics().Events, 0, kafkalog.Options{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lg.Close() })
	store, err := projections.Open(filepath.Join(dir, "writer"), discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	w, err := handlers.NewWorker(handlers.WorkerConfig{Log: lg, Store: store, Signer: kr.Signer("node_" + name), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &eventsWriter{brokers: brokers, w: w}
}

// register registers n agents of principal org.
func (e *eventsWriter) register(t *testing.T, org string, n int) {
	t.Helper()
	for range n {
		i := len(e.agents)
		data := fmt.Sprintf(`{"agent":{"name":"r%d","type":"autonomous","principal_id":%q},"permissions":{},"budget":{}}`, i, org)
		ec, rej := command.Kafka.BuildEvent(string(domain.CmdRegisterAgent), "", []byte(data),
			domain.RequestID{Source: "restart-test", ID: fmt.Sprintf("reg-%s-%d", org, i)}, command.Credentials{Principal: domain.AdminPrincipal})
		if rej != nil {
			t.Fatal(rej)
		}
		ev, err := e.w.Submit(context.Background(), ec.Command)
		if err != nil {
			t.Fatal(err)
		}
		_, body, rej := ec.Reply(ev)
		if rej != nil {
			t.Fatal(rej)
		}
		var m struct {
			AgentID    string `json:"agent_id"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		e.agents, e.tokens = append(e.agents, m.AgentID), append(e.tokens, m.AgentToken)
	}
}

// verify decides n verify_action commands, round robin over the agents.
func (e *eventsWriter) verify(t *testing.T, n int) {
	t.Helper()
	var pend []*handlers.Pending
	for range n {
		i := e.n % len(e.agents)
		step := e.n / len(e.agents)
		data := fmt.Sprintf(`{"agent_token":%q,"action":{"type":"execute_sql","query":"SELECT name FROM customers WHERE id = %d"},"context":{"conversation_id":"c%d","step_number":%d}}`,
			e.tokens[i], e.n, step/40, step%40+1)
		ec, rej := command.Kafka.BuildEvent(string(domain.CmdVerifyAction), e.agents[i], []byte(data),
			domain.RequestID{Source: "restart-test", ID: fmt.Sprintf("v-%d", e.n)}, command.Credentials{})
		if rej != nil {
			t.Fatal(rej)
		}
		p, err := e.w.Enqueue(context.Background(), ec.Command)
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, p)
		e.n++
	}
	for _, p := range pend {
		if _, err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// followed is a read model following brokers until stop, counting the
// messages its partitions fetch.
type followed struct {
	m      *ReadModel
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	logs   []*kafkalog.Log
}

func follow(t *testing.T, dir string, brokers []string) *followed {
	t.Helper()
	f := &followed{done: make(chan struct{})}
	open := func(ctx context.Context, p int32, from kafkalog.Position) (*kafkalog.Log, error) {
		l, err := kafkalog.Open(ctx, brokers, DefaultTopics().Events, int(p), kafkalog.Options{Logger: discard(), Lazy: true, From: from})
		if err == nil {
			f.mu.Lock()
			f.logs = append(f.logs, l)
			f.mu.Unlock()
		}
		return l, err
	}
	m, err := OpenReadModel(context.Background(), dir, discard(), 1, open)
	if err != nil {
		t.Fatalf("opening the read model: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.m, f.cancel = m, cancel
	go func() { m.Follow(ctx, time.Hour); close(f.done) }()
	return f
}

// fetched is the number of messages the read model's partitions fetched.
func (f *followed) fetched() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n uint64
	for _, l := range f.logs {
		n += l.RecordsFetched()
	}
	return n
}

func (f *followed) stop(t *testing.T) {
	t.Helper()
	f.cancel()
	<-f.done
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
}

func (f *followed) waitApplied(t *testing.T, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := f.m.WaitApplied(ctx, 0, seq); err != nil {
		t.Fatal(err)
	}
}

// agentsJSON returns the read model's view of the agents, for comparing
// two read models.
func (f *followed) agentsJSON(t *testing.T, ids []string) string {
	t.Helper()
	out := make([]*domain.Agent, len(ids))
	for i, id := range ids {
		a, err := f.m.Store().Agent(id)
		if err != nil {
			t.Fatalf("agent %s: %v", id, err)
		}
		out[i] = a
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 12: an HTTP instance's read model resumes from its checkpoint.
// After a restart it fetches the record its checkpoint names and what came
// since, not the partition from offset 0 (counted in messages fetched from
// the broker), and holds what a read model folded from the start holds.
func TestReadModelRestartResumesFromItsCheckpoint(t *testing.T) {
	e := startEventsWriter(t, "a")
	e.register(t, "org_a", 32)
	e.verify(t, 3000)
	dir := filepath.Join(t.TempDir(), "readmodel")

	first := follow(t, dir, e.brokers)
	head := e.w.Head().Seq
	first.waitApplied(t, head)
	if n := first.fetched(); n < head {
		t.Fatalf("the first read model fetched %d messages, fewer than the %d events", n, head)
	}
	first.stop(t)

	e.register(t, "org_a", 2)
	e.verify(t, 100)
	newHead := e.w.Head().Seq
	again := follow(t, dir, e.brokers)
	again.waitApplied(t, newHead)
	t.Logf("events: %d before the restart, %d after; fetched: %d by the first read model, %d by the restarted one", head, newHead, first.fetched(), again.fetched())
	if n, want := again.fetched(), newHead-head+1; n != want {
		t.Fatalf("the restarted read model fetched %d messages, want %d (its checkpoint's record and the %d events since), of %d", n, want, newHead-head, newHead)
	}
	defer again.stop(t)

	rebuilt := follow(t, filepath.Join(t.TempDir(), "readmodel"), e.brokers)
	rebuilt.waitApplied(t, newHead)
	defer rebuilt.stop(t)
	if got, want := again.agentsJSON(t, e.agents), rebuilt.agentsJSON(t, e.agents); got != want {
		t.Fatalf("the resumed read model's agents differ from a rebuilt one's:\n%s\n%s", got, want)
	}
}

// A checkpoint that the events partition does not hold (the directory of
// another cluster, a recreated topic) is not resumed from: the read model
// is folded again from the start of the partition, and holds that
// partition's events only.
func TestReadModelCheckpointOfAnotherLogIsRebuilt(t *testing.T) {
	a := startEventsWriter(t, "a")
	a.register(t, "org_a", 3)
	a.verify(t, 50)
	dir := filepath.Join(t.TempDir(), "readmodel")
	first := follow(t, dir, a.brokers)
	first.waitApplied(t, a.w.Head().Seq)
	first.stop(t)

	b := startEventsWriter(t, "b")
	b.register(t, "org_b", 2)
	b.verify(t, 80)
	again := follow(t, dir, b.brokers)
	again.waitApplied(t, b.w.Head().Seq)
	defer again.stop(t)
	if n := again.fetched(); n != b.w.Head().Seq {
		t.Fatalf("the rebuilt read model fetched %d messages, want the %d of the partition", n, b.w.Head().Seq)
	}
	again.agentsJSON(t, b.agents)
	if _, err := again.m.Store().Agent(a.agents[0]); err == nil {
		t.Fatalf("the rebuilt read model still holds agent %s of the other log", a.agents[0])
	}
}
