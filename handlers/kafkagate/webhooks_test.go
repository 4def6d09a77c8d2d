package kafkagate_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/notify"
	"github.com/agentgate/agentgate/projections"
)

// withWebhooks runs a webhook runner beside each partition a gate
// instance owns (as serve does), signing with a keyring of the instance's
// own, which it returns, and reaching loopback receivers.
func withWebhooks(t *testing.T) (func(*kafkagate.Config), *attest.Keyring) {
	t.Helper()
	kr, err := attest.OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return func(c *kafkagate.Config) {
		c.OnPartition = func(ctx context.Context, p int32, w *handlers.Worker, s *projections.Store) {
			// The runner's clock runs an hour ahead: a retry is due as
			// soon as the failed attempt is recorded.
			ahead := func() time.Time { return time.Now().Add(time.Hour) }
			r, err := notify.New(notify.Config{Gate: w, Store: s, Sign: kr.SignWebhook, AllowPrivate: true,
				Clock: ahead, Interval: 20 * time.Millisecond})
			if err != nil {
				t.Error(err)
				return
			}
			_ = r.Run(ctx)
		}
	}, kr
}

// TestKafkaWebhooks: on Kafka, a webhook made over HTTP (the admin key
// naming the consumer) is decided on the consumer's home partition; a
// notice raised there while no instance ran is delivered by the instance
// that owns the partition next, signed with its keys, retried after a
// failed attempt, each attempt recorded on the home partition; the read
// model serves the deliveries, and only to their consumer.
func TestKafkaWebhooks(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	first := startGate(t, brokers, lg, t.TempDir())
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	consumer := principalHomedAt(t, 2)
	type post struct {
		body []byte
		sig  string
	}
	posts := make(chan post, 16)
	var calls atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posts <- post{body: b, sig: r.Header.Get(notify.SignatureHeader)}
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer rc.Close()
	admin := map[string]string{"X-API-Key": adminKey}
	st, hook := h.do(t, "POST", "/webhooks", admin, `{"url":"`+rc.URL+`/h","consumer":"`+consumer+`"}`)
	if st != 201 {
		t.Fatalf("creating a webhook: %d %v", st, hook)
	}
	id := hook["id"].(string)
	if ev := waitEvent(t, lg, 2, func(ev *domain.Event) bool { return ev.Type == domain.EvWebhookChanged }); ev.Webhook.ID != id {
		t.Fatalf("webhook.changed on the home partition: %+v", ev.Webhook)
	}
	first.stop()

	l, err := lg.open(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	seq := gatetest.AppendNotices(t, l, 2, consumer, "tx_1", domain.NoticeLimit80)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	opt, kr := withWebhooks(t)
	startGate(t, brokers, lg, t.TempDir(), opt)
	set, err := attest.ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	var got []post
	for range 2 {
		select {
		case p := <-posts:
			got = append(got, p)
		case <-time.After(30 * time.Second):
			t.Fatalf("%d webhook POSTs, want 2", len(got))
		}
	}
	for i, p := range got {
		if err := set.VerifyWebhook(p.sig, p.body); err != nil {
			t.Fatalf("POST %d: %v", i, err)
		}
		var b notify.Body
		if err := json.Unmarshal(p.body, &b); err != nil || b.Attempt != i+1 || b.Consumer != consumer || b.Event.Partition != 2 || b.Event.Seq != seq {
			t.Fatalf("POST %d: %s (%v)", i, p.body, err)
		}
	}
	delivery := domain.DeliveryID(2, seq, 0, id)
	recorded := waitEvent(t, lg, 2, func(ev *domain.Event) bool {
		return ev.Type == domain.EvDeliveryRecorded && ev.Delivery.Attempt == 2
	})
	if recorded.Delivery.Status != domain.DeliveryDelivered {
		t.Fatalf("second attempt recorded %+v", recorded.Delivery)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		a := h.send(t, "GET", "/webhooks/deliveries?consumer="+consumer, admin, "")
		if a.Status == 200 && strings.Contains(string(a.Body), `"status":"delivered"`) && strings.Contains(string(a.Body), delivery) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read model's deliveries: %d %s", a.Status, a.Body)
		}
	}
	// Another principal's key reads none of them.
	st, key := h.do(t, "POST", "/principals/org_other/keys", admin, "")
	if st != 201 {
		t.Fatalf("issuing a key: %d %v", st, key)
	}
	other := map[string]string{"X-API-Key": key["api_key"].(string)}
	if a := h.send(t, "GET", "/webhooks/deliveries", other, ""); a.Status != 200 || strings.Contains(string(a.Body), delivery) {
		t.Fatalf("another principal's read: %d %s", a.Status, a.Body)
	}
	if a := h.send(t, "GET", "/webhooks/"+id, other, ""); a.Status != 404 {
		t.Fatalf("another principal's webhook read: %d %s", a.Status, a.Body)
	}
}
