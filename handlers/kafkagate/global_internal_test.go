package kafkagate

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// A barrier waits for the copy feed at most barrierWait; once one has
// waited in vain (the feed cannot read partition 0), the next barriers do
// not stop the partition again until the feed has read through the late
// one; then they wait again.
func TestCopyFeedLateBarrierDoesNotStallEachTime(t *testing.T) {
	f := newCopyFeed(1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.wait = 20 * time.Millisecond
	f.readThrough(context.Background(), 5) // nothing reads: waits f.wait
	if f.late != 5 {
		t.Fatalf("late = %d after a barrier waited in vain, want 5", f.late)
	}
	// The next barrier of a feed that is still behind returns at once: a
	// wait of an hour would time the test out.
	f.wait = time.Hour
	returned := make(chan struct{})
	go func() { f.readThrough(context.Background(), 6); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("a second barrier stopped the partition again while the feed was still behind the first")
	}
	// Read through the late barrier: the next one waits again (and
	// returns as soon as the feed reads through it).
	f.readTo(5)
	if f.late != 0 {
		t.Fatalf("late = %d once the feed read through it, want 0", f.late)
	}
	go func() {
		<-f.kick // the barrier wakes the follower
		f.readTo(7)
	}()
	f.readThrough(context.Background(), 7)
	if f.read != 7 {
		t.Fatalf("a barrier returned before the feed read through it: read %d", f.read)
	}
}
