package kafkagate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/diskspace"
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
// readable through this instance when the answer arrives. Principal-wide
// commands go to every partition (the answer is partition 0's) and wait for
// every partition's event. A resolution goes to the partition of its
// approval's agent (approvalPartition). It returns handlers.ErrUnavailable
// (wrapped) when the partition refused, and the context's error when no
// reply came, or the read model did not apply it, in time (the API answers
// 504; the decision stands, and a retry with the same request id gets it).
func (h *HTTPGate) Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	if broadcast(cmd.Type) {
		var first *domain.Event
		seqs := make([]uint64, h.partitions)
		for p := range h.partitions {
			ev, err := h.send(ctx, cmd, int32(p))
			if err != nil {
				return nil, err
			}
			if p == 0 {
				first = ev
			}
			seqs[p] = ev.Seq
		}
		for p, seq := range seqs {
			if err := h.readable(ctx, int32(p), seq); err != nil {
				return nil, err
			}
		}
		return first, nil
	}
	key := RouteKey(cmd)
	if key == "" && cmd.Type == domain.CmdResolveApproval && cmd.Resolve != nil {
		key = h.approvalAgent(ctx, cmd.Resolve.ApprovalID)
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

// readable waits until the read model has applied seq of partition p.
func (h *HTTPGate) readable(ctx context.Context, p int32, seq uint64) error {
	if h.reads == nil {
		return nil
	}
	return h.reads.WaitApplied(ctx, p, seq)
}

// approvalAgent returns the agent of an approval, whose partition decides
// its resolution: from the read model, or, when the read model does not
// know the approval yet (it was recorded through another instance a moment
// ago), after the read model has caught up with every partition
// (ReadModel.CatchUp): any approval acknowledged before the call is then
// known. "" when there is none (the resolution is then refused, 404, by
// the partition of its request id).
func (h *HTTPGate) approvalAgent(ctx context.Context, id string) string {
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

// ReadModel is the read side of an instance in Kafka mode: one projection
// store folded from every events partition (each read through
// streams/kafkalog, so only the chain is applied), rebuilt from the start
// of the log when the instance starts. It follows the partitions on its
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

	pmu        sync.Mutex
	parts      map[int32]*progress
	partitions int // set by Follow
}

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

// OpenReadModel opens a fresh read model in dir (its old contents are
// removed: the log is the truth).
func OpenReadModel(dir string, logger *slog.Logger) (*ReadModel, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clearing read model: %w", err)
	}
	// No snapshots: time travel in Kafka mode folds the events partition
	// (PartitionHistory), it reads none.
	s, err := projections.OpenWith(dir, projections.Options{Logger: logger, NoSnapshots: true})
	if err != nil {
		return nil, err
	}
	return &ReadModel{store: s, st: domain.NewState(), log: logger, parts: map[int32]*progress{}}, nil
}

// Store returns the projections the HTTP reads are served from.
func (m *ReadModel) Store() *projections.Store { return m.store }

// Close closes the store (after Follow has returned).
func (m *ReadModel) Close() error { return m.store.Close() }

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

// Follow applies every events partition opened by open until ctx ends,
// polling each for new records every interval, and at once when
// WaitApplied or CatchUp waits on it.
func (m *ReadModel) Follow(ctx context.Context, partitions int, open func(context.Context, int32) (streams.Log, error), interval time.Duration) {
	m.pmu.Lock()
	m.partitions = partitions
	m.pmu.Unlock()
	var wg sync.WaitGroup
	for p := range partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.follow(ctx, int32(p), open, interval)
		}()
	}
	wg.Wait()
}

func (m *ReadModel) follow(ctx context.Context, p int32, open func(context.Context, int32) (streams.Log, error), interval time.Duration) {
	pr := m.part(p)
	var lg streams.Log
	for lg == nil {
		l, err := open(ctx, p)
		if err == nil {
			lg = l
		} else {
			// l may be a typed nil (a *kafkalog.Log in the interface):
			// never keep it.
			if ctx.Err() != nil {
				return
			}
			m.log.Warn("opening events partition for the read model", "partition", p, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
	defer lg.Close()
	wait := time.NewTimer(interval)
	defer wait.Stop()
	var next uint64 = 1
	for ctx.Err() == nil {
		pr.mu.Lock()
		pr.started++
		pass := pr.started
		pr.mu.Unlock()
		var batch []*domain.Event
		deliver := func(r streams.Record) error {
			if r.Seq < next {
				return nil
			}
			// The event codec, as recovery uses: a new instance folds
			// every partition.
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return fmt.Errorf("decoding event %d: %w", r.Seq, err)
			}
			batch = append(batch, ev)
			next = r.Seq + 1
			if len(batch) == 1024 {
				m.apply(ctx, pr, batch)
				batch = batch[:0]
			}
			return nil
		}
		// Each pass lists the partition's end (every record appended
		// before the pass began is below it) and reads to it: in one
		// fetch when everything up to the log's head has been read
		// (SyncRead), else by Sync and Read.
		var err error
		if sr, isSR := lg.(syncReader); isSR && next == lg.Head().Seq+1 {
			err = sr.SyncRead(ctx, deliver)
		} else {
			if s, isSyncer := lg.(interface{ Sync(context.Context) error }); isSyncer {
				err = s.Sync(ctx)
			}
			if err == nil {
				err = lg.Read(ctx, next, deliver)
			}
		}
		m.apply(ctx, pr, batch)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, streams.ErrClosed) {
				m.log.Warn("reading events partition", "partition", p, "err", err)
			}
		} else {
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

// syncReader is a log that reads what came since its head in one pass
// (streams/kafkalog.Log.SyncRead).
type syncReader interface {
	SyncRead(ctx context.Context, fn func(streams.Record) error) error
}

// apply folds a batch of partition pr's events into the store and, once
// it holds them, moves pr's applied seq.
//
// On a full disk it waits for space (projecting nothing, while reads go
// on): the batch is folded into m.st already, and a store that refused it
// for lack of space wrote nothing of it, so the same fold is applied once
// space returns, and no event is skipped.
func (m *ReadModel) apply(ctx context.Context, pr *progress, batch []*domain.Event) {
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
	err := m.store.Apply(m.st, &f, projections.Checkpoint{})
	for errors.Is(err, streams.ErrNoSpace) {
		m.quiet.Log(m.log, slog.LevelError, "full", "the disk is full: the read model waits for space", "err", err)
		select {
		case <-ctx.Done():
			m.failed = true // stopping: the batch is not stored
			return
		case <-time.After(readModelRetry):
		}
		err = m.store.Apply(m.st, &f, projections.Checkpoint{})
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
