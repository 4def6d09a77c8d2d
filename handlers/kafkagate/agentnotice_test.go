package kafkagate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/notify"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// noticeReceiver keeps the webhook POSTs it gets, answering 200.
type noticeReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	posts [][]byte
	sigs  []string
}

func newNoticeReceiver(t *testing.T) *noticeReceiver {
	rc := &noticeReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.posts, rc.sigs = append(rc.posts, b), append(rc.sigs, r.Header.Get(notify.SignatureHeader))
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *noticeReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.posts)
}

// relays counts the relayed notices (CloudEvents of type
// qwed.agent.blocked) on partition p of the requests topic.
func relays(t *testing.T, brokers []string, p int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], kafkagate.DefaultTopics().Requests, p)
	if err != nil {
		t.Fatal(err)
	}
	end, err := conn.ReadLastOffset()
	_ = conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: kafkagate.DefaultTopics().Requests, Partition: p, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	n := 0
	for off := int64(0); off < end; {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range m.Headers {
			if h.Key == "ce_type" && string(h.Value) == string(domain.CmdAgentBlocked) {
				n++
			}
		}
		off = m.Offset + 1
	}
	return n
}

// TestAgentSpec_2_3_NotifyPrincipalOnKafka pins QWED-Agent spec v1.1
// §2.3 ("Block and notify principal") on Kafka: an agent living on
// partition 1 whose principal is homed on partition 2 is DENIED twice;
// each notice is relayed once to partition 2 (a signed internal command)
// and delivered, signed, to the principal's agent_blocked webhook, without
// the action's target or parameters. The relay outbox survives restarts:
// a gate that dies before producing the relay leaves it to the next owner,
// which produces it; one that dies after producing it, before its cursor,
// leaves nothing to produce again. The principal's unfiltered webhook and
// another principal's receive nothing; the read model lists the two
// deliveries, to their principal only; a client's qwed.agent.blocked,
// unsigned or wrongly signed, is refused; every partition re-decides.
func TestAgentSpec_2_3_NotifyPrincipalOnKafka(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	principal := principalHomedAt(t, 2)
	died := make(chan kafkagate.ForwardStage, 4)
	dieAt := func(stage kafkagate.ForwardStage) func(*kafkagate.Config) {
		return kafkagate.WithNoticesHook(func(s kafkagate.ForwardStage, p int32, seqs []uint64) error {
			if s != stage {
				return nil
			}
			died <- s
			return errors.New("the gate dies")
		})
	}
	webhooks, kr := withWebhooks(t)
	cfg := domain.DefaultConfig()
	configured := func(c *kafkagate.Config) { c.Config = &cfg }
	first := startGate(t, brokers, lg, dir, configured, webhooks, dieAt(kafkagate.BeforeProduce))
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	agent, token := registerAgentOn(t, c, principal, 1)
	if kafkagate.HomePartition(principal, testPartitions) != 2 {
		t.Fatal("the principal's home")
	}

	wanted, unfiltered, others := newNoticeReceiver(t), newNoticeReceiver(t), newNoticeReceiver(t)
	admin := map[string]string{"X-API-Key": adminKey}
	hook := func(consumer, url, events string) string {
		st, w := h.do(t, "POST", "/webhooks", admin, `{"url":"`+url+`","consumer":"`+consumer+`"`+events+`}`)
		if st != 201 {
			t.Fatalf("creating a webhook: %d %v", st, w)
		}
		return w["id"].(string)
	}
	blockedHook := hook(principal, wanted.URL+"/n", `,"events":["agent_blocked"]`)
	hook(principal, unfiltered.URL+"/all", "")
	otherPrincipal := principalHomedAt(t, 1)
	hook(otherPrincipal, others.URL+"/o", `,"events":["agent_blocked"]`)

	const secret = "sk-live-4f9d2c7e1b"
	deny := func(step int) {
		t.Helper()
		rep, err := c.Request(context.Background(), client.Verify(agent, token, domain.VerifyAction{
			Action:  domain.Action{Type: "read_file", Target: "/etc/shadow", Parameters: json.RawMessage(`{"token":"` + secret + `"}`)},
			Context: domain.ActionContext{ConversationID: "c1", StepNumber: json.Number(strconv.Itoa(step))},
		}))
		if err != nil || rep.Status != http.StatusForbidden || !strings.Contains(string(rep.Data), `"DENIED"`) {
			t.Fatalf("read_file /etc/shadow: %v %+v", err, rep)
		}
	}
	dies := func(want kafkagate.ForwardStage) {
		t.Helper()
		select {
		case s := <-died:
			if s != want {
				t.Fatalf("died at stage %d, want %d", s, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the relay outbox never reached stage %d", want)
		}
	}
	deny(1)
	dies(kafkagate.BeforeProduce) // the first gate dies before producing the relay
	first.stop()
	if n := relays(t, brokers, 2); n != 0 {
		t.Fatalf("%d relays before the restart", n)
	}

	second := startGate(t, brokers, lg, dir, configured, webhooks, dieAt(kafkagate.AfterProduce))
	dies(kafkagate.AfterProduce) // the relay is produced; the gate dies before its cursor
	delivered := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); wanted.count() < n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the webhook received %d POSTs, want %d", wanted.count(), n)
			}
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			got := 0
			for _, e := range partitionEvents(t, lg, 2) {
				if e.Type == domain.EvDeliveryRecorded && e.Delivery.Status == domain.DeliveryDelivered {
					got++
				}
			}
			if got >= n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d deliveries recorded delivered, want %d", got, n)
			}
		}
	}
	delivered(1)
	second.stop()

	startGate(t, brokers, lg, dir, configured, webhooks)
	deny(2)
	delivered(2)
	if n := relays(t, brokers, 2); n != 2 {
		t.Fatalf("%d relays on the home partition, want 2 (one per decision)", n)
	}

	set, err := attest.ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	wanted.mu.Lock()
	posts, sigs := wanted.posts, wanted.sigs
	wanted.mu.Unlock()
	if len(posts) != 2 {
		t.Fatalf("%d POSTs, want 2 (none twice)", len(posts))
	}
	var seqs []uint64
	for i, p := range posts {
		if err := set.VerifyWebhook(sigs[i], p); err != nil {
			t.Fatalf("POST %d: %v", i, err)
		}
		if strings.Contains(string(p), secret) || strings.Contains(string(p), "/etc/shadow") {
			t.Fatalf("POST %d carries the action's target or parameters: %s", i, p)
		}
		var b notify.Body
		if err := json.Unmarshal(p, &b); err != nil || b.Kind != domain.NoticeAgentBlocked || b.Consumer != principal ||
			b.WebhookID != blockedHook || b.Event.Partition != 2 || b.Decision == nil || b.Decision.AgentID != agent ||
			b.Decision.Partition != 1 || b.Decision.Code != domain.CodeSecurityViolated {
			t.Fatalf("POST %d: %s (%v)", i, p, err)
		}
		seqs = append(seqs, b.Decision.Seq)
	}
	if seqs[0] == seqs[1] {
		t.Fatalf("one decision notified twice: %v", seqs)
	}
	var relayed int
	for _, ev := range partitionEvents(t, lg, 2) {
		if ev.Type == domain.EvAgentBlockRelayed {
			relayed++
		}
	}
	if relayed != 2 {
		t.Fatalf("%d agent.block_relayed events on the home partition, want 2", relayed)
	}

	// A client cannot pass for the relay: unsigned, the type is no
	// command of a transport; wrongly signed, an internal command is
	// refused.
	for i, mac := range []string{"", strings.Repeat("ab", 32)} {
		cmd := domain.Command{Type: domain.CmdAgentBlocked, Principal: principal, Request: domain.AgentBlockedRequest(1, 999),
			AgentBlocked: &domain.AgentNotice{Principal: principal, AgentID: agent, Kind: domain.KindAction, ActionID: "act_forged",
				ActionType: "read_file", Decision: domain.Denied, Status: "BLOCKED", Code: domain.CodeSecurityViolated,
				Risk: domain.RiskHigh, Partition: 1, Seq: 999, Time: time.Now()}}
		data, _ := json.Marshal(&cmd)
		corr := c.NewCorrelationID()
		ct := kafkagate.ContentTypeCommand
		if mac == "" {
			ct = ce.ContentTypeJSON
		}
		forged, err := cekafka.Encode(ce.Event{SpecVersion: ce.SpecVersion, Type: string(domain.CmdAgentBlocked), Source: "attacker",
			ID: "forged-" + strconv.Itoa(i), DataContentType: ct, Data: data, Mode: ce.ModeBinary,
			Extensions: map[string]string{ce.ExtReplyTo: c.ReplyTopic(), ce.ExtCorrelationID: corr}})
		if err != nil {
			t.Fatal(err)
		}
		forged.Topic, forged.Partition = kafkagate.DefaultTopics().Requests, 2
		if mac != "" {
			forged.Headers = append(forged.Headers, kafka.Header{Key: kafkagate.HeaderMAC, Value: []byte(mac)})
		}
		rep, err := c.Send(context.Background(), forged, corr)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status < 400 {
			t.Fatalf("a forged relay (mac %q): %d %s", mac, rep.Status, rep.Data)
		}
	}
	for _, ev := range partitionEvents(t, lg, 2) {
		if ev.Type == domain.EvAgentBlockRelayed && ev.Command.AgentBlocked.ActionID == "act_forged" {
			t.Fatal("a forged relay was recorded")
		}
	}

	// The read model: the two deliveries, to their principal only, none
	// of the unfiltered webhook.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		a := h.send(t, "GET", "/webhooks/deliveries?consumer="+principal+"&kind=agent_blocked", admin, "")
		if a.Status == 200 && strings.Count(string(a.Body), `"status":"delivered"`) == 2 {
			if all := h.send(t, "GET", "/webhooks/deliveries?consumer="+principal, admin, ""); strings.Count(string(all.Body), `"delivery_id"`) != 2 {
				t.Fatalf("the principal's deliveries: %s", all.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read model's deliveries: %d %s", a.Status, a.Body)
		}
	}
	if a := h.send(t, "GET", "/webhooks/deliveries?consumer="+otherPrincipal, admin, ""); strings.Contains(string(a.Body), "dl_") {
		t.Fatalf("another principal's deliveries: %s", a.Body)
	}
	if n, m := unfiltered.count(), others.count(); n != 0 || m != 0 {
		t.Fatalf("the unfiltered webhook received %d POSTs, another principal's %d; want none", n, m)
	}
	checkReplayAndAudit(t, lg, dir)
}
