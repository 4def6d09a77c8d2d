package kafkalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams"
)

// Record headers: every Kafka message of the log carries its Seq and Prev.
const (
	// HeaderSeq holds the record's Seq in decimal.
	HeaderSeq = "agentgate-seq"
	// HeaderPrev holds the record's Prev (hex SHA-256 of the previous
	// payload; empty for seq 1).
	HeaderPrev = "agentgate-prev"
)

// Defaults of Options; each is used when the field is zero.
const (
	// RecordOverheadBytes is what one record adds to a produce request
	// beyond its payload, counted against MaxBatchBytes: the seq and prev
	// headers (~100 bytes) and the record framing, rounded up.
	RecordOverheadBytes = 160
	// DefaultMaxRequestBytes limits one produce request of an Append
	// (payloads plus RecordOverheadBytes each): one record batch, which
	// the broker refuses above the topic's max.message.bytes (1048588 by
	// default): the default stays below it.
	DefaultMaxRequestBytes = 1_000_000
	// DefaultMaxBatchBytes limits one Append (payloads plus
	// RecordOverheadBytes each), written as consecutive produce requests
	// of at most MaxRequestBytes. It is the embedded log's limit
	// (pebblelog.DefaultMaxBatchBytes), so a worker batch that fits one
	// log fits the other.
	DefaultMaxBatchBytes = 16 << 20
	// DefaultMaxRecordBytes limits one payload: what fits alone in a
	// produce request.
	DefaultMaxRecordBytes = DefaultMaxRequestBytes - RecordOverheadBytes
	// DefaultMaxBatchRecords limits the records of one Append.
	DefaultMaxBatchRecords = 8192
	// DefaultFetchMaxBytes is the MaxBytes of each fetch: Kafka's own
	// max.partition.fetch.bytes, about one produce batch of an Append
	// (MaxRequestBytes). A broker answers with whole batches (at least
	// one, however large); with several per response, the dev broker
	// copied each response twice as it grew it (a restore read ~8%
	// slower at 4 MiB).
	DefaultFetchMaxBytes = 1 << 20
	// DefaultIndexInterval is the spacing, in seqs, of the sparse
	// seq -> offset index Read starts from.
	DefaultIndexInterval = 256
	// DefaultRequestTimeout bounds each Kafka request.
	DefaultRequestTimeout = 10 * time.Second
)

// Options tunes a Log. The zero value is ready to use.
type Options struct {
	// Logger receives the log's messages (skipped records at Warn). Nil
	// means slog.Default().
	Logger *slog.Logger
	// Transport carries the Kafka requests. Nil means a kafka.Transport of
	// the Log's own, whose idle connections Close closes.
	Transport kafka.RoundTripper
	// RequestTimeout bounds each Kafka request (DefaultRequestTimeout).
	RequestTimeout time.Duration
	// MaxRecordBytes limits one payload (DefaultMaxRecordBytes); a larger
	// one gets streams.ErrTooLarge.
	MaxRecordBytes int
	// MaxBatchRecords limits the records of one Append
	// (DefaultMaxBatchRecords); a larger batch gets streams.ErrTooLarge.
	MaxBatchRecords int
	// MaxBatchBytes limits one Append, payloads plus RecordOverheadBytes
	// per record (DefaultMaxBatchBytes); a larger batch gets
	// streams.ErrTooLarge.
	MaxBatchBytes int
	// MaxRequestBytes limits one produce request (DefaultMaxRequestBytes):
	// an Append larger than it is split into consecutive requests. Keep it
	// below the topic's max.message.bytes.
	MaxRequestBytes int
	// FetchMaxBytes is the MaxBytes of each fetch (DefaultFetchMaxBytes).
	FetchMaxBytes int
	// IndexInterval is the spacing of the sparse index
	// (DefaultIndexInterval): a Read from seq s fetches at most this many
	// records before s.
	IndexInterval int
	// Lazy makes Open not read the partition: the first Read, Sync or
	// Append does, and a Read that does delivers the records as it applies
	// them, so that opening a partition and reading it whole (a new owner
	// restoring its state) is one pass over the partition rather than
	// two. Head is the zero head until then.
	Lazy bool
	// From, when its Seq is not 0, opens the log at a record of the chain
	// whose Position a reader kept (the last record it applied) instead of
	// at offset 0: Open fetches that one record and checks that it is
	// there, with that seq and hash (ErrNotAtPosition when not: the
	// partition is not the one the reader followed), and the chain goes
	// on from it. Head is From's until more is read; nothing before it is
	// read, and a Read from a seq at or below From.Seq is refused.
	From Position
}

