package projections

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

// Apply writes the projections of the events of f and the checkpoint head
// in one atomic batch. The events must be durably in the log, in log
// order, and folded into st through f (Apply copies the entities they
// touched from st). Sync false is safe: after a crash the checkpoint is
// behind the log and the caller re-applies the tail (see Recover). Apply
// is Prepare then Commit.
func (s *Store) Apply(st *domain.State, f *Fold, head Checkpoint) error {
	p, err := s.Prepare(st, f)
	if err != nil {
		return err
	}
	return p.Commit(head)
}

// ApplyAt is Apply for a store that folds several partitions: instead of
// a checkpoint it records positions, the last event applied of each
// partition, in the same atomic batch (Positions reads them back).
func (s *Store) ApplyAt(st *domain.State, f *Fold, positions []Position) error {
	p, err := s.Prepare(st, f)
	if err != nil {
		return err
	}
	p.positions = positions
	return p.Commit(Checkpoint{})
}

// Prepared is a projection batch whose state-derived part is built: the
// entities the events touched, copied from the state they were folded
// into. Its Commit adds what derives from the store (activities, summaries,
// the request and action indexes) and commits.
type Prepared struct {
	w         *batchWriter
	events    []*domain.Event
	positions []Position // written by Commit when not nil (ApplyAt)
	done      bool
	committed bool
}

// Prepare builds the state-derived part of the projections of the events
// of f, which must be the last events folded into st, through f: it copies
// from st the entities they touched (and writes the open actions they
// opened, changed or closed), so st and f may change once Prepare returns.
// Prepare reads nothing from the store, so it may run while an earlier
// Prepared is being committed. Every Prepared must be committed (in log
// order) or discarded with Discard.
//
// Prepare refuses with streams.ErrNoSpace, preparing nothing, while the
// store's disk has less than Options.MinFreeBytes free (store.go,
// writable).
func (s *Store) Prepare(st *domain.State, f *Fold) (*Prepared, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	defer s.hold()()
	events := f.events
	// A plain batch: the few keys Commit reads back from its own batch
	// (the action index) are kept in actionIdx; indexing every key would
	// cost a skiplist insert per key.
	b := s.db.NewBatch()
	w := &batchWriter{s: s, b: b, summaries: map[string]*Summary{}, activities: map[string]*Activity{}, actionIdx: map[string]string{}}
	for _, ev := range events {
		w.touch(ev)
	}
	w.refs = f.refs
	w.retired = f.retired
	w.a2aEvicted = f.evicted
	w.exec = f.exec
	w.hooks.notices = f.notices
	if len(events) > 0 {
		w.first = events[0].Seq
	}
	if err := w.flushState(st); err != nil {
		b.Close()
		return nil, err
	}
	if len(events) > 0 {
		if err := w.snapshot(st, events); err != nil {
			b.Close()
			s.markSnapshotsStale()
			return nil, err
		}
	}
	return &Prepared{w: w, events: events}, nil
}

// Discard releases a Prepared that will not be committed.
func (p *Prepared) Discard() {
	if !p.done {
		p.done = true
		p.w.b.Close()
		if !p.committed {
			p.w.s.markSnapshotsStale()
		}
	}
}

// Commit completes the batch from the store as of every earlier commit
// (activities, summaries, evictions) and writes it with the checkpoint
// head, atomically. The events must be durably in the log and every
// earlier Prepared committed.
func (p *Prepared) Commit(head Checkpoint) error {
	if p.done {
		return errors.New("committing a discarded or committed projection batch")
	}
	defer p.Discard()
	w := p.w
	defer w.s.hold()()
	for _, ev := range p.events {
		if err := w.event(ev); err != nil {
			return fmt.Errorf("projecting event %d: %w", ev.Seq, err)
		}
	}
	if err := w.flushStore(head); err != nil {
		return err
	}
	if p.positions != nil {
		if err := w.setJSON(key(tMeta, "positions"), p.positions); err != nil {
			return err
		}
	}
	if err := w.b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("committing projections at seq %d: %w", head.Seq, err)
	}
	p.committed = true
	w.s.txWait.wake(w.txs.keys)
	w.s.evictMu.Lock()
	for _, m := range w.evictedTo {
		w.s.evictedTo[m.agent] = m.seq
	}
	w.s.evictMu.Unlock()
	return nil
}

