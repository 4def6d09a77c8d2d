package projections

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// hook decides a webhook change of principal and returns its event.
func (g *testGate) hook(principal, op, id, url string, events ...string) *domain.Event {
	g.t.Helper()
	ev := g.do(&domain.Command{Type: domain.CmdWebhook, Principal: principal,
		Request: domain.RequestID{Source: "test", ID: fmt.Sprint("wh", g.seq)},
		Webhook: &domain.WebhookChange{Op: op, Webhook: domain.Webhook{ID: id, URL: url, Events: events}}})
	if ev.Type != domain.EvWebhookChanged {
		g.t.Fatalf("webhook %s refused: %+v", op, ev.Error)
	}
	return ev
}

// notices records an execute.decided event of consumer's transaction tx
// with notices of the kinds given (the rules that raise them are the
// execute rules'; the projections only read the event).
func (g *testGate) notices(consumer, tx string, kinds ...string) *domain.Event {
	g.t.Helper()
	t := &domain.Transaction{ID: tx, Consumer: consumer, AgentID: "agent_1", BusinessID: "shop", AmountCents: 1250,
		Currency: "USD", Status: domain.TxBlocked}
	for _, k := range kinds {
		t.Notices = append(t.Notices, domain.Notice{Kind: k, PolicyID: "pol_1", Message: "notice " + k})
	}
	ev := &domain.Event{Seq: g.seq + 1, Time: g.now, Type: domain.EvExecuteDecided, Transaction: t,
		Command: &domain.Command{Type: domain.CmdExecute, Request: domain.RequestID{Source: "test", ID: tx}}}
	g.add(ev)
	return ev
}

// attempt records attempt n of the delivery of the notice-th notice of
// the event at seq to webhook.
func (g *testGate) attempt(consumer, webhook string, seq uint64, notice, n, status int) *domain.DeliveryResult {
	g.t.Helper()
	ev := g.do(&domain.Command{Type: domain.CmdDelivery, Principal: consumer,
		Request:  domain.RequestID{Source: "notify", ID: fmt.Sprint(domain.DeliveryID(0, seq, notice, webhook), "/", n)},
		Delivery: &domain.DeliveryResult{WebhookID: webhook, Seq: seq, Notice: notice, Attempt: n, HTTPStatus: status}})
	if ev.Type != domain.EvDeliveryRecorded {
		g.t.Fatalf("attempt refused: %+v", ev.Error)
	}
	return ev.Delivery
}

// webhookWorkload runs webhook changes, notices and attempts through g
// and returns the IDs it checks: org_1's webhooks all and blocked (only
// blocked notices), org_2's other, and the seq of org_1's notice event.
func webhookWorkload(g *testGate) (all, blocked, other string, seq uint64) {
	all = g.hook("org_1", domain.OpCreate, "", "https://a.example/h").Webhook.ID
	blocked = g.hook("org_1", domain.OpCreate, "", "https://b.example/h", domain.NoticeBlocked).Webhook.ID
	other = g.hook("org_2", domain.OpCreate, "", "https://c.example/h").Webhook.ID
	seq = g.notices("org_1", "tx_1", domain.NoticeBlocked, domain.NoticeLimit80).Seq
	g.notices("org_3", "tx_3", domain.NoticeBlocked) // a consumer without webhooks
	// A webhook made after the notice gets none of it.
	g.hook("org_1", domain.OpCreate, "", "https://late.example/h")
	// A deleted webhook is gone from the projections.
	gone := g.hook("org_2", domain.OpCreate, "", "https://gone.example/h").Webhook.ID
	g.hook("org_2", domain.OpDelete, gone, "")
	g.attempt("org_1", all, seq, 0, 1, 500)
	g.now = g.now.Add(time.Minute)
	g.attempt("org_1", all, seq, 0, 2, 200)
	g.attempt("org_1", blocked, seq, 0, 1, 503)
	return all, blocked, other, seq
}