// Position is where a record of the chain lies in the partition: its seq,
// its hash (the next record's prev) and its Kafka offset. A reader that
// keeps the Position of the last record it applied reopens the log there
// (Options.From) without reading the partition from offset 0.
type Position struct {
	Seq    uint64
	Hash   string
	Offset int64
}

// ErrNotAtPosition is returned by Open when the record at Options.From's
// offset is not the one From describes (or the partition ends before it),
// and by Read for a seq before the record the log was opened at.
var ErrNotAtPosition = errors.New("the partition does not hold the chain at the position given")

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.MaxBatchRecords == 0 {
		o.MaxBatchRecords = DefaultMaxBatchRecords
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.FetchMaxBytes == 0 {
		o.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if o.IndexInterval == 0 {
		o.IndexInterval = DefaultIndexInterval
	}
	return o
}

// Log is one partition of the event log on a Kafka topic. It implements
// streams.Log; all its methods are safe for concurrent use.
type Log struct {
	client    *kafka.Client
	own       *kafka.Transport // nil when Options.Transport was given
	topic     string
	partition int
	opts      Options
	logger    *slog.Logger

	// writing is a one-slot semaphore held by the running Append or Sync;
	// it guards next and stale. A channel so a waiter honours its context.
	writing chan struct{}
	// next is the first offset this Log has not applied to the chain.
	next int64
	// stale is set when a produce failed without an answer: the batch may
	// be in the partition, so the next Append first catches up. A lazy
	// Log starts stale.
	stale bool
	// pending is set while a lazy Log has not caught up once; it changes
	// under writing.
	pending atomic.Bool

	view atomic.Pointer[view]

	idxMu sync.RWMutex
	index []int64 // index[i] = offset of seq base+i*IndexInterval+1
	// base is the seq the log was opened at (Options.From), 0 for the
	// start of the partition: it holds no record at or below it.
	base uint64

	// fetched counts the messages fetched from the broker.
	fetched atomic.Uint64

	mu     sync.Mutex
	idle   sync.Cond // signalled when ops drops to 0
	closed bool
	ops    int
}

// view is the head and where it lies in the partition.
type view struct {
	head   streams.Head
	offset int64 // offset of the head record; -1 when the log is empty
}

var (
	_ streams.Log          = (*Log)(nil)
	_ streams.ChainReader  = (*Log)(nil)
	_ streams.KeptPayloads = (*Log)(nil)
)

// Open opens the log on partition of topic at brokers: it reads the
// partition from offset 0 to its end, applying the chain (see the package
// doc), to find the head and build the sparse index; with Options.Lazy it
// leaves that to the first Read, Sync or Append. The topic must exist and
// keep every record: Open refuses a partition whose first offset is not 0
// (records were deleted by retention or DeleteRecords).
func Open(ctx context.Context, brokers []string, topic string, partition int, opts Options) (*Log, error) {
	if len(brokers) == 0 {
		return nil, errors.New("opening kafka log: no brokers")
	}
	if topic == "" || partition < 0 {
		return nil, fmt.Errorf("opening kafka log: invalid topic %q partition %d", topic, partition)
	}
	opts = opts.withDefaults()
	l := &Log{topic: topic, partition: partition, opts: opts, logger: opts.Logger, writing: make(chan struct{}, 1)}
	l.idle.L = &l.mu
	transport := opts.Transport
	if transport == nil {
		l.own = &kafka.Transport{}
		transport = l.own
	}
	l.client = &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: opts.RequestTimeout, Transport: transport}
	l.view.Store(&view{offset: -1})

	first, err := l.listOffset(ctx, kafka.FirstOffset)
	if err != nil {
		l.closeTransport()
		return nil, err
	}
	if first != 0 {
		l.closeTransport()
		return nil, fmt.Errorf("opening kafka log %s/%d: the partition starts at offset %d, records were deleted (the events topic needs retention.ms=-1)", topic, partition, first)
	}
	if opts.From.Seq > 0 {
		if err := l.anchor(ctx, opts.From); err != nil {
			l.closeTransport()
			return nil, fmt.Errorf("opening kafka log %s/%d at seq %d (offset %d): %w", topic, partition, opts.From.Seq, opts.From.Offset, err)
		}
	}
	if opts.Lazy {
		l.stale = true
		l.pending.Store(true)
		l.logger.Info("kafka event log opened lazily", "topic", topic, "partition", partition)
		return l, nil
	}
	if err := l.catchUp(ctx); err != nil {
		l.closeTransport()
		return nil, fmt.Errorf("opening kafka log %s/%d: %w", topic, partition, err)
	}
	v := l.view.Load()
	l.logger.Info("kafka event log opened", "topic", topic, "partition", partition, "head_seq", v.head.Seq, "end_offset", l.next)
	return l, nil
}