// openRef names an open action the batch may have opened, changed or
// closed, and the seq of the event that opened it (its key).
type openRef struct {
	agent, id string
	seq       uint64
}

// evictMark records that an agent's open actions below seq are deleted.
type evictMark struct {
	agent string
	seq   uint64
}

// evictRef names an agent whose evicted open actions are deleted at
// commit: those older than its oldest open one, opened at seq oldest (all
// of them when none is open).
type evictRef struct {
	agent  string
	oldest uint64
	none   bool
}

type batchWriter struct {
	s          *Store
	b          *pebble.Batch
	agents     []string
	convs      [][2]string
	approvals  []string
	principals []string
	keys       []string
	keyIDs     []string
	opens      []openRef // the actions the batch decided
	refs       []openRef // the earlier open actions it referred to (Fold)
	first      uint64    // the seq of the batch's first event
	kbuf, vbuf []byte    // scratch for writeOpen
	openAgents []string  // agents whose open actions may have been evicted
	evicts     []evictRef
	evictedTo  []evictMark // recorded in the Store once the batch commits
	summaries  map[string]*Summary
	activities map[string]*Activity
	// activityKeys and summaryKeys are the maps' keys in the order they
	// were added: flushStore writes in that order (any order gives the
	// same batch contents; a fixed one, without sorting).
	activityKeys, summaryKeys []string
	// actionIdx holds the action index entries the batch wrote (action id
	// to activity key): the batch is not indexed, reads go to the store.
	actionIdx map[string]string
	// retired are the conversations the batch evicted (Fold.retired).
	retired []Retired
	// a2a holds the A2A verdict counters the batch changed (a2a.go).
	a2a a2aBatch
	// a2aEntries, a2aBuckets and a2aEvicted are the boundary entries and
	// token buckets the batch touched (a2astate.go).
	a2aEntries []a2aEntry
	a2aBuckets []domain.A2APair
	a2aEvicted []domain.A2APair
	// exec are the consumer policy engine's entities the batch touched
	// (execstate.go); txs the transactions it wrote (transactions.go).
	exec execTouched
	txs  txBatch
	// hooks holds the batch's webhook projections (webhooks.go).
	hooks webhookBatch
}

// touch records the entities ev touched, to be copied from the state.
func (w *batchWriter) touch(ev *domain.Event) {
	if ev.AgentID != "" {
		w.agents = append(w.agents, ev.AgentID)
	}
	if tx := ev.Transaction; tx != nil && tx.Status == domain.TxPendingApproval {
		// An execute pending approval opens an approval on the queue,
		// under the transaction's id (domain.ApprovalKindExecute).
		w.approvals = append(w.approvals, tx.ID)
	}
	switch {
	case ev.Decided != nil:
		d := ev.Decided
		if d.ConversationID != "" && d.StepConsumed {
			w.convs = append(w.convs, [2]string{ev.AgentID, d.ConversationID})
		}
		if d.ConversationEvicted != "" {
			// flushState deletes it unless a later event of the batch
			// brought it back.
			w.convs = append(w.convs, [2]string{ev.AgentID, d.ConversationEvicted})
		}
		if d.Approval != nil {
			w.approvals = append(w.approvals, d.Approval.ID)
		}
		// A denied action opens nothing and evicts nothing
		// (domain.Apply).
		if !d.Denied() {
			w.opens = append(w.opens, openRef{agent: ev.AgentID, id: d.ActionID, seq: ev.Seq})
			w.openAgents = append(w.openAgents, ev.AgentID)
		}
	case ev.Resolved != nil:
		w.touchResolved(ev.Resolved)
	case ev.Expired != nil:
		for i := range ev.Expired.Approvals {
			r := &ev.Expired.Approvals[i]
			w.agents = append(w.agents, r.Approval.AgentID)
			w.touchResolved(r)
		}
	case ev.Elevation != nil:
		if ev.Elevation.Approval != nil {
			w.approvals = append(w.approvals, ev.Elevation.Approval.ID)
		}
	case ev.ToolRegistry != nil:
		w.principals = append(w.principals, ev.ToolRegistry.PrincipalID)
	case ev.PrincipalPermissions != nil:
		w.principals = append(w.principals, ev.PrincipalPermissions.PrincipalID)
	case ev.KeyIssued != nil:
		w.keys = append(w.keys, ev.KeyIssued.KeyHash)
		w.keyIDs = append(w.keyIDs, ev.KeyIssued.KeyID)
		if ev.KeyIssued.ReplacedHash != "" {
			w.keys = append(w.keys, ev.KeyIssued.ReplacedHash)
			w.keyIDs = append(w.keyIDs, ev.KeyIssued.Replaces)
		}
	case ev.KeyRevoked != nil:
		w.keys = append(w.keys, ev.KeyRevoked.KeyHash)
		w.keyIDs = append(w.keyIDs, ev.KeyRevoked.KeyID)
	case ev.A2ABoundary != nil, ev.A2AVerdict != nil:
		w.touchA2A(ev)
	case ev.Command != nil && ev.Command.Copy != nil:
		// A copy of partition 0's principal-wide events touches what
		// each of them does.
		for i := range ev.Command.Copy.Changes {
			c := &ev.Command.Copy.Changes[i]
			w.touch(&domain.Event{Type: c.Type, ToolRegistry: c.ToolRegistry, KeyIssued: c.KeyIssued, KeyRevoked: c.KeyRevoked,
				A2ABoundary: c.A2ABoundary, PrincipalPermissions: c.PrincipalPermissions, Command: &domain.Command{Principal: c.Principal}})
		}
	}
}

