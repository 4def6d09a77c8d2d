package enginehost

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/handlers/fair"
)

// Defaults of Config.
const (
	// DefaultDeadline bounds one engine call in a worker; past it the
	// worker is killed and the call answers ERROR (QWED-ENG-002).
	DefaultDeadline = 10 * time.Second
	// DefaultQueueLen is how many calls of one principal may wait for a
	// worker; past it the principal's call answers ERROR (QWED-SYS-002).
	DefaultQueueLen = 256
	// MaxSize bounds Config.Size.
	MaxSize = 64
	// HelloTimeout is the least a starting worker is given to send its
	// hello, whatever Config.Deadline says: a worker's start (a process
	// exec on a loaded machine, a race-instrumented binary) is not an
	// engine call, and a short call deadline must not make the gate
	// refuse to start.
	HelloTimeout = 10 * time.Second
)

// DefaultSize is the default number of workers: one per CPU, at least 2
// and at most 8.
func DefaultSize() int { return min(max(runtime.NumCPU(), 2), 8) }

// Config configures a Host.
type Config struct {
	// Command is the worker's command line: the gate's own binary and
	// its hidden engine-worker command. Required.
	Command []string
	// Env is added to the worker's environment, which is the gate's
	// without the AGENTGATE_ variables.
	Env []string
	// Size is the number of workers, 1..MaxSize (0: DefaultSize()).
	Size int
	// QueueLen is how many calls of one principal may wait for a worker
	// (0: DefaultQueueLen); the principals' queues are apart, served
	// fairly (package fair).
	QueueLen int
	// Deadline bounds one call (0: DefaultDeadline).
	Deadline time.Duration
	// Stderr receives the workers' standard error (nil: os.Stderr): a
	// worker's crash report lands in the gate's log stream.
	Stderr io.Writer
	// Logger receives deaths and restarts (nil: slog.Default()).
	Logger *slog.Logger
}

// Stats are counters of a Host.
type Stats struct {
	Calls     uint64 // calls sent to a worker
	Starts    uint64 // workers started, restarts included
	Deaths    uint64 // workers that died during a call
	Timeouts  uint64 // calls past the deadline (the worker was killed)
	Refusals  uint64 // calls refused: queue full or host closed
	WorkerPID int    // a live worker's process id (0: none); for tests
}

// Host runs engines in a pool of worker processes; it is safe for
// concurrent use.
type Host struct {
	cfg    Config
	slots  chan *worker    // idle slots (nil: start a worker on use)
	queue  *fair.Scheduler // turns on the workers, by tenant
	closed atomic.Bool
	mu     sync.Mutex
	live   map[*worker]struct{}
	served []string // the engine ids the workers serve
	nextID atomic.Uint64

	calls, starts, deaths, timeouts, refusals atomic.Uint64
}

// worker is one worker process.
type worker struct {
	cmd  *exec.Cmd
	in   *os.File // the worker's stdin, our end
	out  *os.File // the worker's stdout, our end
	rd   *bufio.Reader
	done chan struct{} // closed once the process is reaped
}

// Start starts the pool warm: Size workers, each checked to speak
// Protocol. It fails when the first cannot be started.
func Start(cfg Config) (*Host, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("starting engine workers: Config.Command is required")
	}
	if cfg.Size == 0 {
		cfg.Size = DefaultSize()
	}
	if cfg.Size < 1 || cfg.Size > MaxSize {
		return nil, fmt.Errorf("starting engine workers: size %d is not in 1..%d", cfg.Size, MaxSize)
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Host{
		cfg:   cfg,
		slots: make(chan *worker, cfg.Size),
		queue: fair.New(fair.Config{Slots: cfg.Size, PrincipalQueue: cfg.QueueLen}),
		live:  map[*worker]struct{}{},
	}
	for range cfg.Size {
		w, served, err := h.start()
		if err != nil {
			_ = h.Close()
			return nil, err
		}
		h.served = served
		h.slots <- w
	}
	return h, nil
}

