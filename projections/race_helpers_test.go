package projections

import "testing"

// singleGoroutine skips t in the race pass: it checks a pure function on
// one goroutine (encoders, the request filter), which the race detector
// only slows tenfold; the plain pass runs it.
func singleGoroutine(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine, pure code: the plain pass runs it")
	}
}
