package kafkagate

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/diskspace"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// HTTPGate is the Gate of the HTTP API (httpapi.Gate) of an instance in
// Kafka mode: Submit sends
// the command, signed, to its agent's partition and waits for the reply
// on the client's long-lived reply reader.
type HTTPGate struct {
	c          *kafkaout.Requester
	macKey     []byte
	partitions int
	requests   string
	source     string
	reads      *ReadModel
}

// NewHTTPGate returns the gate adapter over c (whose reply topic the
// partitions answer to). reads, if set, routes approval resolutions to the
// partition of the approval's agent.
func NewHTTPGate(c *kafkaout.Requester, adminKeyHash string, topics Topics, nodeID string, reads *ReadModel) *HTTPGate {
	topics = topics.withDefaults()
	return &HTTPGate{c: c, macKey: MACKey(adminKeyHash), partitions: c.Partitions(), requests: topics.Requests,
		source: "agentgate/http/" + nodeID, reads: reads}
}

// Submit sends cmd and returns its recorded event once the instance's read
// model has applied it (read your writes: ReadModel.WaitApplied), so that
// what the answer tells the client — an API key, an agent, an approval — is
// readable through this instance when the answer arrives. A principal-wide
// command is decided on partition 0 (marked domain.Command.Global) and
// answered once every other partition has recorded its copy (submitGlobal).
// A resolution goes to the partition of its
// approval (approvalKey). An agent's prepare or execute is authenticated
// against the read model and decided on its consumer's home partition
// (submitAgentFirst). It returns handlers.ErrUnavailable
// (wrapped) when the partition refused, and the context's error when no
// reply came, or the read model did not apply it, in time (the API answers
// 504; the decision stands, and a retry with the same request id gets it).
func (h *HTTPGate) Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	if cmd.Type == domain.CmdA2AMessage && cmd.A2A != nil {
		if n := recordedLen(cmd.A2A.Payload); n > MaxA2APayloadBytes {
			return nil, fmt.Errorf("%w: the payload takes %d bytes in its event, over the %d an events record holds for it",
				streams.ErrTooLarge, n, MaxA2APayloadBytes)
		}
	}
	if broadcast(cmd.Type) && h.partitions > 1 {
		return h.submitGlobal(ctx, cmd)
	}
	if agentFirst(cmd.Type) && cmd.Authenticated == nil && h.partitions > 1 {
		return h.submitAgentFirst(ctx, cmd)
	}
	key := RouteKey(cmd)
	if key == "" && cmd.Type == domain.CmdResolveApproval && cmd.Resolve != nil {
		key = h.approvalKey(ctx, cmd.Resolve.ApprovalID)
	}
	if key == "" {
		key = cmd.Request.ID
	}
	p := PartitionFor(key, h.partitions)
	ev, err := h.send(ctx, cmd, p)
	if err != nil {
		return nil, err
	}
	if err := h.readable(ctx, p, ev.Seq); err != nil {
		return nil, err
	}
	return ev, nil
}

