package domain

import (
	"strings"
	"testing"
	"time"
)

func hookCmd(principal, op, id, url string, events ...string) *Command {
	return &Command{Type: CmdWebhook, Principal: principal, Webhook: &WebhookChange{Op: op,
		Webhook: Webhook{ID: id, URL: url, Events: events}}}
}

func deliveryCmd(consumer, webhook string, seq uint64, notice, attempt, status int, errText string) *Command {
	return &Command{Type: CmdDelivery, Principal: consumer, Delivery: &DeliveryResult{WebhookID: webhook, Seq: seq,
		Notice: notice, Attempt: attempt, HTTPStatus: status, Error: errText}}
}

func TestWebhookLifecycle(t *testing.T) {
	g := newGate(t)
	ev := g.exec(hookCmd("org_1", OpCreate, "", "https://hooks.example.com/agentgate?x=1", NoticeBlocked, NoticeLimit80))
	if ev.Type != EvWebhookChanged || ev.Webhook == nil {
		t.Fatalf("create: %s %v", ev.Type, ev.Error)
	}
	id := ev.Webhook.ID
	if id != WebhookIDFor(ev.Command.Request) || !strings.HasPrefix(id, "wh_") || len(id) != 27 {
		t.Fatalf("webhook id %q not derived from the request", id)
	}
	if st, body := Reply(ev); st != 201 || body.(WebhookReply).Consumer != "org_1" {
		t.Fatalf("create reply %d %+v", st, body)
	}
	hooks := ConsumerWebhooks(g.s, "org_1")
	if len(hooks) != 1 || hooks[0].URL != "https://hooks.example.com/agentgate?x=1" || !WebhookWants(hooks[0], NoticeBlocked) || WebhookWants(hooks[0], NoticeQueued) {
		t.Fatalf("state after create: %+v", hooks)
	}
	// Another principal neither sees nor changes it.
	if ev := g.exec(hookCmd("org_2", OpUpdate, id, "https://evil.example/")); code(ev) != CodeNotFound {
		t.Fatalf("another principal's update: %v", ev.Error)
	}
	if ev := g.exec(hookCmd("org_2", OpDelete, id, "")); code(ev) != CodeNotFound {
		t.Fatalf("another principal's delete: %v", ev.Error)
	}
	ev = g.exec(hookCmd("org_1", OpUpdate, id, "http://hooks.example.com:8080/v2"))
	if ev.Type != EvWebhookChanged {
		t.Fatalf("update: %v", ev.Error)
	}
	if st, _ := Reply(ev); st != 200 {
		t.Fatalf("update reply %d", st)
	}
	if h := ConsumerWebhooks(g.s, "org_1")[0]; h.URL != "http://hooks.example.com:8080/v2" || len(h.Events) != 0 || !WebhookWants(h, NoticeQueued) {
		t.Fatalf("after update: %+v", h)
	}
	// The admin acts for a consumer it names.
	if ev := g.exec(hookCmd(AdminPrincipal, OpDelete, id, "")); code(ev) != CodeMissingField {
		t.Fatalf("admin without consumer: %v", ev.Error)
	}
	adm := hookCmd(AdminPrincipal, OpDelete, id, "")
	adm.Webhook.Webhook.Consumer = "org_1"
	ev = g.exec(adm)
	if ev.Type != EvWebhookChanged || ev.Webhook.URL != "" {
		t.Fatalf("admin delete: %s %v", ev.Type, ev.Error)
	}
	if st, body := Reply(ev); st != 200 || !body.(WebhookReply).Deleted {
		t.Fatalf("delete reply %d %+v", st, body)
	}
	if ConsumerWebhooks(g.s, "org_1") != nil && len(ConsumerWebhooks(g.s, "org_1")) != 0 {
		t.Fatal("the webhook survived its delete")
	}
	if ev := g.exec(hookCmd("org_1", OpDelete, id, "")); code(ev) != CodeNotFound {
		t.Fatalf("second delete: %v", ev.Error)
	}
}

