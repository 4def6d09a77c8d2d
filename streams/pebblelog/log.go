package pebblelog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// Defaults of Options; each is used when the field is zero.
const (
	// DefaultMemTableSizeBytes is the steady-state memtable size. Pebble's
	// default (4 MiB) flushes every ~10,000 records of 400 bytes; 32 MiB
	// flushes 8 times less often, so sustained appends stall less on
	// flushes and L0 compactions. Memtables start at 256 KiB and double up
	// to this size, so a small log does not pay for it.
	DefaultMemTableSizeBytes = 32 << 20
	// DefaultCacheSizeBytes is the block cache. Pebble's default is 8 MiB;
	// 32 MiB keeps the recent tail of the log (what projections replay
	// and catch up from) in memory.
	DefaultCacheSizeBytes = 32 << 20
	// DefaultMaxRecordBytes limits one payload.
	DefaultMaxRecordBytes = 4 << 20
	// DefaultMaxBatchRecords limits the records of one Append.
	DefaultMaxBatchRecords = 8192
	// DefaultMaxBatchBytes limits the payload bytes of one Append: half
	// the default memtable, so that once memtables have grown a batch goes
	// into the memtable rather than becoming a flushable batch of its own
	// (correct either way; the latter costs an extra flush).
	DefaultMaxBatchBytes = 16 << 20
)

