package diskspace

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/streams"
)

func TestGuard(t *testing.T) {
	fs := NewFullFS(nil)
	dir := t.TempDir()
	g := NewGuard(fs, dir, 1<<20)
	if err := g.Check(1 << 20); err != nil {
		t.Fatalf("a temp dir with 2 MiB free: %v", err)
	}
	fs.Fill()
	if err := g.Check(0); !errors.Is(err, streams.ErrNoSpace) {
		t.Fatalf("full disk: %v, want ErrNoSpace", err)
	}
	if err := NewGuard(fs, dir, -1).Check(0); err != nil {
		t.Fatalf("a disabled guard refused: %v", err)
	}
	fs.Free()
	if err := g.Check(0); err != nil {
		t.Fatalf("freed: %v", err)
	}
}

func TestIsNoSpace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("disk on fire"), false},
		{fmt.Errorf("x: %w", streams.ErrNoSpace), true},
		{errors.New("pebble: fatal commit error: write 000004.log: no space left on device"), true},
	} {
		if got := IsNoSpace(c.err); got != c.want {
			t.Errorf("IsNoSpace(%v) = %v", c.err, got)
		}
	}
}

func TestLogLimiter(t *testing.T) {
	clock := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	l := LogLimiter{Every: time.Minute, now: func() time.Time { return clock }}
	n := 0
	for range 1000 {
		if ok, _ := l.Allow("a"); ok {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("1000 messages of one kind within the interval: %d let through, want 1", n)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another kind was held back")
	}
	clock = clock.Add(time.Minute)
	if ok, held := l.Allow("a"); !ok || held != 999 {
		t.Fatalf("after the interval: %v with %d held back, want true and 999", ok, held)
	}
	for i := range 2 * maxLimiterKeys {
		l.Allow(fmt.Sprint("k", i))
	}
	if len(l.kinds) > maxLimiterKeys+1 {
		t.Fatalf("%d kinds tracked, want at most %d", len(l.kinds), maxLimiterKeys+1)
	}
}

// BenchmarkCheck is the cost the guard adds to each Append and Prepare
// (one statfs): compare with the fsync of an Append (about 1 ms here).
func BenchmarkCheck(b *testing.B) {
	g := NewGuard(nil, b.TempDir(), 1<<20)
	for b.Loop() {
		if err := g.Check(0); err != nil {
			b.Fatal(err)
		}
	}
}
