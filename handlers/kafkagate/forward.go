package kafkagate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// The forwarder: the outbox of forwarded A2A messages (docs/ARCHITECTURE.md,
// "A2A on Kafka"). The log is the commit point: a forwarded verdict is
// decided once it is appended; producing its message to the forwarded
// topic is a side effect after it, done by the partition's forwarder, once
// per verdict across restarts and rebalances:
//
//   - after each committed batch the worker hands the forwarder its
//     events (OnBatch); the forwarder produces the forwarded verdicts among
//     them in seq order, one write at a time (acks=all), a write starting
//     only once the previous one is acknowledged whole;
//   - every message carries the events partition and seq it comes from
//     (kafkaout.HeaderEventsPartition, HeaderEventsSeq);
//   - the forwarder keeps a cursor in Kafka, as the committed offset of a
//     consumer group of its own (ForwardGroup) for the events partition: the
//     next seq whose verdict may not be produced (every forwarded verdict
//     below it is), with, as the commit's metadata, the end offsets of the
//     forwarded topic's partitions when it was committed (no message of a
//     later seq lies below them);
//   - taking a partition over, it reads the cursor, reads each forwarded
//     partition from the cursor's end offset to its end for the highest seq
//     produced from this events partition, then reads the log from the
//     cursor's seq to its head and produces every forwarded verdict above
//     its target partition's highest seq. A failed write is recovered the
//     same way (it may have written some partitions).

// Named limits and defaults of the forwarder.
const (
	// MaxForwardWrite is the most forwarded messages in one write, and
	// MaxForwardWriteBytes the most bytes (keys, values, headers) unless
	// one message alone is larger: the messages of one partition go in one
	// record batch, which Kafka's max.message.bytes (1 MiB by default)
	// bounds.
	MaxForwardWrite      = 1024
	MaxForwardWriteBytes = 512 << 10
	// MaxForwardPending is the most committed events waiting for the
	// forwarder; the worker's commit waits past it (backpressure: the
	// gate decides no further ahead of its forwards).
	MaxForwardPending = 64 * 1024
	// forwardCursorInterval is how often the cursor is committed while
	// the log grows.
	forwardCursorInterval = time.Second
	// forwardCursorRefresh is how often an unchanged cursor is committed
	// again, so that the group's committed offsets do not expire
	// (offsets.retention.minutes, 7 days by default).
	forwardCursorRefresh = time.Hour
	// forwardRetry is the first pause before retrying a failed recovery
	// (doubled up to forwardRetryMax).
	forwardRetry    = 100 * time.Millisecond
	forwardRetryMax = 5 * time.Second
	// forwardFetchBytes bounds one fetch of a recovery scan.
	forwardFetchBytes = 8 << 20
	// maxCursorMetadata bounds the cursor's metadata (Kafka's default
	// offset.metadata.max.bytes is 4,096): past it the cursor keeps no end
	// offsets and a recovery scans the forwarded partitions whole.
	maxCursorMetadata = 4000
)

// ForwardGroup is the consumer group whose committed offsets are the
// forwarders' cursors, for a gate of consumer group group.
func ForwardGroup(group string) string { return group + ".a2a-forwarder" }

// errForwardStopped is returned when the forwarder stops (its partition
// is released).
var errForwardStopped = errors.New("forwarder stopped")

// ForwardStage names a point of the forwarder where a test hook can fail
// (Config.forwardHook): the fault the test injects stands for the
// process dying there.
type ForwardStage int

// The stages of a forward.
const (
	// BeforeProduce: the verdicts are in the log, not produced.
	BeforeProduce ForwardStage = iota
	// AfterProduce: produced, the cursor not committed.
	AfterProduce
)

