package main

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) the gate runs with,
// and MemoryLimit the soft limit on the Go runtime's memory (GOMEMLIMIT)
// that bounds what that target lets the heap grow to.
//
// The gate's Go heap is small next to its allocation rate: the event log
// and the projections live in Pebble's memtables and block caches, which
// are not Go memory, so at Go's default of 100 the collector runs every
// few megabytes of decisions — about a tenth of the CPU of the durable
// path and of a replay (docs/benchmarks.md, "Garbage collector"). At 1000
// the heap may grow to eleven times what is live (the decided state, a
// few batches in flight) before a collection; the memory limit makes the
// collector run sooner once the process's Go memory nears 4 GiB, so a
// large state does not grow the heap elevenfold (a state of 1 GiB is
// collected about every 3 GiB of allocation, as at GOGC=300). A state
// near or past the limit makes the collector run often (the runtime caps
// it at about half the CPU): such a deployment sets GOMEMLIMIT (and GOGC)
// for its machine.
const (
	GCPercent   = 1000
	MemoryLimit = 4 << 30
)

// TuneGC sets the collector's target to GCPercent and the soft memory
// limit to MemoryLimit, each unless its environment variable (GOGC,
// GOMEMLIMIT) chooses one, which then stays in force, and returns a
// function that restores the previous settings. The agentgate command
// calls it at start; `make bench` sets the same values in the
// environment (BENCH_GC) so that the benchmarks measure the process as it
// runs.
func TuneGC() (restore func()) {
	var undo []func()
	if _, set := os.LookupEnv("GOGC"); !set {
		prev := debug.SetGCPercent(GCPercent)
		undo = append(undo, func() { debug.SetGCPercent(prev) })
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		prev := debug.SetMemoryLimit(MemoryLimit)
		undo = append(undo, func() { debug.SetMemoryLimit(prev) })
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}
