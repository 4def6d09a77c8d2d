package kafkagate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams/ce"
)

// relayRecord returns the first relayed notice (qwed.agent.blocked) on
// partition p of the requests topic, as the gate produced it.
func relayRecord(t *testing.T, brokers []string, p int) kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: kafkagate.DefaultTopics().Requests, Partition: p, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("no relay on partition %d: %v", p, err)
		}
		for _, h := range m.Headers {
			if h.Key == "ce_type" && string(h.Value) == string(domain.CmdAgentBlocked) {
				return m
			}
		}
	}
}

// denyShadow has the agent read /etc/shadow, which the gate DENIES.
func denyShadow(t *testing.T, c *client.Client, agent, token string) {
	t.Helper()
	rep, err := c.Request(context.Background(), client.Verify(agent, token, domain.VerifyAction{
		Action:  domain.Action{Type: "read_file", Target: "/etc/shadow"},
		Context: domain.ActionContext{ConversationID: "c1", StepNumber: "1"}}))
	if err != nil || rep.Status != http.StatusForbidden {
		t.Fatalf("read_file /etc/shadow: %v %+v", err, rep)
	}
}

// await waits until rc received n POSTs.
func (rc *noticeReceiver) await(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); rc.count() < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook received %d POSTs, want %d", rc.count(), n)
		}
	}
}

// TestAgentSpec_2_3_ReplayedRelayOnlyOnItsHome pins QWED-Agent spec v1.1
// §2.3 against a replay of the gate's own relay: whoever can read and
// write the requests topic copies a signed qwed.agent.blocked record (its
// MAC covers its data only) and produces it again with a reply-to and a
// new CloudEvent id. On the principal's home partition it is the same
// request (its id is in the signed data), answered from the request
// index: no second event, no second POST. On another partition it is
// refused: no event there, and the read model, which folds every
// partition into one state holding the principal's webhooks, lists no
// second, never-attempted delivery.
func TestAgentSpec_2_3_ReplayedRelayOnlyOnItsHome(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	principal := principalHomedAt(t, 2)
	webhooks, kr := withWebhooks(t)
	cfg := domain.DefaultConfig()
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg }, webhooks)
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	agent, token := registerAgentOn(t, c, principal, 1)
	rc := newNoticeReceiver(t)
	admin := map[string]string{"X-API-Key": adminKey}
	if st, w := h.do(t, "POST", "/webhooks", admin, `{"url":"`+rc.URL+`/n","consumer":"`+principal+`","events":["agent_blocked"]}`); st != 201 {
		t.Fatalf("creating a webhook: %d %v", st, w)
	}
	denyShadow(t, c, agent, token)
	rc.await(t, 1)
	relay := relayRecord(t, brokers, 2)

	replay := func(p int, id string) *client.Reply {
		t.Helper()
		m := kafka.Message{Topic: kafkagate.DefaultTopics().Requests, Partition: p, Key: relay.Key, Value: relay.Value}
		corr := c.NewCorrelationID()
		for _, hd := range relay.Headers {
			if hd.Key != "ce_id" {
				m.Headers = append(m.Headers, hd)
			}
		}
		m.Headers = append(m.Headers, kafka.Header{Key: "ce_id", Value: []byte(id)},
			kafka.Header{Key: "ce_" + ce.ExtReplyTo, Value: []byte(c.ReplyTopic())},
			kafka.Header{Key: "ce_" + ce.ExtCorrelationID, Value: []byte(corr)})
		rep, err := c.Send(context.Background(), m, corr)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := replay(2, "replayed-home"); rep.Status != 200 {
		t.Fatalf("the relay replayed on its home: %d %s", rep.Status, rep.Data)
	}
	if rep := replay(0, "replayed-elsewhere"); rep.Status < 400 {
		t.Fatalf("the relay replayed on partition 0 was decided: %d %s", rep.Status, rep.Data)
	}
	count := func(p int32) (n int, last uint64) {
		for _, ev := range partitionEvents(t, lg, p) {
			if ev.Type == domain.EvAgentBlockRelayed {
				n++
			}
			last = ev.Seq
		}
		return n, last
	}
	home, homeLast := count(2)
	if home != 1 {
		t.Fatalf("%d agent.block_relayed events on the home partition, want 1", home)
	}
	n, last := count(0)
	if n != 0 {
		t.Fatalf("%d agent.block_relayed events on partition 0, want none", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.reads.WaitApplied(ctx, 0, last); err != nil {
		t.Fatal(err)
	}
	if err := h.reads.WaitApplied(ctx, 2, homeLast); err != nil {
		t.Fatal(err)
	}
	a := h.send(t, "GET", "/webhooks/deliveries?consumer="+principal+"&kind=agent_blocked", admin, "")
	var list struct {
		Deliveries []json.RawMessage `json:"deliveries"`
	}
	if err := json.Unmarshal(a.Body, &list); err != nil || len(list.Deliveries) != 1 {
		t.Fatalf("the read model's deliveries (want 1): %v %s", err, a.Body)
	}
	if n := rc.count(); n != 1 || strings.Contains(string(rc.posts[0]), "/etc/shadow") {
		t.Fatalf("%d POSTs, want 1 without the target", n)
	}
	// The POST verifies against the gate's JWKS; the body changed by one
	// byte does not.
	set, err := attest.ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	body := append([]byte(nil), rc.posts[0]...)
	if err := set.VerifyWebhook(rc.sigs[0], body); err != nil {
		t.Fatalf("the POST's signature: %v", err)
	}
	body[len(body)/2] ^= 1
	if set.VerifyWebhook(rc.sigs[0], body) == nil {
		t.Fatal("a tampered body verifies")
	}
}

// TestAgentSpec_2_3_AdminPrincipalsAgentIsNotRelayed pins QWED-Agent
// spec v1.1 §2.3 for an agent the admin registered under the admin
// principal ("*"): no webhook can be made for "*", and the home partition
// refuses a relay naming it, so the gate relays none of its blocked
// decisions (each was a refused, dead-lettered command on another
// partition). Another agent's notice, relayed after it from the same
// partition, still arrives: the relays on the topic are that one only.
func TestAgentSpec_2_3_AdminPrincipalsAgentIsNotRelayed(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	from := (kafkagate.HomePartition(domain.AdminPrincipal, testPartitions) + 1) % testPartitions
	principal := principalHomedAt(t, (from+1)%testPartitions)
	webhooks, _ := withWebhooks(t)
	cfg := domain.DefaultConfig()
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg }, webhooks)
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	adminAgent, adminToken := registerAgentOn(t, c, domain.AdminPrincipal, from)
	agent, token := registerAgentOn(t, c, principal, from)
	rc := newNoticeReceiver(t)
	if st, w := h.do(t, "POST", "/webhooks", map[string]string{"X-API-Key": adminKey},
		`{"url":"`+rc.URL+`/n","consumer":"`+principal+`","events":["agent_blocked"]}`); st != 201 {
		t.Fatalf("creating a webhook: %d %v", st, w)
	}
	denyShadow(t, c, adminAgent, adminToken)
	denyShadow(t, c, agent, token)
	rc.await(t, 1)
	n := 0
	for p := range testPartitions {
		n += relays(t, brokers, p)
	}
	if n != 1 {
		t.Fatalf("%d relays on the requests topic, want 1 (none for the admin principal's agent)", n)
	}
}