// forwarder produces the forwarded verdicts of one events partition.
// The same outbox, built by newMirror, produces partition 0's
// principal-wide changes to the changes topic (mirror.go): kind says
// which events it keeps and what it produces of them.
type forwarder struct {
	p      int32
	kind   outboxKind
	topic  string // the forwarded topic
	events string // the events topic
	group  string // the cursor's group
	out    *kafkaout.Producer
	cl     *kafka.Client
	log    streams.Log
	logger *slog.Logger
	hook   func(stage ForwardStage, p int32, seqs []uint64) error
	clock  func() time.Time

	mu      sync.Mutex
	pending []*domain.Event // the A2A verdicts handed over
	handed  uint64          // the last seq handed over
	gap     bool            // a batch was not handed over
	wake    chan struct{}   // signalled when pending grows
	room    chan struct{}   // signalled when pending shrinks
	closing chan struct{}   // closed once nothing more is handed over

	// Owned by run.
	next       uint64  // every forwarded verdict below it is produced
	cursor     uint64  // the committed cursor's seq
	ends       []int64 // the committed cursor's end offsets
	producedAt bool    // something was produced since the cursor was committed
	committed  time.Time
	halted     bool // a hook's fault: nothing more is produced or committed

	// through is every kept event's seq below which is produced (next,
	// published by run); progress is closed (and replaced) when it moves.
	through  uint64
	progress chan struct{}
	// dead is closed when a hook halts the outbox: nothing more comes.
	dead chan struct{}
}

// outboxKind is what an outbox keeps of the events handed over and what
// it produces of them.
type outboxKind struct {
	// what names the outbox in logs.
	what string
	// keep reports whether an event is one to produce.
	keep func(*domain.Event) bool
	// mark is in the encoding of every kept event: a recovery decodes only
	// the records that hold it.
	mark []byte
	// message is the message of a kept event on the topic's partitions
	// among n (Topic left to the caller); false: none.
	message func(p int32, ev *domain.Event, n int) (kafka.Message, bool)
	// authentic, when set, reports whether a record of the topic is one
	// the outbox produced: a recovery counts no other (the topic is
	// written by clients too). Nil: every record of the topic is.
	authentic func(headers []kafka.Header, value []byte) bool
}

// a2aForwards is the outbox of forwarded A2A messages.
var a2aForwards = outboxKind{
	what:    "forwarded A2A messages",
	keep:    func(ev *domain.Event) bool { return ev.Type == domain.EvA2AVerdict },
	mark:    verdictMark,
	message: forwardMessage,
}

// newForwarder returns the forwarder of events partition p over lg; its
// worker, once restored, tells it where it starts (restored).
func (g *Gate) newForwarder(p int32, lg streams.Log) *forwarder {
	return g.newOutbox(p, lg, a2aForwards, g.cfg.Topics.A2A, ForwardGroup(g.cfg.GroupID))
}

// newOutbox returns the outbox of kind of events partition p over lg,
// producing to topic, its cursor committed by group.
func (g *Gate) newOutbox(p int32, lg streams.Log, kind outboxKind, topic, group string) *forwarder {
	return &forwarder{
		p: p, kind: kind, topic: topic, events: g.cfg.Topics.Events, group: group, progress: make(chan struct{}), dead: make(chan struct{}),
		out: g.out, cl: g.fwdClient, log: lg, logger: g.log.With("partition", p, "forwarder", true),
		hook: g.cfg.forwardHook, clock: g.cfg.Clock,
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1), closing: make(chan struct{}),
	}
}

// restored tells the forwarder the seq its worker restored up to (before
// the worker runs): the batches it hands over follow it.
func (f *forwarder) restored(seq uint64) {
	f.mu.Lock()
	f.handed = seq
	f.mu.Unlock()
}

// close tells the forwarder that its worker stopped: it produces what is
// pending, commits its cursor and returns.
func (f *forwarder) close() { close(f.closing) }