// anchor checks that the record at at.Offset is the chain's record at and
// starts the chain there.
func (l *Log) anchor(ctx context.Context, at Position) error {
	end, err := l.listOffset(ctx, kafka.LastOffset)
	if err != nil {
		return err
	}
	if at.Offset < 0 || at.Offset >= end {
		return fmt.Errorf("the partition ends at offset %d: %w", end, ErrNotAtPosition)
	}
	found := false
	err = l.fetch(ctx, at.Offset, at.Offset+1, func(offset int64, r streams.Record, ok bool) error {
		found = ok && offset == at.Offset && r.Seq == at.Seq && r.Hash() == at.Hash
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return ErrNotAtPosition
	}
	l.base, l.next = at.Seq, at.Offset+1
	l.view.Store(&view{head: streams.Head{Seq: at.Seq, Hash: at.Hash}, offset: at.Offset})
	return nil
}

// RecordsFetched returns how many messages this Log has fetched from the
// broker since Open (skipped ones included).
func (l *Log) RecordsFetched() uint64 { return l.fetched.Load() }

func (l *Log) closeTransport() {
	if l.own != nil {
		l.own.CloseIdleConnections()
	}
}

// listOffset returns the partition's first offset or its end (the high
// watermark: the offset the next record gets).
func (l *Log) listOffset(ctx context.Context, which int64) (int64, error) {
	resp, err := l.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{l.topic: {{Partition: l.partition, Timestamp: which}}},
	})
	if err != nil {
		return 0, fmt.Errorf("listing offsets: %w", err)
	}
	for _, p := range resp.Topics[l.topic] {
		if p.Partition != l.partition {
			continue
		}
		if p.Error != nil {
			return 0, fmt.Errorf("listing offsets of %s/%d: %w", l.topic, l.partition, p.Error)
		}
		if which == kafka.FirstOffset {
			return p.FirstOffset, nil
		}
		return p.LastOffset, nil
	}
	return 0, fmt.Errorf("listing offsets: no answer for %s/%d", l.topic, l.partition)
}

// Head returns the position of the last record this Log knows to extend
// the chain: after Open, Sync or an Append, the end of the partition as
// seen then. It keeps answering after Close.
func (l *Log) Head() streams.Head { return l.view.Load().head }