func TestWebhookProjections(t *testing.T) {
	g := newTestGate(t, 1)
	t0 := g.now
	all, blocked, other, seq := webhookWorkload(g)
	g.flush()
	g.assertLoadStateEqual()
	s := g.store

	hooks, err := s.Webhooks("org_1")
	if err != nil || len(hooks) != 3 {
		t.Fatalf("org_1's webhooks: %+v %v", hooks, err)
	}
	if every, _ := s.Webhooks(domain.AdminPrincipal); len(every) != 4 {
		t.Fatalf("every webhook: %+v", every)
	}
	if _, err := s.Webhook("org_2", all); !errors.Is(err, ErrNotFound) {
		t.Fatalf("org_2 reads org_1's webhook: %v", err)
	}
	if h, err := s.Webhook(domain.AdminPrincipal, other); err != nil || h.Consumer != "org_2" {
		t.Fatalf("admin reads org_2's webhook: %+v %v", h, err)
	}

	ds, next, err := s.Deliveries("org_1", DeliveryFilter{}, "", 100, 0)
	if err != nil || next != "" || len(ds) != 3 {
		t.Fatalf("org_1's deliveries: %d %q %v", len(ds), next, err)
	}
	byID := map[string]Delivery{}
	for _, d := range ds {
		byID[d.ID] = d
	}
	done := byID[domain.DeliveryID(0, seq, 0, all)]
	if done.Status != domain.DeliveryDelivered || done.Attempts != 2 || done.HTTPStatus != 200 || done.NextAt != nil ||
		done.Kind != domain.NoticeBlocked || done.TransactionID != "tx_1" || done.AmountCents != 1250 {
		t.Fatalf("delivered: %+v", done)
	}
	retry := byID[domain.DeliveryID(0, seq, 0, blocked)]
	if retry.Status != domain.DeliveryRetrying || retry.Attempts != 1 || retry.NextAt == nil ||
		!retry.NextAt.Equal(g.now.Add(domain.DeliveryBackoff(1))) {
		t.Fatalf("retrying: %+v", retry)
	}
	pending := byID[domain.DeliveryID(0, seq, 1, all)]
	if pending.Status != domain.DeliveryPending || pending.Kind != domain.NoticeLimit80 || pending.NextAt == nil || !pending.NextAt.Equal(t0) {
		t.Fatalf("pending: %+v", pending)
	}
	if _, ok := byID[domain.DeliveryID(0, seq, 1, blocked)]; ok {
		t.Fatal("a blocked-only webhook got a limit_80 notice")
	}

	// Due: the pending one now, the retrying one once its wait is over.
	due, err := s.DueDeliveries(g.now, 10)
	if err != nil || len(due) != 1 || due[0].ID != pending.ID {
		t.Fatalf("due now: %+v %v", due, err)
	}
	due, _ = s.DueDeliveries(*retry.NextAt, 10)
	if len(due) != 2 || due[0].ID != pending.ID || due[1].ID != retry.ID {
		t.Fatalf("due later: %+v", due)
	}
	if due, _ := s.DueDeliveries(*retry.NextAt, 1); len(due) != 1 {
		t.Fatalf("limit: %+v", due)
	}

	// Filters, pages, tenants.
	if ds, _, _ := s.Deliveries("org_1", DeliveryFilter{WebhookID: blocked}, "", 100, 0); len(ds) != 1 || ds[0].ID != retry.ID {
		t.Fatalf("by webhook: %+v", ds)
	}
	if ds, _, _ := s.Deliveries("org_1", DeliveryFilter{Status: domain.DeliveryPending}, "", 100, 0); len(ds) != 1 || ds[0].ID != pending.ID {
		t.Fatalf("by status: %+v", ds)
	}
	if ds, _, _ := s.Deliveries("org_1", DeliveryFilter{Kind: domain.NoticeLimit80}, "", 100, 0); len(ds) != 1 || ds[0].ID != pending.ID {
		t.Fatalf("by kind: %+v", ds)
	}
	var paged []string
	for after := ""; ; {
		ds, next, err := s.Deliveries("org_1", DeliveryFilter{}, after, 1, 0)
		if err != nil || len(ds) != 1 {
			t.Fatalf("page after %q: %+v %v", after, ds, err)
		}
		paged = append(paged, ds[0].ID)
		if next == "" {
			break
		}
		after = next
	}
	if len(paged) != 3 {
		t.Fatalf("paged %v", paged)
	}
	if ds, _, err := s.Deliveries("org_2", DeliveryFilter{}, "", 100, 0); err != nil || len(ds) != 0 {
		t.Fatalf("org_2 sees deliveries: %+v %v", ds, err)
	}
	if _, _, err := s.Deliveries("org_2", DeliveryFilter{}, pending.ID, 100, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("org_2 pages from org_1's delivery: %v", err)
	}
	if _, err := s.Delivery("org_2", pending.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("org_2 reads org_1's delivery: %v", err)
	}
	if d, err := s.Delivery(domain.AdminPrincipal, pending.ID); err != nil || d.Consumer != "org_1" {
		t.Fatalf("admin reads a delivery: %+v %v", d, err)
	}
	if ds, _, _ := s.Deliveries(domain.AdminPrincipal, DeliveryFilter{}, "", 100, 0); len(ds) != 3 {
		t.Fatalf("admin's list: %d", len(ds))
	}

	// A repeated or older attempt changes nothing; a final one ends it.
	g.attempt("org_1", all, seq, 1, 1, 200)
	g.flush()
	if due, _ := s.DueDeliveries(*retry.NextAt, 10); len(due) != 1 || due[0].ID != retry.ID {
		t.Fatalf("due after the pending one was delivered: %+v", due)
	}
}

// TestWebhookProjections_Rebuild folds the same events one by one and in
// one batch (a webhook made, a notice raised and its attempts recorded in
// one batch): the stores are equal key for key.
func TestWebhookProjections_Rebuild(t *testing.T) {
	one := newTestGate(t, 1)
	webhookWorkload(one)
	one.flush()
	batch := newTestGate(t, 1000)
	webhookWorkload(batch)
	batch.flush()
	if d, err := Equal(one.store, batch.store); err != nil || d != "" {
		t.Fatalf("stores differ: %s %v", d, err)
	}
	if ds, _, _ := batch.store.Deliveries("org_1", DeliveryFilter{}, "", 100, 0); len(ds) != 3 {
		t.Fatalf("batched deliveries: %d", len(ds))
	}
}
