package kafkagate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// Named limits and defaults.
const (
	// DefaultGroupID is the consumer group of the gate instances.
	DefaultGroupID = "agentgate"
	// MaxInFlight is the most requests of one partition read but not yet
	// answered (and so not committed).
	MaxInFlight = 4096
	// answerTimeout bounds the wait for one decision before the partition
	// gives up on it (the worker answers far sooner or fails).
	answerTimeout = 30 * time.Second
	// openRetry is the pause between attempts to open a partition.
	openRetry = time.Second
	// commitInterval is how often a partition commits its request offset
	// while requests flow.
	commitInterval = 200 * time.Millisecond
	// forwardDrain bounds how long a released partition's forwarder goes
	// on producing what its worker appended.
	forwardDrain = 10 * time.Second
)

// Config configures a Gate.
type Config struct {
	Brokers []string
	Topics  Topics
	// GroupID is the consumer group; "" is DefaultGroupID.
	GroupID string
	// DataDir holds DATA/partitions/P/state for every partition this
	// instance owns or owned.
	DataDir string
	// OpenLog opens the log of events partition p (streams/kafkalog) for
	// the partition's worker, which reads it whole before deciding: a
	// lazily opened log (kafkalog.Options.Lazy) makes that the one read.
	OpenLog func(ctx context.Context, p int32) (streams.Log, error)
	// Signer signs attestations.
	Signer domain.Signer
	// AdminKeyHash is the hex SHA-256 of the admin key (shared by every
	// instance); it authenticates the admin and keys internal commands.
	AdminKeyHash string
	// Config is the decision configuration (nil: keep the log's).
	Config *domain.Config
	Clock  func() time.Time
	Logger *slog.Logger
	// OnBatch observes committed batches (metrics).
	OnBatch func(events []*domain.Event, appendDur time.Duration)
	// OnPartition, if set, runs beside each partition this instance
	// owns, from the moment its worker runs until the partition is
	// released: it is given the partition, its worker and its store, and
	// must return once ctx ends (the worker stops after it returns). The
	// webhook runner of the partition (handlers/notify) is run there.
	OnPartition func(ctx context.Context, p int32, worker *handlers.Worker, store *projections.Store)
	// SessionTimeout of the group membership; 0 is 6 s.
	SessionTimeout time.Duration
	// Verifier runs the verification engines on verify_action commands
	// and on A2A code and logic messages (handlers.WorkerConfig.Verifier
	// of every partition's worker); nil leaves those decisions to the
	// rules and guards alone.
	Verifier handlers.ActionVerifier
	// Engines answer qwed.verify requests (QWED protocol v1.0) on every partition;
	// nil is the built-in engines without a solver (the logic engine
	// fails closed with QWED-ENG-004).
	Engines *verify.Registry
	// Checkpoint is when each partition's worker appends a signed log
	// checkpoint (issue 5); zero fields take the defaults (every 1,000
	// events or 10 s).
	Checkpoint domain.CheckpointPolicy
	// MinFreeBytes and FS are the partition stores'
	// (projections.Options): on a full disk a partition refuses commands
	// with QWED-SYS-003 and keeps its state (streams/diskspace).
	MinFreeBytes int64
	FS           vfs.FS
	// Caller, if set, calls the businesses of the transactions each owned
	// partition's worker makes executing: a partition's adapter runner
	// starts with its worker (calling again what its state holds as
	// executing) and stops before it, as the partition is released.
	Caller *adapter.Caller

	// forwardHook, set by tests (export_test.go), is called by each
	// partition's forwarder at each ForwardStage; an error stands for the
	// process dying there.
	forwardHook func(stage ForwardStage, p int32, seqs []uint64) error
	// holdCopies (tests: HoldCopies) keeps every partition from copying
	// partition 0's principal-wide events: the gate then stops between
	// partition 0's decision and the copies.
	holdCopies bool
	// mirrorHook, set by tests, is the changes outbox's fault hook (as
	// forwardHook is the forwarders'); changesRead, set by tests, is
	// called before each pass of a copy feed over the changes topic, and
	// an error it returns fails the pass.
	mirrorHook  func(stage ForwardStage, p int32, seqs []uint64) error
	changesRead func(ctx context.Context) error
	// noticesHook, set by tests, is the relayed notices' outboxes' fault
	// hook (notices.go).
	noticesHook func(stage ForwardStage, p int32, seqs []uint64) error
}

// Gate consumes the requests topic in a consumer group and runs one worker
// per assigned partition.
// MaxVerdictsInFlight bounds the engine runs of verify_actions read from
// the requests topic that a gate instance runs at once, over all its
// partitions: a partition whose backlog would exceed it stops reading
// until a run ends, rather than flooding the engines' queues with its own
// backlog. It is below the engines' per-principal queues (64 for the
// registry's, four per solver process for z3's).
const MaxVerdictsInFlight = 8

type Gate struct {
	cfg        Config
	macKey     []byte
	partitions int
	out        *kafkaout.Producer // replies, decisions, dead letters, forwards
	fwdClient  *kafka.Client      // the forwarders' scans and cursors
	fwdTr      *kafka.Transport
	log        *slog.Logger

	mu    sync.Mutex
	owned map[int32]*partition
	// alone is held by the one request the process tries alone after a
	// death (isolate), whatever its partition: a death is then charged to
	// that request only, never to the isolated requests of the other
	// partitions the process owns.
	alone chan struct{}
	// verdicts bounds the engine runs of all the partitions' enqueued
	// verify_actions (handlers.WorkerConfig.VerdictSlots).
	verdicts chan struct{}
}

