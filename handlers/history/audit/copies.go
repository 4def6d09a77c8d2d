package audit

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/agentgate/agentgate/domain"
)

// KindCopy: a partition's copy of partition 0's principal-wide events
// (principal.state_copied) does not match partition 0: a change it
// carries is not partition 0's at that seq, it skips one, or the hash it
// names is not that of partition 0's record.
const KindCopy Kind = "copy"

// copies collects, during the walk, partition 0's principal-wide changes
// and the other partitions' copies of them, checked against each other
// at the end (the partitions may come in any order).
type copies struct {
	zero   map[uint64]zeroChange // partition 0's changes by seq
	copied []copyRecord
}

type zeroChange struct {
	change domain.CopiedChange
	hash   [64]byte
}

type copyRecord struct {
	partition int32
	seq       uint64
	offset    int64
	copy      *domain.PrincipalStateCopy
}

// principalWideType reports whether events of typ may be copied.
func principalWideType(typ []byte) bool { return domain.PrincipalWide(domain.EventType(typ)) }

// add keeps what record r (of header h, hash sum) brings to the check.
func (cs *copies) add(r Record, h header, sum [64]byte) error {
	switch {
	case r.Partition == domain.GlobalPartition && principalWideType(h.typ):
		ev := new(domain.Event)
		if err := json.Unmarshal(r.Payload, ev); err != nil {
			return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindMalformed, Detail: "the event does not decode: " + err.Error()}
		}
		if c, ok := domain.CopyOf(ev); ok {
			if cs.zero == nil {
				cs.zero = map[uint64]zeroChange{}
			}
			cs.zero[h.seq] = zeroChange{change: c, hash: sum}
		}
	case string(h.typ) == string(domain.EvPrincipalStateCopied):
		ev := new(domain.Event)
		if err := json.Unmarshal(r.Payload, ev); err != nil || ev.Command == nil || ev.Command.Copy == nil {
			return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindMalformed, Detail: "a copy without its changes"}
		}
		cs.copied = append(cs.copied, copyRecord{partition: r.Partition, seq: h.seq, offset: r.Offset, copy: ev.Command.Copy})
	}
	return nil
}

// check checks every copy against partition 0 (the walk read it): each
// partition's copies, in its order, carry partition 0's changes in
// partition 0's order, none skipped, each as partition 0 recorded it,
// and name the hash of partition 0's record at their last seq.
func (cs *copies) check() *Break {
	order := make([]uint64, 0, len(cs.zero))
	for s := range cs.zero {
		order = append(order, s)
	}
	slices.Sort(order)
	next := map[int32]int{} // index in order of the next change each partition must copy
	for _, c := range cs.copied {
		brk := func(format string, args ...any) *Break {
			return &Break{Partition: c.partition, Seq: c.seq, Offset: c.offset, Kind: KindCopy, Detail: fmt.Sprintf(format, args...)}
		}
		for _, ch := range c.copy.Changes {
			i := next[c.partition]
			if i >= len(order) || order[i] != ch.Seq {
				want := "none"
				if i < len(order) {
					want = fmt.Sprintf("seq %d", order[i])
				}
				return brk("the copy carries partition 0's seq %d where partition 0's next principal-wide change is %s", ch.Seq, want)
			}
			if z := cs.zero[ch.Seq]; !reflect.DeepEqual(z.change, ch) {
				return brk("the copy of partition 0's seq %d is not the change partition 0 recorded", ch.Seq)
			}
			next[c.partition] = i + 1
		}
		if z, ok := cs.zero[c.copy.Seq]; !ok || string(z.hash[:]) != c.copy.Hash {
			return brk("the copy names hash %s for partition 0's seq %d, which is not that record's", c.copy.Hash, c.copy.Seq)
		}
	}
	return nil
}
