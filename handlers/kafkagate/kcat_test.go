package kafkagate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// The contracts (docs/ARCHITECTURE.md), interop: an independent client (Debian's
// kcat, librdkafka) publishes a binary-mode CloudEvent with ce_* headers, keyed
// by agent with Kafka's murmur2 partitioner, and reads the reply by
// correlationid.
func TestKcatBinaryModeRequestReply(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; CI installs it): the interop test needs it")
	}
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "kcat")
	data := `{"agent_token":"` + token + `","action":{"type":"execute_sql","query":"SELECT 1"},"context":{"conversation_id":"k1","step_number":1}}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-P", "-t", "agentgate.requests", "-X", "partitioner=murmur2_random",
		"-k", agent, "-H", "ce_specversion=1.0", "-H", "ce_id=kcat-1", "-H", "ce_source=kcat-test",
		"-H", "ce_type=qwed.agent.action.verify", "-H", "ce_subject="+agent, "-H", "ce_partitionkey="+agent,
		"-H", "ce_replyto=agentgate.replies", "-H", "ce_correlationid=kcat-corr-1", "-H", "content-type=application/json")
	pub.Stdin = strings.NewReader(data + "\n")
	if out, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	line := kcatReply(ctx, t, kcat, brokers, client.PartitionFor(agent, testPartitions), "kcat-corr-1")
	if !strings.Contains(line, "ce_type=qwed.agent.action.verify.reply") || !strings.Contains(line, `"decision":"APPROVED"`) ||
		!strings.Contains(line, "agentgate-status=200") {
		t.Fatalf("reply read by kcat: %s", line)
	}
}

// kcatReply reads with kcat, from the beginning of partition p of the
// replies topic, until it finds the reply carrying correlationid corr, and
// returns it as "headers<TAB>value".
func kcatReply(ctx context.Context, t *testing.T, kcat string, brokers []string, p int32, corr string) string {
	t.Helper()
	for {
		var out bytes.Buffer
		sub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-C", "-t", "agentgate.replies", "-p", strconv.Itoa(int(p)), "-o", "beginning", "-e", "-q",
			"-f", "%h\t%s\n")
		sub.Stdout = &out
		if err := sub.Run(); err != nil {
			t.Fatalf("kcat -C: %v", err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "ce_correlationid="+corr) {
				return line
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("kcat never read a reply with correlationid %s", corr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The contracts (docs/ARCHITECTURE.md), interop, structured mode: kcat publishes
// the whole event as the value (content-type application/cloudevents+json, data
// inline), the gate decides it and answers in structured mode too: the reply
// read by kcat is a CloudEvent JSON document of type <type>.reply carrying the
// correlationid and the decision.
func TestKcatStructuredModeRequestReply(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; CI installs it): the interop test needs it")
	}
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "kcat-structured")
	event := `{"specversion":"1.0","id":"kcat-s-1","source":"kcat-test","type":"qwed.agent.action.verify","subject":"` + agent +
		`","datacontenttype":"application/json","partitionkey":"` + agent + `","replyto":"agentgate.replies","correlationid":"kcat-corr-s1",` +
		`"data":{"agent_token":"` + token + `","action":{"type":"execute_sql","query":"SELECT 1"},"context":{"conversation_id":"ks1","step_number":1}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-P", "-t", "agentgate.requests", "-X", "partitioner=murmur2_random",
		"-k", agent, "-H", "content-type=application/cloudevents+json")
	pub.Stdin = strings.NewReader(event + "\n")
	if out, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	for {
		var out bytes.Buffer
		sub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-C", "-t", "agentgate.replies", "-o", "beginning", "-e", "-q", "-f", "%h\t%s\n")
		sub.Stdout = &out
		if err := sub.Run(); err != nil {
			t.Fatalf("kcat -C: %v", err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			hdrs, value, _ := strings.Cut(line, "\t")
			if !strings.Contains(value, `"correlationid":"kcat-corr-s1"`) {
				continue
			}
			var rep struct {
				Type string `json:"type"`
				Data struct {
					Decision string `json:"decision"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(value), &rep); err != nil {
				t.Fatalf("structured reply is not a JSON CloudEvent: %v: %s", err, value)
			}
			if rep.Type != "qwed.agent.action.verify.reply" || rep.Data.Decision != "APPROVED" ||
				!strings.Contains(hdrs, "content-type=application/cloudevents+json") || !strings.Contains(hdrs, "agentgate-status=200") {
				t.Fatalf("structured reply read by kcat: %s", line)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatal("kcat never read a reply with correlationid kcat-corr-s1")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Interop of executes: kcat publishes a qwed.execute CloudEvent (binary
// mode, keyed by its agent with murmur2, the agent token in the
// authorization header) for an agent on partition 1 whose consumer's home
// is partition 2; the gate authenticates it on 1, decides it on 2, and
// answers once the outcome is recorded: kcat reads the reply, with the
// business's data, by its correlationid.
func TestKcatExecute(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; CI installs it): the interop test needs it")
	}
	w := newExecWorld(t)
	lg, h, agent, token, brokers := w.lg, w.h, w.agent, w.token, w.lg.brokers
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w.business(ctx, t, h, "books")
	pub := exec.CommandContext(ctx, kcat, "-b", brokers[0], "-P", "-t", "agentgate.requests", "-X", "partitioner=murmur2_random",
		"-k", agent, "-H", "ce_specversion=1.0", "-H", "ce_id=kcat-exec-1", "-H", "ce_source=kcat-test",
		"-H", "ce_type=qwed.execute", "-H", "ce_subject="+agent, "-H", "ce_partitionkey="+agent,
		"-H", "ce_replyto=agentgate.replies", "-H", "ce_correlationid=kcat-exec-corr-1", "-H", "content-type=application/json",
		"-H", "authorization=Bearer "+token)
	pub.Stdin = strings.NewReader(string(executeData("books", 80)) + "\n")
	if out, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	decided := waitEvent(t, lg, 2, func(ev *domain.Event) bool {
		return ev.Type == domain.EvExecuteDecided && ev.Command.Request.ID == "kcat-exec-1"
	})
	if decided.Transaction == nil || decided.Transaction.Status != domain.TxExecuting {
		t.Fatalf("kcat's execute decided %+v %v", decided.Transaction, decided.Error)
	}
	if ev, err := h.gate.SubmitTo(ctx, outcomeCmd(decided.Transaction.ID), 2); err != nil || ev.Type != domain.EvExecuteCompleted {
		t.Fatalf("outcome: %v %+v", err, ev)
	}
	line := kcatReply(ctx, t, kcat, brokers, client.PartitionFor(agent, testPartitions), "kcat-exec-corr-1")
	if !strings.Contains(line, "ce_type=qwed.execute.reply") || !strings.Contains(line, `"status":"completed"`) ||
		!strings.Contains(line, `"data":{"order":"o-1"}`) || !strings.Contains(line, "agentgate-status=200") ||
		!strings.Contains(line, `"transactionId":"`+decided.Transaction.ID+`"`) {
		t.Fatalf("reply read by kcat: %s", line)
	}
}
