package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// TestTuneGCSetsTheTargetUnlessGOGCIsSet pins TuneGC's contract: without
// GOGC and GOMEMLIMIT in the environment it sets GCPercent and MemoryLimit
// and restores the previous settings; with either set it leaves that one
// alone.
func TestTuneGCSetsTheTargetUnlessGOGCIsSet(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	// t.Setenv cannot unset: clear them through the os package for the
	// first case and let t.Setenv's cleanup restore them.
	unsetenv(t, "GOGC")
	unsetenv(t, "GOMEMLIMIT")
	prev := debug.SetGCPercent(150)
	defer debug.SetGCPercent(prev)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prevLimit)
	restore := TuneGC()
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Fatalf("after TuneGC the target is %d, want %d", got, GCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit {
		t.Fatalf("after TuneGC the memory limit is %d, want %d", got, MemoryLimit)
	}
	restore()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("after restore the target is %d, want 150", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("after restore the memory limit is %d, want none", got)
	}

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "2GiB")
	restore = TuneGC()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("with GOGC set TuneGC changed the target to %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set TuneGC changed the memory limit to %d", got)
	}
	restore()
}

func unsetenv(t *testing.T, key string) {
	t.Helper()
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// TestMakefileBenchesUnderServesGC pins that `make bench` runs the
// benchmarks under the collector settings TuneGC gives the process (the
// benchmarks no longer set them themselves: TuneGC is the command's).
func TestMakefileBenchesUnderServesGC(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("BENCH_GC := GOGC=%d GOMEMLIMIT=%dGiB\n", GCPercent, MemoryLimit>>30)
	if !strings.Contains(string(b), want) {
		t.Fatalf("the Makefile does not set %q", want)
	}
	if !strings.Contains(string(b), "\t$(BENCH_GC) $(GO) test") {
		t.Fatal("the Makefile's bench target does not run under $(BENCH_GC)")
	}
}
