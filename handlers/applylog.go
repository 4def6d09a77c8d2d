package handlers

import (
	"context"
	"fmt"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/eventjson"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// ApplyLog folds the log records after checkpoint ck into st and the
// store, checking the chain, and returns how many it applied.
//
// Decoding and hashing (most of the cost of a restore) run on every core
// ahead of the fold, with the fast decoder of eventjson (pinned equal to
// DecodeEvent on every event type by
// TestDesign2_1_SeededRunThroughTheWorker); the fold itself, the chain
// check and the projection writes stay in log order on the caller's
// goroutine.
func ApplyLog(ctx context.Context, log streams.Log, store *projections.Store, st *domain.State, ck projections.Checkpoint) (int, error) {
	var (
		batch = make([]*domain.Event, 0, recoverBatch)
		prev  = ck.Hash
		last  = ck
		n     int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := store.Apply(st, batch, last); err != nil {
			return fmt.Errorf("applying recovered events: %w", err)
		}
		batch = batch[:0]
		return nil
	}
	// The decoders also hash each record (the next one's prev): the fold
	// only compares.
	type decoded struct {
		ev   *domain.Event
		hash string
	}
	decode := func(p []byte) (decoded, error) {
		ev, err := eventjson.DecodeEvent(p)
		return decoded{ev, streams.HashPayload(p)}, err
	}
	err := ReadDecoded(ctx, log, ck.Seq+1, nil, decode, func(r streams.Record, d decoded, err error) error {
		if r.Prev != prev {
			return fmt.Errorf("log record %d does not follow the checkpoint chain", r.Seq)
		}
		if err != nil {
			return err
		}
		ev := d.ev
		if ev.Seq != r.Seq || ev.Prev != r.Prev {
			return fmt.Errorf("log record %d holds event %d", r.Seq, ev.Seq)
		}
		domain.Apply(st, ev)
		batch = append(batch, ev)
		prev = d.hash
		last = projections.Checkpoint{Seq: r.Seq, Hash: prev, Time: ev.Time}
		n++
		// A batch ends at a checkpoint, as the worker's do: the
		// projections snapshot the state at checkpoints.
		if len(batch) == recoverBatch || ev.Type == domain.EvLogCheckpointed {
			return flush()
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}
