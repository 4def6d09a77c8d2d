package kafkagate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// Issue 11 items 8 and 9 on Kafka: the command data of each transport path (a
// verify_action in binary mode, a qwed.verify, a structured-mode event
// whose envelope repeats an attribute) is refused with QWED-REQ-001
// naming the member when encoding/json would read a member
// case-insensitively or last-wins; before the fix the issue's example was
// decided as "calculate". A field over its limit is refused as over HTTP.
func TestIssue11_8_9_KafkaBodiesAreStrictAndBounded(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)))
	c := newClient(t, brokers)
	agent, token := register(t, c, "strict")

	type errorBody struct {
		Error domain.Error `json:"error"`
	}
	ask := func(t *testing.T, msg kafka.Message, corr string) (int, domain.Error) {
		t.Helper()
		rep, err := c.Send(context.Background(), msg, corr)
		if err != nil {
			t.Fatal(err)
		}
		var b errorBody
		if err := json.Unmarshal(rep.Data, &b); err != nil {
			t.Fatalf("reply %d %s: %v", rep.Status, rep.Data, err)
		}
		return rep.Status, b.Error
	}
	for _, tc := range []struct{ name, data, field, reason string }{
		{"the issue's example", `{"agent_token":"` + token + `","action":{"type":"execute_sql","query":"DROP TABLE users","TYPE":"calculate"},"context":{"conversation_id":"c1","step_number":1}}`,
			"action.TYPE", "duplicate"},
		{"a nested member in another case", `{"agent_token":"` + token + `","action":{"type":"calculate","query":"1+1"},"context":{"conversation_id":"c2","Step_Number":1}}`,
			"context.Step_Number", "wrong_case"},
		{"a duplicate deep in the parameters", `{"agent_token":"` + token + `","action":{"type":"execute_sql","query":"SELECT 1","parameters":{"a":[{"b":{"c":1,"c":2}}]}},"context":{"conversation_id":"c3","step_number":1}}`,
			"action.parameters.a[0].b.c", "duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := client.Command{Type: domain.CmdVerifyAction, ID: "strict-" + strings.ReplaceAll(tc.name, " ", "-"), AgentID: agent, Data: []byte(tc.data)}
			corr := c.NewCorrelationID()
			status, e := ask(t, rawRequest(cmd, agent, c.ReplyTopic(), corr), corr)
			if status != 400 || e.Code != domain.CodeInvalidRequest || e.Details["field"] != tc.field || e.Details["reason"] != tc.reason {
				t.Fatalf("reply %d %+v, want 400 %s about %s (%s)", status, e, domain.CodeInvalidRequest, tc.field, tc.reason)
			}
		})
	}

	t.Run("qwed.verify", func(t *testing.T) {
		cmd := client.QWEDVerify(adminKey, json.RawMessage(`{"query":"2+2=4","type":"math","TYPE":"logic"}`))
		rep, err := c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Error *struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 400 || r.Error == nil ||
			r.Error.Code != string(domain.CodeInvalidRequest) || r.Error.Details["field"] != "/TYPE" {
			t.Fatalf("reply %d %s", rep.Status, rep.Data)
		}
	})

	t.Run("structured envelope", func(t *testing.T) {
		corr := c.NewCorrelationID()
		value := `{"specversion":"1.0","id":"strict-envelope","source":"raw-test","subject":"` + agent + `","datacontenttype":"application/json",` +
			`"type":"qwed.agent.action.verify","type":"qwed.agent.suspend","data":{}}`
		msg := kafka.Message{Topic: kafkagate.DefaultTopics().Requests, Partition: int(client.PartitionFor(agent, testPartitions)), Key: []byte(agent),
			Value: []byte(value), Headers: []kafka.Header{{Key: "content-type", Value: []byte("application/cloudevents+json")},
				{Key: "ce_replyto", Value: []byte(c.ReplyTopic())}, {Key: "ce_correlationid", Value: []byte(corr)}}}
		status, e := ask(t, msg, corr)
		if status != 400 || e.Code != domain.CodeInvalidRequest || e.Details["attribute"] != "type" {
			t.Fatalf("reply %d %+v, want 400 about the attribute type", status, e)
		}
	})

	// Issue 11 item 8 on Kafka: the same field limits as over HTTP.
	t.Run("conversation_id limit", func(t *testing.T) {
		at := strings.Repeat("c", domain.MaxIDBytes)
		rep, err := c.Request(context.Background(), actionCmd(agent, token, at, 1, "SELECT 2"))
		if err != nil || rep.Status != 200 {
			t.Fatalf("conversation_id at its limit: %v %d %s", err, rep.Status, rep.Data)
		}
		cmd := actionCmd(agent, token, at+"c", 1, "SELECT 2")
		cmd.ID = "strict-long-conversation"
		rep, err = c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		var b errorBody
		if err := json.Unmarshal(rep.Data, &b); err != nil || rep.Status != 400 || b.Error.Code != domain.CodeTooLong ||
			b.Error.Details["field"] != "context.conversation_id" || b.Error.Details["max_bytes"] != float64(domain.MaxIDBytes) {
			t.Fatalf("conversation_id over its limit: %d %s", rep.Status, rep.Data)
		}
	})

	// The agent's conversations were never touched: step 1 of c1 is free.
	rep, err := c.Request(context.Background(), actionCmd(agent, token, "c1", 1, "SELECT 1"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(rep.Data, &d); err != nil || d.Decision != "APPROVED" {
		t.Fatalf("after the refusals: %d %s", rep.Status, rep.Data)
	}
}
