package kafkagate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// Issue 11 item 13 on agentgate.requests: a CloudEvent's source and id are
// scoped by the credential it carries, so a made-up token publishing an
// agent's next id first does not block the agent's own request (no 409);
// and the HTTP API's source namespace is refused.
func TestKafkaCloudEventIDsArePerCredential(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "bot")

	squat := actionCmd(agent, "qwed_agent_made_up", "c", 1, "SELECT 1")
	squat.ID = "shared"
	rep, err := c.Request(context.Background(), squat)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != 401 {
		t.Fatalf("a made-up token: %d %s", rep.Status, rep.Data)
	}
	own := actionCmd(agent, token, "c", 1, "SELECT 1")
	own.ID = "shared"
	if rep, err = c.Request(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(rep.Data, &d); err != nil || rep.Status != 200 || d["decision"] != "APPROVED" {
		t.Fatalf("the agent's request with the id a made-up token used first: %d %s", rep.Status, rep.Data)
	}

	h, err := client.New(context.Background(), client.Config{Brokers: brokers, Source: "http", Timeout: 20 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	rep, err = h.Request(context.Background(), client.Register(adminKey,
		domain.AgentInfo{Name: "x", Type: "autonomous", PrincipalID: "org_a"}, domain.Permissions{}, domain.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error domain.Error `json:"error"`
	}
	if err := json.Unmarshal(rep.Data, &body); err != nil || rep.Status != 400 || body.Error.Code != domain.CodeInvalidRequest ||
		body.Error.Details["attribute"] != "source" {
		t.Fatalf("source http on the requests topic: %d %s, want 400 QWED-REQ-001 naming the source", rep.Status, rep.Data)
	}
}
