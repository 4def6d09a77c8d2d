package kafkagate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// The changes topic (docs/ARCHITECTURE.md, "The copy feed reads a topic of
// changes only"): partition 0's owner produces each principal-wide change
// it decided (the events domain.CopyOf copies), as recorded, to a topic of
// one partition, through the same outbox as the forwarded A2A messages
// (exactly once in seq order across restarts; ChangesGroup holds its
// cursor). Every other partition's copy feed reads that topic instead of
// events partition 0, which holds every decision of the partitions' share
// routed there: before, each of n-1 feeds read and hashed all of it.

// ChangesGroup is the consumer group whose committed offset is the
// changes outbox's cursor, for a gate of consumer group group.
func ChangesGroup(group string) string { return group + ".changes" }

// principalChanges is the outbox of partition 0's principal-wide changes.
var principalChanges = outboxKind{
	what: "principal-wide changes",
	keep: func(ev *domain.Event) bool {
		_, ok := domain.CopyOf(ev)
		return ok
	},
	mark:    globalMark,
	message: changeMessage,
}

// changeMessage is the record of a principal-wide change on the changes
// topic: keyed by its seq, the event's encoding as the log holds it (the
// feed hashes it as partition 0's chain does), and the events partition
// and seq it comes from in the headers (the outbox's recovery reads
// them).
func changeMessage(p int32, ev *domain.Event, _ int) (kafka.Message, bool) {
	if _, ok := domain.CopyOf(ev); !ok {
		return kafka.Message{}, false
	}
	value, err := eventjson.Marshal(ev)
	if err != nil {
		return kafka.Message{}, false
	}
	seq := strconv.FormatUint(ev.Seq, 10)
	return kafka.Message{Partition: 0, Key: []byte(seq), Value: value, Headers: []kafka.Header{
		{Key: kafkaout.HeaderEventsPartition, Value: []byte(strconv.Itoa(int(p)))},
		{Key: kafkaout.HeaderEventsSeq, Value: []byte(seq)},
	}}, true
}

// newMirror returns partition 0's outbox of principal-wide changes.
func (g *Gate) newMirror(lg streams.Log) *forwarder {
	m := g.newOutbox(domain.GlobalPartition, lg, principalChanges, g.cfg.Topics.Changes, ChangesGroup(g.cfg.GroupID))
	m.hook = g.cfg.mirrorHook
	return m
}

// followChanges reads the changes topic for feed f, from the record of
// the partition's last copy pos, until ctx ends: every globalPollInterval,
// and at once when woken; each pass reads what came since the last and
// keeps the changes above the last one kept. A record it cannot decode
// stops it (the partition copies nothing more: fail closed, as the read
// model does).
func (g *Gate) followChanges(ctx context.Context, f *copyFeed, pos domain.CopyPosition) {
	// The last copy names its change's offset on the changes topic. A
	// copy recorded before the topic existed names an offset of events
	// partition 0: the record there is not that change, and the topic is
	// read from its start (it holds principal-wide changes only).
	from, last := int64(-1), pos
	if pos.Seq == 0 {
		last = domain.CopyPosition{}
	}
	wait := time.NewTimer(globalPollInterval)
	defer wait.Stop()
	for ctx.Err() == nil {
		if from < 0 && last.Seq > 0 {
			from = last.Offset
		}
		next, err := g.readChanges(ctx, f, from, last)
		switch {
		case err == nil:
			from, last = next, domain.CopyPosition{}
			f.firstOnce.Do(func() { close(f.first) })
		case errors.Is(err, errNotLastCopy):
			from, last = -1, domain.CopyPosition{}
			continue
		case errors.Is(err, errUnreadable):
			f.log.Error("following the principal-wide changes", "partition", f.partition, "err", err)
			return
		case ctx.Err() == nil:
			f.log.Warn("following the principal-wide changes", "partition", f.partition, "err", err)
		}
		wait.Reset(globalPollInterval)
		select {
		case <-ctx.Done():
		case <-wait.C:
		case <-f.kick:
		}
	}
}

// errNotLastCopy: the record at the last copy's offset is not its change.
var errNotLastCopy = errors.New("the changes topic does not hold the last copy at its offset")

// readChanges reads the changes topic from offset from to its end (from
// outside the topic: from its start), keeps the changes read and returns
// the offset to read from next. With last set, the record at from must be
// last's change (else errNotLastCopy).
func (g *Gate) readChanges(ctx context.Context, f *copyFeed, from int64, last domain.CopyPosition) (int64, error) {
	topic := g.cfg.Topics.Changes
	if g.cfg.changesRead != nil {
		if err := g.cfg.changesRead(ctx); err != nil {
			return from, err
		}
	}
	resp, err := g.fwdClient.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: {kafka.FirstOffsetOf(0), kafka.LastOffsetOf(0)}},
	})
	if err != nil {
		return from, fmt.Errorf("listing offsets of %s: %w", topic, err)
	}
	first, end, ok := offsetsOf(resp, topic, 0)
	if !ok {
		return from, fmt.Errorf("listing offsets of %s: no answer", topic)
	}
	if last.Seq > 0 && (from < first || from >= end) {
		return from, errNotLastCopy
	}
	if from < first || from > end {
		from = first
	}
	var high uint64
	found := false
	at := from
	for at < end {
		fr, err := g.fwdClient.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: 0, Offset: at,
			MinBytes: 1, MaxBytes: forwardFetchBytes, MaxWait: 100 * time.Millisecond})
		if err == nil && fr.Error != nil {
			err = fr.Error
		}
		if err != nil {
			return from, fmt.Errorf("fetching %s at offset %d: %w", topic, at, err)
		}
		next, err := kafkalog.EachRecord(fr.Records, at, end, func(rec *kafka.Record) error {
			var value []byte
			if rec.Value != nil {
				var err error
				if value, err = kafka.ReadAll(rec.Value); err != nil {
					return fmt.Errorf("reading the change at offset %d of %s: %w", rec.Offset, topic, err)
				}
			}
			ev, err := eventjson.DecodeEvent(value)
			if err != nil {
				return fmt.Errorf("%w: decoding the change at offset %d of %s: %w", errUnreadable, rec.Offset, topic, err)
			}
			if last.Seq > 0 && rec.Offset == from && (ev.Seq != last.Seq || streams.HashPayload(value) != last.Hash) {
				return errNotLastCopy
			}
			if c, ok := domain.CopyOf(ev); ok {
				f.add(pendingCopy{change: c, hash: streams.HashPayload(value), offset: rec.Offset})
				found = true
			}
			high = max(high, ev.Seq)
			return nil
		})
		if err != nil {
			return from, err
		}
		if next == at {
			return from, fmt.Errorf("fetching %s at offset %d: no record before the end %d", topic, at, end)
		}
		at = next
	}
	if found {
		f.signal()
	}
	f.readTo(high)
	return at, nil
}