// New returns a gate; partitions is the partition count of the requests
// (and events) topic (EnsureTopics returns it).
func New(cfg Config, partitions int) (*Gate, error) {
	if len(cfg.Brokers) == 0 || cfg.OpenLog == nil || cfg.DataDir == "" || partitions < 1 {
		return nil, errors.New("kafkagate: Brokers, OpenLog, DataDir and a partition count are required")
	}
	cfg.Topics = cfg.Topics.withDefaults()
	if cfg.GroupID == "" {
		cfg.GroupID = DefaultGroupID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 6 * time.Second
	}
	if cfg.Engines == nil {
		reg, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{})...)
		if err != nil {
			return nil, fmt.Errorf("registering the built-in engines: %w", err)
		}
		cfg.Engines = reg
	}
	g := &Gate{
		cfg: cfg, macKey: MACKey(cfg.AdminKeyHash), partitions: partitions, log: cfg.Logger,
		owned:    map[int32]*partition{},
		alone:    make(chan struct{}, 1),
		verdicts: make(chan struct{}, MaxVerdictsInFlight),
	}
	// A direct producer, not kafka-go's Writer: the Writer holds a partial
	// batch up to its BatchTimeout, which was most of a request-reply's
	// latency; complete batches the writes itself.
	g.out = kafkaout.NewProducer(cfg.Brokers)
	g.fwdTr = &kafka.Transport{}
	g.fwdClient = &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second, Transport: g.fwdTr}
	return g, nil
}

// Close closes the producer (after Run has returned).
func (g *Gate) Close() error {
	g.fwdTr.CloseIdleConnections()
	return g.out.Close()
}

// Owned returns the partitions this instance decides now, sorted.
func (g *Gate) Owned() []int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]int32, 0, len(g.owned))
	for p := range g.owned {
		out = append(out, p)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Run joins the consumer group and serves every generation until ctx ends.
// Each generation's partitions stop before the next generation starts.
func (g *Gate) Run(ctx context.Context) error {
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                    g.cfg.GroupID,
		Brokers:               g.cfg.Brokers,
		Topics:                []string{g.cfg.Topics.Requests},
		StartOffset:           kafka.FirstOffset,
		SessionTimeout:        g.cfg.SessionTimeout,
		RebalanceTimeout:      g.cfg.SessionTimeout,
		HeartbeatInterval:     g.cfg.SessionTimeout / 6,
		JoinGroupBackoff:      200 * time.Millisecond,
		WatchPartitionChanges: true,
		Timeout:               5 * time.Second,
		ErrorLogger:           kafka.LoggerFunc(func(f string, a ...any) { g.log.Debug("consumer group", "msg", fmt.Sprintf(f, a...)) }),
	})
	if err != nil {
		return fmt.Errorf("joining consumer group %s: %w", g.cfg.GroupID, err)
	}
	defer group.Close()
	for {
		gen, err := group.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, kafka.ErrGroupClosed) {
				return nil
			}
			g.log.Warn("waiting for a group generation", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		assigned := gen.Assignments[g.cfg.Topics.Requests]
		ids := make([]int, 0, len(assigned))
		for _, a := range assigned {
			a := a
			ids = append(ids, a.ID)
			gen.Start(func(gctx context.Context) { g.runPartition(gctx, gen, int32(a.ID), a.Offset) })
		}
		g.log.Info("group generation", "generation", gen.ID, "member", gen.MemberID, "partitions", ids)
	}
}

// partition is one owned partition.
type partition struct {
	id     int32
	store  *projections.Store
	keys   command.Keys // the admin key and the keys recorded in store
	log    streams.Log
	worker *handlers.Worker
	flight *flight // the requests in flight, for a restart after a death
	fwd    *forwarder
	// mirror produces partition 0's principal-wide changes to the changes
	// topic (mirror.go; nil on the other partitions, and with one
	// partition).
	mirror *forwarder
	// notices relays the notices of blocked agent decisions to their
	// principal's home partition (notices.go; nil with one partition).
	notices *forwarder
	// runner calls the businesses (nil without Config.Caller).
	runner *adapter.Runner
	// feed follows partition 0's principal-wide events (nil on partition
	// 0, and with one partition).
	feed *copyFeed
	// later holds the replies of executes answered at their outcome.
	later *deferred
}

