package kafkagate_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// Invariant 2 under broker faults: while the broker drops every produce to
// the events topic, a request is refused (503), never approved, and no
// event exists for it; once the broker recovers, the same request (same
// source + id) is decided exactly once.
func TestKafkaBrokerFaultRefusesNeverApproves(t *testing.T) {
	cluster, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir())
	c := newClient(t, brokers)
	agent, token := register(t, c, "fault")
	var failing atomic.Bool
	events := kafkagate.DefaultTopics().Events
	cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		if !failing.Load() {
			return nil, nil, false
		}
		for _, tp := range req.(*kmsg.ProduceRequest).Topics {
			if tp.Topic == events {
				return nil, errors.New("injected: connection dropped"), true
			}
		}
		return nil, nil, false
	})
	failing.Store(true)
	cmd := verifyCmd(agent, token, "conv-f", 1)
	cmd.ID = "fault-1"
	rep, err := c.Request(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != 503 {
		t.Fatalf("during the fault: %d %s, want 503", rep.Status, rep.Data)
	}
	if n := decidedRequests(t, brokers, c.Source())["fault-1"]; n != 0 {
		t.Fatalf("a refused request has %d events", n)
	}
	failing.Store(false)
	// The client retries with the same id until the gate decides.
	for try := 0; ; try++ {
		rep, err = c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status == 200 {
			break
		}
		if rep.Status != 503 || try == 50 {
			t.Fatalf("after the fault: %d %s", rep.Status, rep.Data)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitDecided(t, brokers, c.Source(), []string{"fault-1"})
}