// Options tunes a Log. The zero value is ready to use.
type Options struct {
	// Logger receives the log's own messages and Pebble's (Pebble's info
	// messages at Debug level, its errors at Error level). Nil means
	// slog.Default().
	Logger *slog.Logger
	// MemTableSizeBytes is Pebble's MemTableSize (see
	// DefaultMemTableSizeBytes). Two memtables may exist at once.
	MemTableSizeBytes uint64
	// CacheSizeBytes is Pebble's block cache size (see
	// DefaultCacheSizeBytes).
	CacheSizeBytes int64
	// WALBytesPerSync, when positive, makes Pebble sync the WAL in the
	// background every so many bytes, smoothing the fsync of a large batch
	// into smaller writes. It does not weaken durability: every Append
	// still fsyncs before it returns. Zero keeps Pebble's default (no
	// background WAL sync): 512 KiB measured no faster for batches of 64
	// and 512 records of 400 bytes, since every commit syncs anyway.
	WALBytesPerSync int
	// MaxRecordBytes limits the size of one payload
	// (DefaultMaxRecordBytes); a larger one gets streams.ErrTooLarge.
	MaxRecordBytes int
	// MaxBatchRecords limits the number of records of one Append
	// (DefaultMaxBatchRecords); a larger batch gets streams.ErrTooLarge.
	MaxBatchRecords int
	// MaxBatchBytes limits the payload bytes of one Append
	// (DefaultMaxBatchBytes); a larger batch gets streams.ErrTooLarge.
	MaxBatchBytes int
	// MinFreeBytes is the free space Append keeps on the log's disk: a
	// batch that would leave less is refused with streams.ErrNoSpace and
	// nothing written (doc.go, "A full disk"). Zero is
	// diskspace.ReserveFor(MemTableSizeBytes); negative disables the check.
	MinFreeBytes int64

	// FS is the file system (nil: the operating system's); tests inject
	// faults through it.
	FS vfs.FS
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MemTableSizeBytes == 0 {
		o.MemTableSizeBytes = DefaultMemTableSizeBytes
	}
	if o.CacheSizeBytes == 0 {
		o.CacheSizeBytes = DefaultCacheSizeBytes
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
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = diskspace.ReserveFor(o.MemTableSizeBytes)
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	return o
}

const (
	recordPrefix = 'r'
	keyLen       = 9
	headerLen    = 1 + sha256.Size + sha256.Size
	flagHasPrev  = 0x01
	// formatVersion is the layout of doc.go; a new layout gets a new name.
	formatVersion = "agentgate.pebblelog.v1"
)

var formatKey = []byte("\x00format")

// Log is one partition of the event log in a Pebble database. It
// implements streams.Log; all its methods are safe for concurrent use.
type Log struct {
	dir    string
	opts   Options
	popts  *pebble.Options
	logger *slog.Logger
	guard  *diskspace.Guard
	quiet  *diskspace.LogLimiter

	// dbMu guards the swap of db (a read-only or failed database reopened
	// for writing): Read holds it shared, the swap takes it with TryLock
	// only, so a Read never waits for a swap (nor a swap for a Read).
	dbMu sync.RWMutex
	db   *pebble.DB
	// readOnly and failed are owned by the holder of writing: the database
	// was opened read-only (the disk was full at Open), or a commit failed
	// for lack of space and Pebble refuses writes until it is reopened.
	readOnly bool
	failed   error

	// writing is a one-slot semaphore held by the running Append; a
	// channel rather than a mutex so a waiting Append honours its context.
	writing chan struct{}
	head    atomic.Pointer[headState]

	mu     sync.Mutex
	idle   sync.Cond // signalled when ops drops to 0
	closed bool
	ops    int // running Append and Read calls
}

type headState struct {
	head streams.Head
	hash [sha256.Size]byte
}

var _ streams.Log = (*Log)(nil)

// logBlockSize is the size of the log's sstable data blocks.
const logBlockSize = 32 << 10

// Open opens the log stored in dir, creating it if dir does not hold one,
// and recovers its head from the last record. It refuses a directory that
// holds another kind of Pebble database, and a last record whose payload
// does not match its hash or whose Prev does not match the record before
// it (a *streams.ChainError).
//
// On a disk with less than Options.MinFreeBytes free, Open opens an
// existing log read-only: it reads, and Append refuses with
// streams.ErrNoSpace until space returns (doc.go, "A full disk").
func Open(dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	quiet := &diskspace.LogLimiter{}
	popts := &pebble.Options{
		MemTableSize:       opts.MemTableSizeBytes,
		WALBytesPerSync:    opts.WALBytesPerSync,
		FormatMajorVersion: pebble.FormatValueSeparation,
		Logger:             pebbleLogger{opts.Logger, quiet},
		EventListener:      eventListener(opts.Logger, quiet),
		FS:                 diskspace.Throttle(opts.FS, diskspace.DefaultPause),
	}
	// The log is read in order (recovery, replay, export): blocks of
	// logBlockSize rather than Pebble's 4 KiB read a record of a few KiB
	// with one block load (a read, a decompression, a cache insert) per
	// several records rather than per record or two.
	for i := range popts.Levels {
		popts.Levels[i].BlockSize = logBlockSize
	}
	l := &Log{dir: dir, opts: opts, popts: popts, logger: opts.Logger, writing: make(chan struct{}, 1),
		guard: diskspace.NewGuard(opts.FS, dir, opts.MinFreeBytes), quiet: quiet}
	l.idle.L = &l.mu
	if err := l.guard.Check(0); err != nil {
		if desc, perr := pebble.Peek(dir, opts.FS); perr == nil && desc.Exists {
			l.logger.Warn("the disk is full: opening the event log read-only; appends are refused until space is freed", "dir", dir, "err", err)
			l.readOnly = true
		}
	}
	db, err := l.openDB(l.readOnly)
	if err != nil {
		return nil, err
	}
	l.db = db
	if err := l.recover(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	l.logger.Info("event log opened", "dir", dir, "head_seq", l.Head().Seq, "read_only", l.readOnly)
	return l, nil
}

// openDB opens the Pebble database, read-only or not (diskspace.Open: a
// full disk during the open is an error, not a panic).
func (l *Log) openDB(readOnly bool) (*pebble.DB, error) {
	popts := *l.popts
	popts.ReadOnly = readOnly
	cache := pebble.NewCache(l.opts.CacheSizeBytes)
	defer cache.Unref()
	popts.Cache = cache
	db, err := diskspace.Open(l.dir, &popts)
	if err != nil {
		return nil, fmt.Errorf("opening pebble in %s: %w", l.dir, err)
	}
	return db, nil
}

// recover checks the format marker and loads the head.
func (l *Log) recover() error {
	v, closer, err := l.db.Get(formatKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := l.checkEmpty(); err != nil {
			return err
		}
		if err := l.db.Set(formatKey, []byte(formatVersion), pebble.Sync); err != nil {
			return fmt.Errorf("writing format marker: %w", err)
		}
	case err != nil:
		return fmt.Errorf("reading format marker: %w", err)
	default:
		same := string(v) == formatVersion
		got := string(v)
		if err := closer.Close(); err != nil {
			return fmt.Errorf("reading format marker: %w", err)
		}
		if !same {
			return fmt.Errorf("opening log: directory holds format %q, want %q", got, formatVersion)
		}
	}

	iter, err := l.db.NewIter(&pebble.IterOptions{LowerBound: recordKey(0), UpperBound: []byte{recordPrefix + 1}})
	if err != nil {
		return fmt.Errorf("reading last record: %w", err)
	}
	defer func() { _ = iter.Close() }()
	if !iter.Last() {
		if err := iter.Error(); err != nil {
			return fmt.Errorf("reading last record: %w", err)
		}
		l.head.Store(&headState{})
		return nil
	}
	seq, ok := parseKey(iter.Key())
	if !ok {
		return fmt.Errorf("reading last record: malformed key %x", iter.Key())
	}
	raw, err := iter.ValueAndErr()
	if err != nil {
		return fmt.Errorf("reading record %d: %w", seq, err)
	}
	last, err := decodeValue(seq, raw)
	if err != nil {
		return err
	}
	if sha256.Sum256(last.payload) != last.hash {
		return &streams.ChainError{Seq: seq, Reason: "payload does not match its stored hash"}
	}
	last.payload = nil // aliases the iterator, which moves on
	if seq > 1 {
		if !iter.Prev() {
			if err := iter.Error(); err != nil {
				return fmt.Errorf("reading record %d: %w", seq-1, err)
			}
			return &streams.ChainError{Seq: seq - 1, Reason: "record missing before the last record"}
		}
		prevSeq, ok := parseKey(iter.Key())
		if !ok || prevSeq != seq-1 {
			return &streams.ChainError{Seq: seq - 1, Reason: "record missing before the last record"}
		}
		rawBefore, err := iter.ValueAndErr()
		if err != nil {
			return fmt.Errorf("reading record %d: %w", prevSeq, err)
		}
		before, err := decodeValue(prevSeq, rawBefore)
		if err != nil {
			return err
		}
		if !last.hasPrev || last.prev != before.hash {
			return &streams.ChainError{Seq: seq, Reason: "prev does not match the hash of the record before it"}
		}
	} else if last.hasPrev {
		return &streams.ChainError{Seq: seq, Reason: "first record has a prev"}
	}
	l.head.Store(&headState{head: streams.Head{Seq: seq, Hash: hex.EncodeToString(last.hash[:])}, hash: last.hash})
	return nil
}

// checkEmpty refuses to adopt a database that has keys but no format
// marker: it was written by something else.
func (l *Log) checkEmpty() error {
	iter, err := l.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("checking for foreign keys: %w", err)
	}
	found := iter.First()
	err = errors.Join(iter.Error(), iter.Close())
	if err != nil {
		return fmt.Errorf("checking for foreign keys: %w", err)
	}
	if found {
		return errors.New("opening log: directory holds a pebble database that is not an agentgate log")
	}
	return nil
}

// Head returns the position of the last durable record. It keeps
// answering after Close.
func (l *Log) Head() streams.Head { return l.head.Load().head }

// Append writes batch at the end of the log in one fsync'd Pebble batch.
// It returns streams.ErrConflict (wrapped, with the offending index) when
// the batch does not extend the chain, streams.ErrTooLarge when it exceeds
// a limit of Options, the context's error when ctx ends before the write
// starts, and streams.ErrClosed after Close; in all these cases nothing was
// written. An empty batch is a no-op. Payloads are copied: the caller may
// reuse them once Append returns.
func (l *Log) Append(ctx context.Context, batch []streams.Record) error {
	if err := l.enter(); err != nil {
		return err
	}
	defer l.exit()
	if len(batch) == 0 {
		return nil
	}
	size, err := l.checkLimits(batch)
	if err != nil {
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
	if err := l.writable(); err != nil {
		return err
	}
	if err := l.guard.Check(size + len(batch)*(keyLen+headerLen)); err != nil {
		l.quiet.Log(l.logger, slog.LevelError, "append refused", "appending batch refused: the disk is full", "dir", l.dir, "err", err)
		return fmt.Errorf("appending batch: %w", err)
	}

	head := l.head.Load()
	hashes := make([][sha256.Size]byte, len(batch))
	if err := streams.CheckBatch(head.head, batch, hashes); err != nil {
		return fmt.Errorf("appending batch: %w", err)
	}

	b := l.db.NewBatchWithSize(size + len(batch)*(keyLen+headerLen+16))
	defer func() { _ = b.Close() }()
	for i, r := range batch {
		op := b.SetDeferred(keyLen, headerLen+len(r.Payload))
		putKey(op.Key, r.Seq)
		switch {
		case i > 0:
			op.Value[0] = flagHasPrev
			copy(op.Value[1:], hashes[i-1][:])
		case head.head.Seq > 0:
			op.Value[0] = flagHasPrev
			copy(op.Value[1:], head.hash[:])
		default:
			op.Value[0] = 0
			clear(op.Value[1 : 1+sha256.Size])
		}
		copy(op.Value[1+sha256.Size:], hashes[i][:])
		copy(op.Value[headerLen:], r.Payload)
		if err := op.Finish(); err != nil {
			return fmt.Errorf("building batch: %w", err)
		}
	}
	if err := l.commit(b); err != nil {
		return err
	}
	last := batch[len(batch)-1]
	l.head.Store(&headState{
		head: streams.Head{Seq: last.Seq, Hash: hex.EncodeToString(hashes[len(hashes)-1][:])},
		hash: hashes[len(hashes)-1],
	})
	return nil
}

// commit commits b with an fsync. Pebble returns an error only for a batch
// it refused before writing it; a failure to write or fsync the WAL does
// not return (doc.go). The one exception is a write that failed for lack
// of space: the batch is not acknowledged, the database refuses writes
// from then on, and commit returns streams.ErrNoSpace (the database is
// reopened once space returns: writable).
func (l *Log) commit(b *pebble.Batch) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := diskspace.NoSpaceFatal(r)
		if !ok {
			panic(r)
		}
		l.failed = f
		l.logger.Error("appending batch failed: the disk is full; appends are refused until space is freed", "dir", l.dir, "err", f.Error())
		err = fmt.Errorf("committing batch: %w: %w", f, streams.ErrNoSpace)
	}()
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("committing batch: %w", err)
	}
	return nil
}

