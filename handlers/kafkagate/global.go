package kafkagate

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// Principal-wide state (docs/ARCHITECTURE.md, "Principal-wide state on
// Kafka, built"): a principal-wide command is decided on partition
// domain.GlobalPartition only (marked domain.Command.Global); every other
// partition follows that events partition (copyFeed) and its worker copies
// the changes it has not copied yet before deciding each batch
// (handlers.WorkerConfig.Copier).

// globalPollInterval is how often a partition's copy feed looks for new
// principal-wide events of partition 0 when nothing wakes it sooner (a
// barrier partition 0 wrote, see Gate.barriers).
const globalPollInterval = 200 * time.Millisecond

// globalMark is in the payload of every event of a Global command (the
// codec writes the member so, and a string value holds its quotes
// escaped): the feed decodes only the records that hold it.
var globalMark = []byte(`"global":true`)

// pendingCopy is one principal-wide change read from partition 0 with
// the position of its record there.
type pendingCopy struct {
	change domain.CopiedChange
	hash   string
	offset int64
}

// copyFeed follows events partition 0 for one other partition: it keeps
// the principal-wide changes read there and not yet committed as copied
// by the partition's worker (a handlers.PrincipalCopier).
type copyFeed struct {
	partition int32
	log       *slog.Logger
	ready     chan struct{} // capacity 1: the worker decides a batch
	kick      chan struct{} // capacity 1: the follower reads at once

	mu      sync.Mutex
	pending []pendingCopy // in seq order, after the last committed copy
	// read is partition 0's seq the follower has read through; moved is
	// closed (and replaced) when it moves.
	read  uint64
	moved chan struct{}
	// late, when not 0, is the seq of partition 0 a barrier waited
	// barrierWait for in vain: until the follower reads through it, the
	// next barriers do not wait (readThrough).
	late uint64
	// wait is barrierWait (tests shorten it).
	wait time.Duration
	// first is closed once the follower has read partition 0 to its end
	// a first time (firstPass).
	first     chan struct{}
	firstOnce sync.Once
	// hold, when set (tests), keeps read changes from the worker: the
	// partition then dies between partition 0's decision and its copy.
	hold bool
}

func newCopyFeed(p int32, log *slog.Logger) *copyFeed {
	return &copyFeed{partition: p, log: log, ready: make(chan struct{}, 1), kick: make(chan struct{}, 1), moved: make(chan struct{}), wait: barrierWait,
		first: make(chan struct{})}
}

// Ready implements handlers.PrincipalCopier.
func (f *copyFeed) Ready() <-chan struct{} { return f.ready }

// CopyAfter implements handlers.PrincipalCopier: the changes read after
// pos, at most domain.MaxCopiedChanges, as one copy command named after
// the last one's position (a redelivered copy is the same request).
func (f *copyFeed) CopyAfter(pos domain.CopyPosition) *domain.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hold {
		return nil
	}
	i := 0
	for i < len(f.pending) && f.pending[i].change.Seq <= pos.Seq {
		i++
	}
	rest := f.pending[i:]
	if len(rest) == 0 {
		return nil
	}
	if len(rest) > domain.MaxCopiedChanges {
		rest = rest[:domain.MaxCopiedChanges]
		f.signal() // the rest in the next batch
	}
	last := rest[len(rest)-1]
	c := &domain.PrincipalStateCopy{From: domain.GlobalPartition, Seq: last.change.Seq, Hash: last.hash, Offset: last.offset,
		Changes: make([]domain.CopiedChange, len(rest))}
	for j := range rest {
		c.Changes[j] = rest[j].change
	}
	return &domain.Command{
		Type:    domain.CmdCopyPrincipalState,
		Request: domain.RequestID{Source: "agentgate/global", ID: fmt.Sprintf("%d/%d", domain.GlobalPartition, c.Seq)},
		Copy:    c,
	}
}

// committed forgets the changes a committed batch copied (up to seq).
func (f *copyFeed) committed(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	for i < len(f.pending) && f.pending[i].change.Seq <= seq {
		i++
	}
	f.pending = append(f.pending[:0], f.pending[i:]...)
}

// observe is the worker's OnBatch: a committed copy moves the feed.
func (f *copyFeed) observe(events []*domain.Event) {
	for _, ev := range events {
		if ev.Type == domain.EvPrincipalStateCopied && ev.Command != nil && ev.Command.Copy != nil {
			f.committed(ev.Command.Copy.Seq)
		}
	}
}

