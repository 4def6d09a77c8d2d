package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// supervisedGate runs `agentgate serve --kafka-brokers` as a supervisor
// would: restarted on the same data dir each time it dies.
type supervisedGate struct {
	bin, broker, data string

	mu     sync.Mutex
	deaths []string // how each run ended, in order
	cur    *kafkaGateProcess
	stop   bool
	done   chan struct{}
}

func superviseKafkaGate(t *testing.T, bin, broker, data string) *supervisedGate {
	t.Helper()
	s := &supervisedGate{bin: bin, broker: broker, data: data, done: make(chan struct{})}
	go s.run()
	t.Cleanup(func() {
		s.mu.Lock()
		s.stop = true
		cur := s.cur
		s.mu.Unlock()
		if cur != nil {
			_ = cur.cmd.Process.Signal(syscall.SIGTERM)
		}
		<-s.done
	})
	return s
}

func (s *supervisedGate) run() {
	defer close(s.done)
	for {
		g := &kafkaGateProcess{log: &syncBuffer{}}
		g.cmd = exec.Command(s.bin, "serve", "--kafka-brokers", s.broker, "--kafka-partitions", strconv.Itoa(killPartitions),
			"--kafka-session-timeout", "2s", "--data", s.data, "--http", "127.0.0.1:0", "--api-key", killAdminKey, "--z3-procs", "1")
		g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
		s.mu.Lock()
		if s.stop {
			s.mu.Unlock()
			return
		}
		err := g.cmd.Start()
		s.cur = g
		s.mu.Unlock()
		if err != nil {
			s.record(fmt.Sprintf("start: %v", err))
			return
		}
		err = g.cmd.Wait()
		s.mu.Lock()
		stopping := s.stop
		s.mu.Unlock()
		if stopping {
			return
		}
		how := fmt.Sprint(err)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				how = ws.Signal().String()
			}
		}
		s.record(how)
	}
}

func (s *supervisedGate) record(how string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deaths = append(s.deaths, how)
}

func (s *supervisedGate) deathList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deaths...)
}

func (s *supervisedGate) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return ""
	}
	return s.cur.log.String()
}

