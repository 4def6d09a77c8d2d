package kafkagate_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// movableClock is a wall clock a test moves forward.
type movableClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *movableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *movableClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// On Kafka too the gate's clock expires confirmation tokens (the Agent
// Policy Engine spec §2.2): the consumer's home partition, whose worker
// holds the token, records execute.timers once the TTL has passed, and
// the token is then unknown (QWED-EXEC-002).
func TestKafkaConfirmationTokensExpire(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	clock := &movableClock{}
	startGate(t, brokers, lg, t.TempDir(), withExecuteMode(domain.ExecuteModeConfirm), func(c *kafkagate.Config) { c.Clock = clock.Now })
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	principal := principalHomedAt(t, 2)
	agent, token := registerAgentOn(t, c, principal, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if ev, err := h.gate.Submit(ctx, businessCmd("books", "http://127.0.0.1:9/")); err != nil || ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %v %+v", err, ev)
	}
	rep, err := c.Request(ctx, client.Command{Type: domain.CmdPrepareExecute, AgentID: agent, AgentToken: token, Data: executeData("books", 80)})
	if err != nil {
		t.Fatal(err)
	}
	var prepared struct {
		ConfirmationToken string `json:"confirmationToken"`
	}
	if rep.Status != 200 || json.Unmarshal(rep.Data, &prepared) != nil || prepared.ConfirmationToken == "" {
		t.Fatalf("prepare: %d %s", rep.Status, rep.Data)
	}
	clock.Advance(5*time.Minute + time.Second)
	timers := waitEvent(t, lg, 2, func(ev *domain.Event) bool { return ev.Type == domain.EvExecuteTimers })
	if len(timers.Timers.TokensExpired) != 1 {
		t.Fatalf("timers %+v", timers.Timers)
	}
	rep, err = c.Request(ctx, client.Command{Type: domain.CmdExecute, AgentID: agent, AgentToken: token,
		ConfirmationToken: prepared.ConfirmationToken, Data: executeData("books", 80)})
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := errorOf(t, rep); rep.Status != 403 || code != domain.CodeExecTokenInvalid || msg != domain.MsgExecTokenInvalid {
		t.Fatalf("the expired token after the tick: %d %s %q", rep.Status, code, msg)
	}
}