// submitGlobal has a principal-wide command decided on partition 0, in its
// offset order (so of two concurrent changes the second sees the first),
// and returns its event once the read model holds it and every other
// partition's copy of it (which partition 0's barriers make prompt).
func (h *HTTPGate) submitGlobal(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	g := *cmd
	g.Global = true
	ev, err := h.send(ctx, &g, domain.GlobalPartition)
	if err != nil {
		return nil, err
	}
	if err := h.readable(ctx, domain.GlobalPartition, ev.Seq); err != nil {
		return nil, err
	}
	if _, ok := domain.CopyOf(ev); !ok {
		// A refusal, or a change recorded before changes were copied
		// (every partition decided it): nothing to copy.
		return ev, nil
	}
	if h.reads == nil {
		return ev, nil
	}
	// The partitions copy at once: wait for them together.
	errs := make(chan error, h.partitions)
	for p := range h.partitions {
		if int32(p) == domain.GlobalPartition {
			continue
		}
		go func() { errs <- h.reads.WaitCopied(ctx, int32(p), ev.Seq) }()
	}
	var first error
	for range h.partitions - 1 {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	return ev, nil
}

// readable waits until the read model has applied seq of partition p.
func (h *HTTPGate) readable(ctx context.Context, p int32, seq uint64) error {
	if h.reads == nil {
		return nil
	}
	return h.reads.WaitApplied(ctx, p, seq)
}

// approvalKey returns the key of the partition that holds an approval
// and decides its resolution: its consumer's home for an execute approval
// (the transaction it holds is there), its agent for any other. The
// approval is found in the read model, or, when the read model does not
// know it yet (it was recorded through another instance a moment ago),
// after the read model has caught up with every partition
// (ReadModel.CatchUp): any approval acknowledged before the call is then
// known. "" when there is none (the resolution is then refused, 404, by
// the partition of its request id).
func (h *HTTPGate) approvalKey(ctx context.Context, id string) string {
	if h.reads == nil {
		return ""
	}
	a, err := h.reads.Store().Approval(id)
	if errors.Is(err, projections.ErrNotFound) && h.reads.CatchUp(ctx) == nil {
		a, err = h.reads.Store().Approval(id)
	}
	if err != nil {
		return ""
	}
	if a.Kind == domain.ApprovalKindExecute {
		return domain.HomeKey(a.PrincipalID)
	}
	return a.AgentID
}

func (h *HTTPGate) send(ctx context.Context, cmd *domain.Command, p int32) (*domain.Event, error) {
	data, err := json.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("encoding command: %w", err)
	}
	corr := h.c.NewCorrelationID()
	msg, err := cekafka.Encode(ce.Event{
		SpecVersion: ce.SpecVersion, Type: string(cmd.Type), Source: h.source, ID: corr,
		Subject: cmd.AgentID, DataContentType: ContentTypeCommand, Data: data, Mode: ce.ModeBinary,
		Extensions: map[string]string{ce.ExtReplyTo: h.c.ReplyTopic(), ce.ExtCorrelationID: corr},
	})
	if err != nil {
		return nil, err
	}
	msg.Topic, msg.Partition = h.requests, int(p)
	msg.Headers = append(msg.Headers, kafka.Header{Key: HeaderMAC, Value: []byte(sign(h.macKey, data))})
	rep, err := h.c.Send(ctx, msg, corr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", handlers.ErrUnavailable, err)
	}
	if rep.Status == 503 && bytes.Contains(rep.Data, []byte(domain.CodeStorageFull)) {
		return nil, fmt.Errorf("%w: %w: partition %d answered %d %s", handlers.ErrUnavailable, streams.ErrNoSpace, p, rep.Status, rep.Data)
	}
	if rep.Status != 200 {
		return nil, fmt.Errorf("%w: partition %d answered %d %s", handlers.ErrUnavailable, p, rep.Status, rep.Data)
	}
	ev, err := eventjson.DecodeEvent(rep.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding the recorded event: %w", err)
	}
	return ev, nil
}

// MaxA2APayloadBytes bounds the recorded form of an AgentMessage's payload
// in the Kafka deployment: the payload is recorded in its event, one
// record of the events log (at most kafkalog.DefaultMaxRequestBytes), with
// the message's other members and the verdict with its attestation (each
// bounded below a2a.MaxEnvelopeBytes). serve bounds POST /a2a/intercept
// by it in Kafka mode (httpapi.Config.A2AMaxPayloadBytes), and Submit
// refuses (streams.ErrTooLarge) a payload whose recorded form, escapes
// included, is longer.
const MaxA2APayloadBytes = kafkalog.DefaultMaxRequestBytes - kafkalog.RecordOverheadBytes - 2*a2a.MaxEnvelopeBytes

// recordedLen is the length of payload as the event codec records it: as
// encoding/json writes a JSON value, each <, > and & as a six-byte \u
// escape and U+2028 and U+2029 (three bytes) as one too. A payload of
// such characters grows up to sixfold in its event.
func recordedLen(payload []byte) int {
	n := len(payload)
	for i, c := range payload {
		switch {
		case c == '<' || c == '>' || c == '&':
			n += 5
		case c == 0xE2 && i+2 < len(payload) && payload[i+1] == 0x80 && (payload[i+2] == 0xA8 || payload[i+2] == 0xA9):
			n += 3
		}
	}
	return n
}

