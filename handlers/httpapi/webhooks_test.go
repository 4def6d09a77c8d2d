package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams/cehttp"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// webhookOf decodes a webhook reply.
func webhookOf(t *testing.T, r response) domain.WebhookReply {
	t.Helper()
	var w domain.WebhookReply
	if err := json.Unmarshal(r.body, &w); err != nil {
		t.Fatalf("webhook reply %d %s: %v", r.status, r.body, err)
	}
	return w
}

// TestWebhooks_Lifecycle: a consumer creates, reads, updates and deletes
// a webhook; the admin acts for a consumer it names; each change is one
// event of the log, each refusal one record.
func TestWebhooks_Lifecycle(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	before := g.head()
	r := g.do("POST", "/webhooks", apiKey(key), `{"url":"https://hooks.example.com/agentgate","events":["blocked","limit_80"]}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	w := webhookOf(t, r)
	if !strings.HasPrefix(w.ID, "wh_") || w.Consumer != "org_a" || len(w.Events) != 2 {
		t.Fatalf("created %+v", w)
	}
	if evs := g.events(before); len(evs) != 1 || evs[0].Type != domain.EvWebhookChanged {
		t.Fatalf("log after create: %d events", len(evs))
	}
	r = g.do("GET", "/webhooks/"+w.ID, apiKey(key), nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"url":"https://hooks.example.com/agentgate"`) {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	r = g.do("PUT", "/webhooks/"+w.ID, apiKey(key), `{"url":"https://hooks.example.com/v2"}`)
	if r.status != 200 || webhookOf(t, r).URL != "https://hooks.example.com/v2" || len(webhookOf(t, r).Events) != 0 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	r = g.do("GET", "/webhooks", apiKey(key), nil)
	var list struct{ Webhooks []domain.Webhook }
	if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 || len(list.Webhooks) != 1 || list.Webhooks[0].URL != "https://hooks.example.com/v2" {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	// The admin names the consumer: in the body, or on DELETE the query.
	r = g.do("POST", "/webhooks", apiKey(testAdminKey), `{"url":"http://10.0.0.7:8080/h"}`)
	if r.status != 400 || r.errorCode(t) != string(domain.CodeMissingField) {
		t.Fatalf("admin without consumer: %d %s", r.status, r.body)
	}
	r = g.do("POST", "/webhooks", apiKey(testAdminKey), `{"url":"http://10.0.0.7:8080/h","consumer":"org_a"}`)
	if r.status != 201 || webhookOf(t, r).Consumer != "org_a" {
		t.Fatalf("admin create: %d %s", r.status, r.body)
	}
	second := webhookOf(t, r).ID
	if r := g.do("GET", "/webhooks?consumer=org_a", apiKey(testAdminKey), nil); r.status != 200 || strings.Count(string(r.body), `"id"`) != 2 {
		t.Fatalf("admin list: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/webhooks/"+second+"?consumer=org_a", apiKey(testAdminKey), nil); r.status != 200 || !webhookOf(t, r).Deleted {
		t.Fatalf("admin delete: %d %s", r.status, r.body)
	}
	r = g.do("DELETE", "/webhooks/"+w.ID, apiKey(key), nil)
	if r.status != 200 || !webhookOf(t, r).Deleted {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/webhooks/" + w.ID} {
		if r := g.do("GET", path, apiKey(key), nil); r.status != 404 || r.errorCode(t) != string(domain.CodeNotFound) {
			t.Fatalf("get after delete: %d %s", r.status, r.body)
		}
	}
	before = g.head()
	if r := g.do("DELETE", "/webhooks/"+w.ID, apiKey(key), nil); r.status != 404 {
		t.Fatalf("second delete: %d %s", r.status, r.body)
	}
	if evs := g.events(before); len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
		t.Fatalf("a refused delete is not recorded once: %d events", len(evs))
	}
}

// TestWebhooks_BadInput: each malformed body or URL is a clear error with
// the gate's code, recorded, and changes nothing.
func TestWebhooks_BadInput(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	for name, c := range map[string]struct {
		body   string
		status int
		code   domain.Code
		field  string
	}{
		"not json":        {`{"url":`, 400, domain.CodeInvalidRequest, ""},
		"unknown member":  {`{"url":"https://x.example","secret":"s"}`, 400, domain.CodeInvalidRequest, "secret"},
		"no url":          {`{}`, 400, domain.CodeMissingField, "webhook.url"},
		"ftp url":         {`{"url":"ftp://x.example/"}`, 400, domain.CodeInvalidRequest, "webhook.url"},
		"user info":       {`{"url":"https://u:p@x.example/"}`, 400, domain.CodeInvalidRequest, "webhook.url"},
		"unknown event":   {`{"url":"https://x.example","events":["approved"]}`, 400, domain.CodeInvalidRequest, "webhook.events"},
		"events not list": {`{"url":"https://x.example","events":"blocked"}`, 400, domain.CodeInvalidRequest, "events"},
		"other consumer":  {`{"url":"https://x.example","consumer":"org_b"}`, 403, domain.CodeForbidden, ""},
		"long url":        {`{"url":"https://x.example/` + strings.Repeat("a", domain.MaxWebhookURLBytes) + `"}`, 400, domain.CodeInvalidRequest, "webhook.url"},
	} {
		before := g.head()
		r := g.do("POST", "/webhooks", apiKey(key), c.body)
		if r.status != c.status || r.errorCode(t) != string(c.code) {
			t.Errorf("%s: %d %s, want %d %s", name, r.status, r.body, c.status, c.code)
			continue
		}
		if e := errorOf(t, r.body); c.field != "" && e.Details["field"] != c.field {
			t.Errorf("%s: details %v do not name %s", name, e.Details, c.field)
		}
		if evs := g.events(before); len(evs) != 1 || evs[0].Type != domain.EvCommandRejected {
			t.Errorf("%s: %d events recorded, want one refusal", name, len(evs))
		}
	}
	if r := g.do("GET", "/webhooks", apiKey(key), nil); r.status != 200 || !strings.Contains(string(r.body), `"webhooks":[]`) {
		t.Fatalf("webhooks after refusals: %s", r.body)
	}
	// Past the bound, the eleventh is refused.
	for i := range domain.MaxWebhooksPerConsumer {
		if r := g.do("POST", "/webhooks", apiKey(key), `{"url":"https://x.example/h"}`); r.status != 201 {
			t.Fatalf("webhook %d: %d %s", i, r.status, r.body)
		}
	}
	if r := g.do("POST", "/webhooks", apiKey(key), `{"url":"https://x.example/h"}`); r.status != 400 {
		t.Fatalf("webhook past the bound: %d %s", r.status, r.body)
	}
	// Reads: filters refused by name.
	for _, q := range []string{"status=done", "kind=approved", "limit=0", "limit=x", "after=" + strings.Repeat("a", MaxPathIDBytes+1)} {
		if r := g.do("GET", "/webhooks/deliveries?"+q, apiKey(key), nil); r.status != 400 || r.errorCode(t) != string(domain.CodeInvalidRequest) {
			t.Errorf("deliveries?%s: %d %s", q, r.status, r.body)
		}
	}
	if r := g.do("GET", "/webhooks/deliveries?after=dl_nope", apiKey(key), nil); r.status != 400 {
		t.Errorf("after an unknown delivery: %d %s", r.status, r.body)
	}
}

// TestWebhooks_TenantIsolation: another principal neither reads, changes,
// deletes nor lists a consumer's webhooks and deliveries; an agent token
// reaches none of it; the admin reads everything.
func TestWebhooks_TenantIsolation(t *testing.T) {
	dir := t.TempDir()
	g := newTestGate(t, gateOptions{dataDir: dir})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	ag := g.register(keyA, "org_a", 2, nil)
	r := g.do("POST", "/webhooks", apiKey(keyA), `{"url":"https://a.example/h"}`)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	hook := webhookOf(t, r).ID
	g.stop()
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seq := gatetest.AppendNotices(t, lg, 0, "org_a", "tx_1", domain.NoticeBlocked)
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	g = newTestGate(t, gateOptions{dataDir: dir})
	delivery := domain.DeliveryID(0, seq, 0, hook)

	// org_a sees its delivery, pending.
	r = g.do("GET", "/webhooks/deliveries", apiKey(keyA), nil)
	var page struct {
		Deliveries []projections.Delivery `json:"deliveries"`
		NextAfter  *string                `json:"next_after"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil || r.status != 200 || len(page.Deliveries) != 1 ||
		page.Deliveries[0].ID != delivery || page.Deliveries[0].Status != domain.DeliveryPending || page.NextAfter != nil {
		t.Fatalf("org_a's deliveries: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/webhooks/" + hook + "/deliveries", "/webhooks/deliveries?status=pending&kind=blocked&webhook_id=" + hook} {
		if r := g.do("GET", path, apiKey(keyA), nil); r.status != 200 || !strings.Contains(string(r.body), delivery) {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	if d := page.Deliveries[0]; d.TransactionID != "tx_1" || d.Kind != domain.NoticeBlocked || d.WebhookID != hook {
		t.Fatalf("delivery %+v", d)
	}
	// org_b: not found, not listed, not changed.
	before := g.head()
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/webhooks/" + hook, ""},
		{"PUT", "/webhooks/" + hook, `{"url":"https://b.example/steal"}`},
		{"DELETE", "/webhooks/" + hook, ""},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		if r := g.do(c.method, c.path, apiKey(keyB), body); r.status != 404 || r.errorCode(t) != string(domain.CodeNotFound) {
			t.Errorf("org_b %s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	for _, path := range []string{"/webhooks", "/webhooks/deliveries", "/webhooks/" + hook + "/deliveries"} {
		if r := g.do("GET", path, apiKey(keyB), nil); r.status != 200 || strings.Contains(string(r.body), hook) {
			t.Errorf("org_b lists %s: %d %s", path, r.status, r.body)
		}
	}
	for _, path := range []string{"/webhooks?consumer=org_a", "/webhooks/deliveries?consumer=org_a"} {
		if r := g.do("GET", path, apiKey(keyB), nil); r.status != 403 {
			t.Errorf("org_b names org_a in %s: %d %s", path, r.status, r.body)
		}
	}
	if r := g.do("GET", "/webhooks/deliveries?after="+delivery, apiKey(keyB), nil); r.status != 400 {
		t.Errorf("org_b pages after org_a's delivery: %d %s", r.status, r.body)
	}
	// An agent token is no API key.
	for _, c := range []struct{ method, path string }{{"GET", "/webhooks"}, {"POST", "/webhooks"}, {"DELETE", "/webhooks/" + hook}} {
		if r := g.do(c.method, c.path, bearerH(ag.token), `{"url":"https://x.example"}`); r.status != 401 {
			t.Errorf("agent token %s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	if r := g.do("GET", "/webhooks/"+hook, apiKey(keyA), nil); r.status != 200 || !strings.Contains(string(r.body), "https://a.example/h") {
		t.Fatalf("org_a's webhook after org_b's attempts: %d %s", r.status, r.body)
	}
	for _, ev := range g.events(before) {
		if ev.Type == domain.EvWebhookChanged {
			t.Fatalf("org_b changed a webhook: %+v", ev.Webhook)
		}
	}
	// The admin reads every consumer's.
	if r := g.do("GET", "/webhooks/deliveries", apiKey(testAdminKey), nil); r.status != 200 || !strings.Contains(string(r.body), delivery) {
		t.Fatalf("admin's deliveries: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/webhooks/"+hook, apiKey(testAdminKey), nil); r.status != 200 {
		t.Fatalf("admin's webhook read: %d %s", r.status, r.body)
	}
}

// TestWebhooks_EdgeRateLimit: over Config.WebhookRateLimit a key's writes
// get 429 with Retry-After and nothing is recorded; another key is not
// held back.
func TestWebhooks_EdgeRateLimit(t *testing.T) {
	g := newTestGate(t, gateOptions{webhookRate: RateLimit{PerPrincipal: 1, Burst: 2}})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	for i := range 2 {
		if r := g.do("POST", "/webhooks", apiKey(keyA), `{"url":"https://x.example/h"}`); r.status != 201 {
			t.Fatalf("write %d: %d %s", i, r.status, r.body)
		}
	}
	before := g.head()
	r := g.do("POST", "/webhooks", apiKey(keyA), `{"url":"https://x.example/h"}`)
	if r.status != http.StatusTooManyRequests || r.errorCode(t) != string(domain.CodeRateLimited) || r.header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
	if g.head() != before {
		t.Fatal("a rate-limited write was recorded")
	}
	if r := g.do("POST", "/webhooks", apiKey(keyB), `{"url":"https://x.example/h"}`); r.status != 201 {
		t.Fatalf("another key: %d %s", r.status, r.body)
	}
	g.clock.Advance(2e9)
	if r := g.do("PUT", "/webhooks/wh_nope", apiKey(keyA), `{"url":"https://x.example/h"}`); r.status != 404 {
		t.Fatalf("after the refill: %d %s", r.status, r.body)
	}
}

// FuzzWebhookBody: whatever the body of POST /webhooks, the answer is a
// webhook (201) or a catalogue error, never a 5xx, and the gate keeps
// answering.
func FuzzWebhookBody(f *testing.F) {
	for _, s := range []string{`{"url":"https://x.example/h","events":["blocked"]}`, `{"url":"http://[::1]:8/"}`, `{"url":null}`,
		`{"url":"https://x.example","consumer":"org_a"}`, `{}`, `[]`, `null`, ``, `{"url":"https://a..b"}`, "\xff"} {
		f.Add([]byte(s))
	}
	g := newTestGate(f, gateOptions{})
	key := g.issueKey("org_a")
	send := func(t *testing.T, method, path string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, g.srv.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-API-Key", key)
		resp, err := g.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, reply := send(t, "POST", "/webhooks", body)
		switch {
		case status == http.StatusCreated:
			w := webhookOf(t, response{status: status, body: reply})
			if w.Consumer != "org_a" {
				t.Fatalf("created %s", reply)
			}
			// Make room again, so the bound is not what refuses the next.
			if st, b := send(t, "DELETE", "/webhooks/"+w.ID, nil); st != 200 {
				t.Fatalf("delete: %d %s", st, b)
			}
		case status >= 400 && status < 500:
			if e := errorOf(t, reply); !e.Code.Known() {
				t.Fatalf("unknown code %s", e.Code)
			}
		default:
			t.Fatalf("%q: %d %s", body, status, reply)
		}
	})
}

// TestWebhooks_CloudEvent: qwed.webhook.change on POST /events creates,
// updates and deletes a webhook as the routes do, answered with the
// routes' reply; a redelivered event gets the recorded answer; another
// principal's key changes none.
func TestWebhooks_CloudEvent(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	typ := string(domain.CmdWebhook)
	st, _, created := g.sendEvent(cloudEvent(cehttp.ModeStructured, typ, "wh-1", "", `{"op":"create","webhook":{"url":"https://a.example/h","events":["queued"]}}`), apiKey(keyA))
	id, _ := created["id"].(string)
	if st != 201 || !strings.HasPrefix(id, "wh_") || created["consumer"] != "org_a" {
		t.Fatalf("create: %d %v", st, created)
	}
	before := g.head()
	if st, _, again := g.sendEvent(cloudEvent(cehttp.ModeStructured, typ, "wh-1", "", `{"op":"create","webhook":{"url":"https://a.example/h","events":["queued"]}}`), apiKey(keyA)); st != 201 || again["id"] != id || g.head() != before {
		t.Fatalf("redelivered create: %d %v, log %d -> %d", st, again, before, g.head())
	}
	if st, _, body := g.sendEvent(cloudEvent(cehttp.ModeBinary, typ, "wh-2", "", `{"op":"update","webhook":{"id":"`+id+`","url":"https://a.example/v2"}}`), apiKey(keyA)); st != 200 || body["url"] != "https://a.example/v2" {
		t.Fatalf("update: %d %v", st, body)
	}
	if st, _, body := g.sendEvent(cloudEvent(cehttp.ModeBinary, typ, "wh-3", "", `{"op":"delete","webhook":{"id":"`+id+`"}}`), apiKey(keyB)); st != 404 {
		t.Fatalf("org_b's delete: %d %v", st, body)
	}
	if st, _, body := g.sendEvent(cloudEvent(cehttp.ModeBinary, typ, "wh-4", "", `{"op":"delete","webhook":{"id":"`+id+`"}}`), apiKey(keyA)); st != 200 || body["deleted"] != true {
		t.Fatalf("delete: %d %v", st, body)
	}
	if st, _, body := g.sendEvent(cloudEvent(cehttp.ModeBinary, string(domain.CmdDelivery), "d-1", "", `{}`), apiKey(keyA)); st != 400 {
		t.Fatalf("a delivery record from a client: %d %v", st, body)
	}
}
