package streams

import (
	"context"
	"fmt"
)

// StoredRecord is one record of a log as its storage holds it, read
// without the chain check: a Kafka partition's superseded records (a
// retried produce, a fenced-out writer's) are included. It is what an
// auditor verifies.
type StoredRecord struct {
	// Partition is the chain the record belongs to.
	Partition int32
	// Offset is the record's position in the storage (the Kafka offset).
	Offset int64
	// Seq and Prev are the values stored beside the payload.
	Seq  uint64
	Prev string
	// Payload is the event exactly as stored.
	Payload []byte
}

// StoredLog is a log read as stored, for an audit.
type StoredLog interface {
	// EachStored calls fn for every stored record, partition after
	// partition in ascending order, in storage order within one, up to
	// the end each partition had when its read began, and returns fn's
	// first error (or its own: a *StorageError where the storage holds no
	// well-formed record). The Payload handed to fn is valid only during
	// the call.
	EachStored(ctx context.Context, fn func(StoredRecord) error) error
}

// StorageError reports a position where a StoredLog's storage does not
// hold a well-formed log: a message without the record's seq and prev, or
// a partition whose first records were deleted.
type StorageError struct {
	Partition int32
	// Offset is where the problem is (for Truncated, the first offset the
	// partition still holds).
	Offset int64
	// Seq is the seq the message carried, 0 for none.
	Seq uint64
	// Truncated: the partition's first records were deleted.
	Truncated bool
	// Reason says what is wrong, in words.
	Reason string
}

// Error implements the error interface.
func (e *StorageError) Error() string {
	return fmt.Sprintf("partition %d offset %d: %s", e.Partition, e.Offset, e.Reason)
}