// writable makes sure the database takes writes (called by the holder of
// writing). A database opened read-only on a full disk, or one whose commit
// failed for lack of space, is closed and opened read-write once the disk
// has the reserve free again, and the head is recovered anew (a batch whose
// commit failed may have reached the WAL: it is then in the log, never
// acknowledged). Until then, and while a Read holds the database, it
// returns streams.ErrNoSpace.
func (l *Log) writable() error {
	if !l.readOnly && l.failed == nil {
		return nil
	}
	if err := l.guard.Check(0); err != nil {
		l.quiet.Log(l.logger, slog.LevelError, "append refused", "appending batch refused: the disk is full", "dir", l.dir, "err", err)
		return fmt.Errorf("appending batch: %w", err)
	}
	if !l.dbMu.TryLock() {
		return fmt.Errorf("appending batch: the log is being read; reopening it for writing later: %w", streams.ErrNoSpace)
	}
	defer l.dbMu.Unlock()
	if l.db != nil {
		if err := l.db.Close(); err != nil && l.failed == nil {
			l.logger.Warn("closing the read-only event log", "dir", l.dir, "err", err)
		}
	}
	db, err := l.openDB(false)
	if err == nil {
		l.db = db
		if err = l.recover(); err == nil {
			l.readOnly, l.failed = false, nil
			l.logger.Info("event log writable again", "dir", l.dir, "head_seq", l.Head().Seq)
			return nil
		}
		_ = db.Close()
	}
	l.logger.Error("reopening the event log for writing", "dir", l.dir, "err", err)
	// Keep serving reads from a read-only database.
	l.readOnly, l.failed = true, nil
	if l.db, err = l.openDB(true); err != nil {
		l.logger.Error("reopening the event log read-only", "dir", l.dir, "err", err)
		return fmt.Errorf("appending batch: %w", errors.Join(err, streams.ErrNoSpace))
	}
	return fmt.Errorf("appending batch: reopening the log for writing: %w", streams.ErrNoSpace)
}

