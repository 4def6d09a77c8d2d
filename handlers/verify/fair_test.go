package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/fair"
	"github.com/agentgate/agentgate/handlers/verify/z3pool"
)

// gated is an engine whose runs the test lets through one at a time: each
// run reports its query on entered and answers VERIFIED once it takes a
// token from release.
type gated struct {
	id      string
	entered chan string
	release chan struct{}
	stop    chan struct{} // closed when the test ends: every run ends
}

func newGated(id string) *gated {
	return &gated{id: id, entered: make(chan string, 32), release: make(chan struct{}), stop: make(chan struct{})}
}

func (g *gated) Capabilities() engines.Capabilities {
	return engines.Capabilities{EngineID: g.id, Name: "gated " + g.id, Version: "0.0.1",
		Capabilities: map[string]any{"gated": true}, InputTypes: []string{"expression"}, OutputTypes: []string{"verification_result"}}
}

func (g *gated) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	g.entered <- req.Query
	select {
	case <-g.release:
		return engines.Outcome{Status: engines.Verified, Result: map[string]any{"is_valid": true, "message": "let through"}}
	case <-g.stop:
		return engines.Outcome{Status: engines.Error}
	case <-ctx.Done():
		return engines.Outcome{Status: engines.Timeout}
	}
}

// enteredNext returns the query of the next run to enter g.
func (g *gated) enteredNext(t *testing.T) string {
	t.Helper()
	select {
	case q := <-g.entered:
		return q
	case <-time.After(20 * time.Second):
		t.Fatal("no engine run entered")
		return ""
	}
}

// waitUntil polls cond (a state the test drives into, not a timing): the
// bound only ends a test whose state never comes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func (s *server) principalKey(t *testing.T, principal string) string {
	t.Helper()
	key, _, err := command.IssueKey(context.Background(), s.gate.Worker, principal)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// answered is one HTTP exchange run on its own goroutine.
type answered struct {
	name   string
	status int
	header http.Header
	body   []byte
	err    error
}

