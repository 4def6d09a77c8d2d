package main

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/handlers/verify/z3pool"
)

// z3Flags configure the z3 pool behind the logic engine.
type z3Flags struct {
	path  string
	procs int
	memMB int
}

func addZ3Flags(f *pflag.FlagSet) *z3Flags {
	o := &z3Flags{}
	f.StringVar(&o.path, "z3", "z3", "the z3 binary behind the logic engine (Debian package z3)")
	f.IntVar(&o.procs, "z3-procs", 0, "z3 processes kept warm (default: one per CPU)")
	f.IntVar(&o.memMB, "z3-memory-mb", 1024, "memory cap of each z3 process in MiB (0: none)")
	return o
}

// startSolver starts the z3 pool of the logic engine. Without z3 the gate
// still serves: the logic engine fails closed (ERROR, QWED-ENG-004, and a
// verify_logic action is never approved on its verdict), and the warning
// says how to install it.
func startSolver(o *z3Flags, log *slog.Logger) (logic.Solver, func()) {
	pool, err := z3pool.New(z3pool.Config{Path: o.path, Size: o.procs, MemoryMB: o.memMB, Logger: log})
	if err != nil {
		log.Warn("logic engine unavailable: its queries answer QWED-ENG-004", "err", err)
		return nil, func() {}
	}
	log.Info("logic engine ready", "z3", o.path)
	return pool, func() { _ = pool.Close() }
}