// start starts one worker and reads its hello.
func (h *Host) start() (*worker, []string, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("starting an engine worker: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_, _ = inR.Close(), inW.Close()
		return nil, nil, fmt.Errorf("starting an engine worker: %w", err)
	}
	cmd := exec.Command(h.cfg.Command[0], h.cfg.Command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, h.cfg.Stderr
	cmd.Env = append(workerEnv(os.Environ()), h.cfg.Env...)
	err = cmd.Start()
	// The worker holds its ends now (or never will): ours are closed, so
	// that its death is our EOF and our death its EOF.
	_, _ = inR.Close(), outW.Close()
	if err != nil {
		_, _ = inW.Close(), outR.Close()
		return nil, nil, fmt.Errorf("starting an engine worker: %w", err)
	}
	h.starts.Add(1)
	w := &worker{cmd: cmd, in: inW, out: outR, rd: bufio.NewReader(outR), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(w.done)
	}()
	h.mu.Lock()
	h.live[w] = struct{}{}
	h.mu.Unlock()
	if h.closed.Load() { // Close ran while it started: it did not see it
		h.kill(w)
		return nil, nil, errors.New("starting an engine worker: the host is closed")
	}
	var hi hello
	_ = w.out.SetReadDeadline(time.Now().Add(max(h.cfg.Deadline, HelloTimeout)))
	if err := readFrame(w.rd, &hi); err != nil || hi.Protocol != Protocol {
		h.kill(w)
		if err == nil {
			err = fmt.Errorf("it said %q, not %q", hi.Protocol, Protocol)
		}
		return nil, nil, fmt.Errorf("starting an engine worker (%s): reading its hello: %w (%s)", h.cfg.Command[0], err, w.exit())
	}
	return w, hi.Engines, nil
}

// workerEnv is the gate's environment without its own settings
// (AGENTGATE_*, the admin key among them): a worker needs none of them,
// and a parser subverted by its input finds no secret there.
func workerEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AGENTGATE_") {
			out = append(out, kv)
		}
	}
	return out
}

// kill ends w and reaps it.
func (h *Host) kill(w *worker) {
	h.mu.Lock()
	delete(h.live, w)
	h.mu.Unlock()
	_ = w.cmd.Process.Kill()
	_, _ = w.in.Close(), w.out.Close()
	<-w.done
}

// exit describes how w ended ("running" when it has not).
func (w *worker) exit() string {
	select {
	case <-w.done:
		return w.cmd.ProcessState.String()
	default:
		return "running"
	}
}

// dead reports whether w has exited.
func (w *worker) dead() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	s := Stats{Calls: h.calls.Load(), Starts: h.starts.Load(), Deaths: h.deaths.Load(),
		Timeouts: h.timeouts.Load(), Refusals: h.refusals.Load()}
	h.mu.Lock()
	for w := range h.live {
		if !w.dead() && (s.WorkerPID == 0 || w.cmd.Process.Pid < s.WorkerPID) {
			s.WorkerPID = w.cmd.Process.Pid
		}
	}
	h.mu.Unlock()
	return s
}

// Close kills every worker; calls running answer ERROR, later ones
// QWED-SYS-002. It is safe to call more than once.
func (h *Host) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	h.mu.Lock()
	live := make([]*worker, 0, len(h.live))
	for w := range h.live {
		live = append(live, w)
	}
	h.mu.Unlock()
	for _, w := range live {
		h.kill(w)
	}
	return nil
}

// Isolate returns an engine with e's capabilities whose calls run in the
// workers: e's id must be one the workers serve. A call that kills its
// worker, or outlasts Config.Deadline, answers ERROR with QWED-ENG-002;
// the worker is replaced for the next call. Isolate panics on an engine
// the workers do not serve (a wiring error, found at start).
func (h *Host) Isolate(e engines.Engine) engines.Engine {
	caps := e.Capabilities()
	if !slices.Contains(h.served, caps.EngineID) {
		panic(fmt.Sprintf("enginehost: the workers do not serve the %q engine (they serve %v)", caps.EngineID, h.served))
	}
	return &isolated{h: h, caps: caps}
}

// isolated is an engine served by the workers.
type isolated struct {
	h    *Host
	caps engines.Capabilities
}

func (e *isolated) Capabilities() engines.Capabilities { return e.caps }