// goPost posts body to path on its own goroutine; the answer, named name,
// arrives on out.
func (s *server) goPost(name, path string, h map[string]string, body string, out chan<- answered) {
	go func() {
		req, err := http.NewRequest("POST", s.srv.URL+path, bytes.NewReader([]byte(body)))
		if err != nil {
			out <- answered{name: name, err: err}
			return
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := s.client.Do(req)
		if err != nil {
			out <- answered{name: name, err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- answered{name: name, status: resp.StatusCode, header: resp.Header, body: b, err: err}
	}()
}

func mathQuery(q string) string { return `{"query":"` + q + `","type":"math"}` }

// Issue 11 item 7, POST /verify: principal A fills the engine's one slot
// and its own queue; its next request is refused at once (503,
// QWED-SYS-002, Retry-After) while principal B still queues, and B's
// request runs as soon as A's running one ends, before A's queue.
func TestIssue11_VerifyEngineQueueIsFairAcrossPrincipals(t *testing.T) {
	g := newGated("math")
	s := newServerWith(t, fair.Config{Slots: 1, PrincipalQueue: 3}, g)
	t.Cleanup(func() { close(g.stop) }) // before the server closes
	keyA, keyB := s.principalKey(t, "org_a"), s.principalKey(t, "org_b")
	q := s.reg.Queue("math")
	out := make(chan answered, 8)
	s.goPost("a0", "/verify", map[string]string{"X-API-Key": keyA}, mathQuery("a0"), out)
	if e := g.enteredNext(t); e != "a0" {
		t.Fatalf("entered %s", e)
	}
	for i := 1; i <= 3; i++ {
		s.goPost(fmt.Sprintf("a%d", i), "/verify", map[string]string{"X-API-Key": keyA}, mathQuery(fmt.Sprintf("a%d", i)), out)
		waitUntil(t, "A's queue", func() bool { return q.Waiting() == i })
	}
	r := s.do("POST", "/verify", map[string]string{"X-API-Key": keyA}, mathQuery("a4"))
	m := r.json(t)
	if r.status != 503 || r.code(t) != "QWED-SYS-002" || m["status"] != "ERROR" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("A's request past its queue: %d %s (Retry-After %q), want 503 QWED-SYS-002", r.status, r.body, r.header.Get("Retry-After"))
	}
	s.goPost("b0", "/verify", map[string]string{"X-API-Key": keyB}, mathQuery("b0"), out)
	waitUntil(t, "B's request to queue", func() bool { return q.Waiting() == 4 })
	g.release <- struct{}{} // a0 ends
	if e := g.enteredNext(t); e != "b0" {
		t.Fatalf("after A's running request the engine ran %s, want B's b0 before A's queue", e)
	}
	for range 3 {
		g.release <- struct{}{}
		g.enteredNext(t)
	}
	g.release <- struct{}{}
	for range 5 {
		a := <-out
		if a.err != nil || a.status != 200 || !bytes.Contains(a.body, []byte(`"VERIFIED"`)) {
			t.Fatalf("%s: %d %s %v", a.name, a.status, a.body, a.err)
		}
	}
}

// registerFor registers an agent of principal allowed the math engine.
func (s *server) registerFor(t *testing.T, principal, name string) (string, string) {
	t.Helper()
	r := s.do("POST", "/agents/register", map[string]string{"X-API-Key": adminKey},
		fmt.Sprintf(`{"agent":{"name":%q,"type":"supervised","principal_id":%q},"permissions":{"allowed_engines":["math"]}}`, name, principal))
	m := r.json(t)
	id, _ := m["agent_id"].(string)
	tok, _ := m["agent_token"].(string)
	if r.status != 201 || id == "" {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	return id, tok
}

func calculate(q string) string {
	return `{"action":{"type":"calculate","query":"` + q + `"},"context":{"conversation_id":"conv-` + q + `","step_number":1}}`
}

// Issue 11 item 7, verify_action: the engine verdicts of the gate's worker
// take turns by principal, then by agent. Agent x of org_a floods; y of
// org_b and z of org_a each send one: after x's running verdict, y's runs
// (a principal not served yet), then z's (an agent of org_a not served
// yet), then x's queue; x's request past org_a's queue gets an ERROR
// verdict with QWED-SYS-002 at once, and is not approved.
func TestIssue11_VerdictQueueIsFairAcrossPrincipalsAndAgents(t *testing.T) {
	g := newGated("math")
	s := newServerWith(t, fair.Config{Slots: 1, PrincipalQueue: 4}, g)
	t.Cleanup(func() { close(g.stop) }) // before the server closes
	q := s.reg.Queue("math")
	x, xt := s.registerFor(t, "org_a", "x")
	z, zt := s.registerFor(t, "org_a", "z")
	y, yt := s.registerFor(t, "org_b", "y")
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	out := make(chan answered, 8)
	s.goPost("x0", "/agents/"+x+"/verify", bearer(xt), calculate("x0"), out)
	if e := g.enteredNext(t); e != "x0" {
		t.Fatalf("entered %s", e)
	}
	for i := 1; i <= 3; i++ {
		s.goPost(fmt.Sprintf("x%d", i), "/agents/"+x+"/verify", bearer(xt), calculate(fmt.Sprintf("x%d", i)), out)
		waitUntil(t, "x's queue", func() bool { return q.Waiting() == i })
	}
	s.goPost("z0", "/agents/"+z+"/verify", bearer(zt), calculate("z0"), out)
	waitUntil(t, "z's request to queue", func() bool { return q.Waiting() == 4 })
	r := s.do("POST", "/agents/"+x+"/verify", bearer(xt), calculate("x4"))
	if m := r.json(t); m["decision"] != "PENDING" || !bytes.Contains(r.body, []byte(`"status":"ERROR"`)) || !bytes.Contains(r.body, []byte("queue is full")) {
		t.Fatalf("x's request past org_a's queue: %d %s, want an ERROR verdict (queue full): PENDING", r.status, r.body)
	}
	s.goPost("y0", "/agents/"+y+"/verify", bearer(yt), calculate("y0"), out)
	waitUntil(t, "y's request to queue", func() bool { return q.Waiting() == 5 })
	var order []string
	for range 5 {
		g.release <- struct{}{}
		order = append(order, g.enteredNext(t))
	}
	g.release <- struct{}{}
	if got := strings.Join(order, " "); got != "y0 z0 x1 x2 x3" {
		t.Fatalf("verdicts ran in the order x0 %s, want x0 y0 z0 x1 x2 x3", got)
	}
	for range 6 {
		a := <-out
		var m map[string]any
		if a.err != nil || json.Unmarshal(a.body, &m) != nil || m["decision"] != "APPROVED" {
			t.Fatalf("%s: %d %s %v", a.name, a.status, a.body, a.err)
		}
	}
}

// barrier is an engine whose runs wait until n of them are running at
// once: it answers VERIFIED only when the runs overlap.
type barrier struct {
	n       int
	entered atomic.Int32
	all     chan struct{}
}

func (b *barrier) Capabilities() engines.Capabilities {
	return engines.Capabilities{EngineID: "math", Name: "barrier", Version: "0.0.1",
		Capabilities: map[string]any{}, InputTypes: []string{"expression"}, OutputTypes: []string{"verification_result"}}
}

func (b *barrier) Verify(ctx context.Context, req engines.Request) engines.Outcome {
	if int(b.entered.Add(1)) == b.n {
		close(b.all)
	}
	select {
	case <-b.all:
		return engines.Outcome{Status: engines.Verified, Result: map[string]any{"is_valid": true, "message": "overlapped"}}
	case <-ctx.Done():
		return engines.Outcome{Status: engines.Timeout}
	}
}

// Issue 11 item 11, embedded: the worker never runs an engine on its own
// goroutine; the verdicts of concurrent verify_action requests overlap
// (each runs on its request's goroutine before the command is queued).
func TestIssue11_EmbeddedVerdictsOverlap(t *testing.T) {
	const n = 4
	b := &barrier{n: n, all: make(chan struct{})}
	s := newServer(t, b)
	out := make(chan answered, n)
	for i := range n {
		id, tok := s.registerFor(t, fmt.Sprintf("org_%d", i), "a")
		s.goPost(id, "/agents/"+id+"/verify", map[string]string{"Authorization": "Bearer " + tok}, calculate(fmt.Sprint(i)), out)
	}
	for range n {
		a := <-out
		var m map[string]any
		if a.err != nil || json.Unmarshal(a.body, &m) != nil || m["decision"] != "APPROVED" {
			t.Fatalf("%s: %d %s %v (the verdicts did not overlap)", a.name, a.status, a.body, a.err)
		}
	}
}

// Issue 11 item 7 end to end, with the real z3 pool behind the logic
// engine: principal A's hard queries (z3 stops each at the pool's 400 ms)
// hold the one process and fill A's queue; B's query is answered VERIFIED
// while A's queue still waits, and A's next query is refused 503 at once.
// Before fair queuing, B was refused 503 (the pool's one queue was full).
func TestIssue11_SolverFloodDoesNotStarveAnotherPrincipal(t *testing.T) {
	pool, err := z3pool.New(z3pool.Config{Size: 1, QueueLen: 3, Timeout: 400 * time.Millisecond, Grace: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("starting z3 (apt-get install z3): %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	s := newServer(t, logic.New(pool))
	keyA, keyB := s.principalKey(t, "org_a"), s.principalKey(t, "org_b")
	hard := `{"query":"(LET ((x Int) (y Int) (z Int)) (AND (EQ (PLUS (MULT x x x) (MULT y y y) (MULT z z z)) 42) (GT x 1000000)))","type":"logic","options":{"timeout_ms":60000}}`
	out := make(chan answered, 8)
	var doneA atomic.Int32
	relay := make(chan answered, 8) // never closed: a failing test leaves requests behind
	go func() {
		for a := range relay {
			doneA.Add(1)
			out <- a
		}
	}()
	s.goPost("a0", "/verify", map[string]string{"X-API-Key": keyA}, hard, relay)
	for i := 1; i <= 3; i++ {
		s.goPost(fmt.Sprintf("a%d", i), "/verify", map[string]string{"X-API-Key": keyA}, hard, relay)
		waitUntil(t, "A's queue", func() bool { return pool.Waiting() == i })
	}
	r := s.do("POST", "/verify", map[string]string{"X-API-Key": keyA}, hard)
	if r.status != 503 || r.code(t) != "QWED-SYS-002" || r.header.Get("Retry-After") == "" {
		t.Fatalf("A's query past its queue: %d %s, want 503 QWED-SYS-002 with Retry-After", r.status, r.body)
	}
	r = s.do("POST", "/verify", map[string]string{"X-API-Key": keyB}, `{"query":"(AND (GT x 5) (LT x 10))","type":"logic"}`)
	finishedA, waiting := doneA.Load(), pool.Waiting()
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"VERIFIED"`)) {
		t.Fatalf("B's query during A's flood: %d %s", r.status, r.body)
	}
	// B ran after A's first query; A's second may have ended meanwhile on
	// a slow machine (400 ms more), never the last two.
	if finishedA > 2 || waiting == 0 {
		t.Fatalf("B was answered after %d of A's 4 queries (%d still waiting), want before A's queue", finishedA, waiting)
	}
	for range 4 {
		a := <-out
		if a.err != nil || a.status != 504 || !bytes.Contains(a.body, []byte(`"TIMEOUT"`)) {
			t.Fatalf("%s: %d %s %v", a.name, a.status, a.body, a.err)
		}
	}
}