// add hands the forwarder a committed batch's events (the worker's
// OnBatch): it keeps the A2A verdicts, and notes the batch's last seq (a
// batch that does not follow the last one handed over is a gap: the
// forwarder recovers from the log). It waits while MaxForwardPending
// verdicts are pending, until ctx ends: the verdicts not handed over are
// then produced by the next owner, which recovers them from the log.
func (f *forwarder) add(ctx context.Context, evs []*domain.Event) {
	if len(evs) == 0 {
		return
	}
	for {
		f.mu.Lock()
		if len(f.pending) < MaxForwardPending {
			if evs[0].Seq != f.handed+1 {
				f.gap = true
			}
			f.handed = evs[len(evs)-1].Seq
			for _, ev := range evs {
				if f.kind.keep(ev) {
					f.pending = append(f.pending, ev)
				}
			}
			f.mu.Unlock()
			select {
			case f.wake <- struct{}{}:
			default:
			}
			return
		}
		f.mu.Unlock()
		select {
		case <-f.room:
		case <-ctx.Done():
			return
		}
	}
}

// handover is what take returns: the pending verdicts, the last seq
// handed over, and whether a batch was missed.
type handover struct {
	verdicts []*domain.Event
	handed   uint64
	gap      bool
}

// take returns what was handed over since the last take, waiting for a
// batch until ctx ends or, with none pending, the forwarder is closed
// (false); at a tick it returns what there is, maybe nothing.
func (f *forwarder) take(ctx context.Context, tick <-chan time.Time) (handover, bool) {
	grab := func() handover {
		f.mu.Lock()
		defer f.mu.Unlock()
		h := handover{verdicts: f.pending, handed: f.handed, gap: f.gap}
		f.pending, f.gap = nil, false
		return h
	}
	select {
	case <-f.wake:
	case <-tick:
	case <-f.closing:
		h := grab()
		return h, len(h.verdicts) > 0 || h.gap || h.handed >= f.next
	case <-ctx.Done():
		return handover{}, false
	}
	h := grab()
	select {
	case f.room <- struct{}{}:
	default:
	}
	return h, true
}

// run recovers, then produces the forwarded verdicts of every batch
// handed over, until ctx ends.
func (f *forwarder) run(ctx context.Context) {
	wait := forwardRetry
	recovered := false
	tick := time.NewTicker(forwardCursorInterval)
	defer tick.Stop()
	for ctx.Err() == nil && !f.halted {
		if !recovered {
			if err := f.recover(ctx); err != nil {
				if ctx.Err() == nil {
					f.logger.Error("recovering the outbox", "outbox", f.kind.what, "err", err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
				wait = min(2*wait, forwardRetryMax)
				continue
			}
			recovered, wait = true, forwardRetry
		}
		h, ok := f.take(ctx, tick.C)
		if !ok {
			break
		}
		if err := f.forward(ctx, h); err != nil {
			if ctx.Err() == nil {
				f.logger.Error("producing the outbox: recovering from the log", "outbox", f.kind.what, "err", err)
			}
			recovered = false
			continue
		}
		f.commitCursor(ctx, false)
	}
	// Released: the cursor as it stands (a forward in flight when ctx
	// ended did not move next).
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if recovered {
		f.commitCursor(cctx, true)
	}
}

// forward produces the forwarded verdicts handed over, in seq order (one
// at or below next was produced by the recovery), and moves next past the
// last seq handed over. A gap fails: the caller recovers from the log.
func (f *forwarder) forward(ctx context.Context, h handover) error {
	if h.gap {
		return fmt.Errorf("the forwarder missed a batch before seq %d", h.handed)
	}
	n, err := f.out.Partitions(ctx, f.topic)
	if err != nil {
		return err
	}
	var w write
	for _, ev := range h.verdicts {
		if ev.Seq < f.next {
			continue
		}
		if m, ok := f.message(ev, n); ok {
			if err := f.queue(ctx, &w, m, ev.Seq); err != nil {
				return err
			}
		}
	}
	if err := f.flush(ctx, &w); err != nil {
		return err
	}
	if h.handed >= f.next {
		f.next = h.handed + 1
	}
	f.publish()
	return nil
}

// publish makes next visible to waitThrough.
func (f *forwarder) publish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next > f.through {
		f.through = f.next
		close(f.progress)
		f.progress = make(chan struct{})
	}
}

// waitThrough returns true once every kept event up to seq is produced,
// false when ctx ends first or a hook halted the outbox.
func (f *forwarder) waitThrough(ctx context.Context, seq uint64) bool {
	for {
		f.mu.Lock()
		through, progress := f.through, f.progress
		f.mu.Unlock()
		if through > seq {
			return true
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return false
		case <-f.dead:
			return false
		}
	}
}

// message is the forwarded message of ev (a forwarded A2A verdict), on
// the forwarded topic's partition of its receiver among n.
func (f *forwarder) message(ev *domain.Event, n int) (kafka.Message, bool) {
	m, ok := f.kind.message(f.p, ev, n)
	m.Topic = f.topic
	return m, ok
}

// write is the next write of a forwarder: forwards in seq order.
type write struct {
	msgs  []kafka.Message
	seqs  []uint64
	bytes int
}

// queue adds m, the forward of the verdict at seq, to w, producing w
// first when m would take it past MaxForwardWrite messages or
// MaxForwardWriteBytes. One forward is never larger than its event
// (the AgentMessage and the verdict's short headers), which the log
// bounds under Kafka's default max.message.bytes.
func (f *forwarder) queue(ctx context.Context, w *write, m kafka.Message, seq uint64) error {
	size := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		size += len(h.Key) + len(h.Value)
	}
	if len(w.msgs) > 0 && (len(w.msgs) == MaxForwardWrite || w.bytes+size > MaxForwardWriteBytes) {
		if err := f.flush(ctx, w); err != nil {
			return err
		}
	}
	w.msgs, w.seqs, w.bytes = append(w.msgs, m), append(w.seqs, seq), w.bytes+size
	return nil
}

