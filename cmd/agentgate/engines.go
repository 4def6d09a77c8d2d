package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/handlers/verify/enginehost"
)

func init() { moreCommands = append(moreCommands, engineWorkerCmd) }

// engineWorkerCmd is the hidden command the gate starts its engine
// workers with: the C-parser engines served over stdin and stdout.
func engineWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "engine-worker",
		Short:  "Serve the C-parser engines over stdin and stdout (started by serve)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return enginehost.Serve(os.Stdin, os.Stdout, verify.CParserEngines()...)
		},
	}
}

// engineFlags configure the engine workers.
type engineFlags struct {
	workers  int
	deadline time.Duration
}

func addEngineFlags(f *pflag.FlagSet) *engineFlags {
	o := &engineFlags{}
	f.IntVar(&o.workers, "engine-workers", enginehost.DefaultSize(), "worker processes that run the code and sql engines' C parsers")
	// Said, not computed: the default depends on the machine (help and the
	// README's command table show the rule).
	f.Lookup("engine-workers").DefValue = "one per CPU, 2..8"
	f.DurationVar(&o.deadline, "engine-deadline", enginehost.DefaultDeadline, "how long one code or sql verification may run in a worker before it is killed (ERROR, QWED-ENG-002)")
	return o
}

// startEngineHost starts the engine workers: this binary's engine-worker
// command. The gate does not serve without them (its C parsers would run
// in its own process).
func startEngineHost(o *engineFlags, log *slog.Logger) (*enginehost.Host, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary for the engine workers: %w", err)
	}
	// A worker's live heap is one call's: Go's default collector target
	// keeps it small, where the gate's GOGC=1000 (TuneGC) would
	// let each worker grow elevenfold.
	h, err := enginehost.Start(enginehost.Config{Command: []string{self, "engine-worker"}, Env: []string{"GOGC=100"},
		Size: o.workers, Deadline: o.deadline, Logger: log})
	if err != nil {
		return nil, err
	}
	log.Info("engine workers ready", "workers", o.workers, "deadline", o.deadline)
	return h, nil
}