func TestWebhookRefusals(t *testing.T) {
	g := newGate(t)
	long := "https://example.com/" + strings.Repeat("a", MaxWebhookURLBytes)
	for name, c := range map[string]struct {
		cmd  *Command
		want Code
	}{
		"no payload":          {&Command{Type: CmdWebhook, Principal: "org_1"}, CodeMissingField},
		"agent token":         {&Command{Type: CmdWebhook, TokenHash: tokenHash("a"), Webhook: &WebhookChange{Op: OpCreate, Webhook: Webhook{URL: "https://x.example"}}}, CodeForbidden},
		"no credentials":      {&Command{Type: CmdWebhook, Webhook: &WebhookChange{Op: OpCreate, Webhook: Webhook{URL: "https://x.example"}}}, CodeMissingAPIKey},
		"other consumer":      {&Command{Type: CmdWebhook, Principal: "org_1", Webhook: &WebhookChange{Op: OpCreate, Webhook: Webhook{URL: "https://x.example", Consumer: "org_2"}}}, CodeForbidden},
		"no op":               {hookCmd("org_1", "", "", "https://x.example"), CodeMissingField},
		"bad op":              {hookCmd("org_1", "upsert", "", "https://x.example"), CodeInvalidRequest},
		"id on create":        {hookCmd("org_1", OpCreate, "wh_mine", "https://x.example"), CodeInvalidRequest},
		"no url":              {hookCmd("org_1", OpCreate, "", ""), CodeMissingField},
		"ftp":                 {hookCmd("org_1", OpCreate, "", "ftp://x.example/"), CodeInvalidRequest},
		"relative":            {hookCmd("org_1", OpCreate, "", "/hook"), CodeInvalidRequest},
		"upper-case scheme":   {hookCmd("org_1", OpCreate, "", "HTTPS://x.example/"), CodeInvalidRequest},
		"user info":           {hookCmd("org_1", OpCreate, "", "https://user:pw@x.example/"), CodeInvalidRequest},
		"fragment":            {hookCmd("org_1", OpCreate, "", "https://x.example/#f"), CodeInvalidRequest},
		"space":               {hookCmd("org_1", OpCreate, "", "https://x.example/a b"), CodeInvalidRequest},
		"control":             {hookCmd("org_1", OpCreate, "", "https://x.example/\n"), CodeInvalidRequest},
		"non-ascii":           {hookCmd("org_1", OpCreate, "", "https://exämple.com/"), CodeInvalidRequest},
		"no host":             {hookCmd("org_1", OpCreate, "", "https:///path"), CodeInvalidRequest},
		"empty label":         {hookCmd("org_1", OpCreate, "", "https://a..b/"), CodeInvalidRequest},
		"port zero":           {hookCmd("org_1", OpCreate, "", "https://x.example:0/"), CodeInvalidRequest},
		"port too big":        {hookCmd("org_1", OpCreate, "", "https://x.example:65536/"), CodeInvalidRequest},
		"port not digits":     {hookCmd("org_1", OpCreate, "", "https://x.example:8o/"), CodeInvalidRequest},
		"bad ipv6":            {hookCmd("org_1", OpCreate, "", "https://[zz::1]/"), CodeInvalidRequest},
		"unterminated ipv6":   {hookCmd("org_1", OpCreate, "", "https://[::1/"), CodeInvalidRequest},
		"backslash":           {hookCmd("org_1", OpCreate, "", "https://x.example\\@evil/"), CodeInvalidRequest},
		"too long":            {hookCmd("org_1", OpCreate, "", long), CodeInvalidRequest},
		"unknown event":       {hookCmd("org_1", OpCreate, "", "https://x.example/", "approved"), CodeInvalidRequest},
		"event twice":         {hookCmd("org_1", OpCreate, "", "https://x.example/", NoticeQueued, NoticeQueued), CodeInvalidRequest},
		"update without id":   {hookCmd("org_1", OpUpdate, "", "https://x.example/"), CodeMissingField},
		"delete with url":     {hookCmd("org_1", OpDelete, "wh_x", "https://x.example/"), CodeNotFound},
		"update unknown":      {hookCmd("org_1", OpUpdate, "wh_nope", "https://x.example/"), CodeNotFound},
		"admin names admin":   {&Command{Type: CmdWebhook, Principal: AdminPrincipal, Webhook: &WebhookChange{Op: OpCreate, Webhook: Webhook{URL: "https://x.example", Consumer: AdminPrincipal}}}, CodeInvalidRequest},
		"create without reqs": {&Command{Type: CmdWebhook, Principal: "org_1", Request: RequestID{Source: "test"}, Webhook: &WebhookChange{Op: OpCreate, Webhook: Webhook{URL: "https://x.example"}}}, CodeMissingField},
	} {
		before := len(ConsumerWebhooks(g.s, "org_1"))
		var ev *Event
		if c.cmd.Request.Source == "test" && c.cmd.Request.ID == "" {
			ev = Decide(g.s, Env{Now: g.now, Seq: 1}, c.cmd)
		} else {
			ev = g.exec(c.cmd)
		}
		if ev.Type != EvCommandRejected || code(ev) != c.want {
			t.Errorf("%s: %s %v, want %s", name, ev.Type, ev.Error, c.want)
		}
		if len(ConsumerWebhooks(g.s, "org_1")) != before {
			t.Errorf("%s: a refusal changed the webhooks", name)
		}
	}
	for _, ok := range []string{"https://x.example", "http://127.0.0.1:8080/h", "https://[::1]:443/p?q=1", "https://a-b.c_d.example/x/y"} {
		if err := checkWebhookURL(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

func TestWebhookBound(t *testing.T) {
	g := newGate(t)
	for i := 0; i < MaxWebhooksPerConsumer; i++ {
		if ev := g.exec(hookCmd("org_1", OpCreate, "", "https://x.example/")); ev.Type != EvWebhookChanged {
			t.Fatalf("webhook %d: %v", i, ev.Error)
		}
	}
	ev := g.exec(hookCmd("org_1", OpCreate, "", "https://x.example/"))
	if code(ev) != CodeInvalidRequest || len(ConsumerWebhooks(g.s, "org_1")) != MaxWebhooksPerConsumer {
		t.Fatalf("webhook past the bound: %v", ev.Error)
	}
	// The bound is per consumer.
	if ev := g.exec(hookCmd("org_2", OpCreate, "", "https://x.example/")); ev.Type != EvWebhookChanged {
		t.Fatalf("another consumer: %v", ev.Error)
	}
}

func TestDeliveryOutcomes(t *testing.T) {
	g := newGate(t)
	id := g.exec(hookCmd("org_1", OpCreate, "", "https://x.example/")).Webhook.ID
	// A 2xx answer: delivered.
	ev := g.exec(deliveryCmd("org_1", id, 7, 0, 1, 204, ""))
	if ev.Type != EvDeliveryRecorded || ev.Delivery.Status != DeliveryDelivered || ev.Delivery.NextAt != nil {
		t.Fatalf("2xx: %s %+v %v", ev.Type, ev.Delivery, ev.Error)
	}
	if st, body := Reply(ev); st != 200 || body.(*DeliveryResult).Status != DeliveryDelivered {
		t.Fatalf("delivery reply %d %+v", st, body)
	}
	// Failures retry with a doubling wait, then fail for good.
	for n := 1; n <= MaxDeliveryAttempts; n++ {
		status, errText := 500, ""
		if n%2 == 0 {
			status, errText = 0, "dial tcp: connection refused"
		}
		ev := g.exec(deliveryCmd("org_1", id, 8, 1, n, status, errText))
		d := ev.Delivery
		if n < MaxDeliveryAttempts {
			want := g.now.Add(DeliveryBackoff(n))
			if d.Status != DeliveryRetrying || d.NextAt == nil || !d.NextAt.Equal(want) {
				t.Fatalf("attempt %d: %+v, want retrying at %v", n, d, want)
			}
		} else if d.Status != DeliveryFailed || d.NextAt != nil {
			t.Fatalf("last attempt: %+v", d)
		}
	}
	// A 2xx with a transport error is no delivery; a redirect retries.
	if d := g.exec(deliveryCmd("org_1", id, 9, 0, 1, 302, "")).Delivery; d.Status != DeliveryRetrying {
		t.Fatalf("3xx: %+v", d)
	}
	// A deleted webhook fails at once.
	g.exec(hookCmd("org_1", OpDelete, id, ""))
	if d := g.exec(deliveryCmd("org_1", id, 10, 0, 1, 0, "")).Delivery; d.Status != DeliveryFailed || d.Error != "webhook deleted" {
		t.Fatalf("deleted webhook: %+v", d)
	}
}

func TestDeliveryRefusals(t *testing.T) {
	g := newGate(t)
	id := g.exec(hookCmd("org_1", OpCreate, "", "https://x.example/")).Webhook.ID
	decided := deliveryCmd("org_1", id, 1, 0, 1, 200, "")
	now := g.now
	decided.Delivery.NextAt = &now
	for name, c := range map[string]*Command{
		"no payload":     {Type: CmdDelivery, Principal: "org_1"},
		"no consumer":    deliveryCmd("", id, 1, 0, 1, 200, ""),
		"admin":          deliveryCmd(AdminPrincipal, id, 1, 0, 1, 200, ""),
		"no webhook":     deliveryCmd("org_1", "", 1, 0, 1, 200, ""),
		"no seq":         deliveryCmd("org_1", id, 0, 0, 1, 200, ""),
		"negative index": deliveryCmd("org_1", id, 1, -1, 1, 200, ""),
		"index too big":  deliveryCmd("org_1", id, 1, MaxNoticeIndex+1, 1, 200, ""),
		"attempt 0":      deliveryCmd("org_1", id, 1, 0, 0, 200, ""),
		"attempt > max":  deliveryCmd("org_1", id, 1, 0, MaxDeliveryAttempts+1, 200, ""),
		"status 99":      deliveryCmd("org_1", id, 1, 0, 1, 99, ""),
		"status 600":     deliveryCmd("org_1", id, 1, 0, 1, 600, ""),
		"long error":     deliveryCmd("org_1", id, 1, 0, 1, 0, strings.Repeat("e", MaxDeliveryErrorBytes+1)),
		"status given":   {Type: CmdDelivery, Principal: "org_1", Delivery: &DeliveryResult{WebhookID: id, Seq: 1, Attempt: 1, Status: DeliveryDelivered}},
		"next given":     decided,
	} {
		if ev := g.exec(c); ev.Type != EvCommandRejected {
			t.Errorf("%s: %s, want a refusal", name, ev.Type)
		}
	}
}

func TestDeliveryBackoffAndIDs(t *testing.T) {
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	for i, w := range want {
		if got := DeliveryBackoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if DeliveryBackoff(40) != DeliveryBackoffMax {
		t.Errorf("backoff is not capped: %v", DeliveryBackoff(40))
	}
	a := DeliveryID(0, 12, 0, "wh_a")
	seen := map[string]bool{a: true}
	for _, id := range []string{DeliveryID(1, 12, 0, "wh_a"), DeliveryID(0, 13, 0, "wh_a"), DeliveryID(0, 12, 1, "wh_a"), DeliveryID(0, 12, 0, "wh_b")} {
		if seen[id] {
			t.Fatalf("delivery id %s repeats", id)
		}
		seen[id] = true
	}
	if a != DeliveryID(0, 12, 0, "wh_a") || !strings.HasPrefix(a, "dl_") || len(a) != 27 {
		t.Fatalf("delivery id %q", a)
	}
}
