package kafkagate

import (
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// txAwaits keeps the followers of the partitions on which readers await a
// transaction (projections.Store.AwaitTransaction: an execute answered
// with its outcome) reading: the outcome is appended by the partition's
// worker in another process, and the follower would otherwise read it at
// its next poll only (200 ms in agentgate serve). While anyone awaits a
// transaction of a consumer, one goroutine per home partition wakes its
// follower, at once and then after a backoff doubling from
// awaitRepollMin to awaitRepollMax, back to the minimum each time the
// partition's applied position moves.
type txAwaits struct {
	mu sync.Mutex
	// by holds, by partition, the readers waiting and the channel that
	// stops the partition's poker once none is.
	by map[int32]*txAwait
}

type txAwait struct {
	n    int
	stop chan struct{}
}

// awaitRepollMin and awaitRepollMax bound the backoff between the passes
// an awaited transaction asks of its home partition's follower.
const (
	awaitRepollMin = time.Millisecond
	awaitRepollMax = 50 * time.Millisecond
)

// homePartition is the partition that decides consumer's executes.
func (m *ReadModel) homePartition(consumer string) int32 {
	return PartitionFor(domain.HomeKey(consumer), m.partitions)
}

// awaitWait is the store's await hook (SetAwaitHook) as a wait begins.
func (m *ReadModel) awaitWait(consumer string) {
	p := m.homePartition(consumer)
	a := &m.awaits
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.by == nil {
		a.by = map[int32]*txAwait{}
	}
	w := a.by[p]
	if w == nil {
		w = &txAwait{stop: make(chan struct{})}
		a.by[p] = w
		go m.repoll(m.part(p), w.stop)
	}
	w.n++
}

// awaitDone is the store's await hook as a wait ends.
func (m *ReadModel) awaitDone(consumer string) {
	p := m.homePartition(consumer)
	a := &m.awaits
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.by[p]; w != nil {
		if w.n--; w.n == 0 {
			close(w.stop)
			delete(a.by, p)
		}
	}
}

// repoll wakes pr's follower until stop is closed.
func (m *ReadModel) repoll(pr *progress, stop <-chan struct{}) {
	backoff := awaitRepollMin
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		pr.mu.Lock()
		changed := pr.changed
		pr.mu.Unlock()
		select {
		case <-stop:
			return
		case <-changed:
			backoff = awaitRepollMin
			continue
		case <-t.C:
		}
		pr.poke()
		t.Reset(backoff)
		backoff = min(2*backoff, awaitRepollMax)
	}
}
