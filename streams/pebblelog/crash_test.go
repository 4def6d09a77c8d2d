package pebblelog

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/logtest"
)

// crashDirEnv, when set, turns the test binary into the crash child: it
// appends to the log in that directory until it is killed.
const crashDirEnv = "AGENTGATE_PEBBLELOG_CRASH_DIR"

const crashPayloadBytes = 400

// crashBatchSize varies the batch size (1..64) deterministically with the
// position, by Fibonacci hashing.
func crashBatchSize(seq uint64) int { return int((seq*0x9E3779B97F4A7C15)>>58) + 1 }

// fsyncFailDirEnv, when set, turns the test binary into the fsync-failure
// child: it appends to the log in that directory, then makes the WAL's
// fsync fail and appends once more.
const fsyncFailDirEnv = "AGENTGATE_PEBBLELOG_FSYNCFAIL_DIR"

// TestMain runs a child instead of the tests when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(runCrashChild(dir))
	}
	if dir := os.Getenv(fsyncFailDirEnv); dir != "" {
		os.Exit(runFsyncFailChild(dir))
	}
	os.Exit(m.Run())
}

// runCrashChild appends batches forever, printing "try N" before each
// Append (N = the batch's last seq) and "ack N" after it returned nil.
// It exits by itself after a minute in case the parent died.
func runCrashChild(dir string) int {
	l, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
		return 2
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		head := l.Head()
		k := crashBatchSize(head.Seq)
		payloads := make([][]byte, k)
		for i := range payloads {
			payloads[i] = logtest.Payload(head.Seq+uint64(i)+1, crashPayloadBytes)
		}
		last := head.Seq + uint64(k)
		if _, err := fmt.Fprintf(os.Stdout, "try %d\n", last); err != nil {
			return 3
		}
		if err := l.Append(context.Background(), logtest.Records(head, payloads...)); err != nil {
			fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
			return 4
		}
		if _, err := fmt.Fprintf(os.Stdout, "ack %d\n", last); err != nil {
			return 3
		}
	}
	return 0
}

// crashSeed draws the batch sizes and kill delays of
// TestAcknowledgedAppendsSurviveSIGKILL: fixed, so that a run's rounds
// are the same every time (where the kill lands in them still depends on
// the machine); -crash-seed tries others.
var crashSeed = flag.Uint64("crash-seed", 1, "seed of TestAcknowledgedAppendsSurviveSIGKILL's batch sizes and kill delays")

// Invariant 2 (docs/ARCHITECTURE.md: the log is the commit point): every append
// acknowledged before a SIGKILL is on disk after the restart, the chain
// verifies, and no record beyond the last attempted batch appears.
func TestAcknowledgedAppendsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	seed := *crashSeed
	t.Logf("seed %d (-crash-seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	var lastAck uint64
	for round := range 4 {
		acks, tries := crashRound(t, dir, 20+rng.IntN(150), time.Duration(rng.IntN(3000))*time.Microsecond)
		if len(acks) == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}
		maxAck, maxTry := acks[len(acks)-1], tries[len(tries)-1]
		if acks[0] <= lastAck {
			t.Fatalf("round %d: first ack %d does not extend the previous round's %d", round, acks[0], lastAck)
		}
		lastAck = maxAck

		l, err := Open(dir, testOptions(t))
		if err != nil {
			t.Fatalf("round %d: reopening after SIGKILL: %v", round, err)
		}
		head := l.Head()
		if head.Seq < maxAck || head.Seq > maxTry {
			t.Fatalf("round %d: recovered head %d, want between the last ack %d and the last try %d", round, head.Seq, maxAck, maxTry)
		}
		if head.Seq != maxAck && head.Seq != maxTry {
			t.Fatalf("round %d: recovered head %d is inside a batch (last ack %d, last try %d)", round, head.Seq, maxAck, maxTry)
		}
		var n uint64
		err = l.Read(context.Background(), 1, func(r streams.Record) error {
			n++
			if r.Seq != n || !bytes.Equal(r.Payload, logtest.Payload(n, crashPayloadBytes)) {
				return fmt.Errorf("seq %d at position %d or its payload is wrong", r.Seq, n)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: reading back: %v", round, err)
		}
		if n != head.Seq {
			t.Fatalf("round %d: read %d records, head is %d", round, n, head.Seq)
		}
		if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
			t.Fatalf("round %d: verifying the chain: %v", round, err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("round %d: closing: %v", round, err)
		}
		t.Logf("round %d: %d acks, last ack %d, last try %d, recovered head %d", round, len(acks), maxAck, maxTry, head.Seq)
	}
}

// crashRound starts the child on dir, kills it with SIGKILL once it has
// acknowledged killAfter appends and delay has passed, and returns every
// acknowledged and attempted last seq it printed, in order.
func crashRound(t *testing.T, dir string, killAfter int, delay time.Duration) (acks, tries []uint64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("piping child stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting child: %v", err)
	}
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		kind, num, ok := strings.Cut(sc.Text(), " ")
		seq, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil {
			t.Fatalf("child printed %q", sc.Text())
		}
		switch kind {
		case "ack":
			acks = append(acks, seq)
		case "try":
			tries = append(tries, seq)
		}
		if !killed && len(acks) >= killAfter {
			time.Sleep(delay)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("killing child: %v", err)
			}
			killed = true
		}
	}
	if _, err := io.Copy(io.Discard, out); err != nil {
		t.Fatalf("draining child stdout: %v", err)
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed: %v\n%s", err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !ws.Signaled() {
		t.Fatalf("child was not killed by a signal: %v\n%s", err, stderr.String())
	}
	return acks, tries
}