// ReadModel is the read side of an instance in Kafka mode: one projection
// store folded from every events partition (each read through
// streams/kafkalog, so only the chain is applied). Each batch it applies
// records, atomically with it, the position of the last event of the
// partition it came from (projections.Store.ApplyAt), so a restart
// opens each partition there (kafkalog.Options.From) and reads only what
// came since. It follows the partitions on its
// own, every interval, and at once when a caller waits on it: WaitApplied
// makes this instance's writes readable before they are answered
// (HTTPGate), CatchUp makes every write acknowledged anywhere before the
// call readable (for a lookup that found nothing).
type ReadModel struct {
	store *projections.Store
	st    *domain.State
	mu    sync.Mutex
	log   *slog.Logger
	// failed is set (under mu) when the store refused a batch.
	failed bool
	quiet  diskspace.LogLimiter

	// pos is the position of the last event applied of each partition,
	// as the store's checkpoint records it (under mu).
	pos map[int32]projections.Position
	// logs are the events partitions, opened by OpenReadModel at pos,
	// each closed by its follower (or by Close when Follow never ran).
	logs []*kafkalog.Log

	pmu        sync.Mutex
	parts      map[int32]*progress
	partitions int
	// awaits keeps the followers of awaited transactions reading
	// (awaittx.go).
	awaits txAwaits
}

// OpenPartitionFrom opens events partition p lazily (kafkalog.Options.Lazy)
// at from (kafkalog.Options.From; the zero Position for its start).
type OpenPartitionFrom func(ctx context.Context, p int32, from kafkalog.Position) (*kafkalog.Log, error)

// CatchUpTimeout bounds CatchUp: a lookup that found nothing answers so
// at the latest this long after it asked (when a partition cannot be
// read, say).
const CatchUpTimeout = 2 * time.Second

// progress is how far the read model has read one events partition.
type progress struct {
	mu      sync.Mutex
	applied uint64 // the last seq applied to the store
	// started counts the passes begun; finished is the last pass that
	// read the partition to its end as listed after that pass began.
	started, finished uint64
	changed           chan struct{} // closed (and replaced) when applied or finished moves
	kick              chan struct{} // wakes the follower (capacity 1)
}

// OpenReadModel opens the read model in dir over the events partitions
// 0..partitions-1: the store as of its checkpoint and each partition at
// the position the checkpoint records for it. A store without positions
// (new, or written by a version that rebuilt it at every start) is
// removed first, and so is one whose position a partition does not hold
// (kafkalog.ErrNotAtPosition: the topic was recreated, the directory
// belongs to another cluster): the read model is then folded from the
// start of every partition. Opening a partition is retried (a broker that
// is not up yet) until ctx ends.
func OpenReadModel(ctx context.Context, dir string, logger *slog.Logger, partitions int, open OpenPartitionFrom) (*ReadModel, error) {
	m := &ReadModel{log: logger, parts: map[int32]*progress{}, partitions: partitions}
	if err := m.openStore(dir, false); err != nil {
		return nil, err
	}
	for {
		err := m.openLogs(ctx, open)
		if !errors.Is(err, kafkalog.ErrNotAtPosition) {
			if err != nil {
				_ = m.store.Close()
				return nil, err
			}
			for p, pos := range m.pos {
				m.part(p).applied = pos.Seq
			}
			m.store.SetAwaitHook(m.awaitWait, m.awaitDone)
			return m, nil
		}
		logger.Warn("the read model's checkpoint is not on the events partitions: folding them from the start", "dir", dir, "err", err)
		if err := m.store.Close(); err != nil {
			return nil, fmt.Errorf("closing the read model: %w", err)
		}
		if err := m.openStore(dir, true); err != nil {
			return nil, err
		}
	}
}