// openPartition restores partition p: its projections, its log, its worker.
func (g *Gate) openPartition(ctx context.Context, p int32) (_ *partition, err error) {
	dir := filepath.Join(g.cfg.DataDir, "partitions", strconv.Itoa(int(p)), "state")
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("creating partition dir: %w", err)
	}
	pr := &partition{id: p}
	defer func() {
		if err != nil {
			pr.close()
		}
	}()
	// The worker's store: the state, the request index and checkpoints.
	// No snapshots and no activity: nothing reads a partition store's (the
	// instance's read model serves the activity API; time travel in Kafka
	// mode folds the events partition, PartitionHistory), and they were
	// most of a restore's projection work and bytes.
	if pr.store, err = projections.OpenWith(dir, projections.Options{Logger: g.log, NoSnapshots: true, NoActivity: true, NoticeHome: g.noticeHome,
		MinFreeBytes: g.cfg.MinFreeBytes, FS: g.cfg.FS}); err != nil {
		return nil, fmt.Errorf("opening projections of partition %d: %w", p, err)
	}
	pr.keys = command.NewKeys(g.cfg.AdminKeyHash, pr.store, nil)
	lg, err := g.cfg.OpenLog(ctx, p)
	if err != nil {
		// lg may be a typed nil (a *kafkalog.Log in the interface): never
		// keep it.
		return nil, fmt.Errorf("opening log of partition %d: %w", p, err)
	}
	pr.log = lg
	// The forwarder is handed every committed batch (it produces the
	// forwarded A2A messages after the log took them); a batch it cannot
	// take before the generation ends is the next owner's to recover.
	pr.fwd = g.newForwarder(p, lg)
	pr.later = newDeferred(g)
	if g.global() && p == domain.GlobalPartition {
		pr.mirror = g.newMirror(lg)
	}
	if g.global() {
		pr.notices = g.newNotices(p, lg)
	}
	onBatch := func(evs []*domain.Event, d time.Duration) {
		if g.cfg.OnBatch != nil {
			g.cfg.OnBatch(evs, d)
		}
		pr.fwd.add(ctx, evs)
		pr.later.completed(ctx, evs)
		if pr.mirror != nil {
			pr.mirror.add(ctx, evs)
		}
		if pr.notices != nil {
			pr.notices.add(ctx, evs)
		}
		pr.runner.Observe(evs)
	}
	start := time.Now()
	wc := handlers.WorkerConfig{
		Log: pr.log, Store: pr.store, Signer: g.cfg.Signer, Partition: p,
		Clock: g.cfg.Clock, Config: g.cfg.Config, Logger: g.log.With("partition", p), OnBatch: onBatch,
		Verifier: g.cfg.Verifier, VerdictSlots: g.verdicts, Checkpoint: g.cfg.Checkpoint,
	}
	if g.global() && p != domain.GlobalPartition {
		pr.feed = newCopyFeed(p, g.log)
		pr.feed.hold = g.cfg.holdCopies
		wc.Copier = pr.feed
		wc.OnBatch = func(events []*domain.Event, d time.Duration) {
			pr.feed.observe(events)
			onBatch(events, d)
		}
	}
	pr.worker, err = handlers.NewWorker(wc)
	if err != nil {
		return nil, fmt.Errorf("restoring partition %d: %w", p, err)
	}
	if g.cfg.Caller != nil {
		if pr.runner, err = adapter.NewRunner(adapter.RunnerConfig{
			Caller: g.cfg.Caller, Gate: pr.worker, Source: adapter.LogSource{State: pr.store, Log: pr.log},
			Logger: g.log.With("partition", p),
		}); err != nil {
			return nil, err
		}
	}
	pr.fwd.restored(pr.worker.Head().Seq)
	if pr.mirror != nil {
		pr.mirror.restored(pr.worker.Head().Seq)
	}
	if pr.notices != nil {
		pr.notices.restored(pr.worker.Head().Seq)
	}
	g.log.Info("partition restored", "partition", p, "seq", pr.worker.Head().Seq, "took", time.Since(start).Round(time.Millisecond))
	return pr, nil
}

// runBeside starts Config.OnPartition for partition pr and returns the
// function that stops it and waits for it.
func (g *Gate) runBeside(p int32, pr *partition) func() {
	if g.cfg.OnPartition == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.cfg.OnPartition(ctx, p, pr.worker, pr.store)
	}()
	return func() { cancel(); <-done }
}

// global reports whether principal-wide commands are decided on
// partition 0 and copied by the others (more than one partition).
func (g *Gate) global() bool { return g.partitions > 1 }

func (pr *partition) close() {
	if pr.store != nil {
		_ = pr.store.Close()
	}
	if pr.log != nil {
		_ = pr.log.Close()
	}
}

// runPartition serves partition p for one generation: restore, then read,
// decide, answer and commit until the generation ends.
func (g *Gate) runPartition(ctx context.Context, gen *kafka.Generation, p int32, offset int64) {
	var pr *partition
	for {
		var err error
		if pr, err = g.openPartition(ctx, p); err == nil {
			break
		}
		g.log.Error("opening partition", "partition", p, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(openRetry):
		}
	}
	defer pr.close()
	fl, err := openFlight(filepath.Join(g.cfg.DataDir, "partitions", strconv.Itoa(int(p))), offset)
	if err != nil {
		g.log.Error("opening partition", "partition", p, "err", err)
		return
	}
	pr.flight = fl
	if lo, hi := fl.window(); hi >= 0 {
		g.log.Warn("the gate died with requests in flight: retrying them one at a time", "partition", p, "from", lo, "to", hi)
	}
	clean := false
	defer func() { fl.close(clean) }()
	wctx, wcancel := context.WithCancel(context.Background())
	werr := make(chan error, 1)
	fctx, fcancel := context.WithCancel(context.Background())
	fdone := make(chan struct{})
	mdone := make(chan struct{})
	go func() {
		defer close(fdone)
		pr.fwd.run(fctx)
	}()
	go func() {
		defer close(mdone)
		if pr.mirror != nil {
			pr.mirror.run(fctx)
		}
	}()
	ndone := make(chan struct{})
	go func() {
		defer close(ndone)
		if pr.notices != nil {
			pr.notices.run(fctx)
		}
	}()
	go func() { werr <- pr.worker.Run(wctx) }()
	lctx, lcancel := context.WithCancel(ctx)
	ldone := make(chan struct{})
	go func() {
		defer close(ldone)
		pr.later.run(lctx)
	}()
	defer func() { lcancel(); <-ldone }()
	// The business calls of the partition: those its state holds as
	// executing (a previous owner may have made them without recording
	// the outcome: they are made again with the same Idempotency-Key),
	// then those its worker decides.
	stopRunner := func() {}
	if pr.runner != nil {
		stopRunner = pr.runner.Start()
	}
	if pr.feed != nil {
		fctx, fcancel := context.WithCancel(ctx)
		fdone := make(chan struct{})
		go func() {
			defer close(fdone)
			pos, err := pr.store.CopyPosition(p)
			if err != nil {
				g.log.Error("reading the partition's last copy of partition 0", "partition", p, "err", err)
			}
			g.followChanges(fctx, pr.feed, pos)
		}()
		defer func() { fcancel(); <-fdone }()
		pr.feed.firstPass(ctx)
	}
	g.mu.Lock()
	g.owned[p] = pr
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.owned, p)
		g.mu.Unlock()
	}()
	stopSide := g.runBeside(p, pr)

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: g.cfg.Brokers, Topic: g.cfg.Topics.Requests, Partition: int(p),
		MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 100 * time.Millisecond,
		ReadBackoffMin: 10 * time.Millisecond, ReadBackoffMax: 200 * time.Millisecond,
	})
	if offset < 0 {
		offset = kafka.FirstOffset
	}
	if err := r.SetOffset(offset); err != nil {
		g.log.Error("seeking requests", "partition", p, "offset", offset, "err", err)
	}
	items := make(chan *item, MaxInFlight)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.complete(gen, p, items, fl)
	}()
	for {
		msg, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				g.log.Error("reading requests", "partition", p, "err", err)
			}
			break
		}
		fl.fetched(msg.Offset)
		if fl.isolated(msg.Offset) {
			if !g.isolate(ctx, pr, msg, items) {
				break
			}
			continue
		}
		items <- g.handle(ctx, pr, msg)
	}
	close(items)
	<-done
	stopSide()
	// The calls in flight are cut short (nothing recorded: the next owner
	// makes them again), before the worker stops.
	stopRunner()
	// The worker finishes its in-flight batch and refuses the rest (they
	// are not committed: the next owner decides them).
	wcancel()
	<-werr
	// The forwarder produces what the worker handed it, up to a bound
	// (the next owner recovers the rest from the log).
	pr.fwd.close()
	if pr.mirror != nil {
		pr.mirror.close()
	}
	if pr.notices != nil {
		pr.notices.close()
	}
	// One deadline for the three (closed, so that every select sees it).
	drain := make(chan struct{})
	stopDrain := time.AfterFunc(forwardDrain, func() { close(drain) })
	defer stopDrain.Stop()
	for _, done := range []chan struct{}{fdone, mdone, ndone} {
		select {
		case <-done:
		case <-drain:
		}
	}
	fcancel()
	<-fdone
	<-mdone
	<-ndone
	_ = r.Close()
	clean = true
	g.log.Info("partition released", "partition", p, "seq", pr.worker.Head().Seq)
}

