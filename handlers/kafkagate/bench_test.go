package kafkagate_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// BenchmarkKafkaRequestReply measures one verify request-reply through the
// dev broker (kfake over TCP) and the gate: p50 and p99 latency.
func BenchmarkKafkaRequestReply(b *testing.B) {
	brokers := devBroker(b)
	startGate(b, brokers, &logs{brokers: brokers}, b.TempDir())
	c := newClient(b, brokers)
	agent, token := register(b, c, "bench")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		cmd := verifyCmd(agent, token, fmt.Sprintf("conv-%d", i), 1)
		start := time.Now()
		rep, err := c.Request(context.Background(), cmd)
		if err != nil || rep.Status >= 500 {
			b.Fatalf("request %d: %v %v", i, rep, err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkKafkaHTTPVerify measures one POST /agents/{id}/verify through
// the HTTP API of an instance in Kafka mode (HTTPGate, the read model
// polling every 200 ms as serve's does), on the dev broker: p50 and p99
// latency. The answer waits until the instance's read model has applied
// the decision (read your writes).
func BenchmarkKafkaHTTPVerify(b *testing.B) {
	brokers := devBroker(b)
	lg := &logs{brokers: brokers}
	startGate(b, brokers, lg, b.TempDir())
	h := startHTTPOverKafkaPolling(b, brokers, lg, engines(b), 20*time.Second, 200*time.Millisecond)
	c := newClient(b, brokers)
	agent, token := register(b, c, "bench-http")
	httpLatency(b, http.StatusOK, func(i int) *http.Request {
		body := fmt.Sprintf(`{"action":{"type":"calculate","query":"%d+1"},"context":{"conversation_id":"conv-%d","step_number":1}}`, i, i)
		req, err := http.NewRequest("POST", h.url+"/agents/"+agent+"/verify", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	})
}

// httpLatency sends b.N requests, each answered with status want, and
// reports the p50 and p99 latency.
func httpLatency(b *testing.B, want int, request func(i int) *http.Request) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		req := request(i)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatalf("request %d: %d", i, resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkKafkaAsyncDecisions measures sustained async decisions per
// second end to end: b.N verify requests (16 agents, conversations of 40
// ordered steps) published without replyto by four concurrent
// batched producers (client.PublishBatch, 256 commands a write), counted
// as their decisions arrive on agentgate.decisions (one reader per
// partition). The clock runs from the first publish to the last decision.
// Run it with a fixed count (-benchtime 20000x): a sustained rate needs a
// long enough run.
func BenchmarkKafkaAsyncDecisions(b *testing.B) {
	brokers := devBroker(b)
	// The default session timeout: the tests' 1 s lets a starved
	// heartbeat on this shared 2-core machine trigger a rebalance.
	startGate(b, brokers, &logs{brokers: brokers}, b.TempDir(), func(c *kafkagate.Config) { c.SessionTimeout = 0 })
	c := newClient(b, brokers)
	var agents, tokens []string
	for i := range 16 {
		a, tok := register(b, c, fmt.Sprintf("b%d", i))
		agents, tokens = append(agents, a), append(tokens, tok)
	}
	cmds := make([]client.Command, b.N)
	for i := range cmds {
		k := i % len(agents)
		// Conversations of 40 steps (the step limit is 50).
		n := i / len(agents)
		cmds[i] = verifyCmd(agents[k], tokens[k], fmt.Sprintf("bench-%s-%d", agents[k], n/40), n%40+1)
		cmds[i].ID = fmt.Sprintf("async-%d", i)
	}
	asyncThroughput(b, brokers, c, kafkagate.DefaultTopics().Decisions, cmds, func(i int) int { return i % len(agents) },
		func(m kafka.Message) bool {
			return headerOf(m, "agentgate-event-type") == string(domain.EvActionDecided) && strings.HasPrefix(headerOf(m, "ce_correlationid"), "async-")
		},
		func(got int64) string {
			types := map[string]int{}
			for _, ev := range recordedEvents(b, brokers, c.Source()) {
				types[string(ev.Type)]++
			}
			var ends []int64
			for p := range testPartitions {
				conn, _ := kafka.DialLeader(context.Background(), "tcp", brokers[0], kafkagate.DefaultTopics().Requests, p)
				e, _ := conn.ReadLastOffset()
				conn.Close()
				ends = append(ends, e)
			}
			return fmt.Sprintf("%d of %d decisions in 5 minutes; %d requests in the log %v; requests topic ends %v",
				got, b.N, len(decidedRequests(b, brokers, c.Source())), types, ends)
		})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// asyncThroughput publishes cmds without replyto by four concurrent
// batched producers (client.PublishBatch, 256 commands a write; producer
// w sends the commands i with lane(i) % 4 == w, so that the commands of
// one lane keep their order) and waits until counted has accepted
// len(cmds) messages of topic, read from the current end of every
// partition (one reader each). The benchmark's clock runs from the first
// publish to the last message counted; past 5 minutes the run fails with
// onTimeout's account of it.
func asyncThroughput(b *testing.B, brokers []string, c *client.Client, topic string, cmds []client.Command,
	lane func(i int) int, counted func(kafka.Message) bool, onTimeout func(got int64) string) {
	b.Helper()
	var seen atomic.Int64
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	defer func() { cancel(); readers.Wait() }()
	for p := range testPartitions {
		conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, p)
		if err != nil {
			b.Fatal(err)
		}
		end, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			b.Fatal(err)
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p,
			MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
		if err := r.SetOffset(end); err != nil {
			b.Fatal(err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					return
				}
				if counted(m) && seen.Add(1) == int64(len(cmds)) {
					close(done)
				}
			}
		}()
	}
	const producers, chunk = 4, 256
	b.ResetTimer()
	var pubs sync.WaitGroup
	for w := range producers {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			var mine []client.Command
			for i, cmd := range cmds {
				if lane(i)%producers == w {
					mine = append(mine, cmd)
				}
			}
			for len(mine) > 0 {
				n := min(chunk, len(mine))
				if _, err := c.PublishBatch(context.Background(), mine[:n]...); err != nil {
					b.Error(err)
					return
				}
				mine = mine[n:]
			}
		}()
	}
	pubs.Wait()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatal(onTimeout(seen.Load()))
	}
}

// devBroker starts the broker of `agentgate dev-kafka` (cmd/agentgate
// startDevKafka: kfake, one broker, topics persisted in a data dir without
// fsync per batch) on a loopback port: the broker the figures are
// measured against. (Without a data dir kfake keeps its segments in
// growing in-memory files, which costs it more than the gate.)
func devBroker(b *testing.B) []string {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(testPartitions), kfake.AllowAutoTopicCreation(),
		kfake.GroupMinSessionTimeout(100*time.Millisecond), kfake.DataDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c.ListenAddrs()
}

// BenchmarkKafkaHTTPIssueKey measures one POST /principals/{id}/keys (a
// principal-wide command) through the HTTP API of an instance in Kafka
// mode, on the dev broker: p50 and p99 latency until every partition holds
// the key and the instance's read model has it.
func BenchmarkKafkaHTTPIssueKey(b *testing.B) {
	brokers := devBroker(b)
	lg := &logs{brokers: brokers}
	startGate(b, brokers, lg, b.TempDir())
	h := startHTTPOverKafkaPolling(b, brokers, lg, engines(b), 20*time.Second, 200*time.Millisecond)
	httpLatency(b, http.StatusCreated, func(int) *http.Request {
		req, err := http.NewRequest("POST", h.url+"/principals/org_bench/keys", nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("X-API-Key", adminKey)
		return req
	})
}
