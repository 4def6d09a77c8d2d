package kafkagate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// BenchmarkKafkaA2AAsync measures sustained A2A messages per second end to
// end (issue 13: ≥ 30,000/s with the dev broker): b.N general messages
// (16 senders to 16 receivers, passthrough, each verdict signed) published
// without replyto by four concurrent batched producers
// (client.PublishBatch, 256 a write), counted as the forwarded messages
// arrive on agentgate.a2a.forwarded (one reader per partition): each one
// decided, appended, handed to its partition's forwarder and produced. The
// clock runs from the first publish to the last forward. Run it with a
// fixed count (-benchtime 20000x), as BenchmarkKafkaAsyncDecisions.
func BenchmarkKafkaA2AAsync(b *testing.B) {
	brokers := devBroker(b)
	var agents []string
	for i := range 16 {
		agents = append(agents, fmt.Sprintf("bench-sender-%d", i), fmt.Sprintf("bench-receiver-%d", i))
	}
	startGate(b, brokers, &logs{brokers: brokers}, b.TempDir(), a2aConfig(agents, noLimit), func(c *kafkagate.Config) { c.SessionTimeout = 0 })
	c := newClient(b, brokers)
	// Warm up: one message through, so that every partition is owned.
	v, err := c.Intercept(context.Background(), client.A2A{Message: general("bench-sender-0", "bench-receiver-0", "warm"), APIKey: adminKey})
	if err != nil || !v.Forwarded() {
		b.Fatalf("warm-up: %+v %v", v, err)
	}
	cmds := make([]client.Command, b.N)
	for i := range cmds {
		k := i % 16
		cmds[i] = client.A2AMessage(client.A2A{Message: general(agents[2*k], agents[2*((i/16)%16)+1], "m"), APIKey: adminKey, ID: fmt.Sprintf("a2a-async-%d", i)})
	}
	var forwarded atomic.Int64
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	defer func() { cancel(); readers.Wait() }()
	topic := kafkagate.DefaultTopics().A2A
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
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
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
				if strings.HasPrefix(headerOf(m, "ce_correlationid"), "a2a-async-") && forwarded.Add(1) == int64(b.N) {
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
				if (i%16)%producers == w {
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
		b.Fatalf("%d of %d messages forwarded in 5 minutes", forwarded.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
}