// item is one request on its way through a partition.
type item struct {
	msg      kafka.Message
	req      ce.Event
	decoded  bool
	internal bool
	ec       *command.Built
	pend     *handlers.Pending
	rej      *command.Rejection
	dead     string // dead-letter reason
	done     bool   // nothing to answer (forwarded)
	abandon  bool   // not enqueued because the partition is stopping
	qwed     *qwedCall
	// later, set on an execute decided here, holds its reply until its
	// outcome when it becomes executing (deferred.go).
	later *deferred
	// sync, when set, is closed once the item is answered and written
	// (flushed) or left to the next owner (isolate waits on it).
	sync    chan struct{}
	flushed bool
}

// release closes it.sync, once the item is written (flushed) or will not
// be.
func (it *item) release(flushed bool) {
	if it.sync != nil {
		it.flushed = flushed
		close(it.sync)
	}
}

// qwedCall is a qwed.verify request being verified (off the partition's
// reading goroutine: engines may take seconds).
type qwedCall struct {
	done    chan struct{}
	ans     verify.Answer
	ev      *domain.Event // the recorded qwed.verify event, if any
	stopped bool          // the partition stopped before recording it
}

// recorder is the verify.Gate of one qwed.verify call: it records through
// the partition's worker and keeps the recorded event (for the decisions
// topic).
type recorder struct {
	w  *handlers.Worker
	ev *domain.Event
}

func (r *recorder) Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	ev, err := r.w.Submit(ctx, cmd)
	if err == nil {
		r.ev = ev
	}
	return ev, err
}

// startVerify verifies a qwed.verify request as POST /verify does (seed
// 002; the data is its body, the header qwed-protocol-version its
// QWED-Protocol-Version) and records it in the partition's log; a refused
// call's audit record is appended like every refusal, and input errors
// (not credential errors) go to the dead-letter topic.
func (g *Gate) startVerify(ctx context.Context, pr *partition, it *item, id domain.RequestID, principal string) *qwedCall {
	q := &qwedCall{done: make(chan struct{})}
	version, _ := header(&it.msg, headerQWEDVersion)
	go func() {
		defer close(q.done)
		rec := &recorder{w: pr.worker}
		svc, err := verify.New(verify.Config{Registry: g.cfg.Engines, Gate: rec, Logger: g.log, Clock: g.cfg.Clock})
		if err != nil {
			q.ans = verify.ErrorAnswer(domain.CodeInternal, nil, "the verify service is not configured")
			return
		}
		q.ans = svc.Verify(ctx, verify.Call{Body: it.req.Data, Version: version, Principal: principal, Request: id})
		if q.ans.Rejection == nil {
			q.ev = rec.ev
		}
		if q.ans.Rejection != nil {
			rej := &command.Rejection{Status: q.ans.Status, Err: *q.ans.Rejection}
			if c := rej.Err.Code; c != domain.CodeMissingAPIKey && c != domain.CodeInvalidAPIKey {
				it.dead = rej.Error()
			}
			p := g.auditRejection(ctx, pr, it, rej, principal)
			if p == nil {
				q.stopped = true // the next owner refuses it again, and records it
				return
			}
			wctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
			_, _ = p.Wait(wctx)
			cancel()
		}
		if rec.ev == nil && ctx.Err() != nil {
			q.stopped = true
		}
	}()
	return q
}

