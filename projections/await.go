package projections

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// txWaiters wakes the readers waiting on a transaction when a committed
// batch wrote it (AwaitTransaction). Commit notes the ids it wrote and
// wakes their waiters once the batch is readable; a waiter registers
// before it reads, so no write between its read and its wait is missed.
type txWaiters struct {
	mu sync.Mutex
	// m holds, by transaction id, the channel closed at the next commit
	// that writes it.
	m map[string]chan struct{}
}

// watch returns the channel closed at the next commit that writes id.
func (t *txWaiters) watch(id string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]chan struct{}{}
	}
	ch := t.m[id]
	if ch == nil {
		ch = make(chan struct{})
		t.m[id] = ch
	}
	return ch
}

// wake closes the channels of ids (those a committed batch wrote).
func (t *txWaiters) wake(ids []string) {
	if len(ids) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if ch := t.m[id]; ch != nil {
			close(ch)
			delete(t.m, id)
		}
	}
}

// forget drops the channel of id when nobody else waits on it: a waiter
// that gives up leaves no entry behind (the map stays as small as the
// waits in progress).
func (t *txWaiters) forget(id string, ch <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.m[id]; cur != nil && (<-chan struct{})(cur) == ch {
		// Another waiter on the same id shares ch; closing it wakes it
		// to register again, which is harmless.
		close(cur)
		delete(t.m, id)
	}
}

// AwaitTransaction returns the transaction txID of consumer once the store
// holds it with a status other than executing (at once when it does
// already): the status a committed execute.completed, a resolved approval
// or a timer gave it. It is how an execute is answered with its outcome:
// the HTTP API waits on it after an execute.decided "executing", bounded
// by its request timeout, and answers 202 "executing" when ctx ends first.
//
// It is woken by the commit of a batch that writes the transaction
// (Apply, ApplyAt: the embedded worker's projections and the Kafka read
// model alike), never by polling. While it waits, the store's await hook
// (SetAwaitHook) runs: the Kafka read model's wakes the follower of the
// consumer's home partition, so the outcome is read as soon as it is
// appended rather than at the follower's next poll. When ctx ends first it returns the
// transaction as last read (the zero Transaction when the store does not
// hold it yet) and an error wrapping ctx.Err() (and ErrNotFound when the
// store never held it). A transaction of another consumer is not found.
func (s *Store) AwaitTransaction(ctx context.Context, consumer, txID string) (Transaction, error) {
	hooked := false
	defer func() {
		if hooked {
			s.awaitHook.Load().(awaitHook).done(consumer)
		}
	}()
	for {
		ch := s.txWait.watch(txID)
		tx, err := s.Transaction(consumer, txID)
		switch {
		case err == nil && tx.Status != TxExecuting:
			s.txWait.forget(txID, ch)
			return tx, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			s.txWait.forget(txID, ch)
			return tx, err
		}
		if !hooked {
			if h, ok := s.awaitHook.Load().(awaitHook); ok {
				h.wait(consumer)
				hooked = true
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			s.txWait.forget(txID, ch)
			if err != nil {
				return tx, fmt.Errorf("awaiting transaction %s: %w: %w", txID, err, ctx.Err())
			}
			return tx, fmt.Errorf("awaiting transaction %s (still %s): %w", txID, tx.Status, ctx.Err())
		}
	}
}

// waiting reports whether a reader waits on id (tests).
func (t *txWaiters) waiting(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id] != nil
}

// awaitHook is what SetAwaitHook sets.
type awaitHook struct {
	wait, done func(consumer string)
}

// SetAwaitHook sets the functions AwaitTransaction calls when it begins
// to wait for a transaction of consumer (wait), and once that wait ends
// (done): the Kafka read model's keep the follower of the consumer's
// home partition reading while anyone waits. Set it before the store is
// read; nil functions are not allowed.
func (s *Store) SetAwaitHook(wait, done func(consumer string)) {
	s.awaitHook.Store(awaitHook{wait: wait, done: done})
}