func (w *batchWriter) touchResolved(r *domain.ApprovalResolved) {
	w.approvals = append(w.approvals, r.Approval.ID)
}

// event writes what ev changes in the store-derived projections.
func (w *batchWriter) event(ev *domain.Event) error {
	if ev.Command != nil && ev.Command.Request != (domain.RequestID{}) {
		// The request index makes a retried request find its event.
		k := requestKey(ev.Command.Request)
		w.s.requests.add(k)
		if err := w.b.Set(k, binary.BigEndian.AppendUint64(nil, ev.Seq), nil); err != nil {
			return err
		}
	}
	if err := w.txEvent(ev); err != nil {
		return err
	}
	if err := w.policyEvent(ev); err != nil {
		return err
	}
	if err := w.webhookEvent(ev); err != nil {
		return err
	}
	switch {
	case ev.Decided != nil:
		return w.newActivity(ev)
	case ev.Executed != nil:
		return w.executed(ev)
	case ev.Resolved != nil:
		return w.resolved(ev.Resolved)
	case ev.Expired != nil:
		for i := range ev.Expired.Approvals {
			if err := w.resolved(&ev.Expired.Approvals[i]); err != nil {
				return err
			}
		}
	case ev.Checkpoint != nil:
		return w.logCheckpoint(ev)
	case ev.A2AVerdict != nil:
		return w.a2aVerdict(ev.A2AVerdict)
	}
	return nil
}

func (w *batchWriter) newActivity(ev *domain.Event) error {
	if w.s.noActivity {
		return nil
	}
	d := ev.Decided
	// The action index finds the activity of an execution or a
	// resolution: a refused action has none (it is never open).
	k := string(activityKey(ev.AgentID, ev.Time, ev.Seq))
	if !d.Denied() {
		if err := w.b.Set(key(tActionIdx, d.ActionID), []byte(k), nil); err != nil {
			return err
		}
		w.actionIdx[d.ActionID] = k
	}
	a := &Activity{
		ActivityID: d.ActionID,
		AgentID:    ev.AgentID,
		Timestamp:  ev.Time,
		Seq:        ev.Seq,
		Decision:   d.Decision,
		Error:      d.Error,
		Verification: ActivityVerify{
			Status: d.Verification.Status, Engine: d.Verification.Engine, RiskLevel: d.Verification.RiskLevel,
		},
		ConversationID: d.ConversationID,
		StepNumber:     d.Step,
		Cost:           ActivityCost{USD: d.ReservedCost, Tokens: d.ReservedTokens},
	}
	if d.Attestation != "" {
		a.AttestationID = "att_" + d.ActionID
	}
	if d.Approval != nil {
		a.Approval = &ActivityApproval{ApprovalID: d.Approval.ID, Status: d.Approval.Status}
	}
	a.Action = ActivityAction{Type: d.ActionType, Tool: d.Tool}
	a.ActionType = d.ActionType
	if c := ev.Command; c != nil {
		switch {
		case c.Verify != nil:
			a.Action.Query, a.Action.Target, a.Action.Parameters = c.Verify.Action.Query, c.Verify.Action.Target, c.Verify.Action.Parameters
		case c.Tool != nil:
			a.Action.Parameters = c.Tool.ToolCall.Parameters
		}
	}
	w.addActivity(k, a)
	sum, err := w.summary(ev.AgentID, dayOf(ev.Time))
	if err != nil {
		return err
	}
	sum.Count(a.Decision, a.Cost)
	return nil
}

