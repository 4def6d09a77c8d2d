package projections

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// The versions of consumers' policies (GET /policies/{id}?at_seq=): every
// policy.changed event, by consumer and policy, in log order, kept by a
// store that keeps activities (the read side):
//
//	V + consumer + policy id + seq(8) -> PolicyVersion (JSON)
//
// A consumer's policies are all decided on its home partition, so seq
// (that partition's) orders them. The current policies are the state's
// (Store.Consumer).
const tPolicyVer = 'V'

// PolicyVersion is one change of a consumer's policy: the policy as the
// change left it, with its version (for a delete, the policy deleted,
// and Deleted set), and the event's seq and time.
type PolicyVersion struct {
	Consumer string        `json:"consumer"`
	Seq      uint64        `json:"seq"`
	Time     time.Time     `json:"time"`
	Op       string        `json:"op"`
	Deleted  bool          `json:"deleted,omitempty"`
	Policy   policy.Policy `json:"policy"`
}

// policyVersionKey is the key of the version of consumer's policy id
// written at seq.
func policyVersionKey(consumer, id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(key(tPolicyVer, consumer, id), seq)
}

// policyEvent writes the version a policy.changed event records.
func (w *batchWriter) policyEvent(ev *domain.Event) error {
	if w.s.noActivity || ev.Type != domain.EvPolicyChanged || ev.Policy == nil || ev.Command == nil || ev.Command.Policy == nil {
		return nil
	}
	c := ev.Command
	consumer := c.Principal
	if c.Policy.Consumer != "" {
		consumer = c.Policy.Consumer
	}
	v := PolicyVersion{Consumer: consumer, Seq: ev.Seq, Time: ev.Time.UTC(), Op: c.Policy.Op, Deleted: c.Policy.Op == domain.OpDelete, Policy: *ev.Policy}
	return w.setJSON(policyVersionKey(consumer, ev.Policy.ID, ev.Seq), &v)
}

// PolicyAt returns the last change of consumer's policy id at or before
// seq: the version in force right after the event at seq (Deleted set
// when that change deleted it). ErrNotFound: no change of it by then.
func (s *Store) PolicyAt(consumer, id string, seq uint64) (PolicyVersion, error) {
	defer s.hold()()
	var v PolicyVersion
	prefix := key(tPolicyVer, consumer, id)
	hi := prefixEnd(prefix)
	if seq < 1<<64-1 {
		hi = policyVersionKey(consumer, id, seq+1)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: hi})
	if err != nil {
		return v, fmt.Errorf("reading policy versions: %w", err)
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return v, fmt.Errorf("reading policy versions: %w", err)
		}
		return v, ErrNotFound
	}
	if err := json.Unmarshal(it.Value(), &v); err != nil {
		return v, fmt.Errorf("decoding a policy version: %w", err)
	}
	return v, nil
}

// PolicyVersions returns the changes of consumer's policy id in log
// order, after seq after (0: from the first), at most limit of them and
// MaxPageBytes of JSON; next is the after of the next page (0 on the
// last).
func (s *Store) PolicyVersions(consumer, id string, after uint64, limit int) (out []PolicyVersion, next uint64, err error) {
	defer s.hold()()
	prefix := key(tPolicyVer, consumer, id)
	lo := prefix
	if after > 0 {
		lo = policyVersionKey(consumer, id, after+1)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, 0, fmt.Errorf("reading policy versions: %w", err)
	}
	defer it.Close()
	pg := newPager(limit, MaxPageBytes)
	for it.First(); it.Valid(); it.Next() {
		var v PolicyVersion
		if err := json.Unmarshal(it.Value(), &v); err != nil {
			return nil, 0, fmt.Errorf("decoding a policy version: %w", err)
		}
		more, err := pg.fits(&v)
		if err != nil {
			return nil, 0, err
		}
		if !more {
			return out, out[len(out)-1].Seq, nil
		}
		out = append(out, v)
	}
	return out, 0, it.Error()
}

// Consumer returns the state of consumer's executes as of the store's
// checkpoint: its current policies (with their versions), webhooks and the
// (agent, business) pairs seen. ErrNotFound: the consumer has none.
func (s *Store) Consumer(consumer string) (*domain.ConsumerExec, error) {
	c := new(domain.ConsumerExec)
	if err := s.getJSON(key(tConsumer, consumer), c); err != nil {
		return nil, err
	}
	return c, nil
}
