package kafkagate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// Issue 13 (review): a qwed.a2a.boundary CloudEvent answered on the
// requests topic is seen by the next message of any sender, whatever its
// partition: the partition the change arrives on writes its copies to
// every other partition (acknowledged) before it decides and answers, so
// a message sent after the answer lies behind the copy on its sender's
// partition and is decided under the change.
func TestKafkaA2ABoundaryAnsweredIsSeenOnEveryPartition(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig(nil))
	c := newClient(t, brokers)
	ctx := context.Background()
	trust := func(id, agent string) {
		t.Helper()
		cmd := client.A2ABoundary(adminKey, domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: agent})
		cmd.ID = id
		if rep, err := c.Request(ctx, cmd); err != nil || rep.Status >= 300 {
			t.Fatalf("trusting %s: %+v %v", agent, rep, err)
		}
	}
	trust("trust-recv", "ryw-receiver")
	// One sender per partition: each trusted, then at once a message.
	seen := map[int32]bool{}
	for i := 0; len(seen) < testPartitions; i++ {
		s := fmt.Sprintf("ryw-sender-%d", i)
		p := client.PartitionFor(s, testPartitions)
		if seen[p] {
			continue
		}
		seen[p] = true
		trust("trust-"+s, s)
		v, err := c.Intercept(ctx, client.A2A{Message: general(s, "ryw-receiver", "hi"), APIKey: adminKey, ID: "msg-" + s})
		if err != nil || !v.Forwarded() || v.Engine != a2a.EnginePassthrough {
			t.Fatalf("a message of %s (partition %d) right after its trust was answered: %+v %v", s, p, v, err)
		}
	}
}

// Issue 13 (review): on the requests topic an agent token sends only as
// its own agent: a message naming another agent as its sender (on that
// agent's partition, whatever partition the token's agent is on) is
// refused QWED-AUTH-003 and never forwarded; the agent's own message is
// decided under its principal's boundary.
func TestKafkaA2AAgentTokenSendsOnlyAsItsAgent(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), a2aConfig(nil, noLimit))
	c := newClient(t, brokers)
	ctx := context.Background()
	mine, token := register(t, c, "token-owner")
	var victims []string
	for i := 0; len(victims) < 3; i++ {
		v, _ := register(t, c, fmt.Sprintf("victim-%d", i))
		if client.PartitionFor(v, testPartitions) != client.PartitionFor(mine, testPartitions) || len(victims) == 0 {
			victims = append(victims, v)
		}
	}
	var ids []string
	for _, v := range victims {
		id := "spoof-" + v
		_, err := c.Intercept(ctx, client.A2A{Message: general(v, "ledger", "spoofed"), AgentToken: token, ID: id})
		if client.ErrorCode(err) != domain.CodeInvalidAgentToken {
			t.Fatalf("a token of %s sending as %s: %v, want %s", mine, v, err, domain.CodeInvalidAgentToken)
		}
		ids = append(ids, id)
	}
	own, err := c.Intercept(ctx, client.A2A{Message: general(mine, "ledger", "own"), AgentToken: token, ID: "own"})
	if err != nil || own.Status != a2a.StatusBlocked || own.Engine != a2a.EngineTrust {
		t.Fatalf("the agent's own message, untrusted: %+v %v", own, err)
	}
	for id := range forwardedBy(t, brokers) {
		for _, s := range ids {
			if id == s {
				t.Fatalf("a spoofed message %s was forwarded", id)
			}
		}
	}
}
