package handlers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/agentgate/agentgate/streams"
)

// Named limits of ReadDecoded's pipeline.
const (
	// decodeChunk is how many records one decoding job holds.
	decodeChunk = 256
	// decodeAhead bounds the chunks read ahead of the caller (memory:
	// decodeAhead × decodeChunk records).
	decodeAhead = 8
)

// ErrStopRead, returned by ReadDecoded's fn, ends the read early without
// an error.
var ErrStopRead = errors.New("stop reading")

// chunk is a run of consecutive kept records and, once done is closed,
// their decoded values up to the first record that failed (at index
// failed, with error err; failed is len(recs) when none did).
type chunk[T any] struct {
	recs   []streams.Record
	vals   []T
	failed int
	err    error
	done   chan struct{}
}

// ReadDecoded reads log from seq from and calls fn, on the caller's
// goroutine and in log order, with every record keep accepts (nil keeps
// all) and what decode made of it, or the decoding error (err, with a zero
// value). Decoding, most of the cost of reading a log back, runs on every
// core ahead of fn (decode may do any other per-record work that need not
// be in order, such as hashing); the records' payloads are copies fn may
// keep.
//
// It stops at the end of the log, at the first error fn returns (returned
// as is; ErrStopRead ends the read with nil), or when ctx ends. A reading
// error is returned wrapped.
func ReadDecoded[T any](ctx context.Context, log streams.Log, from uint64, keep func(payload []byte) bool,
	decode func(payload []byte) (T, error), fn func(r streams.Record, v T, err error) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ordered := make(chan *chunk[T], decodeAhead)
	jobs := make(chan *chunk[T], decodeAhead)
	var readErr error
	go func() {
		defer close(ordered)
		defer close(jobs)
		// A chunk's payloads are copied into few large buffers rather
		// than one allocation each, unless the log hands out payloads it
		// lets us keep.
		kp, ok := log.(streams.KeptPayloads)
		copyPayloads := !ok || !kp.ReadKeepsPayloads()
		var arena streams.Arena
		newChunk := func() *chunk[T] {
			return &chunk[T]{done: make(chan struct{}), recs: make([]streams.Record, 0, decodeChunk)}
		}
		cur := newChunk()
		send := func() bool {
			select {
			case ordered <- cur:
			case <-ctx.Done():
				return false
			}
			jobs <- cur // never blocks longer than a decoder's chunk: jobs has ordered's capacity
			cur = newChunk()
			return true
		}
		readErr = log.Read(ctx, from, func(r streams.Record) error {
			if keep != nil && !keep(r.Payload) {
				return nil
			}
			if copyPayloads {
				r.Payload = arena.Copy(r.Payload)
			}
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
				c.vals = make([]T, len(c.recs))
				c.failed = len(c.recs)
				for i, r := range c.recs {
					v, err := decode(r.Payload)
					if err != nil {
						c.failed, c.err = i, fmt.Errorf("decoding log record %d: %w", r.Seq, err)
						break
					}
					c.vals[i] = v
				}
				close(c.done)
			}
		}()
	}
	defer wg.Wait()
	deliver := func(c *chunk[T]) error {
		<-c.done
		for i, r := range c.recs {
			var err error
			if i == c.failed {
				err = c.err
			}
			if ferr := fn(r, c.vals[i], err); ferr != nil {
				return ferr
			}
			if err != nil {
				return err // fn must not go on past a record it could not have
			}
		}
		return nil
	}
	for c := range ordered {
		if err := deliver(c); err != nil {
			cancel()
			for c := range ordered { // let the reader and the decoders finish
				<-c.done
			}
			if errors.Is(err, ErrStopRead) {
				return nil
			}
			return err
		}
	}
	if readErr != nil {
		return fmt.Errorf("reading log: %w", readErr)
	}
	return nil
}