// Sync catches up with records other writers appended since this Log last
// looked (Head moves to the partition's end). A new owner of the partition
// calls it before deciding; Append calls it itself after a failed produce.
// It returns streams.ErrClosed after Close.
func (l *Log) Sync(ctx context.Context) error { return l.SyncRead(ctx, nil) }

// SyncRead is Sync calling fn with each record it applies, in order: the
// records appended since this Log last looked, read once (Sync then Read
// would fetch them twice). A follower that has read up to Head calls it to
// read what came since. fn's error stops it; the records applied before
// stay applied (and Head is the last one fn was called with). A nil fn is
// Sync. It returns streams.ErrClosed after Close.
func (l *Log) SyncRead(ctx context.Context, fn func(streams.Record) error) error {
	if fn == nil {
		return l.SyncReadAt(ctx, nil)
	}
	return l.SyncReadAt(ctx, func(r streams.Record, _ Position) error { return fn(r) })
}

// SyncReadAt is SyncRead also handing fn each record's Position, which a
// reader keeps to reopen the log there (Options.From).
func (l *Log) SyncReadAt(ctx context.Context, fn func(streams.Record, Position) error) error {
	if err := l.enter(); err != nil {
		return err
	}
	defer l.exit()
	select {
	case l.writing <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting to sync: %w", ctx.Err())
	}
	defer func() { <-l.writing }()
	return l.catchUpDelivering(ctx, fn)
}

// catchUp applies every record from l.next to the partition's current end.
// The caller holds l.writing (or is Open).
func (l *Log) catchUp(ctx context.Context) error {
	return l.catchUpDelivering(ctx, nil)
}

// catchUpDelivering is catchUp calling deliver (when not nil) with every
// record it applies, after applying it; deliver's error stops it (the
// records applied so far stay applied).
func (l *Log) catchUpDelivering(ctx context.Context, deliver func(streams.Record, Position) error) error {
	end, err := l.listOffset(ctx, kafka.LastOffset)
	if err != nil {
		return err
	}
	if err := l.applyRange(ctx, end, deliver); err != nil {
		return err
	}
	l.stale = false
	l.pending.Store(false)
	return nil
}

// applyRange applies the records at offsets [l.next, end) to the chain,
// calling deliver (when not nil) with each record it applies.
func (l *Log) applyRange(ctx context.Context, end int64, deliver func(streams.Record, Position) error) error {
	if end <= l.next {
		return nil
	}
	v := *l.view.Load()
	err := l.fetch(ctx, l.next, end, func(offset int64, r streams.Record, ok bool) error {
		if ok && v.head.Link(r.Seq, r.Prev) == streams.LinkNext {
			v = view{head: streams.Head{Seq: r.Seq, Hash: r.Hash()}, offset: offset}
			l.indexAdd(r.Seq, offset)
			if deliver != nil {
				return deliver(r, Position{Seq: r.Seq, Hash: v.head.Hash, Offset: offset})
			}
			return nil
		}
		l.logger.Warn("kafka event log: skipping a record that does not extend the chain",
			"topic", l.topic, "partition", l.partition, "offset", offset, "seq", r.Seq, "head_seq", v.head.Seq, "well_formed", ok)
		return nil
	})
	// Whatever was applied before an error is the chain: keep it.
	l.view.Store(&v)
	if err != nil {
		if v.offset >= l.next {
			l.next = v.offset + 1
		}
		return err
	}
	l.next = end
	return nil
}

// indexAdd records the offset of seq when seq starts an index interval.
func (l *Log) indexAdd(seq uint64, offset int64) {
	k := uint64(l.opts.IndexInterval)
	if seq <= l.base || (seq-l.base-1)%k != 0 {
		return
	}
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	if i := int((seq - l.base - 1) / k); i == len(l.index) {
		l.index = append(l.index, offset)
	}
}

