package projections

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// Checkpoint is the position of the last event applied to a Store.
type Checkpoint struct {
	Seq  uint64    `json:"seq"`
	Hash string    `json:"hash"`
	Time time.Time `json:"time"`
}

// Position is where a store that folds several partitions (the read model
// of an HTTP instance in Kafka mode) stands in one: the seq and hash of
// the last event of the partition it applied, and the offset of that
// event in the partition's log (a Kafka offset). ApplyAt records them,
// Positions reads them back.
type Position struct {
	Partition int32  `json:"partition"`
	Seq       uint64 `json:"seq"`
	Hash      string `json:"hash"`
	Offset    int64  `json:"offset"`
}

// Store is the Pebble-backed projection store of one partition.
type Store struct {
	// dbMu guards the swap of db (a store opened read-only on a full disk
	// reopened for writing): every reader holds it shared, the swap takes
	// it with TryLock only, so a reader never waits (and may nest).
	dbMu     sync.RWMutex
	db       *pebble.DB
	readOnly atomic.Bool
	dir      string
	popts    *pebble.Options
	format   string
	guard    *diskspace.Guard
	quiet    *diskspace.LogLimiter
	log      *slog.Logger
	requests *requestFilter
	// evictedTo holds, by agent, the seq below which a committed batch
	// deleted every open action (new ones always have higher seqs).
	evictMu   sync.Mutex
	evictedTo map[string]uint64
	// snaps tracks the agents changed since the last checkpoint (snapshot.go).
	snaps snapshots
	// txWait wakes the readers awaiting a transaction (await.go).
	txWait txWaiters
	// awaitHook holds an awaitHook once SetAwaitHook is called.
	awaitHook atomic.Value
	// noSnapshots, noActivity: what the store does not keep (Options).
	noSnapshots, noActivity bool
	// noticeHome is Options.NoticeHome.
	noticeHome func(consumer string) int32
}

// Options tunes a Store. The zero value is what Open gives.
type Options struct {
	// Logger receives the store's messages; nil is slog.Default().
	Logger *slog.Logger
	// NoSnapshots makes the store keep no time-travel snapshots (SnapshotAt
	// finds none, so a time-travel query folds from the agent's
	// registration; RegisteredAt still answers). For a store whose
	// snapshots nothing reads, such as the Kafka gate's (its time travel
	// reads the events partition): snapshots are much of the projection
	// work of agents holding many open actions. The choice is part of the
	// store's format: a store opened with the other one is rebuilt from
	// the log.
	NoSnapshots bool
	// NoActivity makes the store keep no activity entries and daily
	// summaries (Activity finds none): for a store only a worker reads
	// (the state, the request index, the checkpoints), such as the Kafka
	// gate's partition stores, whose instance serves the activity API
	// from its read model. Activities are most of a store's bytes; such a
	// store has no action index either (it finds an action's activity).
	// Part of the store's format, as NoSnapshots.
	NoActivity bool
	// MinFreeBytes is the free space Prepare keeps on the store's disk: a
	// batch prepared with less is refused with streams.ErrNoSpace (the
	// event is then not appended either). Zero is
	// diskspace.ReserveFor(memTableSize); negative disables the check. On
	// a disk with less free, the store opens read-only (an existing one)
	// and becomes writable once space returns.
	MinFreeBytes int64
	// FS is the file system (nil: the operating system's); tests inject
	// faults through it.
	FS vfs.FS
	// NoticeHome, on Kafka, returns the home partition of a consumer: a
	// blocked agent decision recorded on another partition raises no
	// delivery in this store, since the gate relays its notice to the
	// home partition, whose agent.block_relayed event raises it (a read
	// model folds every partition into one state, which holds the
	// consumer's webhooks). Nil (embedded): every decision's notice is
	// delivered where it is recorded.
	NoticeHome func(consumer string) int32
}

// Open opens (creating if needed) the store in dir, with snapshots.
func Open(dir string, logger *slog.Logger) (*Store, error) {
	return OpenWith(dir, Options{Logger: logger})
}

