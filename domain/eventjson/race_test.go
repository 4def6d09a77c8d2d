//go:build race

package eventjson_test

// raceEnabled is set under the race detector.
const raceEnabled = true