// indexLookup returns the offset to start a read of seq from.
func (l *Log) indexLookup(seq uint64) int64 {
	i := int((seq - l.base - 1) / uint64(l.opts.IndexInterval))
	l.idxMu.RLock()
	defer l.idxMu.RUnlock()
	if i >= len(l.index) {
		i = len(l.index) - 1
	}
	if i < 0 {
		return 0
	}
	return l.index[i]
}

// fetch calls fn for every message at offsets [from, end), in order, with
// its record (ok false when its headers are malformed).
//
// The fetches run on a goroutine of their own, up to fetchAhead responses
// ahead of fn: the broker serves (and the client decodes) the next
// response while fn works through the last one, rather than each waiting
// for the other.
func (l *Log) fetch(ctx context.Context, from, end int64, fn func(offset int64, r streams.Record, ok bool) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan fetched, fetchAhead)
	go l.fetchInto(ctx, from, end, out)
	for f := range out {
		for _, r := range f.recs {
			if err := fn(r.offset, r.rec, r.ok); err != nil {
				cancel()
				for range out { // the fetcher stops at ctx's end
				}
				return err
			}
		}
		if f.err != nil {
			return f.err
		}
	}
	return nil
}

// fetchAhead is how many fetch responses fetch holds ahead of its caller.
const fetchAhead = 2

// fetched is one fetch response's records, parsed, and the error that
// ended the fetches after them, if any.
type fetched struct {
	recs []fetchedRecord
	err  error
}

type fetchedRecord struct {
	offset int64
	rec    streams.Record
	ok     bool
}

// fetchInto fetches the messages at offsets [from, end) into out, which it
// closes; it stops at the first error (sent last) or when ctx ends.
func (l *Log) fetchInto(ctx context.Context, from, end int64, out chan<- fetched) {
	defer close(out)
	send := func(f fetched) bool {
		select {
		case out <- f:
			return true
		case <-ctx.Done():
			return false
		}
	}
	empty := 0
	var arena streams.Arena
	for from < end {
		if err := ctx.Err(); err != nil {
			send(fetched{err: fmt.Errorf("reading kafka log: %w", err)})
			return
		}
		resp, err := l.client.Fetch(ctx, &kafka.FetchRequest{
			Topic: l.topic, Partition: l.partition, Offset: from,
			MinBytes: 1, MaxBytes: int64(l.opts.FetchMaxBytes), MaxWait: 100 * time.Millisecond,
		})
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		if err != nil {
			send(fetched{err: fmt.Errorf("fetching offset %d: %w", from, err)})
			return
		}
		var f fetched
		n, err := EachRecord(resp.Records, from, end, func(rec *kafka.Record) error {
			r, ok, err := parseRecord(rec, &arena)
			if err != nil {
				return fmt.Errorf("reading record at offset %d: %w", rec.Offset, err)
			}
			f.recs = append(f.recs, fetchedRecord{offset: rec.Offset, rec: r, ok: ok})
			return nil
		})
		l.fetched.Add(uint64(len(f.recs)))
		if err != nil {
			f.err = err
			send(f)
			return
		}
		if n == from {
			empty++
			if resp.HighWatermark <= from || empty > 3 {
				send(fetched{err: fmt.Errorf("fetching offset %d: the partition ends at %d, before %d", from, resp.HighWatermark, end)})
				return
			}
			continue
		}
		empty = 0
		from = n
		if !send(f) {
			return
		}
	}
}

// EachRecord calls fn with every record of one fetch response (rr, nil
// for none) whose offset is in [from, end), in offset order, and returns
// the offset to fetch next: past the last record fn accepted, or end once
// a record at or past it is seen. It stops at fn's first error, which it
// returns as is.
func EachRecord(rr kafka.RecordReader, from, end int64, fn func(rec *kafka.Record) error) (int64, error) {
	if rr == nil {
		return from, nil
	}
	for from < end {
		rec, err := rr.ReadRecord()
		if errors.Is(err, io.EOF) {
			return from, nil
		}
		if err != nil {
			return from, fmt.Errorf("reading records at offset %d: %w", from, err)
		}
		if rec.Offset < from {
			continue // a batch may start before the requested offset
		}
		if rec.Offset >= end {
			return end, nil
		}
		if err := fn(rec); err != nil {
			return from, err
		}
		from = rec.Offset + 1
	}
	return from, nil
}

