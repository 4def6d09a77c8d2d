package kafkalog_test

import (
	"context"
	"testing"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/logtest"
)

const benchPayloadBytes = 400

// BenchmarkAppend measures Append of batches of 1, 64 and 512 records of
// 400 bytes to an in-process kfake broker (acks=all), in records/s.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 64, 512} {
		b.Run(map[int]string{1: "batch=1", 64: "batch=64", 512: "batch=512"}[n], func(b *testing.B) {
			br := newBroker(b)
			l := br.open(b, br.topic(b), kafkalog.Options{})
			ps := make([][]byte, n)
			for i := range ps {
				ps[i] = logtest.Payload(uint64(i), benchPayloadBytes)
			}
			b.SetBytes(int64(n * benchPayloadBytes))
			b.ResetTimer()
			for b.Loop() {
				if err := l.Append(context.Background(), logtest.Records(l.Head(), ps...)); err != nil {
					b.Fatalf("appending: %v", err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkRead measures Read of 10,000 records of 400 bytes from seq 1,
// in records/s.
func BenchmarkRead(b *testing.B) {
	const records = 10_000
	br := newBroker(b)
	l := br.open(b, br.topic(b), kafkalog.Options{})
	ps := make([][]byte, 500)
	for i := range ps {
		ps[i] = logtest.Payload(uint64(i), benchPayloadBytes)
	}
	for range records / len(ps) {
		if err := l.Append(context.Background(), logtest.Records(l.Head(), ps...)); err != nil {
			b.Fatalf("appending: %v", err)
		}
	}
	b.SetBytes(records * benchPayloadBytes)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := l.Read(context.Background(), 1, func(streams.Record) error { n++; return nil }); err != nil {
			b.Fatalf("reading: %v", err)
		}
		if n != records {
			b.Fatalf("read %d records, want %d", n, records)
		}
	}
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}