// OpenWith opens (creating if needed) the store in dir as o says.
func OpenWith(dir string, o Options) (*Store, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = diskspace.ReserveFor(memTableSize)
	}
	quiet := &diskspace.LogLimiter{}
	// No WAL: the store is derived from the event log, which is the write-
	// ahead log here. A crash loses the unflushed memtable, whole batches
	// at a time, so the checkpoint falls behind the log and recovery
	// re-applies the tail; Close flushes.
	opts := &pebble.Options{Logger: pebbleLogger{logger, quiet}, DisableWAL: true,
		MemTableSize: memTableSize, FS: diskspace.Throttle(o.FS, diskspace.DefaultPause)}
	// Bloom filters: the worker looks up the request index for every
	// command, and almost every lookup misses.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	format := storeFormat
	if o.NoSnapshots {
		format += noSnapshotsFormat
	}
	if o.NoActivity {
		format += noActivityFormat
	}
	s := &Store{log: logger, evictedTo: map[string]uint64{}, noSnapshots: o.NoSnapshots, noActivity: o.NoActivity, noticeHome: o.NoticeHome,
		dir: dir, popts: opts, format: format, guard: diskspace.NewGuard(o.FS, dir, o.MinFreeBytes), quiet: quiet}
	if err := s.guard.Check(0); err != nil {
		if desc, perr := pebble.Peek(dir, o.FS); perr == nil && desc.Exists {
			logger.Warn("the disk is full: opening the projection store read-only; writes are refused until space is freed", "dir", dir, "err", err)
			s.readOnly.Store(true)
		}
	}
	db, err := s.open(s.readOnly.Load())
	if err != nil {
		return nil, err
	}
	s.db = db
	if err := s.loadRequestFilter(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// open opens the database, read-only or not (openFormat; diskspace.Open:
// a full disk during the open is an error, not a panic).
func (s *Store) open(readOnly bool) (*pebble.DB, error) {
	opts := *s.popts
	opts.ReadOnly = readOnly
	// The block cache holds the request index and the recent activity the
	// worker reads back; Pebble's default (8 MiB) makes most lookups read
	// blocks from the file system.
	cache := pebble.NewCache(cacheSize)
	defer cache.Unref()
	opts.Cache = cache
	if readOnly {
		return openReadOnly(s.dir, &opts, s.format)
	}
	return openFormat(s.dir, &opts, s.format, s.log)
}

// openReadOnly opens the store in dir read-only; it must hold format.
func openReadOnly(dir string, opts *pebble.Options, format string) (*pebble.DB, error) {
	db, err := diskspace.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("opening projection store %s read-only: %w", dir, err)
	}
	v, closer, err := db.Get(formatKey)
	if errors.Is(err, pebble.ErrNotFound) {
		// Never flushed: an empty store, caught up once writable.
		if empty, err := isEmpty(db); err != nil || !empty {
			_ = db.Close()
			return nil, errors.Join(err, fmt.Errorf("projection store %s holds keys but no format", dir))
		}
		return db, nil
	}
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("reading the format of projection store %s: %w", dir, err)
	}
	same := string(v) == format
	closer.Close()
	if !same {
		_ = db.Close()
		return nil, fmt.Errorf("projection store %s has another format and cannot be rebuilt on a full disk: %w", dir, streams.ErrNoSpace)
	}
	return db, nil
}

// writable makes sure the store takes writes: one opened read-only on a
// full disk is closed and opened read-write once the disk has the reserve
// free again (when no reader holds it; Prepare tries again until then).
// It returns streams.ErrNoSpace while the disk is below the reserve.
func (s *Store) writable() error {
	if err := s.guard.Check(0); err != nil {
		s.quiet.Log(s.log, slog.LevelError, "write refused", "projection batch refused: the disk is full", "dir", s.dir, "err", err)
		return fmt.Errorf("preparing projections: %w", err)
	}
	if !s.readOnly.Load() {
		return nil
	}
	if !s.dbMu.TryLock() {
		return fmt.Errorf("preparing projections: the store is being read; reopening it for writing later: %w", streams.ErrNoSpace)
	}
	defer s.dbMu.Unlock()
	if !s.readOnly.Load() {
		return nil // another writer reopened it meanwhile
	}
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			s.log.Warn("closing the read-only projection store", "dir", s.dir, "err", err)
		}
	}
	db, err := s.open(false)
	if err == nil {
		s.db = db
		s.readOnly.Store(false)
		s.log.Info("projection store writable again", "dir", s.dir)
		return nil
	}
	s.log.Error("reopening the projection store for writing", "dir", s.dir, "err", err)
	if s.db, err = s.open(true); err != nil {
		// Reads fail from now on (closed database); nothing else can be done.
		s.log.Error("reopening the projection store read-only", "dir", s.dir, "err", err)
	}
	return fmt.Errorf("preparing projections: reopening the store for writing: %w", streams.ErrNoSpace)
}

