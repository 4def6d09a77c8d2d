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

// Issue 11 item 2 in process (the real deaths are in cmd/agentgate,
// TestKafkaPoisonPillIsDeadLetteredAfterBoundedDeaths): a gate restarting
// on a partition whose flight record says the request at offset o killed
// it MaxAttempts-1 times while tried alone dies no more for it: the
// request is dead-lettered undecided with the reason and its origin, its
// replyto gets QWED-SYS-001 (500) with the attempts, its refusal is
// audited once as a command.rejected, the next request of the window is
// decided alone, and the partition then serves as usual.
func TestKafkaPoisonDeadLetteredWithReplyAndAudit(t *testing.T) {
	_, brokers := broker(t)
	dir := t.TempDir()
	g := startGate(t, brokers, &logs{brokers: brokers}, dir)
	c := newClient(t, brokers)
	dl := deadLetters(t, brokers)
	agent, token := register(t, c, "poison")
	p := client.PartitionFor(agent, testPartitions)
	g.stop()

	end := requestsEnd(t, brokers, p)
	type answer struct {
		rep *client.Reply
		err error
	}
	send := func(cmd client.Command) chan answer {
		ch := make(chan answer, 1)
		go func() {
			rep, err := c.Request(context.Background(), cmd)
			ch <- answer{rep, err}
		}()
		return ch
	}
	poison := verifyCmd(agent, token, "poisoned", 1)
	poison.ID = "poison"
	poisonAns := send(poison)
	deadline := time.Now().Add(20 * time.Second)
	for requestsEnd(t, brokers, p) < end+1 {
		if time.Now().After(deadline) {
			t.Fatal("the poison never reached the requests topic")
		}
		time.Sleep(10 * time.Millisecond)
	}
	next := verifyCmd(agent, token, "neighbour", 1)
	next.ID = "neighbour"
	nextAns := send(next)
	for requestsEnd(t, brokers, p) < end+2 {
		if time.Now().After(deadline) {
			t.Fatal("the neighbour never reached the requests topic")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := kafkagate.LeaveFlight(dir, p, end, end+1, end, kafkagate.MaxAttempts-1); err != nil {
		t.Fatal(err)
	}
	startGate(t, brokers, &logs{brokers: brokers}, dir)

	a := <-poisonAns
	var body struct {
		Error domain.Error `json:"error"`
	}
	if a.err != nil || a.rep.Status != 500 || json.Unmarshal(a.rep.Data, &body) != nil || body.Error.Code != domain.CodeInternal ||
		fmt.Sprint(body.Error.Details["attempts"]) != fmt.Sprint(kafkagate.MaxAttempts) {
		t.Fatalf("the poison's reply: %+v %v, want 500 %s with its attempts", a.rep, a.err, domain.CodeInternal)
	}
	m := dl.next(t, "poison")
	reason, origin := headerOf(m, kafkagate.HeaderReason), headerOf(m, "agentgate-origin")
	if !strings.Contains(reason, fmt.Sprintf("killed the gate %d times", kafkagate.MaxAttempts)) ||
		origin != fmt.Sprintf("%s/%d/%d", kafkagate.DefaultTopics().Requests, p, end) {
		t.Fatalf("dead letter reason %q origin %q", reason, origin)
	}
	a = <-nextAns
	if a.err != nil || !strings.Contains(string(a.rep.Data), `"decision":"APPROVED"`) {
		t.Fatalf("the neighbour: %+v %v", a.rep, a.err)
	}
	rep, err := c.Request(context.Background(), verifyCmd(agent, token, "after", 1))
	if err != nil || !strings.Contains(string(rep.Data), `"decision":"APPROVED"`) {
		t.Fatalf("after the poison: %+v %v", rep, err)
	}
	events := recordedEvents(t, brokers, c.Source())
	if ev := events["poison"]; ev != nil {
		t.Fatalf("the poison was decided: %+v", ev)
	}
	audit := events[fmt.Sprintf("%d/%d", p, end)]
	if audit == nil || audit.Type != domain.EvCommandRejected || audit.Command.Reject.Error.Code != domain.CodeInternal {
		t.Fatalf("the poison's audit record: %+v", audit)
	}
}

// requestsEnd returns the end offset of partition p of the requests topic.
func requestsEnd(t *testing.T, brokers []string, p int32) int64 {
	t.Helper()
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], kafkagate.DefaultTopics().Requests, int(p))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	end, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatal(err)
	}
	return end
}
