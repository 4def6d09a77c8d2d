package kafkagate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// Issue 11 item 10 on Kafka: a conversation evicted from a partition's
// state keeps its replay protection, on the instance that evicted it
// (its partition store) and on a new instance that restores the
// partition from the events topic alone (a fresh data dir).
func TestKafkaReplayProtectionOutlivesConversationEviction(t *testing.T) {
	if raceEnabled {
		t.Skip("10,000 conversations: the plain pass runs it; the race detector slows it tenfold")
	}
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	a := startGate(t, brokers, lg, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "evictions")
	for _, conv := range []string{"old-a", "old-b"} {
		for step := 1; step <= 3; step++ {
			if d := decision(t, c, verifyCmd(agent, token, conv, step)); d.Decision != "APPROVED" {
				t.Fatalf("%s step %d: %+v", conv, step, d)
			}
		}
	}
	// MaxConversations new conversations: the agent then holds the limit
	// and old-a and old-b, the least recently updated, are evicted.
	var ids []string
	for from := 0; from < domain.MaxConversations; from += 500 {
		var cmds []client.Command
		for i := from; i < min(from+500, domain.MaxConversations); i++ {
			cmd := verifyCmd(agent, token, fmt.Sprint("new-", i), 1)
			cmd.ID = fmt.Sprint("new-", i)
			cmds = append(cmds, cmd)
			ids = append(ids, cmd.ID)
		}
		if _, err := c.PublishBatch(context.Background(), cmds...); err != nil {
			t.Fatal(err)
		}
	}
	waitDecided(t, brokers, c.Source(), ids)
	replayed := func(conv string, step int) {
		t.Helper()
		if d := decision(t, c, verifyCmd(agent, token, conv, step)); d.Error == nil || d.Error.Code != domain.CodeReplay {
			t.Fatalf("%s step %d replayed after its eviction: %+v, want %s", conv, step, d, domain.CodeReplay)
		}
	}
	replayed("old-a", 3)
	a.stop()
	startGate(t, brokers, lg, t.TempDir())
	replayed("old-b", 2)
	replayed("old-a", 1)
	if d := decision(t, c, verifyCmd(agent, token, "old-a", 4)); d.Decision != "APPROVED" {
		t.Fatalf("old-a step 4 after its eviction: %+v", d)
	}
}