// flush produces w and moves next past it.
func (f *forwarder) flush(ctx context.Context, w *write) error {
	if len(w.msgs) == 0 {
		return nil
	}
	if err := f.produce(ctx, w.msgs, w.seqs); err != nil {
		return err
	}
	f.next = max(f.next, w.seqs[len(w.seqs)-1]+1)
	w.msgs, w.seqs, w.bytes = w.msgs[:0], w.seqs[:0], 0
	f.publish()
	return nil
}

// produce writes msgs (the verdicts seqs, in order) in one write and
// waits for every partition's acknowledgement.
func (f *forwarder) produce(ctx context.Context, msgs []kafka.Message, seqs []uint64) error {
	if len(msgs) == 0 {
		return nil
	}
	if f.hook != nil {
		if err := f.hook(BeforeProduce, f.p, seqs); err != nil {
			return f.halt(ctx, err)
		}
	}
	now := f.clock()
	for i := range msgs {
		msgs[i].Time = now
	}
	if err := f.out.Write(ctx, msgs...); err != nil {
		return fmt.Errorf("producing %d forwarded messages (seq %d to %d): %w", len(msgs), seqs[0], seqs[len(seqs)-1], err)
	}
	f.producedAt = true
	if f.hook != nil {
		if err := f.hook(AfterProduce, f.p, seqs); err != nil {
			return f.halt(ctx, err)
		}
	}
	return nil
}

// halt stands for the process dying at a hook's fault: the forwarder does
// nothing more until its partition is released, and commits no cursor.
func (f *forwarder) halt(ctx context.Context, err error) error {
	f.logger.Warn("forwarder halted by its hook", "err", err)
	f.halted = true
	close(f.dead)
	select {
	case <-ctx.Done():
	case <-f.closing:
	}
	return errForwardStopped
}

