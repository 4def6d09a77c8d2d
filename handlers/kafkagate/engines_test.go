package kafkagate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	qengines "github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/handlers/fair"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/verify"
)

// overlapEngine is a math engine whose runs answer VERIFIED only once n
// of them are running at once; a run left alone waits until its context
// ends (TIMEOUT: the action is not approved).
type overlapEngine struct {
	n       int32
	entered atomic.Int32
	all     chan struct{}
}

func (e *overlapEngine) Capabilities() qengines.Capabilities {
	return qengines.Capabilities{EngineID: "math", Name: "overlap", Version: "0.0.1",
		Capabilities: map[string]any{}, InputTypes: []string{"expression"}, OutputTypes: []string{"verification_result"}}
}

func (e *overlapEngine) Verify(ctx context.Context, req qengines.Request) qengines.Outcome {
	if e.entered.Add(1) == e.n {
		close(e.all)
	}
	select {
	case <-e.all:
		return qengines.Outcome{Status: qengines.Verified, Result: map[string]any{"is_valid": true, "message": "overlapped"}}
	case <-ctx.Done():
		return qengines.Outcome{Status: qengines.Timeout}
	}
}

// registerOn registers n agents (allowed the math engine) whose agent ids
// fall on partition p, choosing the registrations' request ids so; the
// principal of agent i is principal, or org_i when it is "".
func registerOn(t *testing.T, c *client.Client, p int32, n int, principal string) (ids, tokens []string) {
	t.Helper()
	for i := 0; len(ids) < n; i++ {
		reqID := fmt.Sprintf("reg-%d-%d", p, i)
		// Registered with the admin key: the request is the admin's (issue 11).
		if kafkagate.PartitionFor(client.AgentIDFor(c.Source(), reqID, domain.AdminPrincipal), testPartitions) != p {
			continue
		}
		owner := principal
		if owner == "" {
			owner = fmt.Sprintf("org_%d", len(ids))
		}
		cmd := client.Register(adminKey, domain.AgentInfo{Name: reqID, Type: "supervised", PrincipalID: owner},
			domain.Permissions{AllowedEngines: []string{"math"}}, domain.Limits{})
		cmd.ID = reqID
		rep, err := c.Request(context.Background(), cmd)
		if err != nil || rep.Status != 201 {
			t.Fatalf("register: %v %v", rep, err)
		}
		var m struct {
			AgentID    string `json:"agent_id"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(rep.Data, &m); err != nil || kafkagate.PartitionFor(m.AgentID, testPartitions) != p {
			t.Fatalf("register reply %s: %v (want an agent on partition %d)", rep.Data, err, p)
		}
		ids, tokens = append(ids, m.AgentID), append(tokens, m.AgentToken)
	}
	return ids, tokens
}

// Issue 11 item 11: in Kafka mode the engine verdicts of one partition
// overlap instead of running one after another on the partition's
// reading goroutine. Eight agents of one partition each send a
// verify_action whose engine answers only once all eight runs are in
// (a barrier, no timing); a ninth agent's action, which needs no engine,
// follows them. Every decision arrives, in the requests' order, the eight
// approved on their engine's verdict, which is recorded on the command.
// Before the fix the first run waited alone until its 3 s timeout, and
// the next only then: the first decision was PENDING.
func TestIssue11_KafkaEngineVerdictsOfAPartitionOverlap(t *testing.T) {
	const n = 8
	_, brokers := broker(t)
	eng := &overlapEngine{n: n, all: make(chan struct{})}
	reg, err := verify.NewRegistryWith(fair.Config{Slots: n}, eng)
	if err != nil {
		t.Fatal(err)
	}
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), func(c *kafkagate.Config) {
		c.Verifier = verify.NewActionVerifier(reg, 3*time.Second)
		c.Engines = reg
	})
	c := newClient(t, brokers)
	const p = 0
	ids, tokens := registerOn(t, c, p, n+1, "")

	// The decisions of partition p from here on.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], kafkagate.DefaultTopics().Decisions, p)
	if err != nil {
		t.Fatal(err)
	}
	end, err := conn.ReadLastOffset()
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: kafkagate.DefaultTopics().Decisions, Partition: p,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	if err := r.SetOffset(end); err != nil {
		t.Fatal(err)
	}

	cmds := make([]client.Command, n+1)
	for i := range n {
		cmds[i] = client.Verify(ids[i], tokens[i], domain.VerifyAction{
			Action:  domain.Action{Type: "calculate", Query: fmt.Sprintf("%d+%d=%d", i, i, 2*i)},
			Context: domain.ActionContext{ConversationID: "overlap", StepNumber: "1"}})
		cmds[i].ID = fmt.Sprintf("overlap-%d", i)
	}
	cmds[n] = client.Verify(ids[n], tokens[n], domain.VerifyAction{
		Action:  domain.Action{Type: "read_file", Parameters: json.RawMessage(`{"path":"/tmp/report.txt"}`)},
		Context: domain.ActionContext{ConversationID: "overlap", StepNumber: "1"}})
	cmds[n].ID = fmt.Sprintf("overlap-%d", n)
	if _, err := c.PublishBatch(ctx, cmds...); err != nil {
		t.Fatal(err)
	}

	for i := 0; i <= n; {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("decision %d of %d: %v", i, n+1, err)
		}
		if headerOf(m, "agentgate-event-type") != string(domain.EvActionDecided) {
			continue
		}
		if got, want := headerOf(m, "ce_correlationid"), cmds[i].ID; got != want {
			t.Fatalf("decision %d is %s's, want %s's: decisions out of the requests' order", i, got, want)
		}
		var d struct {
			Decision     string `json:"decision"`
			Verification struct {
				Engine string `json:"engine"`
				Status string `json:"status"`
			} `json:"verification"`
		}
		if err := json.Unmarshal(m.Value, &d); err != nil {
			t.Fatal(err)
		}
		if i < n && (d.Decision != "APPROVED" || d.Verification.Engine != "math" || d.Verification.Status != "VERIFIED") {
			t.Fatalf("%s: %s, want APPROVED on the engine's VERIFIED (the engine runs did not overlap)", cmds[i].ID, m.Value)
		}
		i++
	}
	if got := eng.entered.Load(); got != n {
		t.Fatalf("the engine ran %d times, want %d", got, n)
	}
	evs := recordedEvents(t, brokers, c.Source())
	for i := range n {
		ev := evs[cmds[i].ID]
		if ev == nil || ev.Command == nil || ev.Command.Verdict == nil || ev.Command.Verdict.Status != qengines.Verified {
			t.Fatalf("%s: recorded %+v, want the engine's verdict on the command", cmds[i].ID, ev)
		}
	}
}

// gatedEngine is a math engine whose runs the test lets through one at a
// time: each reports its query on entered and answers VERIFIED on a token
// from release.
type gatedEngine struct {
	entered chan string
	release chan struct{}
	stop    chan struct{} // closed at the end: every run ends
}

func (e *gatedEngine) Capabilities() qengines.Capabilities {
	return (&overlapEngine{}).Capabilities()
}

func (e *gatedEngine) Verify(ctx context.Context, req qengines.Request) qengines.Outcome {
	e.entered <- req.Query
	select {
	case <-e.release:
		return qengines.Outcome{Status: qengines.Verified, Result: map[string]any{"is_valid": true, "message": "let through"}}
	case <-e.stop:
	case <-ctx.Done():
	}
	return qengines.Outcome{Status: qengines.Timeout}
}

// Issue 11 item 7 in Kafka mode: the partitions' engine verdicts take
// turns by principal. Agent x of org_a holds the engine's one slot with
// one of its three verdicts and queues the other two; agent y of org_b, on another partition, is
// served as soon as x's running verdict ends, and its decision arrives
// while x's queue still waits.
func TestIssue11_KafkaVerdictsTakeTurnsByPrincipal(t *testing.T) {
	_, brokers := broker(t)
	eng := &gatedEngine{entered: make(chan string, 8), release: make(chan struct{}), stop: make(chan struct{})}
	reg, err := verify.NewRegistryWith(fair.Config{Slots: 1}, eng)
	if err != nil {
		t.Fatal(err)
	}
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), func(c *kafkagate.Config) {
		c.Verifier = verify.NewActionVerifier(reg, 30*time.Second)
		c.Engines = reg
	})
	t.Cleanup(func() { close(eng.stop) }) // before the gate stops
	c := newClient(t, brokers)
	xs, xt := registerOn(t, c, 0, 1, "org_a")
	ys, yt := registerOn(t, c, 1, 1, "org_b")
	q := reg.Queue("math")
	act := func(agent, token, query string) client.Command {
		return client.Verify(agent, token, domain.VerifyAction{
			Action:  domain.Action{Type: "calculate", Query: query},
			Context: domain.ActionContext{ConversationID: "turns-" + query, StepNumber: "1"}})
	}
	entered := func() string {
		select {
		case e := <-eng.entered:
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no engine run entered")
			return ""
		}
	}
	waitFor := func(n int) {
		deadline := time.Now().Add(30 * time.Second)
		for q.Waiting() != n {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %d verdicts to queue (%d)", n, q.Waiting())
			}
			time.Sleep(time.Millisecond) // polling a state the test drives, not a timing
		}
	}
	if _, err := c.PublishBatch(context.Background(), act(xs[0], xt[0], "x0"), act(xs[0], xt[0], "x1"), act(xs[0], xt[0], "x2")); err != nil {
		t.Fatal(err)
	}
	// x's three verdicts start together: one of them takes the slot.
	if e := entered(); e[0] != 'x' {
		t.Fatalf("entered %s", e)
	}
	waitFor(2)
	type answer struct {
		rep *client.Reply
		err error
	}
	yDone := make(chan answer, 1)
	go func() {
		rep, err := c.Request(context.Background(), act(ys[0], yt[0], "y0"))
		yDone <- answer{rep, err}
	}()
	waitFor(3)
	eng.release <- struct{}{} // x's running verdict ends
	if e := entered(); e != "y0" {
		t.Fatalf("after x's running verdict the engine ran %s, want y0 before x's queue", e)
	}
	eng.release <- struct{}{} // y0 ends
	var y answer
	select {
	case y = <-yDone:
	case <-time.After(30 * time.Second):
		t.Fatal("no decision for y0")
	}
	if y.err != nil || !strings.Contains(string(y.rep.Data), `"APPROVED"`) {
		t.Fatalf("y0: %+v %v", y.rep, y.err)
	}
	if e := entered(); e[0] != 'x' {
		t.Fatalf("entered %s, want one of x's", e)
	}
	if q.Waiting() != 1 {
		t.Fatalf("x's queue: %d waiting, want one of x's still waiting when y0 was decided", q.Waiting())
	}
	eng.release <- struct{}{}
	entered()
	eng.release <- struct{}{}
}

// quickEngine is a math engine that answers VERIFIED after a short
// pause, so that a backlog's runs queue behind each other.
type quickEngine struct{ ran atomic.Int32 }

func (e *quickEngine) Capabilities() qengines.Capabilities {
	return (&overlapEngine{}).Capabilities()
}

func (e *quickEngine) Verify(ctx context.Context, req qengines.Request) qengines.Outcome {
	e.ran.Add(1)
	select {
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
		return qengines.Outcome{Status: qengines.Timeout}
	}
	return qengines.Outcome{Status: qengines.Verified, Result: map[string]any{"is_valid": true, "message": "quick"}}
}

// Issue 11 items 7 and 11 together: a partition's backlog of one tenant's
// verify_actions (here 40 published at once, as after a restore) is not
// refused by the engine's per-principal queue as if the tenant flooded it:
// the partition runs at most MaxVerdictsInFlight verdicts at once and a
// run refused by a full queue waits for a place. Every action is approved
// on its engine's verdict. Before, the runs started all at once and all
// but the queue's two places (one slot, one waiting) were refused: PENDING
// decisions recorded for the gate's own backlog.
func TestIssue11_KafkaBacklogIsNotRefusedByTheEngineQueue(t *testing.T) {
	const n = 40
	_, brokers := broker(t)
	eng := &quickEngine{}
	reg, err := verify.NewRegistryWith(fair.Config{Slots: 1, PrincipalQueue: 1}, eng)
	if err != nil {
		t.Fatal(err)
	}
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), func(c *kafkagate.Config) {
		c.Verifier = verify.NewActionVerifier(reg, 3*time.Second)
		c.Engines = reg
	})
	c := newClient(t, brokers)
	ids, tokens := registerOn(t, c, 0, 1, "org_backlog")
	cmds := make([]client.Command, n)
	want := make([]string, n)
	for i := range n {
		cmds[i] = client.Verify(ids[0], tokens[0], domain.VerifyAction{
			Action:  domain.Action{Type: "calculate", Query: fmt.Sprintf("%d+%d=%d", i, i, 2*i)},
			Context: domain.ActionContext{ConversationID: "backlog", StepNumber: json.Number(fmt.Sprint(i + 1))}})
		cmds[i].ID = fmt.Sprintf("backlog-%d", i)
		want[i] = cmds[i].ID
	}
	if _, err := c.PublishBatch(context.Background(), cmds...); err != nil {
		t.Fatal(err)
	}
	waitDecided(t, brokers, c.Source(), want)
	evs := recordedEvents(t, brokers, c.Source())
	for _, id := range want {
		ev := evs[id]
		if ev == nil || ev.Decided == nil || ev.Decided.Decision != domain.Approved || ev.Command.Verdict == nil || ev.Command.Verdict.Status != qengines.Verified {
			t.Fatalf("%s: %+v (verdict %+v), want APPROVED on the engine's VERIFIED", id, ev.Decided, ev.Command.Verdict)
		}
	}
}
