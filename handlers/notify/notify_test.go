package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/handlers/notify"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// running is an embedded gate whose worker runs, with a webhook runner
// over it when started with one.
type running struct {
	t      *testing.T
	g      *embedded.Gate
	r      *notify.Runner
	cancel context.CancelFunc
	done   chan struct{}
}

// clock is the runner's clock: the wall clock plus an offset the test
// moves to make retries due without waiting for them.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

// start opens the gate in dir and runs its worker and, with cfg, a runner
// configured by it (Gate, Store and Sign filled in).
func start(t *testing.T, dir string, cfg *notify.Config) *running {
	t.Helper()
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin-key"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rn := &running{t: t, g: g, cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = g.Worker.Run(ctx) }()
	if cfg != nil {
		c := *cfg
		c.Gate, c.Store, c.Sign = g.Worker, g.Store, g.Keyring.SignWebhook
		if rn.r, err = notify.New(c); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = rn.r.Run(ctx) }()
	}
	go func() { wg.Wait(); close(rn.done) }()
	t.Cleanup(rn.stop)
	return rn
}

// stop stops the runner and the worker and closes the gate (once).
func (rn *running) stop() {
	if rn.g == nil {
		return
	}
	rn.cancel()
	<-rn.done
	if err := rn.g.Close(); err != nil {
		rn.t.Errorf("closing the gate: %v", err)
	}
	rn.g = nil
}

func (rn *running) submit(cmd *domain.Command) *domain.Event {
	rn.t.Helper()
	ev, err := rn.g.Worker.Submit(context.Background(), cmd)
	if err != nil {
		rn.t.Fatal(err)
	}
	return ev
}

// webhook creates a webhook of consumer to url and returns its ID.
func (rn *running) webhook(consumer, url string, events ...string) string {
	rn.t.Helper()
	ev := rn.submit(&domain.Command{Type: domain.CmdWebhook, Principal: consumer,
		Request: domain.RequestID{Source: "test", ID: "hook-" + url + strings.Join(events, ",")},
		Webhook: &domain.WebhookChange{Op: domain.OpCreate, Webhook: domain.Webhook{URL: url, Events: events}}})
	if ev.Type != domain.EvWebhookChanged {
		rn.t.Fatalf("webhook refused: %+v", ev.Error)
	}
	return ev.Webhook.ID
}

// appendNotices appends to the (closed) gate's log in dir an
// execute.decided event of consumer's transaction tx with notices of
// kinds (gatetest.AppendNotices) and returns its seq.
func appendNotices(t *testing.T, dir, consumer, tx string, kinds ...string) uint64 {
	t.Helper()
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	return gatetest.AppendNotices(t, lg, 0, consumer, tx, kinds...)
}

// noticeFor makes, in the gate in dir, a webhook of org_1 to rc, then
// appends to its log, the gate stopped, a notice of kind for org_1; it
// returns the webhook and the notice's seq.
func noticeFor(t *testing.T, dir string, rc *receiver, kind string) (hook string, seq uint64) {
	t.Helper()
	rn := start(t, dir, nil)
	hook = rn.webhook("org_1", rc.URL+"/h")
	rn.stop()
	return hook, appendNotices(t, dir, "org_1", "tx_1", kind)
}

// received is one POST a receiver got.
type received struct {
	body   []byte
	header http.Header
}

// receiver is a webhook endpoint answering each POST with the next status
// of its script (the last one once the script is used up).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	script []int
	got    []received
	posts  chan received
}

func newReceiver(t *testing.T, script ...int) *receiver {
	rc := &receiver{script: script, posts: make(chan received, 64)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		status := rc.script[min(len(rc.got), len(rc.script)-1)]
		got := received{body: b, header: r.Header.Clone()}
		rc.got = append(rc.got, got)
		rc.mu.Unlock()
		w.WriteHeader(status)
		rc.posts <- got
	}))
	t.Cleanup(rc.Close)
	return rc
}

// next waits for the receiver's next POST.
func (rc *receiver) next(t *testing.T) received {
	t.Helper()
	select {
	case p := <-rc.posts:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook POST within 10 s")
	}
	return received{}
}