// Verify sends req to a worker, in its turn among the calls of ctx's
// tenant (fair.TenantOf). It returns when the worker answers, or when ctx
// ends (TIMEOUT, QWED-ENG-003); the worker's slot is held until the worker
// answers or is killed at the deadline, so that at most Size calls run at
// once.
func (e *isolated) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	h := e.h
	if h.closed.Load() {
		h.refusals.Add(1)
		return unavailable("the engine workers are stopped")
	}
	release, err := h.queue.Acquire(ctx, fair.TenantOf(ctx))
	var busy *fair.BusyError
	switch {
	case errors.As(err, &busy):
		h.refusals.Add(1)
		return unavailable("waiting for an engine worker: " + busy.Error())
	case err != nil:
		return canceled(ctx)
	}
	// A turn finds a slot: the slot goes back before the turn (below).
	var w *worker
	select {
	case w = <-h.slots:
	case <-ctx.Done():
		release()
		return canceled(ctx)
	}
	res := make(chan engines.Outcome, 1)
	go func() {
		defer release()
		o, next := h.call(w, e.caps.EngineID, req)
		h.slots <- next
		res <- o
	}()
	select {
	case o := <-res:
		return o
	case <-ctx.Done():
		return canceled(ctx)
	}
}

// call runs one request on w (a fresh worker when w is nil or dead) and
// returns the outcome and the worker for the slot (nil after a failure).
// A request that could not be written was never read: it is sent once
// more, to a fresh worker (the first had ended while idle).
func (h *Host) call(w *worker, engine string, req engines.Request) (engines.Outcome, *worker) {
	for attempt := 0; ; attempt++ {
		if h.closed.Load() {
			return unavailable("the engine workers are stopped"), w
		}
		if w != nil && w.dead() {
			h.forget(w)
			w = nil
		}
		if w == nil {
			var err error
			if w, _, err = h.start(); err != nil {
				h.cfg.Logger.Error("enginehost: starting a worker", "err", err)
				return initFailed("worker_start", "no engine worker could be started"), nil
			}
			h.cfg.Logger.Warn("enginehost: started a worker in place of one that ended", "pid", w.cmd.Process.Pid)
		}
		h.calls.Add(1)
		id := h.nextID.Add(1)
		deadline := time.Now().Add(h.cfg.Deadline)
		_ = w.in.SetWriteDeadline(deadline)
		_ = w.out.SetReadDeadline(deadline)
		err := writeFrame(w.in, request{ID: id, Engine: engine, Query: req.Query, Params: req.Params,
			IncludeProof: req.IncludeProof, DeadlineMS: h.cfg.Deadline.Milliseconds()})
		if err != nil && attempt == 0 && !errors.Is(err, os.ErrDeadlineExceeded) {
			h.forget(w)
			w = nil
			continue
		}
		var a answer
		if err == nil {
			err = readFrame(w.rd, &a)
		}
		if err == nil && a.ID != id {
			err = fmt.Errorf("answer %d to request %d", a.ID, id)
		}
		if err == nil {
			return a.outcome(), w
		}
		return h.failure(w, engine, req, err), nil
	}
}

// failure kills w, whose call failed with err, and answers ERROR.
func (h *Host) failure(w *worker, engine string, req engines.Request, err error) engines.Outcome {
	h.kill(w)
	if h.closed.Load() {
		return unavailable("the engine workers are stopped")
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		h.timeouts.Add(1)
		h.cfg.Logger.Warn("enginehost: killed a worker past its deadline", "engine", engine, "deadline", h.cfg.Deadline,
			"query_bytes", len(req.Query))
		o := failed("the %s engine did not answer within %v", engine, h.cfg.Deadline)
		o.Err.Details = map[string]any{"reason": "deadline", "deadline_ms": h.cfg.Deadline.Milliseconds()}
		return o
	}
	h.deaths.Add(1)
	h.cfg.Logger.Error("enginehost: a worker died during a call", "engine", engine, "exit", w.exit(), "err", err,
		"query_bytes", len(req.Query))
	o := failed("the %s engine's worker process ended during the call (%s)", engine, w.exit())
	o.Err.Details = map[string]any{"reason": "worker_died"}
	return o
}

// forget drops a worker that ended while idle.
func (h *Host) forget(w *worker) {
	h.kill(w)
	h.cfg.Logger.Warn("enginehost: a worker ended while idle", "exit", w.exit())
}

// unavailable is an ERROR outcome with QWED-SYS-002.
func unavailable(why string) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: string(domain.CodeUnavailable),
		Message: "Service unavailable: " + why + "; retry later"}}
}

// canceled is the outcome of a call whose ctx ended first.
func canceled(ctx context.Context) engines.Outcome {
	msg := "verification canceled"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = "verification timed out waiting for the engine worker"
	}
	return engines.Outcome{Status: engines.Timeout, Err: &engines.Problem{Code: string(domain.CodeTimeout), Message: msg}}
}
