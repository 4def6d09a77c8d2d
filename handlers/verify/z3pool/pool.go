package z3pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/handlers/fair"
)

// Defaults of Config.
const (
	// DefaultTimeout is the per-query solver time limit.
	DefaultTimeout = 5 * time.Second
	// DefaultGrace is how long past its timeout a query may run before its
	// process is killed.
	DefaultGrace = time.Second
	// MaxLineBytes is the longest line the pool reads from z3.
	MaxLineBytes = 4 << 20
	// MaxAnswerBytes is the largest answer (all lines of one query).
	MaxAnswerBytes = 8 << 20
)

// Config configures a Pool.
type Config struct {
	// Path is the z3 binary ("z3": looked up on PATH).
	Path string
	// Size is the number of processes (default runtime.NumCPU()).
	Size int
	// QueueLen is how many queries of one principal may wait for a
	// process (default 4*Size); the principals' queues are apart, served
	// fairly (package fair).
	QueueLen int
	// MaxPrincipals is how many principals the pool's queue knows at once
	// (default fair.DefaultMaxPrincipals).
	MaxPrincipals int
	// Timeout is the per-query solver time limit (default
	// DefaultTimeout); a ctx deadline that comes sooner wins.
	Timeout time.Duration
	// Grace is how long past Timeout the pool waits before it kills the
	// process (default DefaultGrace).
	Grace time.Duration
	// MemoryMB caps each process's memory (z3's memory_max_size; 0: z3's
	// default, no cap).
	MemoryMB int
	// Logger receives restarts (default slog.Default()).
	Logger *slog.Logger
}

// Stats are counters of a Pool.
type Stats struct {
	Queries  uint64 // queries answered (any outcome)
	Starts   uint64 // processes started, restarts included
	Kills    uint64 // processes killed on a hard deadline, a cancelled ctx or an I/O error
	Timeouts uint64 // queries past their hard deadline
}

// Pool is a pool of z3 processes; it implements logic.Solver.
type Pool struct {
	cfg    Config
	path   string
	slots  chan *proc // idle slots (a nil *proc: start one)
	queue  *fair.Scheduler
	closed atomic.Bool
	mu     sync.Mutex
	live   map[*proc]struct{}
	nonce  atomic.Uint64

	queries, starts, kills, timeouts atomic.Uint64
}

var _ logic.Solver = (*Pool)(nil)

// New starts a warm pool of cfg.Size z3 processes. It answers an error
// wrapping logic.ErrSolverUnavailable when z3 cannot be found or started.
func New(cfg Config) (*Pool, error) {
	if cfg.Path == "" {
		cfg.Path = "z3"
	}
	if cfg.Size <= 0 {
		cfg.Size = runtime.NumCPU()
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 4 * cfg.Size
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	path, err := exec.LookPath(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("finding z3 (install the Debian package z3): %w: %w", logic.ErrSolverUnavailable, err)
	}
	p := &Pool{
		cfg:   cfg,
		path:  path,
		slots: make(chan *proc, cfg.Size),
		queue: fair.New(fair.Config{Slots: cfg.Size, PrincipalQueue: cfg.QueueLen, MaxPrincipals: cfg.MaxPrincipals}),
		live:  map[*proc]struct{}{},
	}
	for i := 0; i < cfg.Size; i++ {
		pr, err := p.start()
		if err != nil {
			p.Close()
			return nil, err
		}
		p.slots <- pr
	}
	return p, nil
}

// proc is one z3 process.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string   // stdout, line by line; closed at EOF
	done  chan struct{} // closed once the process is reaped
	// warming is the marker that ends the warm-up sent after the last
	// query ("": none pending).
	warming string
}

func (p *Pool) start() (*proc, error) {
	// The warm-up and every query use z3's incremental solver (a query
	// comes after the warm-up's check-sat); ignoring the one-shot solver
	// from the start halves the cost of creating the solver.
	args := []string{"-in", "-smt2", "combined_solver.ignore_solver1=true"}
	if p.cfg.MemoryMB > 0 {
		args = append(args, "memory_max_size="+strconv.Itoa(p.cfg.MemoryMB))
	}
	cmd := exec.Command(p.path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting z3: %w: %w", logic.ErrSolverUnavailable, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting z3: %w: %w", logic.ErrSolverUnavailable, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting z3: %w: %w", logic.ErrSolverUnavailable, err)
	}
	p.starts.Add(1)
	pr := &proc{cmd: cmd, stdin: stdin, lines: make(chan string, 64), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
		for sc.Scan() {
			pr.lines <- sc.Text()
		}
		close(pr.lines)
		_ = cmd.Wait()
		close(pr.done)
	}()
	p.mu.Lock()
	p.live[pr] = struct{}{}
	p.mu.Unlock()
	if err := p.warm(pr); err != nil {
		p.kill(pr)
		return nil, fmt.Errorf("starting z3: %w: %w", logic.ErrSolverUnavailable, err)
	}
	return pr, nil
}

