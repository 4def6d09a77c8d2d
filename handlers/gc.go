package handlers

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) the gate runs with.
//
// The gate's Go heap is small next to its allocation rate: the event log
// and the projections live in Pebble's memtables and block caches, which
// are not Go memory, so at Go's default of 100 the collector runs every
// few megabytes of decisions — about a tenth of the CPU of the durable
// path and of a replay (docs/benchmarks.md, "Garbage collector"). At 400
// the heap may grow to five times what is live (the decided state, a few
// batches in flight) and the collector runs a quarter as often.
const GCPercent = 400

// TuneGC sets the collector's target to GCPercent, unless the GOGC
// environment variable chooses one (which then stays in force), and
// returns a function that restores the previous target. The agentgate
// command calls it at start; the benchmarks of the gate's paths call it so
// that they measure the process as it runs.
func TuneGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	prev := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(prev) }
}
