package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgate/agentgate/streams"
)

// partition is one partition of the events topic as the broker holds it:
// every message produced, in offset order, whoever produced it — the
// owner's, a zombie writer's, a retried produce's duplicates. It is
// durable: what was produced stays (acks=all, no truncation).
//
// chain is what every reader makes of it, as kafkalog's readers do: from
// offset 0, a message is accepted only when its seq is the head's plus one
// and its prev the head's hash; every other message is skipped.
type partition struct {
	msgs  []streams.Record // offset → message
	chain []int            // seq-1 → offset of the chain's record
	head  streams.Head     // the chain's head
	// applied is the number of messages the chain has looked at.
	applied int
}

// produce appends msgs to the partition and extends the chain with every
// message that follows it.
func (p *partition) produce(msgs []streams.Record) {
	for _, m := range msgs {
		p.msgs = append(p.msgs, streams.Record{Seq: m.Seq, Prev: m.Prev, Payload: append([]byte(nil), m.Payload...)})
	}
	for ; p.applied < len(p.msgs); p.applied++ {
		m := p.msgs[p.applied]
		if m.Seq == p.head.Seq+1 && m.Prev == p.head.Hash {
			p.chain = append(p.chain, p.applied)
			p.head = streams.Head{Seq: m.Seq, Hash: m.Hash()}
		}
	}
}

// record is the chain's record at seq (1-based).
func (p *partition) record(seq uint64) streams.Record { return p.msgs[p.chain[seq-1]] }

// fault is what an injected failure of an Append does.
type fault int

const (
	noFault fault = iota
	// failBefore: the produce is refused; nothing is written.
	failBefore
	// failAfter: the messages are written but the acknowledgement is lost;
	// the writer catches up with the partition, and reports the error.
	failAfter
)

// errInjected is the error of an injected append failure.
var errInjected = errors.New("sim: injected append failure")

// view is one writer's streams.Log over the partition, with kafkalog's
// contract: Append checks the batch against the head this writer knows
// (streams.ErrConflict, nothing produced), produces it, then catches up
// with the partition and returns streams.ErrConflict when another
// writer's records took the chain first; Head is the chain as this writer
// last saw it; Sync catches up.
type view struct {
	p    *partition
	head streams.Head
	// next, when set, is the fault of the next Append.
	next fault
}

var _ streams.Log = (*view)(nil)

func newView(p *partition) *view { return &view{p: p, head: p.head} }

// Append implements streams.Log.
func (v *view) Append(_ context.Context, batch []streams.Record) error {
	f := v.next
	v.next = noFault
	if len(batch) == 0 {
		return nil
	}
	if batch[0].Seq != v.head.Seq+1 || batch[0].Prev != v.head.Hash {
		return fmt.Errorf("%w: record %d after the head %d this writer knows", streams.ErrConflict, batch[0].Seq, v.head.Seq)
	}
	if f == failBefore {
		return errInjected
	}
	start := len(v.p.msgs)
	v.p.produce(batch)
	last := batch[len(batch)-1]
	ours := last.Seq <= v.p.head.Seq && v.p.chain[last.Seq-1] == start+len(batch)-1
	v.head = v.p.head
	if f == failAfter {
		return errInjected
	}
	if !ours {
		return fmt.Errorf("%w: another writer's records took seq %d", streams.ErrConflict, batch[0].Seq)
	}
	return nil
}

// Sync catches up with the records other writers appended.
func (v *view) Sync() { v.head = v.p.head }

// Head implements streams.Log.
func (v *view) Head() streams.Head { return v.head }

// Read implements streams.Log: the chain's records from seq from up to
// this writer's head.
func (v *view) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
	if from == 0 {
		from = 1
	}
	for seq := from; seq <= v.head.Seq; seq++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(v.p.record(seq)); err != nil {
			return err
		}
	}
	return nil
}

// Close implements streams.Log.
func (v *view) Close() error { return nil }
