package handlers

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// Named limits of ApplyLog's pipeline.
const (
	// decodeChunk is how many records one decoding job holds.
	decodeChunk = 256
	// decodeAhead bounds the chunks read ahead of the fold (memory:
	// decodeAhead × decodeChunk records).
	decodeAhead = 8
)

// chunk is a run of consecutive log records and, once done is closed,
// their decoded events (or the first decoding error).
type chunk struct {
	recs []streams.Record
	evs  []*domain.Event
	err  error
	done chan struct{}
}

// ApplyLog folds the log records after checkpoint ck into st and the
// store, checking the chain, and returns how many it applied.
//
// Decoding (most of the cost of a restore) runs on every core ahead of the
// fold; the fold itself, the chain check and the projection writes stay in
// log order on the caller's goroutine.
func ApplyLog(ctx context.Context, log streams.Log, store *projections.Store, st *domain.State, ck projections.Checkpoint) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ordered := make(chan *chunk, decodeAhead)
	jobs := make(chan *chunk, decodeAhead)
	var readErr error
	go func() {
		defer close(ordered)
		defer close(jobs)
		cur := &chunk{done: make(chan struct{})}
		send := func() bool {
			select {
			case ordered <- cur:
			case <-ctx.Done():
				return false
			}
			jobs <- cur // never blocks longer than a decoder's chunk: jobs has ordered's capacity
			cur = &chunk{done: make(chan struct{})}
			return true
		}
		readErr = log.Read(ctx, ck.Seq+1, func(r streams.Record) error {
			r.Payload = append([]byte(nil), r.Payload...)
			cur.recs = append(cur.recs, r)
			if len(cur.recs) == decodeChunk && !send() {
				return ctx.Err()
			}
			return nil
		})
		if readErr == nil && len(cur.recs) > 0 {
			send()
		}
	}()
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				c.evs = make([]*domain.Event, len(c.recs))
				for i, r := range c.recs {
					if c.evs[i], c.err = DecodeEvent(r.Payload); c.err != nil {
						c.err = fmt.Errorf("decoding log record %d: %w", r.Seq, c.err)
						break
					}
				}
				close(c.done)
			}
		}()
	}
	defer wg.Wait()

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
	fold := func(c *chunk) error {
		<-c.done
		for i, r := range c.recs {
			if r.Prev != prev {
				return fmt.Errorf("log record %d does not follow the checkpoint chain", r.Seq)
			}
			if c.err != nil && c.evs[i] == nil {
				return c.err
			}
			ev := c.evs[i]
			if ev.Seq != r.Seq || ev.Prev != r.Prev {
				return fmt.Errorf("log record %d holds event %d", r.Seq, ev.Seq)
			}
			domain.Apply(st, ev)
			batch = append(batch, ev)
			prev = r.Hash()
			last = projections.Checkpoint{Seq: r.Seq, Hash: prev, Time: ev.Time}
			n++
			// A batch ends at a checkpoint, as the worker's do: the
			// projections snapshot the state at checkpoints.
			if len(batch) == recoverBatch || ev.Type == domain.EvLogCheckpointed {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for c := range ordered {
		if err := fold(c); err != nil {
			cancel()
			for c := range ordered { // let the reader and the decoders finish
				<-c.done
			}
			return n, err
		}
	}
	if readErr != nil {
		return n, fmt.Errorf("reading log: %w", readErr)
	}
	return n, flush()
}