// CheckSpace returns nil when the log's disk has the reserve free
// (Options.MinFreeBytes), an error wrapping streams.ErrNoSpace otherwise:
// an Append now would be refused.
func (l *Log) CheckSpace() error { return l.guard.Check(0) }

// checkLimits returns the batch's payload bytes, or streams.ErrTooLarge.
func (l *Log) checkLimits(batch []streams.Record) (int, error) {
	if len(batch) > l.opts.MaxBatchRecords {
		return 0, fmt.Errorf("appending batch of %d records (limit %d): %w", len(batch), l.opts.MaxBatchRecords, streams.ErrTooLarge)
	}
	if batch[len(batch)-1].Seq == math.MaxUint64 {
		return 0, fmt.Errorf("appending batch: seq space exhausted: %w", streams.ErrTooLarge)
	}
	size := 0
	for i, r := range batch {
		if len(r.Payload) > l.opts.MaxRecordBytes {
			return 0, fmt.Errorf("appending batch: record %d has %d bytes (limit %d): %w", i, len(r.Payload), l.opts.MaxRecordBytes, streams.ErrTooLarge)
		}
		size += len(r.Payload)
	}
	if size > l.opts.MaxBatchBytes {
		return 0, fmt.Errorf("appending batch of %d bytes (limit %d): %w", size, l.opts.MaxBatchBytes, streams.ErrTooLarge)
	}
	return size, nil
}

