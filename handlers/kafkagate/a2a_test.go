package kafkagate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// a2aConfig is the decision configuration of the A2A tests: the defaults
// (strict deny-all) with trusted agents gate-wide, and opts applied.
func a2aConfig(trusted []string, opts ...func(*domain.A2AConfig)) func(*kafkagate.Config) {
	return func(c *kafkagate.Config) {
		cfg := domain.DefaultConfig()
		a := domain.DefaultA2AConfig()
		a.TrustedAgents = domain.NormalizeA2AAgents(trusted)
		for _, o := range opts {
			o(&a)
		}
		cfg.A2A = &a
		c.Config = &cfg
	}
}

// financial is a QWED A2A financial message from sender to receiver whose
// line items add up to 150.00, claiming total.
func financial(sender, receiver, total, trace string) a2a.Message {
	return a2a.Message{SenderAgentID: sender, ReceiverAgentID: receiver, PayloadType: a2a.PayloadFinancial, TraceID: trace,
		Payload: json.RawMessage(`{"data":{"claimed_total":` + total + `,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`)}
}

// general is a general message (passthrough).
func general(sender, receiver, text string) a2a.Message {
	return a2a.Message{SenderAgentID: sender, ReceiverAgentID: receiver, PayloadType: a2a.PayloadGeneral,
		Payload: json.RawMessage(`{"message":"` + text + `"}`)}
}

// forwardedBy returns the messages of the forwarded topic by correlation id
// (the request id), failing on any message that is not a forwarded
// CloudEvent with its event's position.
func forwardedBy(t *testing.T, brokers []string) map[string][]kafka.Message {
	t.Helper()
	out := map[string][]kafka.Message{}
	for _, m := range readAll(t, brokers, kafkagate.DefaultTopics().A2A) {
		if headerOf(m, "ce_type") != client.ForwardedType || headerOf(m, client.HeaderEventsSeq) == "" {
			t.Fatalf("a message on the forwarded topic that is not a forward: %v", m.Headers)
		}
		corr := headerOf(m, "ce_correlationid")
		out[corr] = append(out[corr], m)
	}
	return out
}