// recover produces every forwarded verdict of the log up to its head that
// is not yet on the forwarded topic, and sets next past the head.
func (f *forwarder) recover(ctx context.Context) error {
	n, err := f.out.Partitions(ctx, f.topic)
	if err != nil {
		return err
	}
	cursor, ends, err := f.fetchCursor(ctx)
	if err != nil {
		return err
	}
	// The highest seq of this events partition on each forwarded
	// partition, above the cursor.
	high := make([]uint64, n)
	for t := range n {
		var from int64
		if t < len(ends) {
			from = ends[t]
		}
		if high[t], err = f.scan(ctx, t, from); err != nil {
			return err
		}
	}
	// The head as the worker knows it (it synced the log when it took
	// the partition over); what it appends later is handed over by
	// OnBatch.
	head := f.log.Head().Seq
	if cursor < 1 {
		cursor = 1
	}
	var w write
	if cursor <= head {
		err = f.log.Read(ctx, cursor, func(r streams.Record) error {
			if r.Seq > head {
				return errStopRead
			}
			if !bytes.Contains(r.Payload, f.kind.mark) {
				return nil
			}
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return fmt.Errorf("decoding event %d: %w", r.Seq, err)
			}
			m, ok := f.message(ev, n)
			if !ok || uint64(len(high)) <= uint64(m.Partition) || r.Seq <= high[m.Partition] {
				return nil
			}
			return f.queue(ctx, &w, m, r.Seq)
		})
		if err != nil && !errors.Is(err, errStopRead) {
			return fmt.Errorf("reading the log from %d: %w", cursor, err)
		}
		if err := f.flush(ctx, &w); err != nil {
			return err
		}
	}
	if head+1 > f.next {
		f.next = head + 1
	}
	f.publish()
	f.committed = time.Time{}
	f.producedAt = true // the ends are measured again
	f.commitCursor(ctx, true)
	return nil
}

// verdictMark is in the encoding of every A2A verdict (its type): the
// recovery decodes only the records that hold it.
var verdictMark = []byte(`"` + string(domain.EvA2AVerdict) + `"`)

var errStopRead = errors.New("stop reading")

// scan returns the highest events seq of this events partition on
// forwarded partition t from offset from to its end (0 for none).
func (f *forwarder) scan(ctx context.Context, t int, from int64) (uint64, error) {
	resp, err := f.cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{f.topic: {kafka.FirstOffsetOf(t), kafka.LastOffsetOf(t)}},
	})
	if err != nil {
		return 0, fmt.Errorf("listing offsets of %s/%d: %w", f.topic, t, err)
	}
	first, end, ok := offsetsOf(resp, f.topic, t)
	if !ok {
		return 0, fmt.Errorf("listing offsets of %s/%d: no answer", f.topic, t)
	}
	from = max(from, first)
	var high uint64
	me := strconv.Itoa(int(f.p))
	for from < end {
		fr, err := f.cl.Fetch(ctx, &kafka.FetchRequest{Topic: f.topic, Partition: t, Offset: from,
			MinBytes: 1, MaxBytes: forwardFetchBytes, MaxWait: 100 * time.Millisecond})
		if err == nil && fr.Error != nil {
			err = fr.Error
		}
		if err != nil {
			return 0, fmt.Errorf("fetching %s/%d at offset %d: %w", f.topic, t, from, err)
		}
		next, err := kafkalog.EachRecord(fr.Records, from, end, func(rec *kafka.Record) error {
			var part, seq string
			for _, h := range rec.Headers {
				switch h.Key {
				case kafkaout.HeaderEventsPartition:
					part = string(h.Value)
				case kafkaout.HeaderEventsSeq:
					seq = string(h.Value)
				}
			}
			if part != me {
				return nil
			}
			s, err := strconv.ParseUint(seq, 10, 64)
			if err != nil || s <= high {
				return nil
			}
			if f.kind.authentic != nil {
				var value []byte
				if rec.Value != nil {
					if value, err = kafka.ReadAll(rec.Value); err != nil {
						return fmt.Errorf("reading the record at offset %d of %s/%d: %w", rec.Offset, f.topic, t, err)
					}
				}
				if !f.kind.authentic(rec.Headers, value) {
					return nil
				}
			}
			high = s
			return nil
		})
		if err != nil {
			return 0, err
		}
		if next == from {
			return 0, fmt.Errorf("fetching %s/%d at offset %d: no record before the end %d", f.topic, t, from, end)
		}
		from = next
	}
	return high, nil
}

// offsetsOf returns partition t's first and end offsets in resp.
func offsetsOf(resp *kafka.ListOffsetsResponse, topic string, t int) (first, end int64, ok bool) {
	first, end = -1, -1
	for _, po := range resp.Topics[topic] {
		if po.Partition != t || po.Error != nil {
			continue
		}
		if po.FirstOffset >= 0 {
			first = po.FirstOffset
		}
		if po.LastOffset >= 0 {
			end = po.LastOffset
		}
	}
	return first, end, first >= 0 && end >= 0
}