// Read calls fn for each record with Seq >= from (0 is read as 1) up to the
// head at the time of the call, in order. The Record's Payload aliases
// Pebble's memory and is valid only during the call to fn. Read returns
// fn's error, the context's error when ctx ends (checked before each
// record), a *streams.ChainError for a record whose stored header is
// malformed, and streams.ErrClosed after Close.
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
	head := l.Head()
	if from > head.Seq {
		return nil
	}
	l.dbMu.RLock()
	defer l.dbMu.RUnlock()
	if l.db == nil {
		return fmt.Errorf("reading log: the database could not be reopened: %w", streams.ErrClosed)
	}
	iter, err := l.db.NewIterWithContext(ctx, &pebble.IterOptions{
		LowerBound: recordKey(from),
		UpperBound: recordKey(head.Seq + 1),
	})
	if err != nil {
		return fmt.Errorf("reading log from seq %d: %w", from, err)
	}
	err = l.readIter(ctx, iter, fn)
	if cerr := iter.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing iterator: %w", cerr)
	}
	return err
}

func (l *Log) readIter(ctx context.Context, iter *pebble.Iterator, fn func(streams.Record) error) error {
	done := ctx.Done()
	for valid := iter.First(); valid; valid = iter.Next() {
		select {
		case <-done:
			return fmt.Errorf("reading log: %w", ctx.Err())
		default:
		}
		seq, ok := parseKey(iter.Key())
		if !ok {
			return fmt.Errorf("reading log: malformed key %x", iter.Key())
		}
		value, err := iter.ValueAndErr()
		if err != nil {
			return fmt.Errorf("reading record %d: %w", seq, err)
		}
		v, err := decodeValue(seq, value)
		if err != nil {
			return err
		}
		r := streams.Record{Seq: seq, Payload: v.payload}
		if v.hasPrev {
			r.Prev = hex.EncodeToString(v.prev[:])
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := iter.Error(); err != nil {
		return fmt.Errorf("reading log: %w", err)
	}
	return nil
}

// Close waits for running Append and Read calls, then closes the Pebble
// database. Later calls, Close included, return streams.ErrClosed.
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
	if l.db == nil {
		return nil
	}
	if err := l.db.Close(); err != nil {
		if l.failed != nil {
			return nil // the failure was reported when it happened
		}
		return fmt.Errorf("closing pebble: %w", err)
	}
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
	l.ops--
	if l.ops == 0 {
		l.idle.Broadcast()
	}
	l.mu.Unlock()
}

func recordKey(seq uint64) []byte {
	k := make([]byte, keyLen)
	putKey(k, seq)
	return k
}

func putKey(k []byte, seq uint64) {
	k[0] = recordPrefix
	binary.BigEndian.PutUint64(k[1:], seq)
}

func parseKey(k []byte) (uint64, bool) {
	if len(k) != keyLen || k[0] != recordPrefix {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

type value struct {
	hasPrev bool
	prev    [sha256.Size]byte
	hash    [sha256.Size]byte
	payload []byte
}

// decodeValue splits a stored value into its header and payload; the
// payload aliases v.
func decodeValue(seq uint64, v []byte) (value, error) {
	var out value
	if len(v) < headerLen || v[0] > flagHasPrev {
		return out, &streams.ChainError{Seq: seq, Reason: "stored record header is malformed"}
	}
	out.hasPrev = v[0] == flagHasPrev
	copy(out.prev[:], v[1:])
	copy(out.hash[:], v[1+sha256.Size:])
	out.payload = v[headerLen:]
	if !out.hasPrev && !bytes.Equal(out.prev[:], make([]byte, sha256.Size)) {
		return out, &streams.ChainError{Seq: seq, Reason: "stored record header is malformed"}
	}
	return out, nil
}
