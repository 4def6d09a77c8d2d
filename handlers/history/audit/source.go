package audit

import (
	"context"
	"strconv"

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

// StoredSource is the Source of a log read as stored (cmd/agentgate opens
// one over a Kafka events topic: kafkalog.StoredTopic), superseded records
// included: verify it with Options.Superseded. Records carry the seq and
// prev stored beside the payload and their storage offset. Where the
// storage holds no well-formed record (a *streams.StorageError) Verify
// reports the break: a message without seq and prev is malformed, a
// partition whose first records were deleted is truncated.
func StoredSource(log streams.StoredLog) Source {
	return SourceFunc(func(ctx context.Context, fn func(Record) error) error {
		return log.EachStored(ctx, func(r streams.StoredRecord) error {
			return fn(Record{Partition: r.Partition, Offset: r.Offset, HasHeader: true, Seq: r.Seq, Prev: r.Prev, Payload: r.Payload})
		})
	})
}

// storageBreak is the Break of a StoredLog's *streams.StorageError.
func storageBreak(e *streams.StorageError) *Break {
	if e.Truncated {
		return &Break{Partition: e.Partition, Seq: 1, Offset: 0, Kind: KindTruncated,
			Expected: "offset 0", Found: "offset " + strconv.FormatInt(e.Offset, 10), Detail: e.Reason}
	}
	return &Break{Partition: e.Partition, Seq: e.Seq, Offset: e.Offset, Kind: KindMalformed, Detail: e.Reason}
}
