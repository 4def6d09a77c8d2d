package kafkagate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
	asyncThroughput(b, brokers, c, kafkagate.DefaultTopics().A2A, cmds, func(i int) int { return i % 16 },
		func(m kafka.Message) bool { return strings.HasPrefix(headerOf(m, "ce_correlationid"), "a2a-async-") },
		func(got int64) string { return fmt.Sprintf("%d of %d messages forwarded in 5 minutes", got, b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
}