// waitFor polls cond until it holds (a test failure after 10 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// delivery reads a delivery from the gate's projections.
func (rn *running) delivery(id string) *projections.Delivery {
	d, err := rn.g.Store.Delivery(domain.AdminPrincipal, id)
	if err != nil {
		return nil
	}
	return d
}

// jwksOver serves the gate's JWKS over HTTP, as /.well-known/jwks.json,
// and returns the key set a receiver fetches from it.
func jwksOver(t *testing.T, ring *attest.Keyring) *attest.KeySet {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/jwks.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(ring.JWKS())
	}))
	defer srv.Close()
	doc, err := attest.FetchJWKS(context.Background(), srv.URL+"/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	set, err := attest.ParseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestRunner_DeliversSignedAndRetries(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 500, 200)
	rn := start(t, dir, nil)
	all := rn.webhook("org_1", rc.URL+"/all")
	blocked := rn.webhook("org_1", rc.URL+"/blocked", domain.NoticeBlocked)
	rn.webhook("org_2", rc.URL+"/other")
	rn.stop()
	seq := appendNotices(t, dir, "org_1", "tx_1", domain.NoticeBlocked, domain.NoticeLimit80)

	var clk clock
	rn = start(t, dir, &notify.Config{AllowPrivate: true, Clock: clk.now, Interval: 20 * time.Millisecond, Concurrency: 1})
	set := jwksOver(t, rn.g.Keyring)
	ids := []string{domain.DeliveryID(0, seq, 0, all), domain.DeliveryID(0, seq, 1, all), domain.DeliveryID(0, seq, 0, blocked)}

	first := rc.next(t) // answered 500: retried after its backoff
	clk.advance(domain.DeliveryBackoff(1))
	rn.r.Wake()
	posts := []received{first, rc.next(t), rc.next(t), rc.next(t)}
	waitFor(t, "every delivery delivered", func() bool {
		for _, id := range ids {
			if d := rn.delivery(id); d == nil || d.Status != domain.DeliveryDelivered {
				return false
			}
		}
		return true
	})
	attempts := map[string][]int{}
	for _, p := range posts {
		if err := set.VerifyWebhook(p.header.Get(notify.SignatureHeader), p.body); err != nil {
			t.Fatalf("signature of %s: %v", p.body, err)
		}
		var b notify.Body
		dec := json.NewDecoder(strings.NewReader(string(p.body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			t.Fatal(err)
		}
		if p.header.Get(notify.DeliveryHeader) != b.DeliveryID || p.header.Get(notify.EventHeader) != b.Kind ||
			p.header.Get("Content-Type") != "application/json" {
			t.Fatalf("headers %v of %s", p.header, p.body)
		}
		if b.Consumer != "org_1" || b.Transaction == nil || b.Transaction.ID != "tx_1" || b.Transaction.AmountCents != 1250 ||
			b.PolicyID != "pol_daily" || b.Event.Seq != seq || b.Message != "daily limit: "+b.Kind {
			t.Fatalf("body %s", p.body)
		}
		attempts[b.DeliveryID] = append(attempts[b.DeliveryID], b.Attempt)
	}
	if len(attempts) != 3 || len(attempts[rn.delivery(ids[0]).ID])+len(attempts[ids[1]])+len(attempts[ids[2]]) != 4 {
		t.Fatalf("attempts by delivery: %v", attempts)
	}
	var retried string
	for id, a := range attempts {
		if len(a) == 2 {
			retried = id
			if a[0] != 1 || a[1] != 2 {
				t.Fatalf("attempt numbers %v", a)
			}
		}
	}
	if d := rn.delivery(retried); d.Attempts != 2 || d.HTTPStatus != 200 {
		t.Fatalf("retried delivery: %+v", d)
	}
	// Each attempt is one event of the log.
	if n := countEvents(t, rn.g.Log, domain.EvDeliveryRecorded); n != 4 {
		t.Fatalf("%d attempts recorded, want 4", n)
	}
	// org_2 got nothing: its webhook wants notices of its own transactions.
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 4 {
		t.Fatalf("%d POSTs, want 4", len(rc.got))
	}
}

// countEvents counts the events of type typ in lg.
func countEvents(t *testing.T, lg streams.Log, typ domain.EventType) int {
	t.Helper()
	n := 0
	err := lg.Read(context.Background(), 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return err
		}
		if ev.Type == typ {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunner_RestartResumes: a delivery retrying when the gate stops, and
// one raised while no runner ran, are both delivered after a restart, from
// the projections alone; the attempt numbers go on.
func TestRunner_RestartResumes(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 503, 200)
	hook, seq := noticeFor(t, dir, rc, domain.NoticeQueued)
	first := domain.DeliveryID(0, seq, 0, hook)

	var clk clock
	cfg := &notify.Config{AllowPrivate: true, Clock: clk.now, Interval: 20 * time.Millisecond}
	rn := start(t, dir, cfg)
	rc.next(t)
	waitFor(t, "the first attempt recorded", func() bool {
		d := rn.delivery(first)
		return d != nil && d.Status == domain.DeliveryRetrying && d.Attempts == 1 && d.HTTPStatus == 503
	})
	rn.stop()
	seq2 := appendNotices(t, dir, "org_1", "tx_2", domain.NoticeConfirmNeeded)
	second := domain.DeliveryID(0, seq2, 0, hook)

	clk.advance(time.Hour)
	rn = start(t, dir, cfg)
	rc.next(t)
	rc.next(t)
	waitFor(t, "both delivered after the restart", func() bool {
		a, b := rn.delivery(first), rn.delivery(second)
		return a != nil && b != nil && a.Status == domain.DeliveryDelivered && b.Status == domain.DeliveryDelivered
	})
	if a, b := rn.delivery(first), rn.delivery(second); a.Attempts != 2 || b.Attempts != 1 {
		t.Fatalf("attempts after restart: %d and %d", a.Attempts, b.Attempts)
	}
	if due, err := rn.g.Store.DueDeliveries(clk.now().Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("still due: %+v %v", due, err)
	}
}

// TestRunner_GivesUp: a receiver that always fails gets
// domain.MaxDeliveryAttempts attempts, then the delivery is failed and
// never due again.
func TestRunner_GivesUp(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 500)
	hook, seq := noticeFor(t, dir, rc, domain.NoticeBlocked)
	id := domain.DeliveryID(0, seq, 0, hook)
	// Every backoff is over at once: the attempts follow each other.
	var clk clock
	clk.advance(24 * time.Hour)
	rn := start(t, dir, &notify.Config{AllowPrivate: true, Clock: clk.now, Interval: 20 * time.Millisecond})
	for range domain.MaxDeliveryAttempts {
		rc.next(t)
	}
	waitFor(t, "the delivery failed", func() bool {
		d := rn.delivery(id)
		return d != nil && d.Status == domain.DeliveryFailed
	})
	d := rn.delivery(id)
	if d.Status != domain.DeliveryFailed || d.NextAt != nil || d.HTTPStatus != 500 {
		t.Fatalf("after the last attempt: %+v", d)
	}
	if n := countEvents(t, rn.g.Log, domain.EvDeliveryRecorded); n != domain.MaxDeliveryAttempts {
		t.Fatalf("%d attempts recorded", n)
	}
	// A failed delivery is never due again.
	rn.r.Wake()
	if due, err := rn.g.Store.DueDeliveries(clk.now().Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after failing: %+v %v", due, err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != domain.MaxDeliveryAttempts {
		t.Fatalf("%d POSTs, want %d", len(rc.got), domain.MaxDeliveryAttempts)
	}
}

// TestRunner_RefusesPrivateAddresses: without AllowPrivate the runner
// never connects to a loopback webhook; the refusal is the attempt's
// error, recorded.
func TestRunner_RefusesPrivateAddresses(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 200)
	hook, seq := noticeFor(t, dir, rc, domain.NoticeBlocked)
	rn := start(t, dir, &notify.Config{Interval: 20 * time.Millisecond})
	id := domain.DeliveryID(0, seq, 0, hook)
	waitFor(t, "the refused attempt recorded", func() bool {
		d := rn.delivery(id)
		return d != nil && d.Attempts == 1
	})
	if d := rn.delivery(id); d.Status != domain.DeliveryRetrying || !strings.Contains(d.Error, "refused by the network policy") || d.HTTPStatus != 0 {
		t.Fatalf("refused attempt: %+v", d)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 0 {
		t.Fatalf("the runner reached a loopback address %d times", len(rc.got))
	}
}

// TestRunner_DeletedWebhook: a delivery whose webhook was deleted fails
// at its next attempt without a POST.
func TestRunner_DeletedWebhook(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 200)
	hook, seq := noticeFor(t, dir, rc, domain.NoticeBlocked)
	rn := start(t, dir, nil)
	ev := rn.submit(&domain.Command{Type: domain.CmdWebhook, Principal: "org_1", Request: domain.RequestID{Source: "test", ID: "del"},
		Webhook: &domain.WebhookChange{Op: domain.OpDelete, Webhook: domain.Webhook{ID: hook}}})
	if ev.Type != domain.EvWebhookChanged {
		t.Fatalf("delete: %+v", ev.Error)
	}
	rn.stop()
	rn = start(t, dir, &notify.Config{AllowPrivate: true, Interval: 20 * time.Millisecond})
	id := domain.DeliveryID(0, seq, 0, hook)
	waitFor(t, "the delivery failed", func() bool {
		d := rn.delivery(id)
		return d != nil && d.Status == domain.DeliveryFailed
	})
	if d := rn.delivery(id); d.Error != "webhook deleted" || d.Attempts != 1 {
		t.Fatalf("%+v", d)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 0 {
		t.Fatal("a deleted webhook was POSTed to")
	}
}

// TestRunner_AttemptRecordedOnce: the same attempt made twice (a crash
// after the POST, before the record) is recorded once: the request is
// derived from the delivery and the attempt number.
func TestRunner_AttemptRecordedOnce(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 200)
	hook, seq := noticeFor(t, dir, rc, domain.NoticeBlocked)
	rn := start(t, dir, nil)
	r, err := notify.New(notify.Config{Gate: rn.g.Worker, Store: rn.g.Store, Sign: rn.g.Keyring.SignWebhook, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	d := rn.delivery(domain.DeliveryID(0, seq, 0, hook))
	if d == nil || d.Status != domain.DeliveryPending {
		t.Fatalf("pending delivery: %+v", d)
	}
	snapshot := *d
	for range 2 {
		if err := r.Attempt(context.Background(), &snapshot); err != nil {
			t.Fatal(err)
		}
	}
	if n := countEvents(t, rn.g.Log, domain.EvDeliveryRecorded); n != 1 {
		t.Fatalf("%d records of one attempt", n)
	}
	if d := rn.delivery(d.ID); d.Status != domain.DeliveryDelivered || d.Attempts != 1 {
		t.Fatalf("%+v", d)
	}
}

// TestNewClient: the default client refuses loopback and private
// addresses; allowPrivate lets them through, never link-local ones (cloud
// metadata).
func TestNewClient(t *testing.T) {
	rc := newReceiver(t, 204)
	if _, err := notify.NewClient(false).Get(rc.URL); err == nil || !strings.Contains(err.Error(), "refused by the network policy") {
		t.Fatalf("loopback without allowPrivate: %v", err)
	}
	resp, err := notify.NewClient(true).Get(rc.URL)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("loopback with allowPrivate: %v", err)
	}
	resp.Body.Close()
	if _, err := notify.NewClient(true).Get("http://169.254.169.254:1/"); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Fatalf("link-local with allowPrivate: %v", err)
	}
}

// TestRunner_PolicyNotices runs the whole path on a real embedded gate: a
// consumer's daily spending policy, an execute that takes the day past
// 80 % of it (limit_80) and one that would pass it (blocked) raise
// notices; the runner delivers both, signed, to the consumer's webhook;
// and the log, webhooks and deliveries included, re-decides byte for
// byte (replay --verify).
func TestRunner_PolicyNotices(t *testing.T) {
	dir := t.TempDir()
	rc := newReceiver(t, 200)
	rn := start(t, dir, &notify.Config{AllowPrivate: true, Interval: 20 * time.Millisecond})
	req := func(id string) domain.RequestID { return domain.RequestID{Source: "test", ID: id} }
	must := func(ev *domain.Event, want domain.EventType) *domain.Event {
		t.Helper()
		if ev.Type != want {
			t.Fatalf("%s: %s %+v", want, ev.Type, ev.Error)
		}
		return ev
	}
	must(rn.submit(&domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Request: req("shop"),
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "shop", Name: "Shop",
			Categories: []string{"books"}, Endpoint: "http://127.0.0.1:9/", Currency: "USD"}}}), domain.EvBusinessChanged)
	const token = "qwed_agent_policy_notices"
	agent := must(rn.submit(&domain.Command{Type: domain.CmdRegisterAgent, Principal: "org_1", Request: req("agent"),
		Register: &domain.RegisterAgent{Agent: domain.AgentInfo{Name: "buyer", Type: "autonomous", PrincipalID: "org_1"},
			TokenHash: command.HashSecret(token)}}), domain.EvAgentRegistered).AgentID
	must(rn.submit(&domain.Command{Type: domain.CmdPolicy, Principal: "org_1", Request: req("policy"),
		Policy: &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "daily", Type: policy.TypeSpending,
			Spending: &policy.Spending{DailyCents: 1000}}}}), domain.EvPolicyChanged)
	hook := rn.webhook("org_1", rc.URL+"/h")
	execute := func(id string, cents int) *domain.Event {
		t.Helper()
		body := json.RawMessage(fmt.Sprintf(`{"item":"book","amount_cents":%d}`, cents))
		h, err := domain.RequestHashOf(body)
		if err != nil {
			t.Fatal(err)
		}
		th := command.HashSecret(token)
		return must(rn.submit(&domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: th,
			Request: domain.RequestID{Source: "test", ID: id, Scope: domain.RequestScope("", th)},
			Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: body, RequestHash: h}}), domain.EvExecuteDecided)
	}
	near := execute("x1", 850)
	over := execute("x2", 300)
	if over.Transaction.Status != domain.TxBlocked {
		t.Fatalf("the second execute: %+v", over.Transaction)
	}
	want := map[string]string{
		domain.NoticeLimit80: domain.DeliveryID(0, near.Seq, 0, hook),
		domain.NoticeBlocked: domain.DeliveryID(0, over.Seq, 0, hook),
	}
	set := jwksOver(t, rn.g.Keyring)
	for range 2 {
		p := rc.next(t)
		if err := set.VerifyWebhook(p.header.Get(notify.SignatureHeader), p.body); err != nil {
			t.Fatal(err)
		}
		var b notify.Body
		if err := json.Unmarshal(p.body, &b); err != nil {
			t.Fatal(err)
		}
		if want[b.Kind] != b.DeliveryID || b.PolicyID != "daily" || b.Transaction == nil || b.Transaction.AgentID != agent {
			t.Fatalf("unexpected notice %s (want %v)", p.body, want)
		}
		delete(want, b.Kind)
	}
	for _, id := range []string{domain.DeliveryID(0, near.Seq, 0, hook), domain.DeliveryID(0, over.Seq, 0, hook)} {
		waitFor(t, "delivered "+id, func() bool {
			d := rn.delivery(id)
			return d != nil && d.Status == domain.DeliveryDelivered
		})
	}
	rep, err := replay.Replay(context.Background(), rn.g.Log, rn.g.Store, true, rn.g.Keyring.SignerFor(rn.g.NodeID))
	if err != nil {
		t.Fatal(err)
	}
	if rep.ProjectionDiff != "" || len(rep.Mismatches) != 0 {
		t.Fatalf("replay: projections %q, mismatches %v", rep.ProjectionDiff, rep.Mismatches)
	}
}