// CheckSpace returns nil when the store's disk has the reserve free
// (Options.MinFreeBytes), an error wrapping streams.ErrNoSpace otherwise.
func (s *Store) CheckSpace() error { return s.guard.Check(0) }

// closeFlushWait bounds the flush of Close on a disk below the reserve.
const closeFlushWait = 5 * time.Second

// hold pins the database for a read (see dbMu); call the result to release.
func (s *Store) hold() func() {
	s.dbMu.RLock()
	return s.dbMu.RUnlock
}

// storeFormat names the layout of the store's values; a store written in
// another layout is rebuilt from the log (it is derived from it).
const storeFormat = "agentgate-projections/7"

// noSnapshotsFormat and noActivityFormat mark the format of a store
// without snapshots, without activities.
const (
	noSnapshotsFormat = "+no-snapshots"
	noActivityFormat  = "+no-activity"
)

var formatKey = key(tMeta, "format")

// openFormat opens the Pebble database in dir, emptying it first when it
// holds a store of another format, and records the format in an empty one.
func openFormat(dir string, opts *pebble.Options, format string, logger *slog.Logger) (*pebble.DB, error) {
	for attempt := 0; ; attempt++ {
		db, err := diskspace.Open(dir, opts)
		if err != nil {
			return nil, fmt.Errorf("opening projection store %s: %w", dir, err)
		}
		v, closer, err := db.Get(formatKey)
		switch {
		case err == nil:
			same := string(v) == format
			closer.Close()
			if same {
				return db, nil
			}
		case !errors.Is(err, pebble.ErrNotFound):
			_ = db.Close()
			return nil, fmt.Errorf("reading the format of projection store %s: %w", dir, err)
		}
		empty, err := isEmpty(db)
		if err != nil {
			_ = db.Close()
			return nil, err
		}
		if empty {
			// No WAL: the key reaches the disk with the first flush, before
			// anything written after it; a store lost before that is empty.
			if err := db.Set(formatKey, []byte(format), pebble.NoSync); err != nil {
				_ = db.Close()
				return nil, fmt.Errorf("recording the format of projection store %s: %w", dir, err)
			}
			return db, nil
		}
		if err := db.Close(); err != nil {
			return nil, fmt.Errorf("closing projection store %s: %w", dir, err)
		}
		if attempt > 0 {
			return nil, fmt.Errorf("projection store %s: still not empty after removing it", dir)
		}
		// Derived data in an older layout: start over; the caller's
		// recovery re-applies the whole log.
		logger.Info("projection store has another format; rebuilding it from the log", "dir", dir, "want", format)
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("removing projection store %s of another format: %w", dir, err)
		}
	}
}

func isEmpty(db *pebble.DB) (bool, error) {
	it, err := db.NewIter(nil)
	if err != nil {
		return false, fmt.Errorf("reading projection store: %w", err)
	}
	empty := !it.First()
	if err := it.Close(); err != nil {
		return false, fmt.Errorf("reading projection store: %w", err)
	}
	return empty, nil
}

// loadRequestFilter builds the request filter from the request index.
func (s *Store) loadRequestFilter() error {
	p := []byte{tRequest}
	var keys [][]byte
	if err := s.scan(p, func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return fmt.Errorf("loading the request index: %w", err)
	}
	s.requests = newRequestFilter(len(keys))
	for _, k := range keys {
		s.requests.add(k)
	}
	return nil
}

// cacheSize is the Pebble block cache of a Store.
const cacheSize = 64 << 20