// warmup starts a fresh solver state: (reset) forgets every declaration,
// assertion and learned fact, and the (check-sat) of nothing creates the
// solver, which costs z3 several milliseconds; sent after each query, it
// runs while the process is idle. Every query thus starts from the same
// state (this exact sequence), so its answer and model depend on the
// query alone. It also puts z3 in its incremental mode, whose nonlinear
// arithmetic answers unknown where the one-shot mode would search on.
const warmup = "(reset)\n(check-sat)\n"

// warm sends the warm-up to pr; the next run reads its answer first.
func (p *Pool) warm(pr *proc) error {
	pr.warming = "@@agentgate-z3pool warm " + strconv.FormatUint(p.nonce.Add(1), 10)
	_, err := io.WriteString(pr.stdin, warmup+"(echo \""+pr.warming+"\")\n")
	if err != nil {
		return fmt.Errorf("writing the warm-up: %w", err)
	}
	return nil
}

// kill ends pr and forgets it; it does not wait for it.
func (p *Pool) kill(pr *proc) {
	p.kills.Add(1)
	p.mu.Lock()
	delete(p.live, pr)
	p.mu.Unlock()
	_ = pr.cmd.Process.Kill()
	_ = pr.stdin.Close()
}

// Waiting returns how many queries wait for a process.
func (p *Pool) Waiting() int { return p.queue.Waiting() }

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	return Stats{Queries: p.queries.Load(), Starts: p.starts.Load(), Kills: p.kills.Load(), Timeouts: p.timeouts.Load()}
}

// Close kills every process; queries running fail and later ones answer
// logic.ErrSolverUnavailable. It is safe to call more than once.
func (p *Pool) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.mu.Lock()
	live := make([]*proc, 0, len(p.live))
	for pr := range p.live {
		live = append(live, pr)
	}
	p.live = map[*proc]struct{}{}
	p.mu.Unlock()
	for _, pr := range live {
		_ = pr.cmd.Process.Kill()
		_ = pr.stdin.Close()
	}
	for _, pr := range live {
		<-pr.done
	}
	return nil
}

var errClosed = fmt.Errorf("z3 pool closed: %w", logic.ErrSolverUnavailable)

// Solve runs q on one process (logic.Solver), in its turn among the
// queries of ctx's tenant (fair.TenantOf).
func (p *Pool) Solve(ctx context.Context, q logic.Query) (logic.Answer, error) {
	if p.closed.Load() {
		return logic.Answer{}, errClosed
	}
	release, err := p.queue.Acquire(ctx, fair.TenantOf(ctx))
	if errors.Is(err, fair.ErrBusy) {
		return logic.Answer{}, fmt.Errorf("queueing z3 query: %w: %w", logic.ErrSolverBusy, err)
	}
	if err != nil {
		return logic.Answer{}, fmt.Errorf("waiting for a z3 process: %w", err)
	}
	// The process goes back to slots (deferred below) before the turn is
	// released: whoever gets the turn finds one.
	defer release()
	var pr *proc
	select {
	case pr = <-p.slots:
	case <-ctx.Done():
		return logic.Answer{}, fmt.Errorf("waiting for a z3 process: %w", ctx.Err())
	}
	defer func() { p.slots <- pr }() // pr is nil after a failure: restarted on next use
	if p.closed.Load() {
		pr = nil
		return logic.Answer{}, errClosed
	}
	if pr == nil {
		var err error
		if pr, err = p.start(); err != nil {
			if p.closed.Load() {
				return logic.Answer{}, errClosed
			}
			return logic.Answer{}, fmt.Errorf("restarting z3: %w: %w", logic.ErrSolverInit, err)
		}
		p.cfg.Logger.Warn("z3pool: restarted a z3 process")
	}
	p.queries.Add(1)
	ans, err := p.run(ctx, pr, q)
	if err != nil {
		p.kill(pr)
		pr = nil
	}
	return ans, err
}

