//go:build race

package embedded_test

// raceEnabled is set under the race detector, which runs the gate ten
// times slower: tests that only measure volume (thousands of requests,
// no concurrency of their own) leave that pass to the plain one.
const raceEnabled = true