// handle decodes, checks and enqueues one request, in offset order.
func (g *Gate) handle(ctx context.Context, pr *partition, msg kafka.Message) *item {
	it := &item{msg: msg}
	ev, err := cekafka.Decode(msg)
	if err != nil {
		it.dead = err.Error()
		code := domain.CodeInvalidRequest
		if errors.Is(err, ce.ErrTooLarge) {
			code = domain.CodeTooLong
		}
		var details map[string]any
		if cerr := (*ce.Error)(nil); errors.As(err, &cerr) && cerr.Attribute != "" {
			details = map[string]any{"attribute": cerr.Attribute}
		}
		it.rej = command.Reject(code, details, "invalid CloudEvent: %s", err.Error())
		it.pend = g.audit(ctx, pr, it, "")
		return it
	}
	it.req, it.decoded = ev, true
	if mac, ok := header(&msg, HeaderMAC); ok {
		return g.handleInternal(ctx, pr, it, mac)
	}
	if rej := command.SourceRejection(ev.Source); rej != nil {
		it.rej, it.dead = rej, rej.Error()
		it.pend = g.audit(ctx, pr, it, "")
		if ev.Type == string(domain.CmdQWEDVerify) {
			it.qwed = &qwedCall{done: make(chan struct{}), ans: verify.ErrorAnswer(rej.Err.Code, rej.Err.Details, "%s", rej.Err.Message)}
			close(it.qwed.done)
		}
		return it
	}
	id := domain.RequestID{Source: ev.Source, ID: ev.ID}
	principal := ""
	if key, ok := header(&msg, HeaderAPIKey); ok && key != "" {
		p, rej := g.principalOf(ctx, pr, key)
		if rej != nil {
			it.rej = rej
			it.pend = g.audit(ctx, pr, it, "")
			if ev.Type == string(domain.CmdQWEDVerify) {
				// POST /verify answers a bad key with a §8.4 body.
				it.qwed = &qwedCall{done: make(chan struct{}), ans: verify.ErrorAnswer(rej.Err.Code, rej.Err.Details, "%s", rej.Err.Message)}
				close(it.qwed.done)
			}
			return it
		}
		principal = p
	}
	if ev.Type == string(domain.CmdQWEDVerify) {
		it.qwed = g.startVerify(ctx, pr, it, id, principal)
		return it
	}
	cr := command.Credentials{Principal: principal}
	if tok, ok := bearer(&msg); ok {
		cr.TokenHash = command.HashSecret(tok)
	}
	ec, rej := g.build(pr, &msg, &ev, id, cr)
	if rej != nil {
		it.rej = rej
		if rej.Err.Code != domain.CodeMissingAPIKey && rej.Err.Code != domain.CodeInvalidAgentToken {
			it.dead = rej.Error()
		}
		it.pend = g.audit(ctx, pr, it, principal)
		return it
	}
	if a := ec.Command.A2A; a != nil && ec.Command.Type == domain.CmdA2AMessage {
		if n := recordedLen(a.Payload); n > MaxA2APayloadBytes {
			// Its event could not be recorded (one record of the events
			// log): refused at stage 0 as over-long, as POST /a2a/intercept
			// refuses it over HTTPGate, rather than failing the append.
			it.rej = &command.Rejection{Status: http.StatusRequestEntityTooLarge, Err: domain.Error{Code: domain.CodeTooLong,
				Message: fmt.Sprintf("the payload takes %d bytes in its event, over the %d an events record holds for it", n, MaxA2APayloadBytes),
				Details: domain.Details{"field": "payload", "max_bytes": MaxA2APayloadBytes}}}
			it.dead = it.rej.Error()
			it.pend = g.audit(ctx, pr, it, principal)
			return it
		}
	}
	if g.global() && agentFirst(ec.Command.Type) && g.routeAgentFirst(ctx, pr, it, ec.Command, principal) {
		// Relayed to its consumer's home partition, or refused.
		return it
	}
	if x := ec.Command.Execute; x != nil && ec.Command.Type == domain.CmdExecute {
		// Answered once its outcome is recorded, if it executes
		// (deferred.go).
		x.ReplyTo = it.req.Extensions[ce.ExtReplyTo]
		it.later = pr.later
	}
	if g.global() && broadcast(ec.Command.Type) {
		// Principal-wide (API keys, tool registries, an A2A trust
		// boundary): decided on partition 0 and answered there, copied
		// by every other partition (global.go).
		ec.Command.Global = true
		if pr.id != domain.GlobalPartition {
			g.forward(ctx, msg, domain.GlobalPartition)
			it.done = true
			return it
		}
	} else if key := RouteKey(ec.Command); key != "" {
		if want := PartitionFor(key, g.partitions); want != pr.id {
			if _, fwd := header(&msg, HeaderForwarded); !fwd {
				g.forward(ctx, msg, want)
				it.done = true
				return it
			}
			g.log.Warn("request forwarded to a partition that is not its agent's", "partition", pr.id, "want", want)
		}
	} else if want, ok := g.approvalHome(pr, ec.Command); ok {
		if _, fwd := header(&msg, HeaderForwarded); !fwd {
			g.forward(ctx, msg, want)
			it.done = true
			return it
		}
	}
	it.ec = &ec
	if it.pend, err = pr.worker.Enqueue(ctx, ec.Command); err != nil {
		it.abandon = true
	}
	return it
}

// handleInternal enqueues a command sent by a gate instance (HTTPGate).
func (g *Gate) handleInternal(ctx context.Context, pr *partition, it *item, mac string) *item {
	if it.req.DataContentType != ContentTypeCommand || !verifyMAC(g.macKey, it.req.Data, mac) {
		it.rej = command.Reject(domain.CodeInvalidAPIKey, map[string]any{"header": HeaderMAC}, "internal command with a bad signature")
		it.dead = "internal command with a bad signature"
		it.pend = g.audit(ctx, pr, it, "")
		return it
	}
	cmd := new(domain.Command)
	if err := json.Unmarshal(it.req.Data, cmd); err != nil {
		it.rej = command.Reject(domain.CodeInvalidRequest, nil, "internal command does not decode: %v", err)
		it.dead = it.rej.Error()
		return it
	}
	if cmd.Type == domain.CmdAgentBlocked && HomePartition(cmd.Principal, g.partitions) != pr.id {
		// The gate relays a notice to its principal's home partition
		// only (notices.go): a copy of the signed record produced to
		// another partition is not a relay (its MAC covers its data,
		// not the partition it was written to).
		it.rej = command.Reject(domain.CodeInvalidRequest, map[string]any{"partition": pr.id},
			"a relayed notice on a partition that is not its principal's home")
		it.dead = it.rej.Error()
		it.pend = g.audit(ctx, pr, it, "")
		return it
	}
	if cmd.Type == domain.CmdCopyPrincipalState {
		// A barrier partition 0 wrote before answering a principal-wide
		// change (Gate.barriers): read partition 0 through it before
		// reading on. Copies are the worker's own, never this command.
		if pr.feed != nil && cmd.Copy != nil {
			pr.feed.readThrough(ctx, cmd.Copy.Seq)
		}
		it.done = true
		return it
	}
	it.internal = true
	var err error
	if it.pend, err = pr.worker.Enqueue(ctx, cmd); err != nil {
		it.abandon = true
	}
	return it
}