// memTableSize is the Pebble memtable of a Store: every decision writes
// an activity, its indexes and summary; larger memtables mean fewer
// flushes and L0 compactions (Pebble's default is 4 MiB).
const memTableSize = 32 << 20

// Close closes the store.
//
// On a disk below the reserve it waits at most closeFlushWait for the
// flush (the reserve is there for it, but Pebble retries a flush that
// cannot be written forever): the store is derived from the log, and the
// next start re-applies what an unflushed memtable held.
func (s *Store) Close() error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.readOnly.Load() || s.guard.Check(0) != nil {
		if done, err := s.db.AsyncFlush(); err == nil && !s.readOnly.Load() {
			select {
			case <-done:
			case <-time.After(closeFlushWait):
				s.log.Warn("the disk is full: closing the projection store without its last flush; the next start re-applies the log", "dir", s.dir)
			}
		}
		err := s.db.Close()
		if diskspace.IsNoSpace(err) {
			// Pebble's last write to its MANIFEST: the next open
			// recovers from the MANIFEST as it was synced.
			s.log.Warn("closing the projection store on a full disk", "dir", s.dir, "err", err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("closing projection store: %w", err)
		}
		return nil
	}
	if err := s.db.Flush(); err != nil {
		_ = s.db.Close()
		return fmt.Errorf("flushing projection store: %w", err)
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing projection store: %w", err)
	}
	return nil
}

// ErrNotFound is returned by lookups of absent entities.
var ErrNotFound = errors.New("not found")

func (s *Store) getJSON(k []byte, v any) error {
	defer s.hold()()
	return s.getJSONHeld(k, v)
}

// getJSONHeld is getJSON for a caller that holds the database.
func (s *Store) getJSONHeld(k []byte, v any) error {
	b, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("reading %q: %w", k, err)
	}
	defer closer.Close()
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %q: %w", k, err)
	}
	return nil
}

// KeepsActivity reports whether the store keeps activity entries (see
// Options.NoActivity): if not, projecting an event reads only what folding
// it reads, and the command's request.
func (s *Store) KeepsActivity() bool { return !s.noActivity }

// Checkpoint returns the last applied position (zero for an empty store).
func (s *Store) Checkpoint() (Checkpoint, error) {
	var c Checkpoint
	err := s.getJSON(key(tMeta, "ckpt"), &c)
	if errors.Is(err, ErrNotFound) {
		return Checkpoint{}, nil
	}
	return c, err
}

// Positions returns the positions the last ApplyAt recorded (nil for a
// store that has none: a new one, or one written by Apply).
func (s *Store) Positions() ([]Position, error) {
	var ps []Position
	err := s.getJSON(key(tMeta, "positions"), &ps)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return ps, err
}

// CopyPosition returns how far partition p had copied partition 0's
// principal-wide events as of the store's checkpoint
// (domain.State.Copies; the zero position when it copied none).
func (s *Store) CopyPosition(p int32) (domain.CopyPosition, error) {
	var meta gateMeta
	err := s.getJSON(key(tMeta, "gate"), &meta)
	if errors.Is(err, ErrNotFound) {
		return domain.CopyPosition{}, nil
	}
	return meta.Copies[p], err
}

// gateMeta is the partition-wide part of domain.State.
type gateMeta struct {
	Config   domain.Config `json:"config"`
	LastTime time.Time     `json:"last_time"`
	// Copies is domain.State.Copies (omitted when nil, as in stores
	// written before it).
	Copies map[int32]domain.CopyPosition `json:"copies,omitempty"`
}

