package audit

import (
	"context"

	"github.com/agentgate/agentgate/streams"
)

// LogSource is the Source of one partition of a streams.Log (the embedded
// Pebble log, a Kafka partition through kafkalog), read from seq 1 to the
// head observed when Each starts. Records carry the seq and prev the log
// stores beside the payload; Offset is -1 (the seq is the position).
//
// A log that reads through a chain (kafkalog) has already skipped the
// records that do not extend it: to see them, read the topic raw (see
// cmd/agentgate's audit command).
func LogSource(log streams.Log, partition int32) Source {
	return SourceFunc(func(ctx context.Context, fn func(Record) error) error {
		return log.Read(ctx, 1, func(r streams.Record) error {
			return fn(Record{Partition: partition, Offset: -1, HasHeader: true, Seq: r.Seq, Prev: r.Prev, Payload: r.Payload})
		})
	})
}