// principalOf authenticates an API key: the admin key, or a key recorded
// on this partition (keys are issued on every partition).
func (g *Gate) principalOf(ctx context.Context, pr *partition, key string) (string, *command.Rejection) {
	// A key change copied from partition 0 is in the log, and answered
	// to its HTTP caller, before this partition's projections hold it.
	if err := pr.worker.WaitCopiesProjected(ctx); err != nil {
		return "", command.Reject(domain.CodeUnavailable, nil, "API keys cannot be read")
	}
	p, err := pr.keys.Principal(ctx, key)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, command.ErrInvalidKey):
		return "", command.Kafka.InvalidKey()
	}
	return "", command.Reject(domain.CodeUnavailable, nil, "API keys cannot be read")
}

// audit enqueues the audit record of a refused request. Its RequestID is
// the message's position, so a redelivery records it once.
func (g *Gate) audit(ctx context.Context, pr *partition, it *item, principal string) *handlers.Pending {
	p := g.auditRejection(ctx, pr, it, it.rej, principal)
	if p == nil {
		it.abandon = true
	}
	return p
}

// auditRejection enqueues the audit record of rej for it's message (nil
// when the partition is stopping).
func (g *Gate) auditRejection(ctx context.Context, pr *partition, it *item, rej *command.Rejection, principal string) *handlers.Pending {
	id := domain.RequestID{Source: "kafka/" + g.cfg.Topics.Requests, ID: fmt.Sprintf("%d/%d", it.msg.Partition, it.msg.Offset)}
	endpoint := "kafka " + g.cfg.Topics.Requests
	if it.decoded {
		endpoint += " " + it.req.Type
	}
	cmd := command.RejectionCommand(rej, endpoint, it.msg.Value, principal, id)
	p, err := pr.worker.Enqueue(ctx, cmd)
	if err != nil {
		return nil
	}
	return p
}

func unavailable(err error) *command.Rejection {
	if errors.Is(err, streams.ErrNoSpace) {
		return command.Reject(domain.CodeStorageFull, nil, "the partition's disk is full: nothing was decided; retry with the same id once space is freed")
	}
	return command.Reject(domain.CodeUnavailable, nil, "the gate is unavailable: %v; retry with the same id", err)
}

// forward sends a request to the partition that decides it: its agent's,
// or partition 0 for a principal-wide one.
func (g *Gate) forward(ctx context.Context, msg kafka.Message, to int32) {
	g.resend(ctx, g.copyTo(msg, to))
}

// copyTo is msg on partition to of the requests topic, marked with
// HeaderForwarded (the partition it came from).
func (g *Gate) copyTo(msg kafka.Message, to int32) kafka.Message {
	return kafka.Message{
		Topic: g.cfg.Topics.Requests, Partition: int(to), Key: msg.Key, Value: msg.Value,
		Headers: append(append([]kafka.Header(nil), msg.Headers...), kafka.Header{Key: HeaderForwarded, Value: []byte(strconv.Itoa(msg.Partition))}),
	}
}

