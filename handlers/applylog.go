package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// ApplyLog folds the log records after checkpoint ck into st and the
// store, checking the chain, and returns how many it applied.
//
// It is a pipeline of three stages, as the worker's: decoding and hashing
// (most of the cost of a restore; no hashing but at batch ends when the
// log checks the chain as it reads, see streams.ChainReader) run on every
// core ahead of the fold, with
// the event codec (eventjson.DecodeEvent, which decodes every event
// the seeded worker runs write); the fold, the chain
// check and the state-derived half of each projection batch
// (Store.Prepare) run in log order on the caller's goroutine; the
// store-derived half and the write (Prepared.Commit) run on a committer
// goroutine, one batch behind, in log order. On an error the store holds
// every batch committed before it, with its checkpoint, and nothing of the
// others.
func ApplyLog(ctx context.Context, log streams.Log, store *projections.Store, st *domain.State, ck projections.Checkpoint) (int, error) {
	c := startCommitter(store)
	// A log that checks the chain as it reads (the Kafka log) leaves only
	// the first record's Prev to compare and the checkpoints' hashes to
	// compute; otherwise the decoders hash every record.
	cr, ok := log.(streams.ChainReader)
	checked := ok && cr.ReadChecksChain()
	var (
		batch   = newFold()
		prev    = ck.Hash
		last    = ck
		lastPay []byte // the payload of last, when checked and not yet hashed
		n       int
	)
	flush := func() error {
		if batch.Len() == 0 {
			return nil
		}
		if lastPay != nil {
			last.Hash, lastPay = streams.HashPayload(lastPay), nil
		}
		p, err := store.Prepare(st, batch)
		if err != nil {
			return fmt.Errorf("applying recovered events: %w", err)
		}
		if err := c.commit(p, last); err != nil {
			return err
		}
		// The Prepared holds the batch until it is committed.
		batch = newFold()
		return nil
	}
	// Unless the log checks the chain, the decoders also hash each record
	// (the next one's prev): the fold only compares.
	type decoded struct {
		ev   *domain.Event
		hash string
	}
	// A store without activities reads no more of an event than the
	// fold does: the decoders skip the rest (request bodies, verification
	// blocks, errors; a third of the decoding).
	decodeEvent := eventjson.DecodeEvent
	if !store.KeepsActivity() {
		decodeEvent = eventjson.DecodeFoldEvent
	}
	decode := func(p []byte) (decoded, error) {
		ev, err := decodeEvent(p)
		if checked {
			return decoded{ev: ev}, err
		}
		return decoded{ev, streams.HashPayload(p)}, err
	}
	first := true
	err := ReadDecoded(ctx, log, ck.Seq+1, nil, decode, func(r streams.Record, d decoded, err error) error {
		if (first || !checked) && (streams.Head{Seq: last.Seq, Hash: prev}).Link(r.Seq, r.Prev) != streams.LinkNext {
			return fmt.Errorf("log record %d does not follow the checkpoint chain", r.Seq)
		}
		first = false
		if err != nil {
			return err
		}
		ev := d.ev
		if ev.Seq != r.Seq || ev.Prev != r.Prev {
			return fmt.Errorf("log record %d holds event %d", r.Seq, ev.Seq)
		}
		batch.Add(st, ev)
		prev = d.hash
		last = projections.Checkpoint{Seq: r.Seq, Hash: prev, Time: ev.Time}
		if checked {
			lastPay = r.Payload // ReadDecoded's payloads are ours to keep
		}
		n++
		// A batch ends at a checkpoint, as the worker's do: the
		// projections snapshot the state at checkpoints.
		if batch.Len() == recoverBatch || ev.Type == domain.EvLogCheckpointed {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	cerr := c.close()
	if errors.Is(err, errCommitFailed) {
		err = nil // cerr holds the cause
	}
	return n, errors.Join(err, cerr)
}

// committer commits Prepared projection batches in order on its own
// goroutine, one at a time, while the next batch is folded and prepared.
type committer struct {
	next chan pendingCommit
	done chan error // the first commit error (or nil), once next is closed
	// failed is closed at the first commit error so that the producer
	// stops feeding batches that could not follow it.
	failed chan struct{}
}

type pendingCommit struct {
	p    *projections.Prepared
	head projections.Checkpoint
}

func startCommitter(store *projections.Store) *committer {
	c := &committer{next: make(chan pendingCommit), done: make(chan error, 1), failed: make(chan struct{})}
	go func() {
		var err error
		for pc := range c.next {
			if err != nil {
				pc.p.Discard()
				continue
			}
			if err = pc.p.Commit(pc.head); err != nil {
				err = fmt.Errorf("applying recovered events: %w", err)
				close(c.failed)
			}
		}
		c.done <- err
	}()
	return c
}

// commit hands p to the committer; it waits while the previous batch is
// being committed and fails once a commit has failed (p is discarded).
func (c *committer) commit(p *projections.Prepared, head projections.Checkpoint) error {
	select {
	case c.next <- pendingCommit{p, head}:
		return nil
	case <-c.failed:
		p.Discard()
		return errCommitFailed
	}
}

// errCommitFailed stands for the committer's error until close returns it.
var errCommitFailed = errors.New("an earlier projection batch failed")

// close waits for the last commit and returns the first commit error.
func (c *committer) close() error {
	close(c.next)
	return <-c.done
}

// newFold returns an empty projection batch with room for recoverBatch
// events.
func newFold() *projections.Fold {
	f := new(projections.Fold)
	f.Grow(recoverBatch)
	return f
}