// run sends q to pr and reads the answer.
func (p *Pool) run(ctx context.Context, pr *proc, q logic.Query) (logic.Answer, error) {
	timeout := p.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if timeout < time.Millisecond {
		return logic.Answer{}, fmt.Errorf("starting z3 query: %w", context.DeadlineExceeded)
	}
	n := p.nonce.Add(1)
	mark := func(s string) string { return "@@agentgate-z3pool " + strconv.FormatUint(n, 10) + " " + s }
	var b strings.Builder
	b.Grow(len(q.Script) + 256)
	b.WriteString("(set-option :timeout " + strconv.FormatInt(timeout.Milliseconds(), 10) + ")\n")
	b.WriteString(q.Script)
	b.WriteString("\n(echo \"" + mark("script") + "\")\n(check-sat)\n(echo \"" + mark("check") + "\")\n")
	if len(q.Values) > 0 {
		b.WriteString("(get-value (" + strings.Join(q.Values, " ") + "))\n")
	}
	b.WriteString("(echo \"" + mark("values") + "\")\n(get-info :reason-unknown)\n(echo \"" + mark("end") + "\")\n")

	hard := time.NewTimer(timeout + p.cfg.Grace)
	defer hard.Stop()
	werr := make(chan error, 1)
	go func() { _, err := io.WriteString(pr.stdin, b.String()); werr <- err }()

	sections := map[string][]string{}
	var cur []string
	size := 0
	marks := []string{pr.warming, mark("script"), mark("check"), mark("values"), mark("end")}
	names := []string{"warm", "script", "check", "values", "end"}
	if pr.warming == "" {
		marks, names = marks[1:], names[1:]
	}
	var checkStart, checkEnd time.Time // when check-sat began and answered
	for i, sec := range names {
		cur = nil
		for done := false; !done; {
			select {
			case line, ok := <-pr.lines:
				if !ok {
					return logic.Answer{}, fmt.Errorf("reading z3 answer: the process exited (%v)", p.exitErr(pr))
				}
				if line == marks[i] {
					switch sec {
					case "script":
						checkStart = time.Now()
					case "check":
						checkEnd = time.Now()
					}
					done = true
					break
				}
				size += len(line)
				if size > MaxAnswerBytes {
					return logic.Answer{}, fmt.Errorf("reading z3 answer: longer than %d bytes", MaxAnswerBytes)
				}
				cur = append(cur, line)
			case err := <-werr:
				if err != nil {
					return logic.Answer{}, fmt.Errorf("writing z3 query: %w", err)
				}
				werr = nil
			case <-hard.C:
				p.timeouts.Add(1)
				return logic.Answer{}, fmt.Errorf("waiting for z3 past %v: %w", timeout+p.cfg.Grace, logic.ErrSolverTimeout)
			case <-ctx.Done():
				return logic.Answer{}, fmt.Errorf("waiting for z3: %w", ctx.Err())
			}
		}
		sections[sec] = cur
	}
	pr.warming = ""
	if w := sections["warm"]; len(w) > 1 || len(w) == 1 && w[0] != "sat" {
		return logic.Answer{}, fmt.Errorf("warming up: z3 answered %s", strings.Join(w, " "))
	}
	if errs := sections["script"]; len(errs) > 0 {
		return logic.Answer{}, fmt.Errorf("loading the script: z3 answered %s", strings.Join(errs, " "))
	}
	check := strings.TrimSpace(strings.Join(sections["check"], "\n"))
	ans := logic.Answer{Status: check}
	switch check {
	case logic.Sat:
		if len(q.Values) > 0 {
			ans.Values = strings.Join(sections["values"], "\n")
			if strings.HasPrefix(ans.Values, "(error") {
				return logic.Answer{}, fmt.Errorf("reading values: z3 answered %s", ans.Values)
			}
		}
	case logic.Unsat:
	case logic.Unknown:
		ans.Reason = unknownReason(reasonUnknown(strings.Join(sections["end"], " ")), checkEnd.Sub(checkStart), timeout)
	default:
		return logic.Answer{}, fmt.Errorf("checking: z3 answered %q", check)
	}
	if err := p.warm(pr); err != nil {
		return logic.Answer{}, err
	}
	return ans, nil
}

func (p *Pool) exitErr(pr *proc) error {
	select {
	case <-pr.done:
		if pr.cmd.ProcessState != nil {
			return errors.New(pr.cmd.ProcessState.String())
		}
	case <-time.After(100 * time.Millisecond):
	}
	return errors.New("no exit status")
}

// unknownReason is the reason of an unknown answer that took ran of a
// check-sat limited to limit: "timeout" once the limit has (all but)
// passed, whatever z3 gave (a timeout that strikes inside a theory solver
// can leave that solver's own reason, such as "incomplete (theory
// arithmetic)", where "timeout" is the truth), z3's reason otherwise.
// "All but": z3's clock starts before the pool sees check-sat begin (its
// output is buffered), so ran reads a few per cent short of the limit
// that stopped it; an unknown given in the last tenth of the limit is
// called a timeout.
func unknownReason(reason string, ran, limit time.Duration) string {
	if ran >= limit-limit/10 {
		return "timeout"
	}
	return reason
}

// reasonUnknown reads (:reason-unknown "timeout").
func reasonUnknown(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "(:reason-unknown")
	s = strings.TrimSuffix(s, ")")
	s = strings.TrimSpace(s)
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}
