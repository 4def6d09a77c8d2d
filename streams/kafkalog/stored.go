package kafkalog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams"
)

// storedFetchMaxBytes bounds one fetch of a StoredTopic read.
const storedFetchMaxBytes = 8 << 20

// StoredTopic is every partition of a Kafka events topic read as stored
// (each message as the broker holds it, superseded ones included) from the
// partition's first offset to its end as listed when the partition's read
// begins, partition after partition. StoredRecord.Offset is the Kafka
// offset; Seq and Prev come from the HeaderSeq and HeaderPrev headers. A
// message without exactly one well-formed header of each (no gate writes
// one) and a partition whose first offset is not 0 (records deleted) end
// the read with a *streams.StorageError.
func StoredTopic(client *kafka.Client, topic string) streams.StoredLog {
	return storedTopic{client, topic}
}

type storedTopic struct {
	client *kafka.Client
	topic  string
}

// EachStored implements streams.StoredLog.
func (s storedTopic) EachStored(ctx context.Context, fn func(streams.StoredRecord) error) error {
	client, topic := s.client, s.topic
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("reading metadata of %s: %w", topic, err)
	}
	var parts []int
	for _, t := range meta.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return fmt.Errorf("reading metadata of %s: %w", topic, t.Error)
		}
		for _, p := range t.Partitions {
			parts = append(parts, p.ID)
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("reading metadata of %s: the topic has no partitions", topic)
	}
	slices.Sort(parts)
	for _, p := range parts {
		if err := readPartition(ctx, client, topic, p, fn); err != nil {
			return err
		}
	}
	return nil
}

func readPartition(ctx context.Context, client *kafka.Client, topic string, p int, fn func(streams.StoredRecord) error) error {
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: {kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p)}},
	})
	if err != nil {
		return fmt.Errorf("listing offsets of %s/%d: %w", topic, p, err)
	}
	first, end := int64(-1), int64(-1)
	for _, po := range resp.Topics[topic] {
		if po.Partition != p {
			continue
		}
		if po.Error != nil {
			return fmt.Errorf("listing offsets of %s/%d: %w", topic, p, po.Error)
		}
		if po.FirstOffset >= 0 {
			first = po.FirstOffset
		}
		if po.LastOffset >= 0 {
			end = po.LastOffset
		}
	}
	if first < 0 || end < 0 {
		return fmt.Errorf("listing offsets of %s/%d: no answer", topic, p)
	}
	if first > 0 {
		return &streams.StorageError{Partition: int32(p), Offset: first, Truncated: true,
			Reason: "the partition's first records were deleted"}
	}
	from := first
	for from < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		fr, err := client.Fetch(ctx, &kafka.FetchRequest{
			Topic: topic, Partition: p, Offset: from, MinBytes: 1, MaxBytes: storedFetchMaxBytes, MaxWait: 100 * time.Millisecond,
		})
		if err != nil {
			return fmt.Errorf("fetching %s/%d at offset %d: %w", topic, p, from, err)
		}
		if fr.Error != nil {
			return fmt.Errorf("fetching %s/%d at offset %d: %w", topic, p, from, fr.Error)
		}
		next, err := readRecords(fr.Records, int32(p), from, end, fn)
		if err != nil {
			return err
		}
		if next == from {
			return fmt.Errorf("fetching %s/%d at offset %d: no record before the end %d", topic, p, from, end)
		}
		from = next
	}
	return nil
}

func readRecords(rr kafka.RecordReader, p int32, from, end int64, fn func(streams.StoredRecord) error) (int64, error) {
	return EachRecord(rr, from, end, func(rec *kafka.Record) error {
		r := streams.StoredRecord{Partition: p, Offset: rec.Offset}
		if rec.Value != nil {
			var err error
			if r.Payload, err = kafka.ReadAll(rec.Value); err != nil {
				return fmt.Errorf("reading the record at offset %d: %w", rec.Offset, err)
			}
		}
		var seqs, prevs int
		for _, h := range rec.Headers {
			switch h.Key {
			case HeaderSeq:
				seqs++
				r.Seq, _ = strconv.ParseUint(string(h.Value), 10, 64)
			case HeaderPrev:
				prevs++
				r.Prev = string(h.Value)
			}
		}
		if seqs != 1 || prevs != 1 || r.Seq == 0 {
			return &streams.StorageError{Partition: p, Offset: rec.Offset, Seq: r.Seq,
				Reason: "the message lacks well-formed agentgate-seq and agentgate-prev headers"}
		}
		return fn(r)
	})
}