// waitForwarded waits until every id in ids is on the forwarded topic,
// then checks that each is there exactly once.
func waitForwarded(t *testing.T, brokers []string, ids []string) map[string][]kafka.Message {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := forwardedBy(t, brokers)
		missing := 0
		for _, id := range ids {
			if len(got[id]) == 0 {
				missing++
			}
		}
		for id, ms := range got {
			if len(ms) > 1 {
				t.Fatalf("message %s forwarded %d times", id, len(ms))
			}
		}
		if missing == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages never forwarded", missing, len(ids))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Issue 13 item 8: a qwed.a2a.message CloudEvent on agentgate.requests,
// keyed by its sender, is decided by the sender's partition and answered
// to ce_replyto with the verdict (client.Intercept); the forwarded message
// is produced to agentgate.a2a.forwarded on its receiver's partition, keyed
// by the receiver, the AgentMessage as value, the verdict and its
// attestation in headers, its events partition and seq too; a blocked one
// is answered, recorded on agentgate.decisions and never forwarded.
func TestKafkaA2AForwardedWithVerdictHeaders(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig([]string{"procurement-agent", "treasury-agent"}))
	c := newClient(t, brokers)
	msg := financial("procurement-agent", "treasury-agent", "150.00", "demo_001")
	v, err := c.Intercept(context.Background(), client.A2A{Message: msg, APIKey: adminKey, ID: "a2a-ok"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Forwarded() || v.Engine != a2a.EngineFinance || v.TraceID != "demo_001" || !strings.HasPrefix(v.Attestation, "eyJ") || v.VerifiedAt.IsZero() {
		t.Fatalf("verdict %+v", v)
	}
	blocked, err := c.Intercept(context.Background(), client.A2A{Message: financial("procurement-agent", "treasury-agent", "999.99", "demo_002"), APIKey: adminKey, ID: "a2a-blocked"})
	if err != nil {
		t.Fatal(err)
	}
	if blocked.Status != a2a.StatusBlocked || blocked.Engine != a2a.EngineFinance ||
		!strings.Contains(blocked.Reason, "claimed_total=999.99, computed_total=150.00") || blocked.Attestation == "" {
		t.Fatalf("blocked verdict %+v", blocked)
	}
	got := waitForwarded(t, brokers, []string{"a2a-ok"})
	if len(got["a2a-blocked"]) != 0 {
		t.Fatal("a blocked message was forwarded")
	}
	m := got["a2a-ok"][0]
	want, _ := json.Marshal(msg)
	p := client.PartitionFor("procurement-agent", testPartitions)
	if m.Partition != int(client.PartitionFor("treasury-agent", testPartitions)) || string(m.Key) != "treasury-agent" || string(m.Value) != string(want) ||
		headerOf(m, client.HeaderA2AStatus) != "forwarded" || headerOf(m, client.HeaderA2AEngine) != a2a.EngineFinance ||
		headerOf(m, client.HeaderA2ATraceID) != "demo_001" || headerOf(m, client.HeaderA2AAttestation) != v.Attestation ||
		headerOf(m, client.HeaderA2ASender) != "procurement-agent" || headerOf(m, client.HeaderEventsPartition) != strconv.Itoa(int(p)) ||
		headerOf(m, "ce_id") != fmt.Sprintf("%d-%s", p, headerOf(m, client.HeaderEventsSeq)) || headerOf(m, "ce_subject") != "treasury-agent" {
		t.Fatalf("forwarded message: partition %d key %q value %s headers %v", m.Partition, m.Key, m.Value, m.Headers)
	}
	// The blocked verdict is on the decisions topic (its event type and
	// request id), as every decision.
	deadline := time.Now().Add(20 * time.Second)
	for {
		found := false
		for _, d := range readAll(t, brokers, kafkagate.DefaultTopics().Decisions) {
			if headerOf(d, "ce_correlationid") == "a2a-blocked" && headerOf(d, client.HeaderEventType) == string(domain.EvA2AVerdict) &&
				bytes.Contains(d.Value, []byte(`"status":"blocked"`)) {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the blocked verdict is not on agentgate.decisions")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Issue 13 items 3, 4 and 8: a qwed.a2a.boundary CloudEvent sent once is
// decided once, on partition 0, and copied by every other partition (a
// trust boundary is principal-wide: each partition decides the messages of
// its senders alone), and answered once;
// the messages it allows are forwarded; a pair over its token bucket is
// rate limited with 429 and a retry-after the client reads.
func TestKafkaA2ABoundaryOnEveryPartitionAndRateLimit(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir(), a2aConfig(nil, func(a *domain.A2AConfig) { a.RatePerMinute, a.Burst = 1, 1 }))
	c := newClient(t, brokers)
	// Deny-all: not trusted yet.
	v, err := c.Intercept(context.Background(), client.A2A{Message: general("agent-A", "agent-B", "hello"), APIKey: adminKey})
	if err != nil || v.Status != a2a.StatusBlocked {
		t.Fatalf("an untrusted pair: %+v %v", v, err)
	}
	for _, ag := range []string{"agent-A", "agent-B"} {
		cmd := client.A2ABoundary(adminKey, domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: ag})
		cmd.ID = "trust-" + ag
		rep, err := c.Request(context.Background(), cmd)
		if err != nil || rep.Status >= 300 {
			t.Fatalf("trusting %s: %v %v", ag, rep, err)
		}
	}
	// Each change is decided once, on partition 0, and every other
	// partition records its copy (principal-wide state on Kafka).
	got := decidedRequests(t, brokers, c.Source())
	if got["trust-agent-A"] != 1 || got["trust-agent-B"] != 1 {
		t.Fatalf("boundary changes decided %v times, want once each (on partition 0)", got)
	}
	for _, ev := range partitionEvents(t, lg, 0) {
		if ev.Type == domain.EvA2ABoundaryChanged {
			waitCopiedEverywhere(t, lg, ev.Seq)
		}
	}
	ok, err := c.Intercept(context.Background(), client.A2A{Message: general("agent-A", "agent-B", "hello"), APIKey: adminKey, ID: "after-trust"})
	if err != nil || !ok.Forwarded() || ok.Engine != a2a.EnginePassthrough {
		t.Fatalf("a trusted pair: %+v %v", ok, err)
	}
	limited, err := c.Intercept(context.Background(), client.A2A{Message: general("agent-A", "agent-B", "again"), APIKey: adminKey})
	if err != nil || limited.Status != a2a.StatusRateLimited || limited.RetryAfter <= 0 || limited.Attestation == "" {
		t.Fatalf("over the bucket: %+v %v", limited, err)
	}
	waitForwarded(t, brokers, []string{"after-trust"})
}

// Issue 13 "bad input": a malformed AgentMessage on the requests topic is
// refused with its code in the reply (client.Intercept's *client.Error),
// goes to agentgate.deadletter with the reason, is audited as a refusal,
// and nothing is forwarded; no credentials are refused and audited, not
// dead-lettered.
func TestKafkaA2AMalformedIsDeadLettered(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir(), a2aConfig([]string{"agent-A", "agent-B"}))
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)
	bad := general("agent-A", "agent-B", "x")
	bad.ReceiverAgentID = ""
	_, err := c.Intercept(context.Background(), client.A2A{Message: bad, APIKey: adminKey, ID: "malformed-1"})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.HasPrefix(string(e.Code), "QWED-REQ-") {
		t.Fatalf("a message without a receiver: %v", err)
	}
	m := dl.next(t, "malformed-1")
	if headerOf(m, kafkagate.HeaderReason) == "" || headerOf(m, "ce_type") != string(domain.CmdA2AMessage) {
		t.Fatalf("dead letter %v", m.Headers)
	}
	_, err = c.Intercept(context.Background(), client.A2A{Message: general("agent-A", "agent-B", "x"), ID: "no-key"})
	if client.ErrorCode(err) == "" || !errors.As(err, &e) || e.Status != 401 {
		t.Fatalf("no credentials: %v", err)
	}
	if n := len(refusals(t, lg, "")) + len(refusals(t, lg, "agent-A")); n < 2 {
		t.Fatalf("%d refusals recorded, want both", n)
	}
	if got := forwardedBy(t, brokers); len(got) != 0 {
		t.Fatalf("refused messages forwarded: %v", got)
	}
}

// Issue 13 item 8, "any client partitioner": a message written to a
// partition that is not its sender's is forwarded once to the sender's
// partition and decided there (the sender's bucket lives there).
func TestKafkaA2AWrongPartitionGoesToTheSenders(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig([]string{"agent-A", "agent-B"}))
	c := newClient(t, brokers)
	want := client.PartitionFor("agent-A", testPartitions)
	corr := c.NewCorrelationID()
	data, _ := json.Marshal(general("agent-A", "agent-B", "elsewhere"))
	msg := rawRequest(client.Command{Type: domain.CmdA2AMessage, ID: "wrong-partition", Data: data}, "agent-A", c.ReplyTopic(), corr)
	msg.Partition = int((want + 1) % testPartitions)
	msg.Headers = append(msg.Headers, kafka.Header{Key: client.HeaderAPIKey, Value: []byte(adminKey)})
	rep, err := c.Send(context.Background(), msg, corr)
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.ParseVerdict(rep)
	if err != nil || !v.Forwarded() {
		t.Fatalf("reply %d %s: %v", rep.Status, rep.Data, err)
	}
	got := waitForwarded(t, brokers, []string{"wrong-partition"})
	if p := headerOf(got["wrong-partition"][0], client.HeaderEventsPartition); p != strconv.Itoa(int(want)) {
		t.Fatalf("decided by partition %s, want the sender's %d", p, want)
	}
}

// senders returns n sender agents, at least one on every partition.
func senders(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	covered := map[int32]bool{}
	for i := 0; len(out) < n || len(covered) < testPartitions; i++ {
		s := fmt.Sprintf("sender-%d", i)
		out = append(out, s)
		covered[client.PartitionFor(s, testPartitions)] = true
	}
	return out
}

// publishA2A publishes n general messages per sender to receiver-<k>
// (async, PublishBatch), ids prefix-<sender>-<k>, and returns the ids.
func publishA2A(t *testing.T, c *client.Client, from []string, prefix string, n int) []string {
	t.Helper()
	var cmds []client.Command
	var ids []string
	for k := range n {
		for _, s := range from {
			cmd := client.A2AMessage(client.A2A{Message: general(s, fmt.Sprintf("receiver-%d", k%5), "m"), APIKey: adminKey,
				ID: fmt.Sprintf("%s-%s-%d", prefix, s, k)})
			cmds, ids = append(cmds, cmd), append(ids, cmd.ID)
		}
	}
	if _, err := c.PublishBatch(context.Background(), cmds...); err != nil {
		t.Fatal(err)
	}
	return ids
}

// sentinel sends one message per partition after the fact and waits until
// each is forwarded: a partition's forwarder produces in seq order, after
// its recovery, so what it was to recover is on the topic by then.
func sentinel(t *testing.T, c *client.Client, brokers []string, from []string, name string) []string {
	t.Helper()
	seen := map[int32]bool{}
	var ids []string
	for _, s := range from {
		p := client.PartitionFor(s, testPartitions)
		if seen[p] {
			continue
		}
		seen[p] = true
		id := fmt.Sprintf("%s-%d", name, p)
		v, err := c.Intercept(context.Background(), client.A2A{Message: general(s, "receiver-0", "sentinel"), APIKey: adminKey, ID: id})
		if err != nil || !v.Forwarded() {
			t.Fatalf("sentinel %s: %+v %v", id, v, err)
		}
		ids = append(ids, id)
	}
	waitForwarded(t, brokers, ids)
	return ids
}

// all is the trusted list of the exactly-once tests.
func all(from []string) []string {
	out := append([]string(nil), from...)
	for k := range 5 {
		out = append(out, fmt.Sprintf("receiver-%d", k))
	}
	return out
}

func noLimit(a *domain.A2AConfig) {
	a.RatePerMinute, a.Burst = domain.MaxA2ARatePerMinute, domain.MaxA2ARatePerMinute
}

// Issue 13 item 8, exactly once across restarts (docs/ARCHITECTURE.md, "A2A
// on Kafka": the outbox): the gate dies after the verdicts are in the log
// and before the forwarder produced them, or after it produced them and
// before its cursor was committed (the fault injected by the forwarder's
// hook at the third write); restarted on the same data, every forwarded
// verdict is on agentgate.a2a.forwarded exactly once.
func TestKafkaA2AForwardedOnceAcrossACrash(t *testing.T) {
	for _, stage := range []kafkagate.ForwardStage{kafkagate.BeforeProduce, kafkagate.AfterProduce} {
		t.Run(map[kafkagate.ForwardStage]string{kafkagate.BeforeProduce: "before produce", kafkagate.AfterProduce: "after produce"}[stage], func(t *testing.T) {
			_, brokers := broker(t)
			lg := &logs{brokers: brokers}
			dir := t.TempDir()
			from := senders(t, 8)
			var writes atomic.Int32
			var once sync.Once
			dead := make(chan int32, 1) // the partition whose forwarder died first
			a := startGate(t, brokers, lg, dir, a2aConfig(all(from), noLimit), kafkagate.WithForwardHook(func(st kafkagate.ForwardStage, p int32, seqs []uint64) error {
				if st == stage && writes.Add(1) >= 3 {
					once.Do(func() { dead <- p })
					return errors.New("the process died here")
				}
				return nil
			}))
			c := newClient(t, brokers)
			var ids []string
			for i, s := range from {
				id := fmt.Sprintf("crash-%d", i)
				v, err := c.Intercept(context.Background(), client.A2A{Message: general(s, "receiver-1", "m"), APIKey: adminKey, ID: id})
				if err != nil || !v.Forwarded() {
					t.Fatalf("%s: %+v %v", id, v, err)
				}
				ids = append(ids, id)
			}
			// The forwarders produce after the answers, so the fault comes
			// when their third write does, not by the last answer.
			var halted int32
			select {
			case halted = <-dead:
			case <-time.After(60 * time.Second): // a hang guard only
				t.Fatal("the fault was never injected")
			}
			// A message decided on the partition whose forwarder died
			// (halted in its hook, it produces nothing more) is left to
			// recover whatever the forwarders batched: without it, after
			// produce, writes that happened to hold each partition's last
			// message would forward them all before the crash.
			for _, s := range from {
				if client.PartitionFor(s, testPartitions) == halted {
					v, err := c.Intercept(context.Background(), client.A2A{Message: general(s, "receiver-1", "m"), APIKey: adminKey, ID: "crash-late"})
					if err != nil || !v.Forwarded() {
						t.Fatalf("crash-late: %+v %v", v, err)
					}
					ids = append(ids, "crash-late")
					break
				}
			}
			before := len(forwardedBy(t, brokers))
			if before == len(ids) {
				t.Fatalf("all %d forwarded before the crash: nothing left to recover", before)
			}
			a.stop()
			startGate(t, brokers, lg, dir, a2aConfig(all(from), noLimit))
			ids = append(ids, sentinel(t, c, brokers, from, "after")...)
			waitForwarded(t, brokers, ids)
			t.Logf("%d forwarded before the crash, %d after", before, len(ids))
		})
	}
}

// Issue 13 item 8, exactly once across a rebalance: two gates share the
// partitions; messages flow (async, from senders on every partition) while
// one gate leaves; the other takes its partitions over, recovers their
// forwards from the log, and every message is forwarded exactly once.
func TestKafkaA2AForwardedOnceAcrossARebalance(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	from := senders(t, 12)
	opt := a2aConfig(all(from), noLimit)
	a := startGate(t, brokers, lg, t.TempDir(), opt)
	b := startGate(t, brokers, lg, t.TempDir(), opt)
	waitOwned(t, a, b)
	c := newClient(t, brokers)
	ids := publishA2A(t, c, from, "before", 20)
	a.stop()
	ids = append(ids, publishA2A(t, c, from, "during", 20)...)
	ids = append(ids, sentinel(t, c, brokers, from, "after")...)
	waitDecided(t, brokers, c.Source(), ids)
	got := waitForwarded(t, brokers, ids)
	if len(got) != len(ids) {
		t.Fatalf("%d messages forwarded, %d sent", len(got), len(ids))
	}
}

// Issue 13 item 8, interop: an independent client (kcat, librdkafka)
// publishes a qwed.a2a.message CloudEvent with ce_* headers and the API key
// in x-api-key, keyed by the sender, and reads the forwarded message on
// agentgate.a2a.forwarded with its verdict headers.
func TestKcatA2AMessageForwarded(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; CI installs it): the interop test needs it")
	}
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig([]string{"agent-A", "agent-B"}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-P", "-t", "agentgate.requests", "-X", "partitioner=murmur2_random",
		"-k", "agent-A", "-H", "ce_specversion=1.0", "-H", "ce_id=kcat-a2a-1", "-H", "ce_source=kcat-test",
		"-H", "ce_type=qwed.a2a.message", "-H", "ce_partitionkey=agent-A", "-H", "content-type=application/json", "-H", "x-api-key="+adminKey)
	pub.Stdin = strings.NewReader(`{"sender_agent_id":"agent-A","receiver_agent_id":"agent-B","payload_type":"general","payload":{"message":"Hello!"},"trace_id":"kcat_trace_1"}` + "\n")
	if out, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	for {
		var out bytes.Buffer
		sub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-C", "-t", "agentgate.a2a.forwarded", "-o", "beginning", "-e", "-q", "-f", "%k\t%h\t%s\n")
		sub.Stdout = &out
		if err := sub.Run(); err != nil {
			t.Fatalf("kcat -C: %v", err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.Contains(line, "ce_correlationid=kcat-a2a-1") {
				continue
			}
			for _, want := range []string{"agent-B\t", "ce_type=qwed.a2a.forwarded", "qwed-a2a-status=forwarded", "qwed-a2a-engine=passthrough",
				"qwed-a2a-trace-id=kcat_trace_1", "qwed-a2a-attestation=eyJ", "agentgate-events-seq=", `"receiver_agent_id":"agent-B"`} {
				if !strings.Contains(line, want) {
					t.Fatalf("forwarded message read by kcat lacks %q: %s", want, line)
				}
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatal("kcat never read the forwarded message")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The forwards of one partition go in one record batch per write, which
// the broker's max.message.bytes bounds (1 MiB, kfake as Kafka): while a
// write is held (the hook), 1.2 MB of forwards to one receiver pile up;
// once it is let go they are produced in writes of at most
// kafkagate.MaxForwardWriteBytes, each once, rather than refused whole
// again and again.
func TestKafkaA2AForwardWritesStayUnderTheBrokerBound(t *testing.T) {
	_, brokers := broker(t)
	release := make(chan struct{})
	var held atomic.Bool
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig([]string{"agent-A", "agent-B"}, noLimit),
		kafkagate.WithForwardHook(func(st kafkagate.ForwardStage, p int32, seqs []uint64) error {
			if st == kafkagate.BeforeProduce && held.CompareAndSwap(false, true) {
				<-release
			}
			return nil
		}))
	// Registered after the gate's stop, so it runs before it: a test that
	// fails while the write is held lets it go, rather than leaving the
	// forwarder, and so the gate's stop, waiting until the binary's timeout.
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let)
	c := newClient(t, brokers)
	if _, err := c.PublishA2A(context.Background(), client.A2A{Message: general("agent-A", "agent-B", "first"), APIKey: adminKey, ID: "held"}); err != nil {
		t.Fatal(err)
	}
	ids := []string{"held"}
	text := strings.Repeat("y", 30_000)
	for b := range 4 {
		var cmds []client.Command
		for i := range 10 {
			id := fmt.Sprintf("large-%d-%d", b, i)
			cmds, ids = append(cmds, client.A2AMessage(client.A2A{Message: general("agent-A", "agent-B", text), APIKey: adminKey, ID: id})), append(ids, id)
		}
		if _, err := c.PublishBatch(context.Background(), cmds...); err != nil {
			t.Fatal(err)
		}
	}
	waitDecided(t, brokers, c.Source(), ids)
	let()
	waitForwarded(t, brokers, ids)
}

// Issue 13 "bad input", Kafka: an AgentMessage whose payload, as its
// event records it (each "<" a six-byte escape), would not fit one record
// of the events log is refused at stage 0 with QWED-REQ-004 (413), dead-
// lettered and audited, as POST /a2a/intercept refuses it over HTTPGate,
// rather than failing the append (QWED-SYS-002, "retry"); the largest one
// that fits is decided.
func TestKafkaA2APayloadOverTheLogRecordIsRefused(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig([]string{"agent-A", "agent-B"}))
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)
	over := general("agent-A", "agent-B", strings.Repeat("<", kafkagate.MaxA2APayloadBytes/6))
	_, err := c.Intercept(context.Background(), client.A2A{Message: over, APIKey: adminKey, ID: "over-record"})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 413 || e.Code != domain.CodeTooLong || e.Details["field"] != "payload" {
		t.Fatalf("a payload over the record: %v", err)
	}
	if m := dl.next(t, "over-record"); !strings.Contains(headerOf(m, kafkagate.HeaderReason), string(domain.CodeTooLong)) {
		t.Fatalf("dead letter %v", m.Headers)
	}
	fits := general("agent-A", "agent-B", strings.Repeat("<", (kafkagate.MaxA2APayloadBytes-64)/6))
	if v, err := c.Intercept(context.Background(), client.A2A{Message: fits, APIKey: adminKey, ID: "fits-record"}); err != nil || !v.Forwarded() {
		t.Fatalf("a payload that fits: %+v %v", v, err)
	}
	waitForwarded(t, brokers, []string{"fits-record"})
}