// parseRecord reads seq, prev and payload; ok is false when the headers
// are missing, repeated or malformed (the record is skipped).
func parseRecord(rec *kafka.Record, arena *streams.Arena) (streams.Record, bool, error) {
	var r streams.Record
	var payload []byte
	if rec.Value != nil {
		b := arena.Alloc(rec.Value.Len())
		if _, err := io.ReadFull(rec.Value, b); err != nil {
			return r, false, err
		}
		payload = b
	}
	r.Payload = payload
	var seqs, prevs int
	for _, h := range rec.Headers {
		switch h.Key {
		case HeaderSeq:
			seqs++
			seq, err := strconv.ParseUint(string(h.Value), 10, 64)
			if err != nil || seq == 0 {
				return r, false, nil
			}
			r.Seq = seq
		case HeaderPrev:
			prevs++
			r.Prev = string(h.Value)
		}
	}
	return r, seqs == 1 && prevs == 1, nil
}

// Append produces batch on the log's partition with acks=all and returns
// nil only when the broker acknowledged it and the records are the chain's
// extension: every reader applies them. A batch within MaxRequestBytes is
// one produce request, one record batch: all or nothing. A larger one (up
// to MaxBatchBytes) is split into consecutive requests of at most
// MaxRequestBytes, each produced and fenced as below in order: on an error
// a prefix of the batch may be in the partition (the chain's extension,
// which the caller's rebuild from the log picks up), never a gap.
//
// It returns streams.ErrConflict (wrapped) when the batch does not extend
// the head this Log knows, and then nothing was produced; it also returns
// streams.ErrConflict when, after producing, it finds that another writer
// extended the chain first (records between this Log's last known offset
// and the batch's): the batch is in the partition but every reader skips
// it, Head has moved to the other writer's records, and the caller must
// not reply with it. Fencing costs nothing when no other message was
// produced since this Log's last look (the batch's base offset proves it)
// and one fetch of the intervening messages otherwise.
//
// streams.ErrTooLarge (a limit of Options), the context's error (ctx ended
// before producing) and streams.ErrClosed write nothing. Any other error
// is the produce's: the batch may or may not be in the partition; the next
// Append (or Sync) catches up first, so a batch built on the old head then
// gets ErrConflict if the failed one landed. An empty batch is a no-op.
func (l *Log) Append(ctx context.Context, batch []streams.Record) error {
	if err := l.enter(); err != nil {
		return err
	}
	defer l.exit()
	if len(batch) == 0 {
		return nil
	}
	if err := l.checkLimits(batch); err != nil {
		return err
	}
	select {
	case l.writing <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting to append: %w", ctx.Err())
	}
	defer func() { <-l.writing }()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("appending batch: %w", err)
	}
	if l.stale {
		if err := l.catchUp(ctx); err != nil {
			return fmt.Errorf("catching up before appending: %w", err)
		}
	}

	head := l.view.Load().head
	sums := make([][sha256.Size]byte, len(batch))
	if err := streams.CheckBatch(head, batch, sums); err != nil {
		return fmt.Errorf("appending batch: %w", err)
	}
	hashes := make([]string, len(batch))
	for i := range sums {
		hashes[i] = hex.EncodeToString(sums[i][:])
	}

	// Consecutive requests of at most MaxRequestBytes.
	for start := 0; start < len(batch); {
		end, size := start, 0
		for end < len(batch) && (end == start || size+len(batch[end].Payload)+RecordOverheadBytes <= l.opts.MaxRequestBytes) {
			size += len(batch[end].Payload) + RecordOverheadBytes
			end++
		}
		if err := l.appendRequest(ctx, batch[start:end], hashes[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// appendRequest produces one request's records (the chain's next ones,
// checked by Append) and fences them.
func (l *Log) appendRequest(ctx context.Context, batch []streams.Record, hashes []string) error {
	now := time.Now()
	recs := make([]kafka.Record, len(batch))
	for i, r := range batch {
		recs[i] = kafka.Record{
			Time:  now,
			Value: kafka.NewBytes(r.Payload),
			Headers: []kafka.Header{
				{Key: HeaderSeq, Value: strconv.AppendUint(nil, r.Seq, 10)},
				{Key: HeaderPrev, Value: []byte(r.Prev)},
			},
		}
	}
	resp, err := l.client.Produce(ctx, &kafka.ProduceRequest{
		Topic: l.topic, Partition: l.partition, RequiredAcks: kafka.RequireAll,
		Records: kafka.NewRecordReader(recs...),
	})
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if err != nil {
		l.stale = true
		return fmt.Errorf("producing batch of %d records at seq %d: %w", len(batch), batch[0].Seq, err)
	}

	// Fence: apply whatever other writers put between our last look and
	// our batch, then our own records, exactly as every reader will.
	base := resp.BaseOffset
	if base < l.next {
		l.stale = true
		return fmt.Errorf("producing batch: broker answered base offset %d below the known end %d", base, l.next)
	}
	if err := l.applyRange(ctx, base, nil); err != nil {
		l.stale = true
		return fmt.Errorf("checking the chain before offset %d: %w", base, err)
	}
	v := *l.view.Load()
	for i, r := range batch {
		if v.head.Link(r.Seq, r.Prev) == streams.LinkNext {
			v = view{head: streams.Head{Seq: r.Seq, Hash: hashes[i]}, offset: base + int64(i)}
			l.indexAdd(r.Seq, v.offset)
		}
	}
	l.view.Store(&v)
	l.next = base + int64(len(batch))
	last := batch[len(batch)-1]
	if v.head.Seq != last.Seq || v.head.Hash != hashes[len(hashes)-1] {
		return fmt.Errorf("appending batch at seq %d: another writer extended the chain first (batch at offset %d is skipped by readers; head now seq %d): %w",
			batch[0].Seq, base, v.head.Seq, streams.ErrConflict)
	}
	return nil
}

// checkLimits refuses a batch over a limit of Options.
func (l *Log) checkLimits(batch []streams.Record) error {
	if len(batch) > l.opts.MaxBatchRecords {
		return fmt.Errorf("appending batch of %d records (limit %d): %w", len(batch), l.opts.MaxBatchRecords, streams.ErrTooLarge)
	}
	if batch[len(batch)-1].Seq == math.MaxUint64 {
		return fmt.Errorf("appending batch: seq space exhausted: %w", streams.ErrTooLarge)
	}
	size := 0
	for i, r := range batch {
		if len(r.Payload) > l.opts.MaxRecordBytes {
			return fmt.Errorf("appending batch: record %d has %d bytes (limit %d): %w", i, len(r.Payload), l.opts.MaxRecordBytes, streams.ErrTooLarge)
		}
		size += len(r.Payload) + RecordOverheadBytes
	}
	if size > l.opts.MaxBatchBytes {
		return fmt.Errorf("appending batch of %d bytes with overhead (limit %d): %w", size, l.opts.MaxBatchBytes, streams.ErrTooLarge)
	}
	return nil
}

// ReadKeepsPayloads reports true: Read's payloads are copies fn may keep
// (see streams.KeptPayloads).
func (l *Log) ReadKeepsPayloads() bool { return true }

// ReadChecksChain reports true: Read passes only records that continue the
// chain, each one's Prev the hash of the payload of the record before it
// (see streams.ChainReader).
func (l *Log) ReadChecksChain() bool { return true }

// Read calls fn for each record with Seq >= from (0 is read as 1) up to
// the head at the time of the call, in order, applying the chain as Open
// does. It starts at the sparse index entry at or before from, so it
// fetches at most IndexInterval-1 records before from. The Record's Payload
// is fresh memory the callee may keep. Read returns fn's error, the
// context's error (checked before each record), a fetch error, and
// streams.ErrClosed after Close.
//
// On a lazy Log that has not caught up yet (Options.Lazy), Read catches up
// to the partition's end and calls fn with the records from from as it
// applies them; it holds off Append and Sync meanwhile.
func (l *Log) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
	if err := l.enter(); err != nil {
		return err
	}
	defer l.exit()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reading log: %w", err)
	}
	if from == 0 {
		from = 1
	}
	if from <= l.base {
		return fmt.Errorf("reading log from seq %d: opened at seq %d: %w", from, l.base, ErrNotAtPosition)
	}
	if l.pending.Load() {
		if done, err := l.readCatchingUp(ctx, from, fn); done {
			return err
		}
	}
	return l.readView(ctx, from, l.view.Load(), fn)
}

// readCatchingUp is Read on a lazy Log that has not caught up: it reads
// what an interrupted catch-up applied, then catches up delivering the
// rest. done is false when another call caught up meanwhile (Read then
// reads as usual).
func (l *Log) readCatchingUp(ctx context.Context, from uint64, fn func(streams.Record) error) (done bool, err error) {
	select {
	case l.writing <- struct{}{}:
	case <-ctx.Done():
		return true, fmt.Errorf("waiting to read: %w", ctx.Err())
	}
	defer func() { <-l.writing }()
	if !l.pending.Load() {
		return false, nil
	}
	v := l.view.Load()
	if err := l.readView(ctx, from, v, fn); err != nil {
		return true, err
	}
	err = l.catchUpDelivering(ctx, func(r streams.Record, _ Position) error {
		if r.Seq < from {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading log: %w", err)
		}
		return fn(r)
	})
	return true, err
}

// readView is Read up to the head of v.
func (l *Log) readView(ctx context.Context, from uint64, v *view, fn func(streams.Record) error) error {
	if from > v.head.Seq {
		return nil
	}
	start := l.indexLookup(from)
	var chain streams.Head
	first := true
	done := errors.New("read reached the head")
	err := l.fetch(ctx, start, v.offset+1, func(offset int64, r streams.Record, ok bool) error {
		if first {
			// The index points at a record of the chain: seed from it.
			first = false
			if !ok {
				return &streams.ChainError{Seq: from, Reason: fmt.Sprintf("index offset %d holds no log record", offset)}
			}
			chain = streams.Head{Seq: r.Seq - 1, Hash: r.Prev}
		}
		if !ok || chain.Link(r.Seq, r.Prev) != streams.LinkNext {
			return nil
		}
		chain = streams.Head{Seq: r.Seq, Hash: r.Hash()}
		if r.Seq >= from {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("reading log: %w", err)
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if r.Seq >= v.head.Seq {
			return done
		}
		return nil
	})
	if errors.Is(err, done) {
		return nil
	}
	if err != nil {
		return err
	}
	if chain.Seq < v.head.Seq {
		return &streams.ChainError{Seq: chain.Seq + 1, Reason: "record missing before the head"}
	}
	return nil
}

// Close releases the log: it waits for running calls and closes the idle
// connections of its own transport. Later calls answer streams.ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return streams.ErrClosed
	}
	l.closed = true
	for l.ops > 0 {
		l.idle.Wait()
	}
	l.mu.Unlock()
	l.closeTransport()
	l.logger.Info("kafka event log closed", "topic", l.topic, "partition", l.partition, "head_seq", l.Head().Seq)
	return nil
}

func (l *Log) enter() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return streams.ErrClosed
	}
	l.ops++
	return nil
}

func (l *Log) exit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops--
	if l.ops == 0 {
		l.idle.Broadcast()
	}
}
