package kafkagate

import (
	"os"
	"path/filepath"
	"testing"
)

// Issue 11 item 2: the restart plan of a partition from its flight record.
// A clean release leaves nothing to isolate; a death with requests in
// flight isolates exactly those beyond what was answered and the committed
// offset; a death while a request was tried alone charges that request one
// more death and keeps the rest of the window; a window the group has
// committed past is dropped; an unreadable record starts afresh.
func TestFlightRestartPlan(t *testing.T) {
	open := func(t *testing.T, dir string, committed int64) *flight {
		t.Helper()
		fl, err := openFlight(dir, committed)
		if err != nil {
			t.Fatal(err)
		}
		return fl
	}
	window := func(t *testing.T, fl *flight, lo, hi int64) {
		t.Helper()
		if l, h := fl.window(); l != lo || h != hi {
			t.Fatalf("window [%d, %d], want [%d, %d]", l, h, lo, hi)
		}
	}

	t.Run("fresh, then clean release", func(t *testing.T) {
		dir := t.TempDir()
		fl := open(t, dir, -1)
		window(t, fl, -1, -1)
		fl.fetched(9)
		fl.written(7)
		fl.close(true)
		window(t, open(t, dir, 8), -1, -1)
	})

	t.Run("death in a batch, then a poison tried alone", func(t *testing.T) {
		dir := t.TempDir()
		fl := open(t, dir, 10)
		fl.fetched(14)
		fl.written(11)
		fl.close(false) // died with 12..14 in flight
		fl = open(t, dir, 10)
		window(t, fl, 12, 14)
		if fl.isolated(11) || !fl.isolated(12) || !fl.isolated(14) || fl.isolated(15) {
			t.Fatal("isolated offsets outside [12, 14]")
		}
		if d := fl.begin(12); d != 1 {
			t.Fatalf("offset 12 tried alone after %d deaths, want 1 (its batch's)", d)
		}
		fl.end(12)
		window(t, fl, 13, 14)
		if d := fl.begin(13); d != 1 {
			t.Fatalf("offset 13: %d deaths, want 1", d)
		}
		for want := int64(2); want <= MaxAttempts; want++ {
			fl.close(false) // 13 kills the process again
			fl = open(t, dir, 12)
			window(t, fl, 13, 14)
			if d := fl.begin(13); d != want {
				t.Fatalf("offset 13: %d deaths, want %d", d, want)
			}
		}
		fl.end(13)
		if d := fl.begin(14); d != 1 {
			t.Fatalf("offset 14 after the poison: %d deaths, want 1", d)
		}
		fl.end(14)
		window(t, fl, -1, -1)
		fl.close(true)
		window(t, open(t, dir, 15), -1, -1)
	})

	t.Run("clean release mid-window keeps the window, not a death", func(t *testing.T) {
		dir := t.TempDir()
		fl := open(t, dir, 0)
		fl.fetched(5)
		fl.close(false)
		fl = open(t, dir, 0)
		window(t, fl, 0, 5)
		fl.begin(0)
		fl.close(true) // the partition moved while 0 was tried
		fl = open(t, dir, 0)
		window(t, fl, 0, 5)
		if d := fl.begin(0); d != 1 {
			t.Fatalf("offset 0: %d deaths after a clean release, want 1", d)
		}
	})

	t.Run("the group committed past the window", func(t *testing.T) {
		dir := t.TempDir()
		fl := open(t, dir, 0)
		fl.fetched(5)
		fl.close(false)
		fl = open(t, dir, 0)
		fl.begin(0)
		fl.close(false)
		fl = open(t, dir, 3) // another owner answered 0..2
		window(t, fl, 3, 5)
		if d := fl.begin(3); d != 1 {
			t.Fatalf("offset 3: %d deaths, want 1", d)
		}
		fl.close(false)
		window(t, open(t, dir, 6), -1, -1)
	})

	t.Run("an unreadable record starts afresh", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, flightFile), []byte("not a flight record"), 0o600); err != nil {
			t.Fatal(err)
		}
		window(t, open(t, dir, 0), -1, -1)
	})
}
