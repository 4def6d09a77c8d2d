package kafkagate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/eventjson"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// HTTPGate is the httpapi.Gate of an instance in Kafka mode: Submit sends
// the command, signed, to its agent's partition and waits for the reply
// on the client's long-lived reply reader.
type HTTPGate struct {
	c          *client.Client
	macKey     []byte
	partitions int
	requests   string
	source     string
	reads      *ReadModel
}

// NewHTTPGate returns the gate adapter over c (whose reply topic the
// partitions answer to). reads, if set, routes approval resolutions to the
// partition of the approval's agent.
func NewHTTPGate(c *client.Client, adminKeyHash string, topics Topics, nodeID string, reads *ReadModel) *HTTPGate {
	topics = topics.withDefaults()
	return &HTTPGate{c: c, macKey: MACKey(adminKeyHash), partitions: c.Partitions(), requests: topics.Requests,
		source: "agentgate/http/" + nodeID, reads: reads}
}

// Submit sends cmd and returns its recorded event. Principal-wide commands
// go to every partition (the answer is partition 0's). It returns
// handlers.ErrUnavailable (wrapped) when the partition refused, and the
// context's error when no reply came in time (the API answers 504).
func (h *HTTPGate) Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	if broadcast(cmd.Type) {
		var first *domain.Event
		for p := range h.partitions {
			ev, err := h.send(ctx, cmd, int32(p))
			if err != nil {
				return nil, err
			}
			if p == 0 {
				first = ev
			}
		}
		return first, nil
	}
	key := RouteKey(cmd)
	if key == "" && cmd.Type == domain.CmdResolveApproval && cmd.Resolve != nil && h.reads != nil {
		if a, err := h.reads.Store().Approval(cmd.Resolve.ApprovalID); err == nil {
			key = a.AgentID
		}
	}
	if key == "" {
		key = cmd.Request.ID
	}
	return h.send(ctx, cmd, PartitionFor(key, h.partitions))
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
	if rep.Status != 200 {
		return nil, fmt.Errorf("%w: partition %d answered %d %s", handlers.ErrUnavailable, p, rep.Status, rep.Data)
	}
	ev := new(domain.Event)
	if err := json.Unmarshal(rep.Data, ev); err != nil {
		return nil, fmt.Errorf("decoding the recorded event: %w", err)
	}
	return ev, nil
}

// ReadModel is the read side of an instance in Kafka mode: one projection
// store folded from every events partition (each read through
// streams/kafkalog, so only the chain is applied), rebuilt from the start
// of the log when the instance starts. It is eventually consistent: a
// decision is readable shortly after its reply.
type ReadModel struct {
	store *projections.Store
	st    *domain.State
	mu    sync.Mutex
	log   *slog.Logger
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
	return &ReadModel{store: s, st: domain.NewState(), log: logger}, nil
}

// Store returns the projections the HTTP reads are served from.
func (m *ReadModel) Store() *projections.Store { return m.store }

// Close closes the store (after Follow has returned).
func (m *ReadModel) Close() error { return m.store.Close() }

// Follow applies every events partition opened by open until ctx ends,
// polling each for new records every interval.
func (m *ReadModel) Follow(ctx context.Context, partitions int, open func(context.Context, int32) (streams.Log, error), interval time.Duration) {
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
	var next uint64 = 1
	for ctx.Err() == nil {
		if s, ok := lg.(interface{ Sync(context.Context) error }); ok {
			if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("syncing events partition", "partition", p, "err", err)
			}
		}
		var batch []*domain.Event
		err := lg.Read(ctx, next, func(r streams.Record) error {
			// The fast decoder, as recovery uses (pinned equal to
			// handlers.DecodeEvent): a new instance folds every partition.
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return fmt.Errorf("decoding event %d: %w", r.Seq, err)
			}
			batch = append(batch, ev)
			next = r.Seq + 1
			if len(batch) == 1024 {
				m.apply(batch)
				batch = batch[:0]
			}
			return nil
		})
		m.apply(batch)
		if err != nil && ctx.Err() == nil && !errors.Is(err, streams.ErrClosed) {
			m.log.Warn("reading events partition", "partition", p, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func (m *ReadModel) apply(batch []*domain.Event) {
	if len(batch) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var f projections.Fold
	f.Grow(len(batch))
	for _, ev := range batch {
		f.Add(m.st, ev)
	}
	if err := m.store.Apply(m.st, &f, projections.Checkpoint{}); err != nil {
		m.log.Error("applying the read model", "err", err)
	}
}

// PartitionHistory is httpapi.Config.History in Kafka mode: an agent's
// events are all in the events partition its ID keys (PartitionFor), which
// open opens read only for one read (streams/kafkalog reads it to its head
// and checks the chain). No snapshot store: an instance need not own the
// partition, so time travel folds from the partition's first event.
func PartitionHistory(partitions int, open func(context.Context, int32) (streams.Log, error)) func(context.Context, string) (*httpapi.AgentHistory, error) {
	return func(ctx context.Context, agentID string) (*httpapi.AgentHistory, error) {
		p := PartitionFor(agentID, partitions)
		lg, err := open(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("opening events partition %d: %w", p, err)
		}
		return &httpapi.AgentHistory{Log: lg, Partition: p, Release: func() { _ = lg.Close() }}, nil
	}
}
