package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

const (
	killPartitions = 4
	killAdminKey   = "kill-admin-key"
)

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// kafkaGateProcess is one `agentgate serve --kafka-brokers` process.
type kafkaGateProcess struct {
	cmd  *exec.Cmd
	http string
	log  *syncBuffer
}

func startKafkaGate(t *testing.T, bin, broker, data string, extra ...string) *kafkaGateProcess {
	t.Helper()
	g := &kafkaGateProcess{log: &syncBuffer{}}
	g.cmd = exec.Command(bin, append([]string{"serve", "--kafka-brokers", broker, "--kafka-partitions", strconv.Itoa(killPartitions),
		"--kafka-session-timeout", "2s", "--data", data, "--http", "127.0.0.1:0", "--api-key", killAdminKey, "--z3-procs", "1"}, extra...)...)
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			_ = g.cmd.Process.Signal(syscall.SIGTERM)
			_ = g.cmd.Wait()
		}
	})
	g.http = announcedAddr(t, g.log, "serve --kafka-brokers", 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + g.http + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gate on %s never healthy:\n%s", g.http, g.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// partitions returns the partitions of the process's last group
// generation (from its log), nil before it joined one.
func (g *kafkaGateProcess) partitions() []string {
	lines := strings.Split(g.log.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.Contains(lines[i], `msg="group generation"`) {
			continue
		}
		_, after, _ := strings.Cut(lines[i], "partitions=")
		list, _, _ := strings.Cut(strings.TrimLeft(after, `"[`), "]")
		return strings.Fields(list)
	}
	return nil
}

// servesAll reports whether the process restored every partition of its
// last generation after that generation began.
func (g *kafkaGateProcess) servesAll() bool {
	l := g.log.String()
	at := strings.LastIndex(l, `msg="group generation"`)
	if at < 0 {
		return false
	}
	for _, p := range g.partitions() {
		n, _ := strconv.Atoi(p)
		if !g.restoredSince(n, at) {
			return false
		}
	}
	return true
}

// waitServesAll waits (30 s at most) until the process alone serves every
// partition, each restored in its last generation.
func (g *kafkaGateProcess) waitServesAll(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(g.partitions()) != killPartitions || !g.servesAll() {
		if time.Now().After(deadline) {
			t.Fatalf("the gate never served every partition:\n%s", g.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restoredSince reports whether the process restored partition p after
// the first from bytes of its log.
func (g *kafkaGateProcess) restoredSince(p, from int) bool {
	return strings.Contains(g.log.String()[from:], fmt.Sprintf(`msg="partition restored" partition=%d `, p))
}

// sent is one verify request of the load and what the gate answered.
type sent struct {
	id, agent, conv string
	step            int
	async           bool
}

// Issue 3 "two gate processes in one group with one killed (kill -9)
// mid-load": two `agentgate serve --kafka-brokers` processes with their own
// data dirs share the partitions of an `agentgate dev-kafka` broker; a Go
// client drives request-reply and async load through Kafka; one gate is
// killed with SIGKILL mid-load. Its partitions move to the survivor, which
// restores them from the events topic. Then: every request is decided
// exactly once (one event per request id in the events topic, including
// those the killed gate decided but never answered), every request-reply
// answer is APPROVED for the step asked, no conversation step is consumed
// twice, and the conversations keep their step (LOOP-002) and loop
// (LOOP-003) state across the move. Then the survivor's engines: POST
// /verify with the z3 logic engine, verify_action with the math engine.
func TestKafkaKill9TwoGatesExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	broker := devKafkaProcess(t, bin, filepath.Join(t.TempDir(), "broker"))
	a := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate-a"))
	b := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate-b"))
	// Wait until the two share the partitions.
	deadline := time.Now().Add(30 * time.Second)
	for len(a.partitions()) == 0 || len(b.partitions()) == 0 || len(a.partitions())+len(b.partitions()) != killPartitions ||
		!a.servesAll() || !b.servesAll() {
		if time.Now().After(deadline) {
			t.Fatalf("the gates never shared the partitions: a %v b %v\n%s\n%s", a.partitions(), b.partitions(), a.log, b.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	victim, survivor := a, b
	t.Logf("gate a owns %v, gate b owns %v; killing a", a.partitions(), b.partitions())

	ctx := context.Background()
	c, err := client.New(ctx, client.Config{Brokers: []string{broker}, Source: "kill9-test", Timeout: 3 * time.Second, Logger: kafkaTestLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// request sends cmd until it is answered (a client retries with the
	// same id when a reply does not come: the partition is moving).
	request := func(cmd client.Command) (*client.Reply, error) {
		for try := 0; ; try++ {
			rep, err := c.Request(ctx, cmd)
			if err == nil && rep.Status != 503 {
				return rep, nil
			}
			if try == 20 || (err != nil && !errors.Is(err, client.ErrTimeout)) {
				return rep, fmt.Errorf("request %s: %v (status %v)", cmd.ID, err, rep)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Agents on every partition; each has a loop conversation whose last
	// two steps are the same action.
	const loopQuery = "SELECT balance FROM accounts WHERE id = 7"
	type agent = agentRef
	var agents []agent
	covered := map[int32]bool{}
	for i := 0; len(covered) < killPartitions; i++ {
		if i == 40 {
			t.Fatalf("40 agents cover only partitions %v", covered)
		}
		cmd := client.Register(killAdminKey, domain.AgentInfo{Name: fmt.Sprintf("k%d", i), Type: "autonomous", PrincipalID: "org_kill"},
			domain.Permissions{}, domain.Limits{})
		cmd.ID = fmt.Sprintf("reg-%d", i)
		rep, err := request(cmd)
		if err != nil || rep.Status != 201 {
			t.Fatalf("register: %v %v", rep, err)
		}
		var m struct {
			AgentID    string `json:"agent_id"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(rep.Data, &m); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, agent{m.AgentID, m.AgentToken})
		covered[client.PartitionFor(m.AgentID, killPartitions)] = true
	}
	verifyCmd := func(ag agent, conv string, step int, query string) client.Command {
		return client.Verify(ag.id, ag.token, domain.VerifyAction{
			Action:  domain.Action{Type: "execute_sql", Query: query},
			Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(strconv.Itoa(step))},
		})
	}
	for _, ag := range agents {
		for step := 1; step <= 2; step++ {
			cmd := verifyCmd(ag, "loop", step, loopQuery)
			cmd.ID = fmt.Sprintf("%s-loop-%d", ag.id, step)
			rep, err := request(cmd)
			if err != nil || !strings.Contains(string(rep.Data), `"decision":"APPROVED"`) {
				t.Fatalf("loop step %d of %s: %v %v", step, ag.id, rep, err)
			}
		}
	}

	// The load: one conversation per worker and agent, steps in order;
	// every fifth step published async (acknowledged by the broker only).
	var (
		mu       sync.Mutex
		all      []sent
		answered atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
		failures = make(chan string, 100)
	)
	const workers = 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; !stop.Load(); round++ {
				ag := agents[(w+round)%len(agents)]
				conv := fmt.Sprintf("w%d-r%d", w, round)
				for step := 1; step <= 10 && !stop.Load(); step++ {
					cmd := verifyCmd(ag, conv, step, fmt.Sprintf("SELECT name FROM customers WHERE id = %d", step))
					cmd.ID = fmt.Sprintf("%s-%s-%d", ag.id, conv, step)
					s := sent{id: cmd.ID, agent: ag.id, conv: conv, step: step, async: step%5 == 0}
					if s.async {
						if _, err := c.Publish(ctx, cmd); err != nil {
							failures <- fmt.Sprintf("publish %s: %v", cmd.ID, err)
							return
						}
					} else {
						rep, err := request(cmd)
						if err != nil {
							failures <- err.Error()
							return
						}
						var d struct {
							Decision   string `json:"decision"`
							StepNumber int    `json:"step_number"`
						}
						if err := json.Unmarshal(rep.Data, &d); err != nil || d.Decision != "APPROVED" || d.StepNumber != step {
							failures <- fmt.Sprintf("%s step %d answered %d %s", cmd.ID, step, rep.Status, rep.Data)
							return
						}
						answered.Add(1)
					}
					mu.Lock()
					all = append(all, s)
					mu.Unlock()
				}
			}
		}()
	}
	waitAnswered := func(n int64) {
		deadline := time.Now().Add(30 * time.Second)
		for answered.Load() < n {
			select {
			case f := <-failures:
				t.Fatal(f)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d answers in 30 s", answered.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitAnswered(300)
	before := answered.Load()
	mark := len(survivor.log.String())
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	t.Logf("SIGKILL after %d answers", before)
	// The load goes on through the move until the survivor owns every
	// partition and answered a good number more.
	deadline = time.Now().Add(30 * time.Second)
	for len(survivor.partitions()) != killPartitions {
		if time.Now().After(deadline) {
			t.Fatalf("the survivor never took every partition: %v\n%s", survivor.partitions(), survivor.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitAnswered(answered.Load() + 300)
	stop.Store(true)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Fatal(f)
	}
	moved := 0
	for p := range killPartitions {
		if slicesContains(victim.partitions(), strconv.Itoa(p)) && survivor.restoredSince(p, mark) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatalf("no partition of the killed gate was restored by the survivor:\n%s", survivor.log)
	}
	t.Logf("%d requests (%d answered), %d partitions moved", len(all), answered.Load(), moved)

	// Exactly once: every request has one event; no step twice.
	events := readEvents(t, broker, "kill9-test")
	waitUntil := time.Now().Add(30 * time.Second)
	for {
		missing := 0
		for _, s := range all {
			if len(events[s.id]) == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(waitUntil) {
			t.Fatalf("%d of %d requests never decided", missing, len(all))
		}
		time.Sleep(200 * time.Millisecond)
		events = readEvents(t, broker, "kill9-test")
	}
	steps := map[string]int{}
	for id, evs := range events {
		if len(evs) != 1 {
			t.Fatalf("request %s decided %d times", id, len(evs))
		}
		ev := evs[0]
		if ev.Type != domain.EvActionDecided || ev.Decided == nil {
			continue
		}
		if ev.Decided.Decision != domain.Approved {
			t.Fatalf("request %s: %s %+v", id, ev.Decided.Decision, ev.Decided.Error)
		}
		v := ev.Command.Verify
		steps[ev.AgentID+"/"+v.Context.ConversationID+"/"+v.Context.StepNumber.String()]++
	}
	for k, n := range steps {
		if n > 1 {
			t.Fatalf("step %s consumed %d times", k, n)
		}
	}
	// Step and loop state kept across the move, on every agent.
	for _, ag := range agents {
		cmd := verifyCmd(ag, "loop", 2, "SELECT 1")
		cmd.ID = ag.id + "-replay"
		rep, err := request(cmd)
		if err != nil || !strings.Contains(string(rep.Data), string(domain.CodeReplay)) {
			t.Fatalf("agent %s (partition %d): step 2 again answered %v %v, want %s", ag.id, client.PartitionFor(ag.id, killPartitions), rep, err, domain.CodeReplay)
		}
		cmd = verifyCmd(ag, "loop", 3, loopQuery)
		cmd.ID = ag.id + "-third"
		rep, err = request(cmd)
		if err != nil || !strings.Contains(string(rep.Data), string(domain.CodeRepetitiveLoop)) {
			t.Fatalf("agent %s (partition %d): a third identical action answered %v %v, want %s", ag.id, client.PartitionFor(ag.id, killPartitions), rep, err, domain.CodeRepetitiveLoop)
		}
	}
	checkServeKafkaEngines(t, survivor, request, agents[0])
}

// checkServeKafkaEngines checks the engines of a `serve --kafka-brokers`
// process (issue 3 with issue 4): POST /verify answers a logic query with
// the z3-backed logic engine and records it through Kafka, and a
// verify_action sent over Kafka gets the math engine's verdict.
func checkServeKafkaEngines(t *testing.T, g *kafkaGateProcess, request func(client.Command) (*client.Reply, error), ag agentRef) {
	t.Helper()
	if _, err := exec.LookPath("z3"); err != nil {
		t.Fatalf("the logic engine needs z3 (.ci/run and make deps install it): %v", err)
	}
	req, err := http.NewRequest("POST", "http://"+g.http+"/verify", strings.NewReader(`{"query":"(AND (GT x 5) (LT x 10))","type":"logic","options":{"include_attestation":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", killAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Status      string `json:"status"`
		Engine      string `json:"engine"`
		Attestation *struct {
			Seq uint64 `json:"seq"`
		} `json:"attestation"`
	}
	err = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || v.Status != "VERIFIED" || v.Engine != "logic" || v.Attestation == nil || v.Attestation.Seq == 0 {
		t.Fatalf("POST /verify (logic) on serve --kafka-brokers: %d %+v %v", resp.StatusCode, v, err)
	}
	cmd := client.Verify(ag.id, ag.token, domain.VerifyAction{
		Action:  domain.Action{Type: "calculate", Query: "2+2=5"},
		Context: domain.ActionContext{ConversationID: "engines", StepNumber: "1"},
	})
	cmd.ID = ag.id + "-engines"
	rep, err := request(cmd)
	if err != nil || !strings.Contains(string(rep.Data), `"decision":"CORRECTED"`) || !strings.Contains(string(rep.Data), `"engine":"math"`) {
		t.Fatalf("verify_action 2+2=5 over Kafka on serve --kafka-brokers: %v %v, want CORRECTED by the math engine", rep, err)
	}
}

// agentRef is a registered agent.
type agentRef struct{ id, token string }

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// readEvents reads every events partition (applying the chain, as the gate
// does) and returns the events of source's requests by request id.
func readEvents(t *testing.T, broker, source string) map[string][]*domain.Event {
	t.Helper()
	out := map[string][]*domain.Event{}
	for p := range killPartitions {
		lg, err := kafkalog.Open(context.Background(), []string{broker}, kafkagate.DefaultTopics().Events, p, kafkalog.Options{Logger: kafkaTestLog()})
		if err != nil {
			t.Fatal(err)
		}
		err = lg.Read(context.Background(), 1, func(r streams.Record) error {
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return err
			}
			if ev.Command != nil && ev.Command.Request.Source == source {
				out[ev.Command.Request.ID] = append(out[ev.Command.Request.ID], ev)
			}
			return nil
		})
		_ = lg.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