// addActivity adds a to the batch's activities under key k, new to them.
func (w *batchWriter) addActivity(k string, a *Activity) {
	w.activities[k] = a
	w.activityKeys = append(w.activityKeys, k)
}

// activityKeyOf returns the action index entry of an action, in this
// batch or the store ("" when it has none): its activity key.
func (w *batchWriter) activityKeyOf(actionID string) (string, error) {
	if k, ok := w.actionIdx[actionID]; ok {
		return k, nil
	}
	kb, closer, err := w.s.db.Get(key(tActionIdx, actionID))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the action index of %s: %w", actionID, err)
	}
	k := string(kb)
	closer.Close()
	return k, nil
}

// activity finds an action's activity entry, in this batch or the store.
func (w *batchWriter) activity(actionID string) (string, *Activity, error) {
	if w.s.noActivity {
		return "", nil, nil
	}
	k, err := w.activityKeyOf(actionID)
	if k == "" || err != nil {
		return "", nil, err
	}
	if a, ok := w.activities[k]; ok {
		return k, a, nil
	}
	v, closer, err := w.s.db.Get([]byte(k))
	if err != nil {
		return "", nil, fmt.Errorf("reading activity of %s: %w", actionID, err)
	}
	a := new(Activity)
	err = decodeActivity(v, a)
	closer.Close()
	if err != nil {
		return "", nil, fmt.Errorf("decoding activity of %s: %w", actionID, err)
	}
	w.addActivity(k, a)
	return k, a, nil
}

// recost moves an activity's cost in its day's summary.
func (w *batchWriter) recost(a *Activity, c ActivityCost) error {
	sum, err := w.summary(a.AgentID, dayOf(a.Timestamp))
	if err != nil {
		return err
	}
	sum.Recost(a.Cost, c)
	a.Cost = c
	return nil
}

func (w *batchWriter) executed(ev *domain.Event) error {
	x := ev.Executed
	_, a, err := w.activity(x.ActionID)
	if err != nil || a == nil {
		return err
	}
	a.Execution = &ActivityExecution{Success: x.Success, ResultHash: x.ResultHash, LoggedAt: ev.Time, SandboxViolation: x.SandboxViolation,
		OutputFindings: x.OutputFindings, PIIViolation: x.PIIViolation}
	if c := ev.Command; c != nil && c.Execution != nil {
		a.Execution.Sandboxed, a.Execution.Sandbox = c.Execution.Sandboxed, c.Execution.Sandbox
	}
	return w.recost(a, ActivityCost{USD: x.CostUSD, Tokens: x.Tokens, Actual: true})
}

func (w *batchWriter) resolved(r *domain.ApprovalResolved) error {
	if r.Approval.Kind == "trust_elevation" {
		return nil
	}
	_, a, err := w.activity(r.Approval.ID)
	if err != nil || a == nil {
		return err
	}
	a.Approval = &ActivityApproval{ApprovalID: r.Approval.ID, Status: r.Approval.Status, ResolvedAt: r.Approval.ResolvedAt}
	if r.Approval.Status != domain.ApprovalApproved {
		return w.recost(a, ActivityCost{})
	}
	return nil
}

func (w *batchWriter) summary(agent string, day int64) (*Summary, error) {
	k := string(summaryKey(agent, day))
	if s, ok := w.summaries[k]; ok {
		return s, nil
	}
	s := new(Summary)
	v, closer, err := w.s.db.Get([]byte(k))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("reading summary: %w", err)
	default:
		err = json.Unmarshal(v, s)
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("decoding summary: %w", err)
		}
	}
	w.summaries[k] = s
	w.summaryKeys = append(w.summaryKeys, k)
	return s, nil
}

func (w *batchWriter) setJSON(k []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %q: %w", k, err)
	}
	return w.b.Set(k, b, nil)
}

