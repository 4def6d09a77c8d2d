package kafkagate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// the request path, step 1 (docs/ARCHITECTURE.md), issue 3: each kind of
// undecodable input — an unknown CloudEvent type, data that is not JSON, a body
// that breaks the endpoint's schema (a missing member, a member of the wrong
// type) — goes to agentgate.deadletter with the reason and its origin, gets an
// error reply with the catalogue code when replyto is set (none when it is not),
// is audited as a rejection, and the partition keeps deciding.
func TestKafkaDeadLetterEachKindAndPartitionGoesOn(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)
	agent, token := register(t, c, "dead")

	cases := []struct {
		name   string
		cmd    client.Command
		status int
		code   domain.Code
		reason string // a part of the dead letter's reason
	}{
		{"unknown type", client.Command{Type: "qwed.agent.teleport", AgentID: agent, Data: []byte(`{}`)},
			400, domain.CodeUnsupportedType, "QWED-REQ-005"},
		{"bad JSON data", client.Command{Type: domain.CmdVerifyAction, AgentID: agent, Data: []byte(`{"agent_token":`)},
			400, domain.CodeInvalidRequest, "data"},
		{"missing member", client.Command{Type: domain.CmdVerifyAction, AgentID: agent,
			Data: []byte(`{"agent_token":"` + token + `","context":{"conversation_id":"c","step_number":1}}`)},
			400, domain.CodeMissingField, "action"},
		{"wrong member type", client.Command{Type: domain.CmdVerifyAction, AgentID: agent,
			Data: []byte(`{"agent_token":"` + token + `","action":"DROP TABLE users","context":{"conversation_id":"c","step_number":1}}`)},
			400, domain.CodeInvalidRequest, "action"},
	}
	for i, tc := range cases {
		cmd := tc.cmd
		cmd.ID = "dl-" + strings.ReplaceAll(tc.name, " ", "-")
		corr := c.NewCorrelationID()
		rep, err := c.Send(context.Background(), rawRequest(cmd, agent, c.ReplyTopic(), corr), corr)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var body struct {
			Error domain.Error `json:"error"`
		}
		if err := json.Unmarshal(rep.Data, &body); err != nil || rep.Status != tc.status || body.Error.Code != tc.code {
			t.Fatalf("%s: reply %d %s, want %d %s", tc.name, rep.Status, rep.Data, tc.status, tc.code)
		}
		m := dl.next(t, cmd.ID)
		reason := headerOf(m, kafkagate.HeaderReason)
		if !strings.Contains(reason, tc.reason) || headerOf(m, "agentgate-origin") == "" {
			t.Fatalf("%s: dead letter reason %q origin %q, want the reason to mention %q", tc.name, reason, headerOf(m, "agentgate-origin"), tc.reason)
		}
		// Async (no replyto): dead-lettered all the same.
		cmd.ID += "-async"
		if _, err := c.Send(context.Background(), rawRequest(cmd, agent, "", ""), ""); err != nil {
			t.Fatal(err)
		}
		if m := dl.next(t, cmd.ID); !strings.Contains(headerOf(m, kafkagate.HeaderReason), tc.reason) {
			t.Fatalf("%s async: dead letter reason %q", tc.name, headerOf(m, kafkagate.HeaderReason))
		}
		// The partition goes on: the next step of the agent is decided.
		rep, err = c.Request(context.Background(), verifyCmd(agent, token, "conv-dead", i+1))
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal(rep.Data, &d); err != nil || d.Decision != "APPROVED" {
			t.Fatalf("after %s: %d %s", tc.name, rep.Status, rep.Data)
		}
	}
	// Every refusal is audited (one command.rejected per refused message).
	rejected := 0
	for _, ev := range recordedEvents(t, brokers, "raw-test") {
		if ev.Type == domain.EvCommandRejected {
			rejected++
		}
	}
	if rejected != 2*len(cases) {
		t.Fatalf("%d rejection records, want %d", rejected, 2*len(cases))
	}
}

// rawRequest writes cmd as a binary-mode CloudEvent by hand (the client's
// encoder refuses data that is not JSON), on the partition of agent, with
// replyto and correlationid when replyTo is set.
func rawRequest(cmd client.Command, agent, replyTo, corr string) kafka.Message {
	h := []kafka.Header{{Key: "ce_specversion", Value: []byte("1.0")}, {Key: "ce_id", Value: []byte(cmd.ID)},
		{Key: "ce_source", Value: []byte("raw-test")}, {Key: "ce_type", Value: []byte(cmd.Type)},
		{Key: "ce_subject", Value: []byte(agent)}, {Key: "content-type", Value: []byte("application/json")}}
	if replyTo != "" {
		h = append(h, kafka.Header{Key: "ce_replyto", Value: []byte(replyTo)}, kafka.Header{Key: "ce_correlationid", Value: []byte(corr)})
	}
	return kafka.Message{Topic: kafkagate.DefaultTopics().Requests, Partition: int(client.PartitionFor(agent, testPartitions)),
		Key: []byte(agent), Value: cmd.Data.([]byte), Headers: h}
}

