package pebblelog

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/logtest"
)

const benchPayloadBytes = 400

// BenchmarkAppend measures durable appends (one fsync per batch) of
// 400-byte records in batches of 1, 64 and 512.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			l := openAt(b, b.TempDir())
			ctx := context.Background()
			payloads := make([][]byte, size)
			b.SetBytes(int64(size * benchPayloadBytes))
			for b.Loop() {
				head := l.Head()
				for i := range payloads {
					payloads[i] = logtest.Payload(head.Seq+uint64(i)+1, benchPayloadBytes)
				}
				if err := l.Append(ctx, logtest.Records(head, payloads...)); err != nil {
					b.Fatalf("appending: %v", err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkRead measures a full read of a 20,000-record log of 400-byte
// records.
func BenchmarkRead(b *testing.B) {
	const records = 20000
	l := openAt(b, b.TempDir())
	ctx := context.Background()
	for l.Head().Seq < records {
		head := l.Head()
		payloads := make([][]byte, 500)
		for i := range payloads {
			payloads[i] = logtest.Payload(head.Seq+uint64(i)+1, benchPayloadBytes)
		}
		if err := l.Append(ctx, logtest.Records(head, payloads...)); err != nil {
			b.Fatalf("filling: %v", err)
		}
	}
	b.SetBytes(records * benchPayloadBytes)
	for b.Loop() {
		n := 0
		err := l.Read(ctx, 1, func(streams.Record) error { n++; return nil })
		if err != nil || n != records {
			b.Fatalf("read %d records: %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}