// Issue 11 item 2, "Poison pills on Kafka": a request whose processing
// really kills the gate process (a binary built with the test-only crash
// hook, crashhook.go: SIGKILL of itself while it verifies the marked
// action) is published among ordinary requests of the same agent. The gate,
// restarted by a supervisor on the same data dir after each death, dies
// exactly kafkagate.MaxAttempts times (once with the request's batch in
// flight, then trying the requests in flight one at a time, the poison
// twice), then dead-letters the poison with the reason and its origin,
// audits it as a command.rejected (QWED-SYS-001) and never decides it; the
// requests around it are decided exactly once, in order; and the gate
// then serves normally, without dying again.
func TestKafkaPoisonPillIsDeadLetteredAfterBoundedDeaths(t *testing.T) {
	broker, sup, c, request := startPoisonGate(t)
	ctx := context.Background()
	ag := registerPoisoned(t, request, "poisoned", "reg-poison")
	verify := func(id, conv string, step int, query string) client.Command {
		return poisonVerify(ag, id, conv, step, query)
	}
	// Two ordinary requests, the poison, two more: one produce, in order,
	// on the agent's partition.
	batch := []client.Command{
		verify("n1", "conv", 1, "SELECT name FROM customers WHERE id = 1"),
		verify("n2", "conv", 2, "SELECT name FROM customers WHERE id = 2"),
		verify("poison", "other", 1, "SELECT 1 -- agentgate-crash-hook"),
		verify("n3", "conv", 3, "SELECT name FROM customers WHERE id = 3"),
		verify("n4", "conv", 4, "SELECT name FROM customers WHERE id = 4"),
	}
	if _, err := c.PublishBatch(ctx, batch...); err != nil {
		t.Fatal(err)
	}

	// The dead letter, with the reason and the poison's origin.
	letter := poisonLetter(t, broker, sup, "poison", "")
	reason, _ := headerValue(letter, kafkagate.HeaderReason)
	origin, _ := headerValue(letter, "agentgate-origin")
	p := client.PartitionFor(ag.AgentID, killPartitions)
	if want := fmt.Sprintf("killed the gate %d times", kafkagate.MaxAttempts); !strings.Contains(reason, want) ||
		!strings.HasPrefix(origin, fmt.Sprintf("%s/%d/", kafkagate.DefaultTopics().Requests, p)) {
		t.Fatalf("dead letter reason %q origin %q, want %q on partition %d", reason, origin, want, p)
	}
	deaths := sup.deathList()
	if len(deaths) != kafkagate.MaxAttempts {
		t.Fatalf("the gate died %d times (%v), want %d", len(deaths), deaths, kafkagate.MaxAttempts)
	}
	for _, d := range deaths {
		if d != syscall.SIGKILL.String() {
			t.Fatalf("a run ended with %q, want each killed by the poison (%v)", d, deaths)
		}
	}

	// The gate serves normally: the conversation goes on.
	rep := request(verify("n5", "conv", 5, "SELECT name FROM customers WHERE id = 5"))
	if !strings.Contains(string(rep.Data), `"decision":"APPROVED"`) || !strings.Contains(string(rep.Data), `"step_number":5`) {
		t.Fatalf("after the poison: %d %s", rep.Status, rep.Data)
	}

	// Exactly once: each neighbour decided once, APPROVED at its step; the
	// poison never decided; its refusal audited once.
	source := "kafka/" + kafkagate.DefaultTopics().Requests
	deadline := time.Now().Add(30 * time.Second)
	for {
		events := readEvents(t, broker, "poison-test")
		audits := readEvents(t, broker, source)
		err := checkPoisonEvents(events, audits, origin)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := sup.deathList(); len(d) != kafkagate.MaxAttempts {
		t.Fatalf("the gate died again after the poison was dead-lettered: %v\n%s", d, sup.logs())
	}
}

// Issue 11 item 2: a poison request charges its deaths to itself only.
// When it kills the process, the requests of the other partitions that
// were in flight are retried alone too; were they tried alone at the same
// time as the poison, each of its deaths would be charged to them as well,
// and a request that only took its time (here 1.5 s in the engine) would
// be dead-lettered with it. The process tries one request alone at a
// time: the poison is dead-lettered after MaxAttempts deaths, the slow
// request of the other partition is decided, once, APPROVED.
func TestKafkaPoisonDeathsAreNotChargedToOtherPartitions(t *testing.T) {
	broker, sup, c, request := startPoisonGate(t)
	ctx := context.Background()
	poisoned := registerPoisoned(t, request, "poisoned", "reg-poisoned")
	var slow poisonAgent
	for i := 0; ; i++ {
		slow = registerPoisoned(t, request, "slow", fmt.Sprintf("reg-slow-%d", i))
		if client.PartitionFor(slow.AgentID, killPartitions) != client.PartitionFor(poisoned.AgentID, killPartitions) {
			break
		}
	}
	// The slow request first (it is in the engine for 1.5 s), then the
	// poison, on another partition: the poison kills the process while
	// the slow request is in flight.
	if _, err := c.PublishBatch(ctx, poisonVerify(slow, "slow", "conv", 1, "SELECT 1 -- agentgate-slow-hook")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishBatch(ctx, poisonVerify(poisoned, "poison", "other", 1, "SELECT 1 -- agentgate-crash-hook")); err != nil {
		t.Fatal(err)
	}
	poisonLetter(t, broker, sup, "poison", "slow")
	// The slow request is decided once, and the gate serves on.
	rep := request(poisonVerify(slow, "slow-2", "conv", 2, "SELECT 2"))
	if !strings.Contains(string(rep.Data), `"decision":"APPROVED"`) {
		t.Fatalf("after the poison: %d %s", rep.Status, rep.Data)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := readEvents(t, broker, "poison-test")["slow"]
		if len(evs) == 1 && evs[0].Decided != nil && evs[0].Decided.Decision == domain.Approved {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow request was decided %d times: %+v", len(evs), evs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := sup.deathList(); len(d) != kafkagate.MaxAttempts {
		t.Fatalf("the gate died %d times (%v), want %d", len(d), d, kafkagate.MaxAttempts)
	}
}

// poisonLetter reads the dead-letter topic up to the letter of the
// request whose ce_id is id and returns it; a letter of the request
// innocent (when not "") before it fails the test.
func poisonLetter(t *testing.T, broker string, sup *supervisedGate, id, innocent string) kafka.Message {
	t.Helper()
	dl := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{broker}, Topic: kafkagate.DefaultTopics().DeadLetter, Partition: 0,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	defer dl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		m, err := dl.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("no dead letter for %s (deaths %v): %v\n%s", id, sup.deathList(), err, sup.logs())
		}
		switch got, _ := headerValue(m, "ce_id"); {
		case got == id:
			return m
		case innocent != "" && got == innocent:
			t.Fatalf("%s was dead-lettered with %s (deaths %v)", innocent, id, sup.deathList())
		}
	}
}

// startPoisonGate builds the binary with the crash hook, starts a dev
// broker and the gate under a restarting supervisor, and returns a client
// and a request function that retries while the gate restarts.
func startPoisonGate(t *testing.T) (string, *supervisedGate, *client.Client, func(client.Command) *client.Reply) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "agentgate-crashhook")
	build := exec.Command("go", "build", "-tags", "agentgate_crashhook", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building agentgate with the crash hook: %v", err)
	}
	broker := devKafkaProcess(t, bin, filepath.Join(t.TempDir(), "broker"))
	sup := superviseKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate"))
	ctx := context.Background()
	c, err := client.New(ctx, client.Config{Brokers: []string{broker}, Source: "poison-test", Timeout: 5 * time.Second, Logger: kafkaTestLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	request := func(cmd client.Command) *client.Reply {
		t.Helper()
		for try := 0; ; try++ {
			rep, err := c.Request(ctx, cmd)
			if err == nil && rep.Status != 503 {
				return rep
			}
			if try == 30 || (err != nil && !errors.Is(err, client.ErrTimeout)) {
				t.Fatalf("request %s: %v (status %v)\n%s", cmd.ID, err, rep, sup.logs())
			}
			time.Sleep(100 * time.Millisecond) // a retry's pause, as a client's
		}
	}
	return broker, sup, c, request
}

// poisonAgent is a registered agent of the poison tests.
type poisonAgent struct {
	AgentID    string `json:"agent_id"`
	AgentToken string `json:"agent_token"`
}

// registerPoisoned registers an agent of org_poison.
func registerPoisoned(t *testing.T, request func(client.Command) *client.Reply, name, id string) poisonAgent {
	t.Helper()
	reg := client.Register(killAdminKey, domain.AgentInfo{Name: name, Type: "autonomous", PrincipalID: "org_poison"}, domain.Permissions{}, domain.Limits{})
	reg.ID = id
	rep := request(reg)
	var ag poisonAgent
	if err := json.Unmarshal(rep.Data, &ag); err != nil || rep.Status != 201 {
		t.Fatalf("register: %d %s", rep.Status, rep.Data)
	}
	return ag
}

// poisonVerify is an execute_sql verification of ag.
func poisonVerify(ag poisonAgent, id, conv string, step int, query string) client.Command {
	cmd := client.Verify(ag.AgentID, ag.AgentToken, domain.VerifyAction{
		Action:  domain.Action{Type: "execute_sql", Query: query},
		Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(strconv.Itoa(step))},
	})
	cmd.ID = id
	return cmd
}

// checkPoisonEvents checks the events of the poison test's requests.
func checkPoisonEvents(events, audits map[string][]*domain.Event, origin string) error {
	for step, id := range []string{"n1", "n2", "n3", "n4", "n5"} {
		evs := events[id]
		if len(evs) != 1 {
			return fmt.Errorf("request %s decided %d times", id, len(evs))
		}
		d := evs[0].Decided
		if d == nil || d.Decision != domain.Approved || evs[0].Command.Verify.Context.StepNumber.String() != strconv.Itoa(step+1) {
			return fmt.Errorf("request %s: %+v", id, evs[0])
		}
	}
	if evs := events["poison"]; len(evs) != 0 {
		return fmt.Errorf("the poison was decided: %+v", evs[0])
	}
	// The audit record's id is the poison's partition/offset.
	_, pos, _ := strings.Cut(origin, "/")
	evs := audits[pos]
	if len(evs) != 1 || evs[0].Type != domain.EvCommandRejected || evs[0].Command.Reject == nil || evs[0].Command.Reject.Error.Code != domain.CodeInternal {
		return fmt.Errorf("audit records of the poison at %s: %d %+v", pos, len(evs), evs)
	}
	return nil
}

func headerValue(m kafka.Message, key string) (string, bool) {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}