// flushState writes the touched entities as they stand in st.
func (w *batchWriter) flushState(st *domain.State) error {
	for _, id := range dedup(w.agents) {
		a := st.Agents[id]
		if a == nil {
			continue
		}
		// The agent record leaves out what has keys of its own:
		// conversations and open actions (OpenOrder is their key order).
		cp := *a
		cp.Conversations = nil
		cp.OpenOrder = nil
		if cp.OpenActions != nil {
			cp.OpenActions = map[string]*domain.OpenAction{}
		}
		v, err := encodeAgent(nil, &cp)
		if err != nil {
			return err
		}
		if err := w.b.Set(key(tAgent, id), v, nil); err != nil {
			return fmt.Errorf("writing agent: %w", err)
		}
	}
	if err := w.prepareOpens(st); err != nil {
		return err
	}
	// Conversations are written as they stand after the batch, once each
	// however many of its events touched them: one the batch evicted (and
	// did not bring back) is deleted.
	for _, c := range dedupPairs(w.convs) {
		k := key(tConv, c[0], c[1])
		a := st.Agents[c[0]]
		if a == nil || a.Conversations[c[1]] == nil {
			if err := w.b.Delete(k, nil); err != nil {
				return fmt.Errorf("deleting conversation: %w", err)
			}
			continue
		}
		if err := w.b.Set(k, encodeConversation(nil, a.Conversations[c[1]]), nil); err != nil {
			return fmt.Errorf("writing conversation: %w", err)
		}
	}
	// A conversation evicted from the state keeps its last committed step
	// here, so a step replayed in it later is still refused (Store.RetiredStep).
	for _, r := range w.retired {
		v := binary.BigEndian.AppendUint64(nil, uint64(r.LastStep))
		if err := w.b.Set(key(tRetired, r.Agent, r.Conversation), v, nil); err != nil {
			return fmt.Errorf("writing a retired conversation's step: %w", err)
		}
	}
	for _, id := range dedup(w.approvals) {
		ap := st.Approvals[id]
		if ap == nil {
			continue
		}
		if err := w.setJSON(key(tApproval, id), ap); err != nil {
			return err
		}
		if err := w.b.Set(key(tPrincipalAp, ap.PrincipalID, id), nil, nil); err != nil {
			return err
		}
	}
	for _, id := range dedup(w.principals) {
		if p := st.Principals[id]; p != nil {
			if err := w.setJSON(key(tPrincipal, id), p); err != nil {
				return err
			}
		}
	}
	// API keys and their IDs as they stand after the batch: a revoked
	// (or rotated-out) key is deleted.
	for _, h := range dedup(w.keys) {
		if p, ok := st.Keys[h]; ok {
			if err := w.b.Set(key(tKey, h), []byte(p), nil); err != nil {
				return err
			}
		} else if err := w.b.Delete(key(tKey, h), nil); err != nil {
			return fmt.Errorf("deleting a revoked key: %w", err)
		}
	}
	for _, id := range dedup(w.keyIDs) {
		if h, ok := st.KeyIDs[id]; ok {
			if err := w.b.Set(key(tKeyID, id), []byte(h), nil); err != nil {
				return err
			}
		} else if err := w.b.Delete(key(tKeyID, id), nil); err != nil {
			return fmt.Errorf("deleting a revoked key id: %w", err)
		}
	}
	if err := w.flushA2AState(st); err != nil {
		return err
	}
	if err := w.flushExec(st); err != nil {
		return err
	}
	return w.setJSON(key(tMeta, "gate"), gateMeta{Config: st.Config, LastTime: st.LastTime, Copies: st.Copies})
}

// flushStore deletes the evicted open actions (found in the store) and
// writes the activities, summaries and the checkpoint.
func (w *batchWriter) flushStore(head Checkpoint) error {
	for _, e := range w.evicts {
		if err := w.evict(e); err != nil {
			return err
		}
	}
	var buf []byte
	for _, k := range w.activityKeys {
		v, err := encodeActivity(buf[:0], w.activities[k])
		if err != nil {
			return err
		}
		// Set copies the value: the buffer is reused.
		if err := w.b.Set([]byte(k), v, nil); err != nil {
			return fmt.Errorf("writing activity: %w", err)
		}
		buf = v
	}
	for _, k := range w.summaryKeys {
		if err := w.setJSON([]byte(k), w.summaries[k]); err != nil {
			return err
		}
	}
	if err := w.flushA2A(); err != nil {
		return err
	}
	if err := w.flushTxs(); err != nil {
		return err
	}
	return w.setJSON(key(tMeta, "ckpt"), head)
}