// Issue 11 item 16: a reply whose ce_replyto topic does not exist is not
// dropped: it goes to agentgate.deadletter (the reply's key, value and
// headers) with the reason, the topic it was for and the request's origin;
// the decision stands, and the partition keeps answering.
func TestKafkaReplyToUnknownTopicIsDeadLettered(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)
	agent, token := register(t, c, "lost-reply")
	const topic = "no.such.replies"
	cmd := client.Command{Type: domain.CmdVerifyAction, AgentID: agent, ID: "lost-reply",
		Data: []byte(`{"agent_token":"` + token + `","action":{"type":"execute_sql","query":"SELECT 1"},"context":{"conversation_id":"lost","step_number":1}}`)}
	corr := c.NewCorrelationID()
	if _, err := c.Send(context.Background(), rawRequest(cmd, agent, topic, corr), ""); err != nil {
		t.Fatal(err)
	}
	m := dl.next(t, "")
	for headerOf(m, "ce_correlationid") != corr {
		m = dl.next(t, "")
	}
	reason := headerOf(m, kafkagate.HeaderReason)
	if !strings.Contains(reason, "the reply topic "+topic+" cannot be written") || headerOf(m, kafkagate.HeaderReplyTo) != topic ||
		!strings.HasPrefix(headerOf(m, kafkagate.HeaderOrigin), fmt.Sprintf("%s/%d/", kafkagate.DefaultTopics().Requests, client.PartitionFor(agent, testPartitions))) ||
		headerOf(m, kafkagate.HeaderStatus) != "200" || !strings.Contains(string(m.Value), `"decision":"APPROVED"`) {
		t.Fatalf("dead-lettered reply: reason %q headers %v value %s", reason, m.Headers, m.Value)
	}
	if ev := recordedEvents(t, brokers, "raw-test")["lost-reply"]; ev == nil || ev.Decided == nil || ev.Decided.Decision != domain.Approved {
		t.Fatalf("the decision of the request whose reply was lost: %+v", ev)
	}
	rep, err := c.Request(context.Background(), verifyCmd(agent, token, "lost", 2))
	if err != nil || !strings.Contains(string(rep.Data), `"decision":"APPROVED"`) {
		t.Fatalf("after the lost reply: %+v %v", rep, err)
	}
}

// A request's ce_replyto may not name one of the gate's own topics: a
// tenant could otherwise have the gate write its reply into the event
// log, the decisions consumers trust, the requests or the forwards. The
// reply is dead-lettered with the reason and the topic; the decision
// stands, and the named topic receives nothing.
func TestKafkaReplyToAGateTopicIsDeadLettered(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)
	agent, token := register(t, c, "own-topic")
	topics := kafkagate.DefaultTopics()
	for i, topic := range []string{topics.Decisions, topics.Events, topics.A2A, topics.Requests} {
		cmd := client.Command{Type: domain.CmdVerifyAction, AgentID: agent, ID: fmt.Sprintf("own-topic-%d", i),
			Data: []byte(fmt.Sprintf(`{"agent_token":"%s","action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"own","step_number":%d}}`, token, i+1))}
		corr := c.NewCorrelationID()
		if _, err := c.Send(context.Background(), rawRequest(cmd, agent, topic, corr), ""); err != nil {
			t.Fatal(err)
		}
		m := dl.next(t, "")
		for headerOf(m, "ce_correlationid") != corr {
			m = dl.next(t, "")
		}
		if reason := headerOf(m, kafkagate.HeaderReason); !strings.Contains(reason, "the gate's own topics") || headerOf(m, kafkagate.HeaderReplyTo) != topic {
			t.Fatalf("reply to %s: dead letter reason %q replyto %q", topic, reason, headerOf(m, kafkagate.HeaderReplyTo))
		}
	}
	// Nothing of the replies reached the decisions topic (written with
	// the dead letters, in the same produce): every message up to its
	// end is a decision.
	p := int(client.PartitionFor(agent, testPartitions))
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topics.Decisions, p)
	if err != nil {
		t.Fatal(err)
	}
	end, err := conn.ReadLastOffset()
	conn.Close()
	if err != nil || end == 0 {
		t.Fatalf("the decisions topic ends at %d: %v", end, err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topics.Decisions, Partition: p})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if typ := headerOf(m, "ce_type"); typ != kafkagate.DecisionType {
			t.Fatalf("a %q message on %s: %s", typ, topics.Decisions, m.Value)
		}
		if m.Offset == end-1 {
			break
		}
	}
}
