package kafkagate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// Issue 11 item 12 on Kafka: a principal key revoked over the HTTP API is
// revoked on every partition (the next command with it, on any partition,
// is refused), and an agent rotates its token, and its principal revokes
// it, as CloudEvents on agentgate.requests.
func TestKafkaCredentialsRevokeAndRotate(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 10*time.Second)
	c := newClient(t, brokers)
	admin := map[string]string{"X-API-Key": adminKey}

	st, k := h.do(t, "POST", "/principals/org_k/keys", admin, "")
	key, keyID := k["api_key"].(string), k["key_id"].(string)
	if st != http.StatusCreated || key == "" {
		t.Fatalf("issue: %d %v", st, k)
	}
	registerWith := func(apiKey string) *client.Reply {
		t.Helper()
		rep, err := c.Request(context.Background(), client.Register(apiKey,
			domain.AgentInfo{Name: "cred", Type: "autonomous", PrincipalID: "org_k"}, domain.Permissions{}, domain.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := registerWith(key)
	var reg struct {
		AgentID    string `json:"agent_id"`
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal(rep.Data, &reg); err != nil || rep.Status != http.StatusCreated {
		t.Fatalf("register with the key: %d %s", rep.Status, rep.Data)
	}
	if st, body := h.do(t, "DELETE", "/principals/org_k/keys/"+keyID, admin, ""); st != 200 || body["revoked"] != true {
		t.Fatalf("revoke over HTTP: %d %v", st, body)
	}
	// Registrations land on the partition of the agent id they mint:
	// several, so that partitions other than the one that answered the
	// revocation refuse the key too.
	for i := range 6 {
		if rep := registerWith(key); rep.Status != http.StatusUnauthorized {
			t.Fatalf("registration %d with the revoked key: %d %s", i, rep.Status, rep.Data)
		}
	}

	rotate, err := c.Request(context.Background(), client.Command{Type: domain.CmdRotateAgentToken, AgentID: reg.AgentID,
		Data: map[string]string{"agent_token": reg.AgentToken}})
	if err != nil {
		t.Fatal(err)
	}
	var rot struct {
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal(rotate.Data, &rot); err != nil || rotate.Status != 200 || rot.AgentToken == "" {
		t.Fatalf("rotate over Kafka: %d %s", rotate.Status, rotate.Data)
	}
	if d := decision(t, c, verifyCmd(reg.AgentID, reg.AgentToken, "c", 1)); d.Error == nil || d.Error.Code != domain.CodeInvalidAgentToken {
		t.Fatalf("the rotated-out token: %+v", d)
	}
	if d := decision(t, c, verifyCmd(reg.AgentID, rot.AgentToken, "c", 1)); d.Decision != "APPROVED" {
		t.Fatalf("the new token: %+v", d)
	}
	revoke, err := c.Request(context.Background(), client.Command{Type: domain.CmdRevokeAgentToken, AgentID: reg.AgentID, APIKey: adminKey, Data: map[string]any{}})
	if err != nil || revoke.Status != 200 {
		t.Fatalf("revoke over Kafka: %v %+v", err, revoke)
	}
	if d := decision(t, c, verifyCmd(reg.AgentID, rot.AgentToken, "c", 2)); d.Error == nil || d.Error.Code != domain.CodeInvalidAgentToken {
		t.Fatalf("the revoked token: %+v", d)
	}
}
