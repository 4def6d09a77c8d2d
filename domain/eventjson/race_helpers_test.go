package eventjson_test

import "testing"

// singleGoroutine skips t in the race pass: it checks the codec on one
// goroutine, which the race detector only slows tenfold; the plain pass
// runs it.
func singleGoroutine(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine, pure code: the plain pass runs it")
	}
}