// openStore opens the store in dir with its state and positions; fresh,
// or a store without positions, starts from an empty directory.
func (m *ReadModel) openStore(dir string, fresh bool) error {
	// No snapshots: time travel in Kafka mode folds the events partition
	// (PartitionHistory), it reads none.
	opts := projections.Options{Logger: m.log, NoSnapshots: true, NoticeHome: m.noticeHome}
	if !fresh {
		s, err := projections.OpenWith(dir, opts)
		if err != nil {
			return err
		}
		ps, err := s.Positions()
		if err == nil && len(ps) > 0 {
			st, err := s.LoadState()
			if err != nil {
				_ = s.Close()
				return fmt.Errorf("loading the read model's state: %w", err)
			}
			m.store, m.st, m.pos = s, st, map[int32]projections.Position{}
			for _, p := range ps {
				m.pos[p.Partition] = p
			}
			return nil
		}
		if err := s.Close(); err != nil {
			return fmt.Errorf("closing the read model: %w", err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing read model: %w", err)
	}
	s, err := projections.OpenWith(dir, opts)
	if err != nil {
		return err
	}
	m.store, m.st, m.pos = s, domain.NewState(), map[int32]projections.Position{}
	return nil
}

// openLogs opens every events partition at its position; on an error it
// closes those it opened.
func (m *ReadModel) openLogs(ctx context.Context, open OpenPartitionFrom) error {
	logs := make([]*kafkalog.Log, m.partitions)
	fail := func(err error) error {
		for _, l := range logs {
			if l != nil {
				_ = l.Close()
			}
		}
		return err
	}
	for p := range logs {
		pos := m.pos[int32(p)]
		for logs[p] == nil {
			l, err := open(ctx, int32(p), kafkalog.Position{Seq: pos.Seq, Hash: pos.Hash, Offset: pos.Offset})
			switch {
			case err == nil:
				logs[p] = l
			case errors.Is(err, kafkalog.ErrNotAtPosition):
				return fail(fmt.Errorf("events partition %d at seq %d: %w", p, pos.Seq, err))
			case ctx.Err() != nil:
				return fail(fmt.Errorf("opening events partition %d for the read model: %w", p, ctx.Err()))
			default:
				m.log.Warn("opening events partition for the read model", "partition", p, "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}
	m.logs = logs
	return nil
}

// Store returns the projections the HTTP reads are served from.
func (m *ReadModel) Store() *projections.Store { return m.store }

// Close closes the store (after Follow has returned) and the partitions
// Follow did not take.
func (m *ReadModel) Close() error {
	m.pmu.Lock()
	logs := m.logs
	m.logs = nil
	m.pmu.Unlock()
	for _, l := range logs {
		_ = l.Close()
	}
	return m.store.Close()
}

// part returns the progress of partition p.
func (m *ReadModel) part(p int32) *progress {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	pr := m.parts[p]
	if pr == nil {
		pr = &progress{changed: make(chan struct{}), kick: make(chan struct{}, 1)}
		m.parts[p] = pr
	}
	return pr
}

// poke wakes the follower of the partition if it is waiting.
func (pr *progress) poke() {
	select {
	case pr.kick <- struct{}{}:
	default:
	}
}

// moved wakes the waiters; the caller holds pr.mu.
func (pr *progress) moved() {
	close(pr.changed)
	pr.changed = make(chan struct{})
}

// WaitApplied returns once the store holds event seq of events partition
// p (at once when it does already), or ctx's error. It wakes the
// partition's follower rather than waiting for its next poll.
func (m *ReadModel) WaitApplied(ctx context.Context, p int32, seq uint64) error {
	pr := m.part(p)
	for {
		pr.mu.Lock()
		applied, changed := pr.applied, pr.changed
		pr.mu.Unlock()
		if applied >= seq {
			return nil
		}
		pr.poke()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the read model to apply event %d of partition %d (at %d): %w", seq, p, applied, ctx.Err())
		}
	}
}

// WaitCopied returns once the store holds a copy by events partition p of
// partition 0's principal-wide events up to seq (at once when it does
// already), or ctx's error. It wakes the partition's follower rather than
// waiting for its next poll, at once and then again after a backoff
// doubling from copyRepollMin to copyRepollMax: the copy is written by
// another process (the partition's worker), so a pass that ends without
// it does not mean the next one will find it, and waking the follower
// after each pass would read the partition back to back (a busy loop on
// the broker) for as long as the copy is late.
func (m *ReadModel) WaitCopied(ctx context.Context, p int32, seq uint64) error {
	pr := m.part(p)
	backoff := copyRepollMin
	var repoll *time.Timer
	defer func() {
		if repoll != nil {
			repoll.Stop()
		}
	}()
	poke := true
	for {
		pr.mu.Lock()
		changed := pr.changed
		pr.mu.Unlock()
		m.mu.Lock()
		copied := m.st.Copies[p].Seq
		m.mu.Unlock()
		if copied >= seq {
			return nil
		}
		if poke {
			pr.poke()
			poke = false
			if repoll == nil {
				repoll = time.NewTimer(backoff)
			} else {
				repoll.Reset(backoff)
			}
			backoff = min(2*backoff, copyRepollMax)
		}
		select {
		case <-changed:
		case <-repoll.C:
			poke = true
		case <-ctx.Done():
			return fmt.Errorf("waiting for partition %d to copy event %d of partition 0 (at %d): %w", p, seq, copied, ctx.Err())
		}
	}
}

// copyRepollMin and copyRepollMax bound the backoff between the passes
// WaitCopied asks of a partition's follower while its copy is late.
const (
	copyRepollMin = time.Millisecond
	copyRepollMax = 50 * time.Millisecond
)

// CatchUp returns once every events partition has been read to an end
// listed after the call began — so the store holds every event appended
// (and so acknowledged, by any instance) before it — or ctx's error, or
// an error after CatchUpTimeout. A lookup that found nothing calls it
// before answering so; concurrent calls share the followers' passes.
func (m *ReadModel) CatchUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, CatchUpTimeout)
	defer cancel()
	m.pmu.Lock()
	n := m.partitions
	m.pmu.Unlock()
	if n == 0 {
		return errors.New("the read model is not following the events partitions")
	}
	for p := range n {
		pr := m.part(int32(p))
		pr.mu.Lock()
		want := pr.started + 1 // a pass that begins after this call did
		pr.mu.Unlock()
		for {
			pr.mu.Lock()
			finished, changed := pr.finished, pr.changed
			pr.mu.Unlock()
			if finished >= want {
				break
			}
			pr.poke()
			select {
			case <-changed:
			case <-ctx.Done():
				return fmt.Errorf("catching up with events partition %d: %w", p, ctx.Err())
			}
		}
	}
	return nil
}

// Follow applies every events partition until ctx ends, polling each for
// new records every interval, and at once when WaitApplied or CatchUp
// waits on it; it closes the partitions when it returns. It runs once.
func (m *ReadModel) Follow(ctx context.Context, interval time.Duration) {
	m.pmu.Lock()
	logs := m.logs
	m.logs = nil
	m.pmu.Unlock()
	var wg sync.WaitGroup
	for p, lg := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer lg.Close()
			m.follow(ctx, int32(p), lg, interval)
		}()
	}
	wg.Wait()
}

func (m *ReadModel) follow(ctx context.Context, p int32, lg *kafkalog.Log, interval time.Duration) {
	pr := m.part(p)
	wait := time.NewTimer(interval)
	defer wait.Stop()
	for ctx.Err() == nil {
		pr.mu.Lock()
		pr.started++
		pass := pr.started
		pr.mu.Unlock()
		var (
			batch []*domain.Event
			last  projections.Position
		)
		deliver := func(r streams.Record, at kafkalog.Position) error {
			// The event codec, as recovery uses: a new instance folds
			// every partition.
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return fmt.Errorf("%w: decoding event %d: %w", errUnreadable, r.Seq, err)
			}
			batch = append(batch, positionOnly(ev))
			last = projections.Position{Partition: p, Seq: at.Seq, Hash: at.Hash, Offset: at.Offset}
			if len(batch) == 1024 {
				m.apply(ctx, pr, batch, last)
				batch = batch[:0]
			}
			return nil
		}
		// Each pass lists the partition's end (every record appended
		// before the pass began is below it) and reads what came since the
		// last pass up to it, in one fetch.
		err := lg.SyncReadAt(ctx, deliver)
		m.apply(ctx, pr, batch, last)
		switch {
		case errors.Is(err, errUnreadable):
			// The log moved past an event the store does not hold: the
			// read model can no longer follow it (as when the store
			// refuses a batch, in apply).
			m.log.Error("applying the read model", "partition", p, "err", err)
			m.mu.Lock()
			m.failed = true
			m.mu.Unlock()
			return
		case err != nil:
			if ctx.Err() == nil && !errors.Is(err, streams.ErrClosed) {
				m.log.Warn("reading events partition", "partition", p, "err", err)
			}
		default:
			pr.mu.Lock()
			pr.finished = pass
			pr.moved()
			pr.mu.Unlock()
		}
		wait.Reset(interval)
		select {
		case <-ctx.Done():
		case <-wait.C:
		case <-pr.kick:
		}
	}
}

