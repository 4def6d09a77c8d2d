package handlers

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGCSetsTheTargetUnlessGOGCIsSet pins TuneGC's contract: without
// GOGC in the environment it sets GCPercent and restores the previous
// target; with GOGC set it leaves the target alone.
func TestTuneGCSetsTheTargetUnlessGOGCIsSet(t *testing.T) {
	t.Setenv("GOGC", "")
	// t.Setenv cannot unset: clear it through the os package for the
	// first case and let t.Setenv's cleanup restore it.
	unsetenv(t, "GOGC")
	prev := debug.SetGCPercent(150)
	defer debug.SetGCPercent(prev)
	restore := TuneGC()
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Fatalf("after TuneGC the target is %d, want %d", got, GCPercent)
	}
	restore()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("after restore the target is %d, want 150", got)
	}

	t.Setenv("GOGC", "150")
	restore = TuneGC()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("with GOGC set TuneGC changed the target to %d", got)
	}
	restore()
}

func unsetenv(t *testing.T, key string) {
	t.Helper()
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