// LoadState rebuilds the in-memory domain.State from the store (the state
// as of Checkpoint()).
func (s *Store) LoadState() (*domain.State, error) {
	st := domain.NewState()
	var meta gateMeta
	switch err := s.getJSON(key(tMeta, "gate"), &meta); {
	case err == nil:
		st.Config, st.LastTime, st.Copies = meta.Config, meta.LastTime, meta.Copies
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	err := s.scan([]byte{tAgent}, func(_, v []byte) error {
		a := new(domain.Agent)
		if err := decodeAgent(v, a); err != nil {
			return err
		}
		a.Conversations = map[string]*domain.Conversation{}
		st.Agents[a.ID] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan([]byte{tOpen}, func(k, v []byte) error {
		agent, rest, ok := cutStr(k[1:])
		if !ok || len(rest) != 8 {
			return fmt.Errorf("malformed open action key %q", k)
		}
		id, oa, err := decodeOpen(v)
		if err != nil {
			return err
		}
		if seq := binary.BigEndian.Uint64(rest); oa.Seq != seq {
			return fmt.Errorf("open action %q under the key of seq %d holds seq %d: %w", id, seq, oa.Seq, errCorrupt)
		}
		a := st.Agents[agent]
		if a == nil {
			return fmt.Errorf("open action %q of unknown agent %q", id, agent)
		}
		if a.OpenActions == nil {
			a.OpenActions = map[string]*domain.OpenAction{}
		}
		a.OpenActions[id] = oa
		a.OpenOrder = append(a.OpenOrder, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan([]byte{tConv}, func(k, v []byte) error {
		agent, rest, ok := cutStr(k[1:])
		conv, _, ok2 := cutStr(rest)
		if !ok || !ok2 {
			return fmt.Errorf("malformed conversation key %q", k)
		}
		c, err := decodeConversation(v)
		if err != nil {
			return err
		}
		a := st.Agents[agent]
		if a == nil {
			return fmt.Errorf("conversation %q of unknown agent %q", conv, agent)
		}
		a.Conversations[conv] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan([]byte{tPrincipal}, func(_, v []byte) error {
		p := new(domain.Principal)
		if err := json.Unmarshal(v, p); err != nil {
			return fmt.Errorf("decoding principal: %w", err)
		}
		st.Principals[p.ID] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan([]byte{tKey}, func(k, v []byte) error {
		h, _, ok := cutStr(k[1:])
		if !ok {
			return fmt.Errorf("malformed key entry %q", k)
		}
		st.Keys[h] = string(v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan([]byte{tKeyID}, func(k, v []byte) error {
		id, _, ok := cutStr(k[1:])
		if !ok {
			return fmt.Errorf("malformed key id entry %q", k)
		}
		st.KeyIDs[id] = string(v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.scan([]byte{tApproval}, func(_, v []byte) error {
		a := new(domain.Approval)
		if err := json.Unmarshal(v, a); err != nil {
			return fmt.Errorf("decoding approval: %w", err)
		}
		st.Approvals[a.ID] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.loadA2A(st); err != nil {
		return nil, err
	}
	if err := s.loadExec(st); err != nil {
		return nil, err
	}
	return st, nil
}

func cutStr(b []byte) (string, []byte, bool) {
	if len(b) < 2 {
		return "", nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		return "", nil, false
	}
	return string(b[2 : 2+n]), b[2+n:], true
}

// scan calls fn for every key with prefix p, in key order.
func (s *Store) scan(p []byte, fn func(k, v []byte) error) error {
	defer s.hold()()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return fmt.Errorf("scanning %q: %w", p, err)
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("scanning %q: %w", p, err)
	}
	return nil
}

// Agent returns the agent's projection (without its conversations and
// open actions).
func (s *Store) Agent(id string) (*domain.Agent, error) {
	defer s.hold()()
	v, closer, err := s.db.Get(key(tAgent, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading agent: %w", err)
	}
	defer closer.Close()
	a := new(domain.Agent)
	if err := decodeAgent(v, a); err != nil {
		return nil, err
	}
	return a, nil
}

// AgentAuth returns what authenticating a request for the agent needs:
// a domain.Agent holding only its ID, info, permissions, token hash and
// status. It decodes nothing else (an agent's usage windows can hold
// thousands of times), so the worker can check a request before running
// an engine for it at little cost.
func (s *Store) AgentAuth(id string) (*domain.Agent, error) {
	defer s.hold()()
	var v struct {
		ID          string             `json:"agent_id"`
		Info        domain.AgentInfo   `json:"agent"`
		Permissions domain.Permissions `json:"permissions"`
		TokenHash   string             `json:"token_hash"`
		Status      string             `json:"status"`
	}
	b, closer, err := s.db.Get(key(tAgent, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading agent: %w", err)
	}
	defer closer.Close()
	j, err := agentJSON(b)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, fmt.Errorf("decoding agent: %w", err)
	}
	return &domain.Agent{ID: v.ID, Info: v.Info, Permissions: v.Permissions, TokenHash: v.TokenHash, Status: v.Status}, nil
}

// Principal returns a principal's state as last committed (its tool
// registry); ErrNotFound when the gate knows nothing of it.
func (s *Store) Principal(id string) (*domain.Principal, error) {
	defer s.hold()()
	v, closer, err := s.db.Get(key(tPrincipal, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading principal: %w", err)
	}
	defer closer.Close()
	p := new(domain.Principal)
	if err := json.Unmarshal(v, p); err != nil {
		return nil, fmt.Errorf("decoding principal: %w", err)
	}
	return p, nil
}

// RetiredStep returns the last step committed in conversation conv of
// agent before a decision evicted it from the state (at
// domain.MaxConversations); ok is false when the store has no such
// conversation. It is what domain.Env.RetiredStep reads through the
// worker, which first looks in the batches not yet committed.
func (s *Store) RetiredStep(agent, conv string) (step int64, ok bool, err error) {
	defer s.hold()()
	v, closer, err := s.db.Get(key(tRetired, agent, conv))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading retired conversation: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, false, fmt.Errorf("retired conversation %q of %q holds %d bytes: %w", conv, agent, len(v), errCorrupt)
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// Conversation returns one conversation's state.
func (s *Store) Conversation(agentID, convID string) (*domain.Conversation, error) {
	defer s.hold()()
	v, closer, err := s.db.Get(key(tConv, agentID, convID))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading conversation: %w", err)
	}
	defer closer.Close()
	return decodeConversation(v)
}

// Approval returns one approval.
func (s *Store) Approval(id string) (*domain.Approval, error) {
	a := new(domain.Approval)
	if err := s.getJSON(key(tApproval, id), a); err != nil {
		return nil, err
	}
	return a, nil
}

// Approvals lists the approvals of a principal (every principal's for
// domain.AdminPrincipal), in listing order (IDs by length, then bytes),
// after the approval with ID after ("" from the first), filtered by status
// when status is not empty, at most limit of them and at most maxBytes of
// their JSON (MaxPageBytes when maxBytes <= 0; a page always holds one
// approval). next is the after of the next page, "" on the last.
func (s *Store) Approvals(principal string, status domain.ApprovalStatus, after string, limit, maxBytes int) (out []domain.Approval, next string, err error) {
	defer s.hold()()
	pg := newPager(limit, maxBytes)
	add := func(a *domain.Approval) (bool, error) {
		if status != "" && a.Status != status {
			return true, nil
		}
		more, err := pg.fits(a)
		if err != nil || !more {
			if err == nil {
				next = out[len(out)-1].ID
			}
			return false, err
		}
		out = append(out, *a)
		return true, nil
	}
	prefix := []byte{tApproval}
	if principal != domain.AdminPrincipal {
		prefix = key(tPrincipalAp, principal)
	}
	lo := prefix
	if after != "" {
		lo = appendStr(append([]byte(nil), prefix...), after)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, "", fmt.Errorf("listing approvals: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		id, _, ok := cutStr(k[len(prefix):])
		if !ok {
			return nil, "", fmt.Errorf("malformed approval key %q", k)
		}
		if id == after {
			continue
		}
		a := new(domain.Approval)
		if principal == domain.AdminPrincipal {
			if err := json.Unmarshal(it.Value(), a); err != nil {
				return nil, "", fmt.Errorf("decoding approval: %w", err)
			}
		} else if err := s.getJSONHeld(key(tApproval, id), a); err != nil {
			return nil, "", err
		}
		more, err := add(a)
		if err != nil {
			return nil, "", err
		}
		if !more {
			break
		}
	}
	return out, next, nil
}

// MaxPageBytes is the byte budget of one page of a list (activities,
// approvals): the JSON of its items. A page ends before the item that
// would take it past the budget (the next cursor then points there), and
// always holds at least one item, so that every item can be read.
const MaxPageBytes = 1 << 20

// pager ends a page at its count or its byte budget.
type pager struct {
	limit, maxBytes, n, bytes int
}

func newPager(limit, maxBytes int) *pager {
	if maxBytes <= 0 {
		maxBytes = MaxPageBytes
	}
	return &pager{limit: limit, maxBytes: maxBytes}
}

// fits reports whether item v (encoded as JSON) still fits in the page,
// and counts it when it does.
func (p *pager) fits(v any) (bool, error) {
	if p.n >= p.limit {
		return false, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false, fmt.Errorf("measuring a page item: %w", err)
	}
	if p.n > 0 && p.bytes+len(b) > p.maxBytes {
		return false, nil
	}
	p.n++
	p.bytes += len(b)
	return true, nil
}

// KeyPrincipal returns the principal of an API key hash.
func (s *Store) KeyPrincipal(keyHash string) (string, error) {
	defer s.hold()()
	b, closer, err := s.db.Get(key(tKey, keyHash))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("reading key: %w", err)
	}
	defer closer.Close()
	return string(b), nil
}

// RequestSeq returns the seq of the event recorded for a request.
func (s *Store) RequestSeq(r domain.RequestID) (uint64, error) {
	defer s.hold()()
	k := requestKey(r)
	if !s.requests.mayHave(k) {
		return 0, ErrNotFound
	}
	b, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("reading request index: %w", err)
	}
	defer closer.Close()
	if len(b) != 8 {
		return 0, fmt.Errorf("malformed request index entry")
	}
	return binary.BigEndian.Uint64(b), nil
}

// ActivityPage is the answer of the audit query API (QWED-Agent spec v1.1 §7.2).
type ActivityPage struct {
	Summary    Summary    `json:"summary"`
	Activities []Activity `json:"activities"`
	// NextAfterSeq is set when more activities exist in the period: pass
	// it as after_seq to read the next page.
	NextAfterSeq uint64 `json:"next_after_seq,omitempty"`
}

// MaxActivityLimit bounds one page of the activity API.
const MaxActivityLimit = 1000

// Activity returns an agent's activities with from <= timestamp < to, in
// log order, after afterSeq, at most limit of them and at most maxBytes of
// their JSON (MaxPageBytes when maxBytes <= 0; see MaxPageBytes), and the
// summary of the whole period (not just the page).
func (s *Store) Activity(agentID string, from, to time.Time, afterSeq uint64, limit, maxBytes int) (ActivityPage, error) {
	defer s.hold()()
	if limit <= 0 || limit > MaxActivityLimit {
		limit = MaxActivityLimit
	}
	pg := newPager(limit, maxBytes)
	page := ActivityPage{Activities: []Activity{}}
	lo := activityKey(agentID, from, 0)
	hi := activityKey(agentID, to, 0)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return page, fmt.Errorf("reading activity: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		if seq <= afterSeq {
			continue
		}
		if len(page.Activities) == limit {
			page.NextAfterSeq = page.Activities[len(page.Activities)-1].Seq
			break
		}
		var a Activity
		if err := decodeActivity(it.Value(), &a); err != nil {
			return page, err
		}
		if more, err := pg.fits(&a); err != nil {
			return page, err
		} else if !more {
			page.NextAfterSeq = page.Activities[len(page.Activities)-1].Seq
			break
		}
		page.Activities = append(page.Activities, a)
	}
	sum, err := s.summary(agentID, from, to)
	if err == nil {
		err = s.resolvePending(&sum, agentID, from, to)
	}
	if err != nil {
		return page, err
	}
	page.Summary = sum
	return page, nil
}

// resolvePending counts each of the agent's PENDING actions decided in
// [from, to) whose approval is resolved as its outcome (Summary.Resolve).
// The stored daily summaries keep the decisions as they were made, as a
// rebuild from the log writes them (a gate's existing projections stay
// valid); the outcome is read from the approvals of the agent's
// principal, which only PENDING decisions create.
func (s *Store) resolvePending(sum *Summary, agentID string, from, to time.Time) error {
	if sum.Pending == 0 {
		return nil
	}
	ag, err := s.Agent(agentID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	after := ""
	for {
		aps, next, err := s.Approvals(ag.Info.PrincipalID, "", after, MaxActivityLimit, 0)
		if err != nil {
			return err
		}
		for i := range aps {
			ap := &aps[i]
			if ap.AgentID == agentID && ap.Kind != "trust_elevation" && !ap.CreatedAt.Before(from) && ap.CreatedAt.Before(to) {
				sum.Resolve(ap.Status)
			}
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// summary adds the daily summaries of the whole days inside [from, to)
// and scans the activities of the partial days at either edge.
func (s *Store) summary(agentID string, from, to time.Time) (Summary, error) {
	defer s.hold()()
	var sum Summary
	if !from.Before(to) {
		return sum, nil
	}
	firstWhole := dayOf(from)
	if !from.Equal(time.Unix(firstWhole*86400, 0)) {
		firstWhole++
	}
	endWhole := dayOf(to) // days < endWhole end before to
	scanRange := func(a, b time.Time) error {
		if !a.Before(b) {
			return nil
		}
		return s.scanActivities(agentID, a, b, func(act *Activity) { sum.Count(act.Decision, act.Cost) })
	}
	if firstWhole >= endWhole {
		return sum, scanRange(from, to)
	}
	if err := scanRange(from, time.Unix(firstWhole*86400, 0).UTC()); err != nil {
		return sum, err
	}
	lo, hi := summaryKey(agentID, firstWhole), summaryKey(agentID, endWhole)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return sum, fmt.Errorf("reading summaries: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		var d Summary
		if err := json.Unmarshal(it.Value(), &d); err != nil {
			it.Close()
			return sum, fmt.Errorf("decoding summary: %w", err)
		}
		sum.Add(d)
	}
	if err := it.Close(); err != nil {
		return sum, fmt.Errorf("reading summaries: %w", err)
	}
	return sum, scanRange(time.Unix(endWhole*86400, 0).UTC(), to)
}

func (s *Store) scanActivities(agentID string, from, to time.Time, fn func(*Activity)) error {
	defer s.hold()()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: activityKey(agentID, from, 0), UpperBound: activityKey(agentID, to, 0)})
	if err != nil {
		return fmt.Errorf("reading activity: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		var a Activity
		if err := decodeActivity(it.Value(), &a); err != nil {
			it.Close()
			return err
		}
		fn(&a)
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("reading activity: %w", err)
	}
	return nil
}

// Equal compares every key and value of two stores and describes the
// first difference ("" when they are equal).
func Equal(a, b *Store) (string, error) {
	defer a.hold()()
	defer b.hold()()
	ia, err := a.db.NewIter(nil)
	if err != nil {
		return "", fmt.Errorf("iterating store: %w", err)
	}
	defer ia.Close()
	ib, err := b.db.NewIter(nil)
	if err != nil {
		return "", fmt.Errorf("iterating store: %w", err)
	}
	defer ib.Close()
	ia.First()
	ib.First()
	for ia.Valid() && ib.Valid() {
		if c := bytes.Compare(ia.Key(), ib.Key()); c != 0 {
			if c < 0 {
				return fmt.Sprintf("key %q only in the first store", ia.Key()), nil
			}
			return fmt.Sprintf("key %q only in the second store", ib.Key()), nil
		}
		if !bytes.Equal(ia.Value(), ib.Value()) {
			return fmt.Sprintf("key %q differs:\n  %s\n  %s", ia.Key(), ia.Value(), ib.Value()), nil
		}
		ia.Next()
		ib.Next()
	}
	if ia.Valid() {
		return fmt.Sprintf("key %q only in the first store", ia.Key()), nil
	}
	if ib.Valid() {
		return fmt.Sprintf("key %q only in the second store", ib.Key()), nil
	}
	return "", nil
}

// pebbleLogger routes Pebble's messages to slog, errors at most once per
// format and interval (Pebble retries a failed flush at once, forever).
// Fatalf panics with a diskspace.Fatal (Pebble requires that it not return).
type pebbleLogger struct {
	l     *slog.Logger
	quiet *diskspace.LogLimiter
}

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.quiet.Log(p.l, slog.LevelError, format, fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	panic(diskspace.Fatal(fmt.Sprintf(format, args...)))
}