// runFsyncFailChild appends seq 1..3, printing "ack N" after each, then
// injects an fsync error on the WAL and appends seq 4 after printing
// "try 4". Append must not return: if it does, the child prints
// "returned" and its error.
func runFsyncFailChild(dir string) int {
	var toggle errorfs.Toggle
	toggle.Injector = errorfs.ErrInjected
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		sync := op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo
		if sync && strings.HasSuffix(op.Path, ".log") {
			return toggle.MaybeError(op)
		}
		return nil
	})
	l, err := Open(dir, Options{FS: errorfs.Wrap(vfs.Default, inj)})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fsync child: %v\n", err)
		return 2
	}
	for seq := uint64(1); seq <= 4; seq++ {
		if seq == 4 {
			toggle.On()
			fmt.Fprintf(os.Stdout, "try %d\n", seq)
		}
		err := l.Append(context.Background(), logtest.Records(l.Head(), logtest.Payload(seq, crashPayloadBytes)))
		if seq == 4 {
			fmt.Fprintf(os.Stdout, "returned %v\n", err)
			return 0
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "fsync child: %v\n", err)
			return 2
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", seq)
	}
	return 0
}

// Invariant 2 (docs/ARCHITECTURE.md: the log is the commit point): when the WAL
// fsync fails, Append never reports success — the process dies (Pebble's fatal
// commit error) — and after the restart every acknowledged record is there and
// the chain verifies.
func TestFailedFsyncIsFatalAndRecoverable(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fsyncFailDirEnv+"="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		t.Fatalf("child exited cleanly; stdout:\n%s", stdout.String())
	}
	if want := "ack 1\nack 2\nack 3\ntry 4\n"; stdout.String() != want {
		t.Fatalf("child printed %q, want %q (Append must not return after a failed fsync)", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "fatal commit error") {
		t.Fatalf("child did not die of the fatal commit error: %v\n%s", err, stderr.String())
	}

	l := openAt(t, dir)
	head := l.Head().Seq
	if head != 3 && head != 4 {
		t.Fatalf("recovered head %d, want 3 (or 4 if the batch reached the disk)", head)
	}
	var n uint64
	err = l.Read(context.Background(), 1, func(r streams.Record) error {
		n++
		if r.Seq != n || !bytes.Equal(r.Payload, logtest.Payload(n, crashPayloadBytes)) {
			return fmt.Errorf("seq %d at position %d or its payload is wrong", r.Seq, n)
		}
		return nil
	})
	if err != nil || n != head {
		t.Fatalf("read %d records (head %d): %v", n, head, err)
	}
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying: %v", err)
	}
	if err := l.Append(context.Background(), logtest.Records(l.Head(), logtest.Payload(head+1, crashPayloadBytes))); err != nil {
		t.Fatalf("appending after the restart: %v", err)
	}
}
