package sim

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"strconv"
	"testing"
	"time"
)

var (
	simulateFlag = flag.Bool("simulate", false, "run TestSimulate (make simulate)")
	seedFlag     = flag.String("seed", "", "make simulate: the first seed (unset: a random one, printed first)")
	timeFlag     = flag.Duration("time", 0, "make simulate: run seeds for this long (0: the one seed)")
	stepsFlag    = flag.Int("steps", 4000, "make simulate: steps per seed")
	traceFlag    = flag.Bool("trace", false, "make simulate: print every step's action")
)

// fixedSeeds run in every `go test`: a fixed budget, the same every time.
var fixedSeeds = []uint64{1, 2, 3, 0x5eed}

// TestSimulatorFixedSeeds runs the simulator over fixed seeds and checks
// it did what it is for: the runs went through failures, crashes,
// rebalances and zombie writes, and every invariant held.
func TestSimulatorFixedSeeds(t *testing.T) {
	steps := 3000
	if raceEnabled {
		steps = 300
	}
	var total Stats
	for _, seed := range fixedSeeds {
		st, err := Run(Options{Seed: seed, Steps: steps})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: %+v", seed, st)
		for _, c := range []struct{ sum, n *int }{
			{&total.Acked, &st.Acked}, {&total.AppendFailures, &st.AppendFailures},
			{&total.ProjectionFailures, &st.ProjectionFailures}, {&total.Conflicts, &st.Conflicts},
			{&total.Crashes, &st.Crashes}, {&total.Rebalances, &st.Rebalances}, {&total.ZombieAcks, &st.ZombieAcks},
			{&total.FullChecks, &st.FullChecks}, {&total.Approved, &st.Approved}, {&total.Denied, &st.Denied},
			{&total.Pending, &st.Pending}, {&total.BudgetExceeded, &st.BudgetExceeded}, {&total.Executed, &st.Executed},
			{&total.Resolved, &st.Resolved}, {&total.Expired, &st.Expired}, {&total.Rejected, &st.Rejected},
			{&total.Checkpoints, &st.Checkpoints}, {&total.A2AForwarded, &st.A2AForwarded}, {&total.A2ABlocked, &st.A2ABlocked},
			{&total.A2ARateLimited, &st.A2ARateLimited}, {&total.A2ABoundaryChanges, &st.A2ABoundaryChanges},
			{&total.ExecExecuting, &st.ExecExecuting}, {&total.ExecBlocked, &st.ExecBlocked}, {&total.ExecPending, &st.ExecPending},
			{&total.ExecCompleted, &st.ExecCompleted}, {&total.ExecTimers, &st.ExecTimers},
		} {
			*c.sum += *c.n
		}
	}
	if raceEnabled {
		return // too few steps to go through every fault: the plain pass checks the coverage
	}
	if total.Acked == 0 || total.AppendFailures == 0 || total.ProjectionFailures == 0 || total.Conflicts == 0 ||
		total.Crashes == 0 || total.Rebalances == 0 || total.ZombieAcks == 0 || total.FullChecks == 0 ||
		total.Approved == 0 || total.Denied == 0 || total.Pending == 0 || total.BudgetExceeded == 0 ||
		total.Executed == 0 || total.Resolved == 0 || total.Expired == 0 || total.Rejected == 0 || total.Checkpoints == 0 ||
		total.A2AForwarded == 0 || total.A2ABlocked == 0 || total.A2ARateLimited == 0 || total.A2ABoundaryChanges == 0 ||
		total.ExecExecuting == 0 || total.ExecBlocked == 0 || total.ExecPending == 0 || total.ExecCompleted == 0 || total.ExecTimers == 0 {
		t.Fatalf("the fixed seeds no longer cover every fault and every kind of event: %+v", total)
	}
}

// TestSimulate is `make simulate`: seeds from -seed (or a random one) for
// -time, -steps each; a failure names the seed that reproduces it.
func TestSimulate(t *testing.T) {
	if !*simulateFlag {
		t.Skip("run by make simulate (SEED=… TIME=…)")
	}
	var seed uint64
	if *seedFlag == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		seed = binary.LittleEndian.Uint64(b[:])
	} else {
		s, err := strconv.ParseUint(*seedFlag, 0, 64)
		if err != nil {
			t.Fatalf("-seed %q: %v", *seedFlag, err)
		}
		seed = s
	}
	end := time.Now().Add(*timeFlag)
	for n := 0; ; n++ {
		t.Logf("seed %d", seed)
		opts := Options{Seed: seed, Steps: *stepsFlag}
		if *traceFlag {
			opts.Trace = t.Logf
		}
		st, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d passed: %d events, %d acknowledged, %d crashes, %d rebalances, %d zombie appends",
			seed, st.Events, st.Acked, st.Crashes, st.Rebalances, st.ZombieAppends)
		if !time.Now().Before(end) {
			t.Logf("%d seeds passed", n+1)
			return
		}
		seed = nextSeed(seed)
	}
}

// nextSeed is splitmix64's step: the seeds of a long run, each printed.
func nextSeed(s uint64) uint64 {
	s += 0x9e3779b97f4a7c15
	z := s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// TestSimulatorCatchesInjectedBugs runs the simulator with each bug it can
// inject in its driver: a check must fail, naming the seed and the step.
func TestSimulatorCatchesInjectedBugs(t *testing.T) {
	for _, bug := range []Bug{BugRedeliveredDecidedAgain, BugAnswerBeforeAppend} {
		_, err := Run(Options{Seed: 1, Steps: 1500, Bug: bug})
		var f *Failure
		if !errors.As(err, &f) || f.Seed != 1 || f.Step == 0 {
			t.Fatalf("%s: %v, want a failure naming seed 1 and its step", bug, err)
		}
		t.Logf("%s: %v", bug, err)
	}
}

// TestSimulatorIsDeterministic runs a seed twice: the same steps write the
// same log and count the same events, so a failing seed reproduces.
func TestSimulatorIsDeterministic(t *testing.T) {
	a, err := Run(Options{Seed: 7, Steps: 800})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(Options{Seed: 7, Steps: 800})
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a.LogHead == "" {
		t.Fatalf("two runs of seed 7 differ:\n%+v\n%+v", a, b)
	}
}