// Issue 13 item 1 on Kafka: an agent sends its own messages with its
// token in the authorization header ("Bearer <token>", client.A2A's
// AgentToken): decided against its principal's boundary; a message whose
// sender is another agent is refused, a made-up token too; neither is
// forwarded.
func TestKafkaA2AAgentTokenInTheHeader(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig(nil))
	c := newClient(t, brokers)
	agent, token := register(t, c, "a2a-sender")
	for _, ag := range []string{agent, "agent-B"} {
		rep, err := c.Request(context.Background(), client.A2ABoundary(adminKey, domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: ag}))
		if err != nil || rep.Status >= 300 {
			t.Fatalf("trusting %s: %v %v", ag, rep, err)
		}
	}
	v, err := c.Intercept(context.Background(), client.A2A{Message: general(agent, "agent-B", "mine"), AgentToken: token, ID: "by-token"})
	if err != nil || !v.Forwarded() {
		t.Fatalf("the agent's own message: %+v %v", v, err)
	}
	waitForwarded(t, brokers, []string{"by-token"})
	// The token authenticates the sender as an agent: another sender is
	// refused (here unregistered, QWED-AGENT-001), nothing forwarded.
	_, err = c.Intercept(context.Background(), client.A2A{Message: general("agent-B", agent, "not mine"), AgentToken: token, ID: "not-mine"})
	var e *client.Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status >= 500 {
		t.Fatalf("another sender's message with the agent's token: %v", err)
	}
	_, err = c.Intercept(context.Background(), client.A2A{Message: general(agent, "agent-B", "made up"), AgentToken: "qwed_agent_made_up"})
	if code := client.ErrorCode(err); code != domain.CodeInvalidAgentToken {
		t.Fatalf("a made-up token: %v", err)
	}
	if got := forwardedBy(t, brokers); len(got["not-mine"]) != 0 || len(got) != 1 {
		t.Fatalf("refused messages forwarded: %v", got)
	}
}
