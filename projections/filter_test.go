package projections

import (
	"fmt"
	"testing"
)

// TestRequestFilterHasNoFalseNegativesAndFewFalsePositives fills the
// filter to its design load (16 bits a key) and checks every added key is
// held and that the false positive rate stays under 1 % (a false positive
// costs a Pebble read; a false negative would answer a retried request as
// new).
func TestRequestFilterHasNoFalseNegativesAndFewFalsePositives(t *testing.T) {
	singleGoroutine(t)
	const n = 1 << 20 // 2^24 bits / 16
	f := newRequestFilter(n)
	for i := range n {
		f.add(key(tRequest, "src", fmt.Sprint("in-", i)))
	}
	for i := range n {
		if !f.mayHave(key(tRequest, "src", fmt.Sprint("in-", i))) {
			t.Fatalf("key %d was added but the filter does not hold it", i)
		}
	}
	const probes = 200_000
	fp := 0
	for i := range probes {
		if f.mayHave(key(tRequest, "src", fmt.Sprint("out-", i))) {
			fp++
		}
	}
	rate := float64(fp) / probes
	t.Logf("false positive rate at 16 bits a key: %.3f %%", 100*rate)
	if rate > 0.01 {
		t.Fatalf("false positive rate %.3f %%, want under 1 %%", 100*rate)
	}
}