func (f *copyFeed) signal() {
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// wake makes the follower read partition 0 at once.
func (f *copyFeed) wake() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// add keeps a change read from partition 0 (after those kept).
func (f *copyFeed) add(c pendingCopy) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.pending); n > 0 && f.pending[n-1].change.Seq >= c.change.Seq {
		return
	}
	f.pending = append(f.pending, c)
}

// readTo records that partition 0 is read through seq.
func (f *copyFeed) readTo(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq > f.read {
		f.read = seq
		if f.late != 0 && seq >= f.late {
			f.late = 0 // caught up: the next barrier waits again
		}
		close(f.moved)
		f.moved = make(chan struct{})
	}
}

// readThrough returns once the follower has read partition 0 through seq
// (waking it), so that every batch the worker decides from then on copies
// the changes up to seq first; or after barrierWait (a partition 0 that
// cannot be read must not stop this partition: its copies then come
// late). Once a barrier has waited in vain, the next ones return at once
// until the follower has read through it: a follower that cannot read
// partition 0 (its leader down, an event it cannot decode) would
// otherwise stop this partition for barrierWait at every principal-wide
// change, and waiting again would bring the copies no sooner.
func (f *copyFeed) readThrough(ctx context.Context, seq uint64) {
	f.mu.Lock()
	wait, late := f.wait, f.late
	f.mu.Unlock()
	if late != 0 {
		f.wake()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		f.mu.Lock()
		read, moved := f.read, f.moved
		f.mu.Unlock()
		if read >= seq {
			return
		}
		f.wake()
		select {
		case <-moved:
		case <-ctx.Done():
			f.log.Warn("partition 0 not read through a principal-wide change in time: its copy comes later", "partition", f.partition, "seq", seq, "read", read)
			f.mu.Lock()
			if f.read < seq {
				f.late = seq
			}
			f.mu.Unlock()
			return
		}
	}
}

// firstPass returns once the follower has read partition 0 to its end a
// first time, or after barrierWait, or when ctx ends. A new owner of the
// partition calls it before reading requests: the last owner may have
// read a barrier (committed, never read again) and not copied its change,
// and a request behind that barrier must be decided after the copy.
func (f *copyFeed) firstPass(ctx context.Context) {
	t := time.NewTimer(f.wait)
	defer t.Stop()
	select {
	case <-f.first:
	case <-ctx.Done():
	case <-t.C:
		f.log.Warn("partition 0 not read before the partition's first request: its copies come later", "partition", f.partition)
	}
}

// barrierWait bounds how long a partition's reading waits for its feed
// to read partition 0 through a principal-wide change (readThrough).
const barrierWait = 10 * time.Second

// barriers are the messages partition 0 writes, once it has decided a
// principal-wide change at seq and before it answers, to every other
// requests partition: an internal command (signed) of type
// domain.CmdCopyPrincipalState naming seq, never decided. A partition
// that reads one reads partition 0 through seq before it reads on
// (copyFeed.readThrough), so a request written to it after the answer
// is decided after the copy.
func (g *Gate) barriers(seq uint64) ([]kafka.Message, error) {
	data, err := json.Marshal(&domain.Command{Type: domain.CmdCopyPrincipalState,
		Copy: &domain.PrincipalStateCopy{From: domain.GlobalPartition, Seq: seq}})
	if err != nil {
		return nil, fmt.Errorf("encoding a copy barrier: %w", err)
	}
	msgs := make([]kafka.Message, 0, g.partitions-1)
	for p := range int32(g.partitions) {
		if p == domain.GlobalPartition {
			continue
		}
		msg, err := cekafka.Encode(ce.Event{
			SpecVersion: ce.SpecVersion, Type: string(domain.CmdCopyPrincipalState), Source: "agentgate/global",
			ID: fmt.Sprintf("%d/%d", domain.GlobalPartition, seq), DataContentType: ContentTypeCommand, Data: data, Mode: ce.ModeBinary,
		})
		if err != nil {
			return nil, fmt.Errorf("encoding a copy barrier: %w", err)
		}
		msg.Topic, msg.Partition = g.cfg.Topics.Requests, int(p)
		msg.Headers = append(msg.Headers, kafka.Header{Key: HeaderMAC, Value: []byte(sign(g.macKey, data))})
		msgs = append(msgs, msg)
	}
	return msgs, nil
}
