package projections

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

// Agent snapshots for time travel (issue 5). At a log checkpoint the store
// keeps a copy of each agent that changed since its last snapshot, if that
// snapshot (or, before the first, its registration) is at least
// SnapshotEveryCheckpoints checkpoint intervals back, and farther for an
// agent holding many entries (SnapshotEntriesPerInterval): its whole
// domain.Agent (conversations and open actions included) and its pending
// approvals, as they stand right after the checkpoint event. A query at
// seq N starts from the agent's last snapshot at or before N (or its
// registration) and folds the log from there (timetravel.AgentStateAt),
// which reads at most about SnapshotEveryCheckpoints intervals of log.
// Snapshotting at every checkpoint instead would rewrite an agent with
// thousands of conversations (up to domain.MaxConversations) every 1,000
// events: the snapshots would outweigh the log.
//
// The interval is the one the checkpoint event itself states for the next
// checkpoint (LogCheckpoint.Next.Events), so the cadence is a function of
// the log and a rebuilt store equals the live one.
//
// Keys:
//
//	h + agent + seq(8) -> AgentSnapshot     the snapshot after checkpoint seq (binary, codec.go)
//	g + agent          -> seq(8)            the seq of the agent's registration
//	l + agent          -> seq(8)            the seq of the agent's last snapshot
//	d + agent          -> ""                changed since its last snapshot
//
// A snapshot is taken only when the checkpoint is the last event of the
// batch (the worker always appends it last; ApplyLog ends its batches at
// checkpoints), so its content is the state at the checkpoint whatever
// the caller's batching, and a rebuilt store equals the live one.
const (
	tSnapshot   = 'h'
	tRegistered = 'g'
	tLastSnap   = 'l'
	tDirty      = 'd'
)

// SnapshotEveryCheckpoints is how many checkpoint intervals an agent's
// snapshots are apart at the least.
const SnapshotEveryCheckpoints = 10

// SnapshotEntriesPerInterval sets how much farther apart a large agent's
// snapshots are: an agent holding E conversations and open actions is
// snapshotted at least max(SnapshotEveryCheckpoints, E /
// SnapshotEntriesPerInterval) checkpoint intervals apart. A snapshot
// rewrites the whole agent, so its cost is proportional to E; with every
// agent snapshotted every 10 intervals, sixty-four agents holding
// thousands of open actions each rewrote about 6 KB of JSON per log event,
// half a partition restore's CPU. At the default interval (1,000 events)
// this is about 16 log events per entry, and a time-travel query folds at
// most that many events per entry its snapshot holds.
const SnapshotEntriesPerInterval = 64

// AgentSnapshot is one agent's state right after the checkpoint at Seq.
type AgentSnapshot struct {
	Seq   uint64        `json:"seq"`
	Time  time.Time     `json:"time"`
	Agent *domain.Agent `json:"agent"`
	// Approvals are the agent's pending approvals, by ID.
	Approvals []*domain.Approval `json:"approvals"`
}

// snapshots is the store's set of agents changed since the last
// checkpoint (the d keys), in memory. Prepare updates it in log order; a
// discarded batch marks it stale, and the next Prepare (the worker
// rebuilds first, so nothing is in flight then) reloads it from the store.
type snapshots struct {
	mu     sync.Mutex
	loaded bool
	dirty  map[string]bool
	// base is, per agent, the seq of its last snapshot, or of its
	// registration before the first (absent: registered before snapshots
	// were kept).
	base map[string]uint64
}

func snapshotKey(agent string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(key(tSnapshot, agent), seq)
}

// markStale makes the next Prepare reload the changed agents.
func (s *Store) markSnapshotsStale() {
	s.snaps.mu.Lock()
	s.snaps.loaded = false
	s.snaps.mu.Unlock()
}

// eventAgents returns the agents whose state ev may change.
func eventAgents(ev *domain.Event) []string {
	var out []string
	if ev.AgentID != "" {
		out = append(out, ev.AgentID)
	}
	if r := ev.Resolved; r != nil && r.Approval.AgentID != "" {
		out = append(out, r.Approval.AgentID)
	}
	if x := ev.Expired; x != nil {
		for i := range x.Approvals {
			out = append(out, x.Approvals[i].Approval.AgentID)
		}
	}
	return out
}