// resend writes msgs to the requests topic, retrying until it succeeds or
// ctx ends (then the request is not committed: the next owner sends
// them again, and each partition drops a repeat by its request id).
func (g *Gate) resend(ctx context.Context, msgs ...kafka.Message) {
	if len(msgs) == 0 {
		return
	}
	for {
		err := g.out.Write(ctx, msgs...)
		if err == nil {
			return
		}
		g.log.Error("forwarding a request to another partition", "to", msgs[0].Partition, "copies", len(msgs), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// complete answers the items of a partition in offset order and commits
// the offsets of the answered ones: every commitInterval while requests
// flow, and when the generation ends. A commit is a round trip to the
// group coordinator; committing after every reply put one on the path of
// the next request. A request answered but not yet committed when the
// gate dies is redelivered to the next owner, which answers it from the
// log (invariant 4).
func (g *Gate) complete(gen *kafka.Generation, p int32, items <-chan *item, fl *flight) {
	var (
		out       []kafka.Message
		written   int64 = -1 // the last offset answered and written
		committed int64 = -1
		last      time.Time
	)
	commit := func() {
		if written <= committed {
			return
		}
		if err := gen.CommitOffsets(map[string]map[int]int64{g.cfg.Topics.Requests: {int(p): written + 1}}); err != nil {
			g.log.Warn("committing offsets", "partition", p, "offset", written+1, "err", err)
			return
		}
		committed, last = written, time.Now()
	}
	flush := func(upTo int64) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		g.place(ctx, out)
		// Replies, decisions and dead letters in one write: one produce
		// request per topic-partition, in parallel.
		if err := g.out.Write(ctx, out...); err != nil {
			g.log.Error("writing replies and decisions", "partition", p, "err", err)
			return false
		}
		out = out[:0]
		written = upTo
		fl.written(upTo)
		if time.Since(last) >= commitInterval {
			commit()
		}
		return true
	}
	tick := time.NewTicker(commitInterval)
	defer tick.Stop()
	stopped := false
	var answered int64 = -1 // the last offset answered (its messages in out)
	for {
		select {
		case it, ok := <-items:
			if !ok {
				if !stopped && (len(out) > 0 || answered > written) {
					flush(answered)
				}
				commit()
				return
			}
			if stopped {
				it.release(false)
				continue // the generation is over: leave them to the next owner
			}
			if !g.answer(p, it, &out) {
				stopped = true
				it.release(false)
				continue
			}
			answered = it.msg.Offset
			if len(items) == 0 || len(out) >= 512 || it.sync != nil {
				if !flush(answered) {
					stopped = true
				}
			}
			if it.sync != nil && !stopped {
				// Tried alone after a death: committed before the next,
				// so that a dead-lettered request is never read again.
				commit()
				it.release(committed >= it.msg.Offset)
				continue
			}
			it.release(!stopped)
		case <-tick.C:
			commit()
		}
	}
}

// place gives each reply of out without a partition (-1) its partition:
// keyed by agent or correlation id, hashed over the reply topic's
// partitions. A reply whose topic cannot be written, or is one of the
// gate's own, becomes a dead letter (undeliverable); the decision stands.
func (g *Gate) place(ctx context.Context, out []kafka.Message) {
	for i := range out {
		if out[i].Partition >= 0 {
			continue
		}
		if g.cfg.Topics.internal(out[i].Topic) {
			// A request may not make the gate write into its own log,
			// decisions, requests, forwards or dead letters.
			g.log.Warn("dead-lettering a reply to one of the gate's own topics", "topic", out[i].Topic)
			out[i] = g.undeliverable(out[i], errInternalReplyTopic)
			continue
		}
		n, err := g.out.Partitions(ctx, out[i].Topic)
		if err != nil {
			g.log.Warn("dead-lettering a reply", "topic", out[i].Topic, "err", err)
			out[i] = g.undeliverable(out[i], err)
			continue
		}
		out[i].Partition = int(PartitionFor(string(out[i].Key), n))
	}
}

// answer waits for an item's decision and queues its reply, decision and
// dead letter. It returns false when the item was not decided because the
// worker stopped (the generation ended): it must not be committed.
func (g *Gate) answer(p int32, it *item, out *[]kafka.Message) bool {
	if it.abandon {
		return false
	}
	if it.done {
		return true
	}
	var ev *domain.Event
	if it.qwed != nil {
		<-it.qwed.done
		if it.qwed.stopped {
			return false // the next owner verifies it
		}
		ev = it.qwed.ev
	}
	if it.pend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		var err error
		ev, err = it.pend.Wait(ctx)
		cancel()
		if err != nil && it.rej == nil {
			// A bare ErrUnavailable: the worker stopped before deciding
			// (the generation ended); a timeout: it is stuck. Either way
			// the request is left to the next owner. A wrapped one: the
			// worker refused the batch (the log refused the append): the
			// request is answered as refused.
			if err == handlers.ErrUnavailable || errors.Is(err, context.DeadlineExceeded) {
				return false
			}
			it.rej = unavailable(err)
		}
	}
	if _, ok := domain.CopyOf(ev); ok && p == domain.GlobalPartition && g.global() {
		// Every other partition reads partition 0's changes through this
		// one before anything written to it after this answer: once the
		// changes topic holds it (bounded: the feeds copy it when it
		// comes).
		g.mirrored(p, ev.Seq)
		g.writeBarriers(ev.Seq)
	}
	if it.dead == "" && it.rej == nil && ev != nil && ev.Type == domain.EvCommandRejected && ev.Error != nil && inputError(ev.Error.Code) {
		// Decide refused the body (a member missing or out of its
		// schema): undecodable input, dead-lettered like the refusals of
		// the transport.
		it.dead = string(ev.Error.Code) + ": " + ev.Error.Message
	}
	now := g.cfg.Clock().UTC()
	if it.dead != "" {
		dl := kafka.Message{Topic: g.cfg.Topics.DeadLetter, Partition: 0, Key: it.msg.Key, Value: it.msg.Value,
			Headers: append(append([]kafka.Header(nil), it.msg.Headers...),
				kafka.Header{Key: HeaderReason, Value: []byte(it.dead)},
				kafka.Header{Key: HeaderOrigin, Value: []byte(origin(&it.msg))})}
		*out = append(*out, dl)
	}
	var status int
	var body []byte
	switch {
	case it.qwed != nil:
		status, body = it.qwed.ans.Status, it.qwed.ans.Body
	case it.rej != nil:
		status, body = it.rej.Status, it.rej.Body()
	case it.internal:
		b, err := eventjson.Marshal(ev)
		if err != nil || ev == nil {
			status, body = 500, command.Reject(domain.CodeInternal, nil, "no event recorded").Body()
		} else {
			status, body = 200, b
		}
	default:
		var rej *command.Rejection
		status, body, rej = it.ec.Reply(ev)
		if rej != nil {
			status, body = rej.Status, rej.Body()
		}
	}
	if ev != nil && it.rej == nil {
		if m, ok := g.decision(p, ev, now); ok {
			*out = append(*out, m)
		}
	}
	held := false
	if it.later != nil && it.rej == nil && status < 300 {
		if to := it.req.Extensions[ce.ExtReplyTo]; to != "" {
			var outcome *domain.Event
			if outcome, held = it.later.hold(it.req, to, ev); outcome != nil {
				status, body = outcomeReply(outcome)
			}
		}
	}
	if it.decoded && !held {
		if to := it.req.Extensions[ce.ExtReplyTo]; to != "" {
			if m, ok := g.reply(it.req, to, status, body, now); ok {
				if status == http.StatusTooManyRequests {
					if s := retryAfter(ev); s != "" {
						m.Headers = append(m.Headers, kafka.Header{Key: kafkaout.HeaderRetryAfter, Value: []byte(s)})
					}
				}
				m.WriterData = &it.msg // its origin, if it is dead-lettered (undeliverable)
				*out = append(*out, m)
			}
		}
	} else if to, ok := header(&it.msg, "ce_replyto"); ok && to != "" && !it.decoded {
		// Not a CloudEvent, but it said where to answer: answer there.
		req := ce.Event{Type: "agentgate.invalid", Source: "unknown", ID: fmt.Sprintf("%d/%d", it.msg.Partition, it.msg.Offset), Mode: ce.ModeBinary,
			Extensions: map[string]string{}}
		if c, ok := header(&it.msg, "ce_correlationid"); ok {
			req.Extensions[ce.ExtCorrelationID] = c
		} else if id, ok := header(&it.msg, "ce_id"); ok && id != "" {
			req.ID = id
		}
		if m, ok := g.reply(req, to, status, body, now); ok {
			m.WriterData = &it.msg
			*out = append(*out, m)
		}
	}
	return true
}

// mirrored waits, up to answerTimeout, until partition p's changes
// outbox has produced its changes through seq.
func (g *Gate) mirrored(p int32, seq uint64) {
	g.mu.Lock()
	pr := g.owned[p]
	g.mu.Unlock()
	if pr == nil || pr.mirror == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
	defer cancel()
	if !pr.mirror.waitThrough(ctx, seq) {
		g.log.Warn("the principal-wide change is not on the changes topic in time: the other partitions copy it later", "seq", seq)
	}
}

// writeBarriers writes the barriers of partition 0's principal-wide
// change at seq (Gate.barriers), acknowledged, before its answer is
// written.
func (g *Gate) writeBarriers(seq uint64) {
	msgs, err := g.barriers(seq)
	if err != nil {
		g.log.Error("writing copy barriers", "seq", seq, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
	defer cancel()
	g.resend(ctx, msgs...)
}

// origin is the position of a request: topic/partition/offset.
func origin(msg *kafka.Message) string {
	return fmt.Sprintf("%s/%d/%d", msg.Topic, msg.Partition, msg.Offset)
}

// undeliverable turns a reply whose topic cannot be written into a dead
// letter: the reply's key, value and headers, the reason, the topic it was
// for (agentgate-replyto) and the request's origin.
func (g *Gate) undeliverable(m kafka.Message, err error) kafka.Message {
	h := append(append([]kafka.Header(nil), m.Headers...),
		kafka.Header{Key: HeaderReason, Value: fmt.Appendf(nil, "the reply topic %s cannot be written: %v", m.Topic, err)},
		kafka.Header{Key: HeaderReplyTo, Value: []byte(m.Topic)})
	if req, ok := m.WriterData.(*kafka.Message); ok {
		h = append(h, kafka.Header{Key: HeaderOrigin, Value: []byte(origin(req))})
	}
	return kafka.Message{Topic: g.cfg.Topics.DeadLetter, Partition: 0, Key: m.Key, Value: m.Value, Headers: h}
}

// reply encodes the reply to req for topic to.
func (g *Gate) reply(req ce.Event, to string, status int, body []byte, now time.Time) (kafka.Message, bool) {
	m, err := replyMessage(req, to, status, body, now)
	if err != nil {
		g.log.Error("encoding a reply", "type", req.Type, "err", err)
		return kafka.Message{}, false
	}
	return m, true
}

// replyMessage is the wire form of the reply to req on topic to (frozen in
// schemas/testdata/ce_kafka_*_reply.json): the CloudEvent of ce.NewReply
// in the request's mode (binary when unknown), keyed by the request's
// partitionkey or else its correlation id, and the HTTP status in the
// header agentgate-status after the binding's headers.
func replyMessage(req ce.Event, to string, status int, body []byte, now time.Time) (kafka.Message, error) {
	if req.Mode == 0 {
		req.Mode = ce.ModeBinary
	}
	if len(req.Type) > ce.MaxRequestTypeBytes {
		req.Type = req.Type[:ce.MaxRequestTypeBytes]
	}
	m, err := cekafka.Encode(ce.NewReply(req, body, now))
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encoding the reply: %w", err)
	}
	m.Topic = to
	if len(m.Key) == 0 { // keyed by partitionkey (the agent) when it has one
		m.Key = []byte(req.CorrelationID())
	}
	m.Headers = append(m.Headers, kafka.Header{Key: HeaderStatus, Value: []byte(strconv.Itoa(status))})
	m.Partition = -1 // by key, over the reply topic's partitions (complete)
	return m, nil
}

// DecisionType is the CloudEvent type of a message on the decisions topic
// (its data is the reply body of domain.Reply; its id "P-SEQ" is unique per
// recorded event, so a consumer drops repeats by id).
const DecisionType = kafkaout.DecisionType

// decision encodes a recorded event for the decisions topic.
func (g *Gate) decision(p int32, ev *domain.Event, now time.Time) (kafka.Message, bool) {
	if ev.Type == domain.EvCommandRejected {
		return kafka.Message{}, false
	}
	_, body := domain.Reply(ev)
	data, err := json.Marshal(body)
	if err != nil {
		return kafka.Message{}, false
	}
	ext := map[string]string{}
	if ev.Command != nil {
		ext[ce.ExtCorrelationID] = ev.Command.Request.ID
	}
	if ev.AgentID != "" {
		ext[ce.ExtPartitionKey] = ev.AgentID
	}
	m, err := cekafka.Encode(ce.Event{
		SpecVersion: ce.SpecVersion, Type: DecisionType, Source: ce.ReplySource,
		ID: fmt.Sprintf("%d-%d", p, ev.Seq), Subject: ev.AgentID, Time: ev.Time.UTC(),
		DataContentType: ce.ContentTypeJSON, Data: data, Extensions: ext, Mode: ce.ModeBinary,
	})
	if err != nil {
		g.log.Error("encoding a decision", "seq", ev.Seq, "err", err)
		return kafka.Message{}, false
	}
	m.Topic, m.Partition = g.cfg.Topics.Decisions, int(p)
	m.Headers = append(m.Headers, kafka.Header{Key: kafkaout.HeaderEventType, Value: []byte(ev.Type)})
	return m, true
}

// inputError reports whether code refuses the input itself (QWED protocol v1.0
// §8: malformed, missing member, syntax, too long, unsupported type), the
// refusals that go to the dead-letter topic.
func inputError(code domain.Code) bool {
	switch code {
	case domain.CodeInvalidRequest, domain.CodeMissingField, domain.CodeInvalidSyntax, domain.CodeTooLong, domain.CodeUnsupportedType:
		return true
	}
	return false
}