// positionOnly returns ev, or for a copy of partition 0's principal-wide
// events the copy without its changes: the read model folds partition 0's
// events themselves, and folding a partition's copy after them would undo
// a later change (a key revoked on partition 0, then issued again by
// partition 1's older copy). What it keeps is how far the partition
// copied (domain.State.Copies, WaitCopied).
func positionOnly(ev *domain.Event) *domain.Event {
	if ev.Type != domain.EvPrincipalStateCopied || ev.Command == nil || ev.Command.Copy == nil {
		return ev
	}
	e, c, cp := *ev, *ev.Command, *ev.Command.Copy
	cp.Changes = nil
	c.Copy = &cp
	e.Command = &c
	return &e
}

// errUnreadable marks an event of the log the read model cannot decode.
var errUnreadable = errors.New("an event of the log is unreadable")

// apply folds a batch of partition pr's events, the last at position
// last, into the store with the position of every partition, and once it
// holds them, moves pr's applied seq.
//
// On a full disk it waits for space (projecting nothing, while reads go
// on): the batch is folded into m.st already, and a store that refused it
// for lack of space wrote nothing of it, so the same fold is applied once
// space returns, and no event is skipped.
func (m *ReadModel) apply(ctx context.Context, pr *progress, batch []*domain.Event, last projections.Position) {
	if len(batch) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failed {
		return
	}
	var f projections.Fold
	f.Grow(len(batch))
	for _, ev := range batch {
		f.Add(m.st, ev)
	}
	m.pos[last.Partition] = last
	ps := make([]projections.Position, 0, len(m.pos))
	for _, p := range m.pos {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b projections.Position) int { return cmp.Compare(a.Partition, b.Partition) })
	err := m.store.ApplyAt(m.st, &f, ps)
	for errors.Is(err, streams.ErrNoSpace) {
		m.quiet.Log(m.log, slog.LevelError, "full", "the disk is full: the read model waits for space", "err", err)
		select {
		case <-ctx.Done():
			m.failed = true // stopping: the batch is not stored
			return
		case <-time.After(readModelRetry):
		}
		err = m.store.ApplyAt(m.st, &f, ps)
	}
	if err != nil {
		// The events are folded in m.st but not stored: the store no
		// longer follows the log. It stays as it is (a restart rebuilds
		// it), and every write waiting for it times out (504) rather than
		// being answered as readable when it is not.
		m.log.Error("applying the read model", "err", err)
		m.failed = true
		return
	}
	pr.mu.Lock()
	pr.applied = batch[len(batch)-1].Seq
	pr.moved()
	pr.mu.Unlock()
}

// readModelRetry is how often the read model retries a batch refused for
// lack of space.
const readModelRetry = time.Second

// PartitionHistory is the History of the HTTP API in Kafka mode
// (httpapi.Config.History): an agent's events are all in the events
// partition its ID keys (PartitionFor), which open opens read only for one
// read (streams/kafkalog reads it to its head and checks the chain); the
// caller closes it. No snapshot store: an instance need not own the
// partition, so time travel folds from the partition's first event.
func PartitionHistory(partitions int, open func(context.Context, int32) (streams.Log, error)) func(context.Context, string) (streams.Log, int32, error) {
	return func(ctx context.Context, agentID string) (streams.Log, int32, error) {
		p := PartitionFor(agentID, partitions)
		lg, err := open(ctx, p)
		if err != nil {
			return nil, 0, fmt.Errorf("opening events partition %d: %w", p, err)
		}
		return lg, p, nil
	}
}
