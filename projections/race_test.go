//go:build race

package projections

// raceEnabled is set under the race detector.
const raceEnabled = true