// prepareOpens writes the open actions the batch touched as they stand in
// st after it: each under the key of the event that decided it, deleted
// when the batch closed it.
//
// An action the batch decided is written once, as it stands after the
// batch (later references to it in the batch add nothing), and not at all
// when the batch also closed it: no key of the batch's seqs is in the
// store yet.
func (w *batchWriter) prepareOpens(st *domain.State) error {
	for _, o := range w.opens {
		if err := w.writeOpen(st, o, false); err != nil {
			return err
		}
	}
	for _, o := range w.refs {
		if o.seq == 0 {
			return fmt.Errorf("open action %s of %s has no seq", o.id, o.agent)
		}
		if o.seq >= w.first {
			continue // decided by the batch: written above
		}
		if err := w.writeOpen(st, o, true); err != nil {
			return err
		}
	}
	// A decision evicts the oldest open actions when the agent holds
	// MaxOpenActions: commit deletes every stored one older than the
	// oldest still open.
	for _, agent := range dedup(w.openAgents) {
		a := st.Agents[agent]
		if a == nil {
			continue
		}
		e := evictRef{agent: agent, none: len(a.OpenOrder) == 0}
		if !e.none {
			oa := a.OpenActions[a.OpenOrder[0]]
			if oa == nil || oa.Seq == 0 {
				return fmt.Errorf("open action %s of %s has no seq", a.OpenOrder[0], agent)
			}
			e.oldest = oa.Seq
		}
		w.evicts = append(w.evicts, e)
	}
	return nil
}

// writeOpen writes the entry of o as it stands in st, or, when it is not
// open there (or open under another seq: decided again after it closed),
// deletes its key if del is set.
func (w *batchWriter) writeOpen(st *domain.State, o openRef, del bool) error {
	var oa *domain.OpenAction
	if a := st.Agents[o.agent]; a != nil {
		if oa = a.OpenActions[o.id]; oa != nil && oa.Seq != o.seq {
			oa = nil
		}
	}
	if oa == nil && !del {
		return nil
	}
	// Set and Delete copy the key and value: the buffers are reused.
	w.kbuf = appendOpenKey(w.kbuf[:0], o.agent, o.seq)
	if oa == nil {
		if err := w.b.Delete(w.kbuf, nil); err != nil {
			return fmt.Errorf("deleting open action: %w", err)
		}
		return nil
	}
	w.vbuf = encodeOpen(w.vbuf[:0], o.id, oa)
	if err := w.b.Set(w.kbuf, w.vbuf, nil); err != nil {
		return fmt.Errorf("writing open action: %w", err)
	}
	return nil
}

// evict deletes the agent's stored open actions older than its oldest open
// one: the evicted ones. Each is deleted by its key, scanning from where
// the last committed eviction stopped, so the scan never walks over the
// tombstones of earlier evictions.
func (w *batchWriter) evict(e evictRef) error {
	p := key(tOpen, e.agent)
	lo, end := p, prefixEnd(p)
	if !e.none {
		end = openKey(e.agent, e.oldest)
	}
	w.s.evictMu.Lock()
	from, known := w.s.evictedTo[e.agent]
	w.s.evictMu.Unlock()
	if known {
		if !e.none && from >= e.oldest {
			return nil
		}
		lo = openKey(e.agent, from)
	}
	// The store alone: every open action this batch writes is still open,
	// so not older than the oldest open one (prepareOpens).
	it, err := w.s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: end})
	if err != nil {
		return fmt.Errorf("reading open actions: %w", err)
	}
	var dead [][]byte
	for it.First(); it.Valid(); it.Next() {
		dead = append(dead, append([]byte(nil), it.Key()...))
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("reading open actions: %w", err)
	}
	for _, k := range dead {
		if err := w.b.Delete(k, nil); err != nil {
			return fmt.Errorf("deleting evicted open action: %w", err)
		}
	}
	if !e.none {
		w.evictedTo = append(w.evictedTo, evictMark{agent: e.agent, seq: e.oldest})
	}
	return nil
}

// dedupPairs is dedup for pairs.
func dedupPairs(s [][2]string) [][2]string {
	seen := make(map[[2]string]struct{}, 16)
	out := s[:0]
	for _, v := range s {
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	return out
}

// dedup drops repeats from s (in place) and sorts what is left: a set
// first, as s is mostly repeats of a few values (an agent per event of a
// batch).
func dedup(s []string) []string {
	seen := make(map[string]struct{}, 16)
	out := s[:0]
	for _, v := range s {
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