// snapshot marks the agents the batch changed and, when the batch ends
// with a checkpoint, writes the snapshots of every changed agent.
func (w *batchWriter) snapshot(st *domain.State, events []*domain.Event) error {
	if w.s.noSnapshots {
		return w.registrations(events)
	}
	sn := &w.s.snaps
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if !sn.loaded {
		sn.dirty = map[string]bool{}
		if err := w.s.scan([]byte{tDirty}, func(k, _ []byte) error {
			a, _, ok := cutStr(k[1:])
			if !ok {
				return fmt.Errorf("malformed changed-agent key %q", k)
			}
			sn.dirty[a] = true
			return nil
		}); err != nil {
			return fmt.Errorf("loading the changed agents: %w", err)
		}
		sn.base = map[string]uint64{}
		for _, t := range []byte{tRegistered, tLastSnap} { // a snapshot comes after the registration
			if err := w.s.scan([]byte{t}, func(k, v []byte) error {
				a, _, ok := cutStr(k[1:])
				if !ok || len(v) != 8 {
					return fmt.Errorf("malformed snapshot index entry %q", k)
				}
				sn.base[a] = binary.BigEndian.Uint64(v)
				return nil
			}); err != nil {
				return fmt.Errorf("loading the snapshot index: %w", err)
			}
		}
		sn.loaded = true
	}
	if err := w.registrations(events); err != nil {
		return err
	}
	for _, ev := range events {
		if r := ev.Registered; r != nil && ev.Type == domain.EvAgentRegistered {
			sn.base[r.AgentID] = ev.Seq
		}
		for _, a := range eventAgents(ev) {
			if !sn.dirty[a] {
				sn.dirty[a] = true
				if err := w.b.Set(key(tDirty, a), nil, nil); err != nil {
					return err
				}
			}
		}
	}
	last := events[len(events)-1]
	if last.Type != domain.EvLogCheckpointed || len(sn.dirty) == 0 {
		return nil
	}
	pending := map[string][]*domain.Approval{}
	for _, ap := range st.Approvals {
		if ap.Status == domain.ApprovalPending && sn.dirty[ap.AgentID] {
			pending[ap.AgentID] = append(pending[ap.AgentID], ap)
		}
	}
	interval := uint64(1)
	if cp := last.Checkpoint; cp != nil && cp.Next.Events > 0 {
		interval = uint64(cp.Next.Events)
	}
	for _, id := range sortedKeys(sn.dirty) {
		a := st.Agents[id]
		if b, ok := sn.base[id]; a != nil && ok && last.Seq-b < snapshotGap(a, interval) {
			continue // stays changed: folded from its last snapshot until the next
		}
		if a != nil {
			aps := pending[id]
			slices.SortFunc(aps, func(x, y *domain.Approval) int { return strings.Compare(x.ID, y.ID) })
			if aps == nil {
				aps = []*domain.Approval{}
			}
			v, err := encodeSnapshot(nil, &AgentSnapshot{Seq: last.Seq, Time: last.Time, Agent: a, Approvals: aps})
			if err != nil {
				return err
			}
			if err := w.b.Set(snapshotKey(id, last.Seq), v, nil); err != nil {
				return fmt.Errorf("writing snapshot: %w", err)
			}
			if err := w.b.Set(key(tLastSnap, id), binary.BigEndian.AppendUint64(nil, last.Seq), nil); err != nil {
				return err
			}
			sn.base[id] = last.Seq
		}
		if err := w.b.Delete(key(tDirty, id), nil); err != nil {
			return err
		}
		delete(sn.dirty, id)
	}
	return nil
}

// registrations records the seq of each registration among events.
func (w *batchWriter) registrations(events []*domain.Event) error {
	for _, ev := range events {
		if r := ev.Registered; r != nil && ev.Type == domain.EvAgentRegistered {
			if err := w.b.Set(key(tRegistered, r.AgentID), binary.BigEndian.AppendUint64(nil, ev.Seq), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshotGap is how many log events an agent's snapshots are apart at
// the least, given the checkpoint interval (see
// SnapshotEntriesPerInterval). It depends only on the log and the state at
// the checkpoint, so a rebuilt store takes the same snapshots.
func snapshotGap(a *domain.Agent, interval uint64) uint64 {
	intervals := uint64(len(a.Conversations)+len(a.OpenActions)) / SnapshotEntriesPerInterval
	return max(intervals, SnapshotEveryCheckpoints) * interval
}

// RegisteredAt returns the seq of the agent's registration event
// (ErrNotFound for an agent registered before snapshots were kept, or
// never).
func (s *Store) RegisteredAt(agent string) (uint64, error) {
	defer s.hold()()
	b, closer, err := s.db.Get(key(tRegistered, agent))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("reading the registration index: %w", err)
	}
	defer closer.Close()
	if len(b) != 8 {
		return 0, errors.New("malformed registration index entry")
	}
	return binary.BigEndian.Uint64(b), nil
}

// SnapshotAt returns the agent's last snapshot taken at or before seq
// (ErrNotFound when there is none).
func (s *Store) SnapshotAt(agent string, seq uint64) (*AgentSnapshot, error) {
	defer s.hold()()
	lo := key(tSnapshot, agent)
	var hi []byte
	if seq < ^uint64(0) {
		hi = snapshotKey(agent, seq+1)
	} else {
		hi = prefixEnd(lo)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("reading snapshots: %w", err)
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return nil, fmt.Errorf("reading snapshots: %w", err)
		}
		return nil, ErrNotFound
	}
	snap, err := decodeSnapshot(it.Value())
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot of %s: %w", agent, err)
	}
	return snap, nil
}