// fetchCursor reads the committed cursor: the seq and the end offsets
// (none when no cursor was committed: the log and the forwarded
// partitions are read whole).
func (f *forwarder) fetchCursor(ctx context.Context) (uint64, []int64, error) {
	resp, err := f.cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: f.group, Topics: map[string][]int{f.events: {int(f.p)}}})
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if errors.Is(err, kafka.GroupIdNotFound) {
		return 0, nil, nil // never committed (a broker may say so)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("reading the forwarder's cursor: %w", err)
	}
	for _, po := range resp.Topics[f.events] {
		if po.Partition != int(f.p) {
			continue
		}
		if po.Error != nil {
			return 0, nil, fmt.Errorf("reading the forwarder's cursor: %w", po.Error)
		}
		if po.CommittedOffset < 1 {
			return 0, nil, nil
		}
		ends, ok := parseEnds(po.Metadata)
		if !ok {
			ends = nil
		}
		f.cursor, f.ends = uint64(po.CommittedOffset), ends
		return uint64(po.CommittedOffset), ends, nil
	}
	return 0, nil, nil
}

// cursorVersion prefixes the cursor's metadata.
const cursorVersion = "v1:"

// parseEnds decodes the cursor's metadata: "v1:" and the end offsets,
// comma-separated, by forwarded partition.
func parseEnds(md string) ([]int64, bool) {
	rest, ok := strings.CutPrefix(md, cursorVersion)
	if !ok {
		return nil, false
	}
	if rest == "" {
		return nil, true
	}
	parts := strings.Split(rest, ",")
	out := make([]int64, len(parts))
	for i, s := range parts {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// formatEnds encodes end offsets as the cursor's metadata.
func formatEnds(ends []int64) string {
	var b strings.Builder
	b.WriteString(cursorVersion)
	for i, e := range ends {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(e, 10))
	}
	if b.Len() > maxCursorMetadata {
		return cursorVersion
	}
	return b.String()
}

// commitCursor commits next as the cursor: when it moved and
// forwardCursorInterval passed (or force), or every forwardCursorRefresh.
// The end offsets are measured again only when something was produced
// since the last commit (otherwise the last ones still bound every later
// message). A failed commit is retried at the next one: the recovery reads
// more, never less.
func (f *forwarder) commitCursor(ctx context.Context, force bool) {
	if f.halted {
		return
	}
	now := time.Now()
	moved := f.next != f.cursor
	if !force && (!moved || now.Sub(f.committed) < forwardCursorInterval) && now.Sub(f.committed) < forwardCursorRefresh {
		return
	}
	ends := f.ends
	if f.producedAt || ends == nil {
		n, err := f.out.Partitions(ctx, f.topic)
		if err != nil {
			return
		}
		reqs := make([]kafka.OffsetRequest, n)
		for t := range n {
			reqs[t] = kafka.LastOffsetOf(t)
		}
		resp, err := f.cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{f.topic: reqs}})
		if err != nil {
			f.logger.Warn("measuring the forwarded topic for the cursor", "err", err)
			return
		}
		ends = make([]int64, n)
		for _, po := range resp.Topics[f.topic] {
			if po.Error != nil || po.Partition < 0 || po.Partition >= n {
				f.logger.Warn("measuring the forwarded topic for the cursor", "partition", po.Partition, "err", po.Error)
				return
			}
			ends[po.Partition] = po.LastOffset
		}
	}
	resp, err := f.cl.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: f.group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{f.events: {{Partition: int(f.p), Offset: int64(f.next), Metadata: formatEnds(ends)}}}})
	if err == nil {
		for _, po := range resp.Topics[f.events] {
			if po.Error != nil {
				err = po.Error
			}
		}
	}
	if err != nil {
		f.logger.Warn("committing the forwarder's cursor", "seq", f.next, "err", err)
		return
	}
	f.cursor, f.ends, f.producedAt, f.committed = f.next, ends, false, now
}
