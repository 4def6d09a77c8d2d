package kafkagate_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkKafkaRequestReply measures one verify request-reply through the
// dev broker (kfake over TCP) and the gate: p50 and p99 latency.
func BenchmarkKafkaRequestReply(b *testing.B) {
	_, brokers := broker(b)
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

// BenchmarkKafkaAsyncDecisions measures sustained async decisions per
// second end to end: b.N published verify requests across agents, until
// every one is in the events topic.
func BenchmarkKafkaAsyncDecisions(b *testing.B) {
	_, brokers := broker(b)
	startGate(b, brokers, &logs{brokers: brokers}, b.TempDir())
	c := newClient(b, brokers)
	var agents, tokens []string
	for i := range 8 {
		a, tok := register(b, c, fmt.Sprintf("b%d", i))
		agents, tokens = append(agents, a), append(tokens, tok)
	}
	b.ResetTimer()
	start := time.Now()
	var ids []string
	for i := range b.N {
		k := i % len(agents)
		cmd := verifyCmd(agents[k], tokens[k], fmt.Sprintf("c-%d", i), 1)
		cmd.ID = fmt.Sprintf("async-%d", i)
		ids = append(ids, cmd.ID)
		if _, err := c.Publish(context.Background(), cmd); err != nil {
			b.Fatal(err)
		}
	}
	for {
		got := decidedRequests(b, brokers, c.Source())
		if len(got) >= len(ids) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}
