package kafkagate_test

import (
	"context"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// TestIssue5_KafkaPartitionsAppendCheckpointsOfTheConfiguredPolicy: the
// checkpoint policy of Config reaches every partition's worker: with a
// checkpoint every 3 events, the agent's partition of agentgate.events
// holds signed checkpoints that cover the chain.
func TestIssue5_KafkaPartitionsAppendCheckpointsOfTheConfiguredPolicy(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) {
		c.Checkpoint = domain.CheckpointPolicy{Events: 3, Interval: domain.Duration(domain.DefaultCheckpointInterval)}
	})
	c := newClient(t, brokers)
	agent, token := register(t, c, "ck-bot")
	for step := 1; step <= 8; step++ {
		if _, err := c.Request(context.Background(), verifyCmd(agent, token, "c", step)); err != nil {
			t.Fatal(err)
		}
	}
	var checkpoints, decided int
	for p := range testPartitions {
		l, err := kafkalog.Open(context.Background(), brokers, kafkagate.DefaultTopics().Events, p, kafkalog.Options{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		err = l.Read(context.Background(), 1, func(r streams.Record) error {
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return err
			}
			switch {
			case ev.Type == domain.EvLogCheckpointed:
				checkpoints++
				if ck := ev.Checkpoint; ck == nil || ck.Signature == "" || ck.Seq != ev.Seq-1 || ck.Head != ev.Prev || ck.Next.Events != 3 {
					t.Errorf("checkpoint at seq %d: %+v", ev.Seq, ev.Checkpoint)
				}
			case ev.Decided != nil && ev.AgentID == agent:
				decided++
			}
			return nil
		})
		_ = l.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if decided != 8 || checkpoints < 2 {
		t.Fatalf("%d decisions and %d checkpoints on the events topic: want 8 and at least 2 (one every 3 events)", decided, checkpoints)
	}
}

// Issue 11 item 18: stopping the gate appends, on every partition it owns
// that has events no checkpoint covers, the checkpoint that covers them:
// each partition of agentgate.events ends with a signed checkpoint.
func TestKafkaGracefulStopAppendsTheFinalCheckpoint(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	g := startGate(t, brokers, lg, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "final-bot")
	for step := 1; step <= 3; step++ {
		if _, err := c.Request(context.Background(), verifyCmd(agent, token, "c", step)); err != nil {
			t.Fatal(err)
		}
	}
	g.stop()
	written := 0
	for p := range testPartitions {
		l, err := kafkalog.Open(context.Background(), brokers, kafkagate.DefaultTopics().Events, p, kafkalog.Options{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		var last *domain.Event
		err = l.Read(context.Background(), 1, func(r streams.Record) error {
			ev, err := eventjson.DecodeEvent(r.Payload)
			last = ev
			return err
		})
		_ = l.Close()
		if err != nil {
			t.Fatal(err)
		}
		if last == nil {
			continue
		}
		written++
		if last.Type != domain.EvLogCheckpointed || last.Checkpoint.Seq != last.Seq-1 || last.Checkpoint.Signature == "" {
			t.Errorf("partition %d ends with %s at seq %d, want the final checkpoint", p, last.Type, last.Seq)
		}
	}
	if written == 0 {
		t.Fatal("no partition holds events")
	}
}
