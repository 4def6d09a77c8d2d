package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// a2aSubmit submits an A2A command straight to the gate's worker (the
// path POST /a2a/* takes once the command is built and authenticated),
// and returns its event.
func (g *testGate) a2aSubmit(cmd *domain.Command) *domain.Event {
	g.t.Helper()
	ev, err := g.gate.Worker.Submit(context.Background(), cmd)
	if err != nil {
		g.t.Fatalf("submitting %s: %v", cmd.Type, err)
	}
	return ev
}

var a2aRequests struct {
	sync.Mutex
	n int
}

func a2aRequest() domain.RequestID {
	a2aRequests.Lock()
	defer a2aRequests.Unlock()
	a2aRequests.n++
	return domain.RequestID{Source: "a2a-reads-test", ID: fmt.Sprint("r", a2aRequests.n)}
}

// a2aBoundary changes principal's boundary ("*": gate-wide).
func (g *testGate) a2aBoundary(principal, op, agent, sender, receiver string) {
	g.t.Helper()
	if err := g.changeBoundary(principal, op, agent, sender, receiver); err != nil {
		g.t.Fatal(err)
	}
}

// changeBoundary is a2aBoundary for a goroutine other than the test's,
// which must not call t.Fatal: it returns the error instead.
func (g *testGate) changeBoundary(principal, op, agent, sender, receiver string) error {
	ev, err := g.gate.Worker.Submit(context.Background(), &domain.Command{Type: domain.CmdA2ABoundary, Principal: principal, Request: a2aRequest(),
		A2ABoundary: &domain.A2ABoundaryChange{Op: op, Agent: agent, Sender: sender, Receiver: receiver}})
	if err != nil {
		return fmt.Errorf("submitting boundary change %s %s%s: %w", op, agent, sender, err)
	}
	if ev.Type != domain.EvA2ABoundaryChanged {
		return fmt.Errorf("boundary change %s %s%s refused: %+v", op, agent, sender, ev.Error)
	}
	return nil
}

// a2aMessage submits a message under principal's boundary.
func (g *testGate) a2aMessage(principal, sender, receiver string, pt a2a.PayloadType, payload string) *domain.A2AVerdict {
	g.t.Helper()
	ev := g.a2aSubmit(&domain.Command{Type: domain.CmdA2AMessage, Principal: principal, Request: a2aRequest(),
		A2A: &a2a.Message{SenderAgentID: sender, ReceiverAgentID: receiver, PayloadType: pt, Payload: json.RawMessage(payload)}})
	if ev.A2AVerdict == nil {
		g.t.Fatalf("message %s -> %s refused: %+v", sender, receiver, ev.Error)
	}
	return ev.A2AVerdict
}

// a2aTenants sets up two tenants' boundaries and the gate-wide one, and
// verdicts under each; it returns org_a's and org_b's keys.
func a2aTenants(t *testing.T, g *testGate) (string, string) {
	t.Helper()
	ka, kb := g.issueKey("org_a"), g.issueKey("org_b")
	for _, a := range []string{"alice", "bob", "carol"} {
		g.a2aBoundary("org_a", domain.A2AOpTrust, a, "", "")
	}
	g.a2aBoundary("org_a", domain.A2AOpBlock, "mallory", "", "")
	g.a2aBoundary("org_a", domain.A2AOpBlockPair, "", "alice", "carol")
	g.a2aBoundary("org_b", domain.A2AOpTrust, "zed", "", "")
	g.a2aBoundary("org_b", domain.A2AOpTrust, "yan", "", "")
	g.a2aBoundary(domain.AdminPrincipal, domain.A2AOpTrust, "dave", "", "")
	g.a2aBoundary(domain.AdminPrincipal, domain.A2AOpBlock, "evil", "", "")
	want := []a2a.Status{a2a.StatusForwarded, a2a.StatusBlocked, a2a.StatusBlocked, a2a.StatusForwarded}
	got := []a2a.Status{
		g.a2aMessage("org_a", "alice", "bob", a2a.PayloadGeneral, `{"m":"hi"}`).Status,
		g.a2aMessage("org_a", "alice", "bob", a2a.PayloadFinancial,
			`{"data":{"claimed_total":999.99,"line_items":[{"description":"w","amount":50,"quantity":2}]}}`).Status,
		g.a2aMessage("org_a", "alice", "carol", a2a.PayloadGeneral, `{}`).Status,
		g.a2aMessage("org_b", "zed", "yan", a2a.PayloadDataQuery, `{"q":1}`).Status,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("verdict %d: %s, want %s", i, got[i], want[i])
		}
	}
	return ka, kb
}

// TestA2ABoundaryReadIsTenantScoped pins GET /a2a/boundary: a principal
// reads its own boundary and the gate-wide one it inherits (marked), never
// another's; the admin reads the gate-wide one, or any with ?principal=.
func TestA2ABoundaryReadIsTenantScoped(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	ka, kb := a2aTenants(t, g)

	r := g.do("GET", "/a2a/boundary", apiKey(ka), nil)
	if r.status != 200 {
		t.Fatalf("org_a: %d %s", r.status, r.body)
	}
	var v struct {
		Principal     string      `json:"principal"`
		TrustedAgents a2aListView `json:"trusted_agents"`
		BlockedAgents a2aListView `json:"blocked_agents"`
		BlockedPairs  a2aListView `json:"blocked_pairs"`
		Inherited     *struct {
			Principal     string      `json:"principal"`
			Inherited     bool        `json:"inherited"`
			TrustedAgents a2aListView `json:"trusted_agents"`
			BlockedAgents a2aListView `json:"blocked_agents"`
		} `json:"inherited"`
		DefaultAllow bool `json:"default_allow"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	if v.Principal != "org_a" || strings.Join(v.TrustedAgents.Agents, ",") != "alice,bob,carol" ||
		strings.Join(v.BlockedAgents.Agents, ",") != "mallory" || len(v.BlockedPairs.Pairs) != 1 ||
		v.BlockedPairs.Pairs[0] != (a2aPairView{"alice", "carol"}) || v.TrustedAgents.Count != 3 || v.DefaultAllow {
		t.Fatalf("org_a's boundary: %s", r.body)
	}
	if i := v.Inherited; i == nil || !i.Inherited || i.Principal != "*" || strings.Join(i.TrustedAgents.Agents, ",") != "dave" ||
		strings.Join(i.BlockedAgents.Agents, ",") != "evil" {
		t.Fatalf("org_a's inherited boundary: %s", r.body)
	}
	for _, other := range []string{"zed", "yan", "org_b"} {
		if strings.Contains(string(r.body), other) {
			t.Fatalf("org_a's boundary shows org_b's %q: %s", other, r.body)
		}
	}
	r = g.do("GET", "/a2a/boundary", apiKey(kb), nil)
	for _, other := range []string{"alice", "bob", "mallory", "carol", "org_a"} {
		if r.status != 200 || strings.Contains(string(r.body), other) {
			t.Fatalf("org_b's boundary shows org_a's %q: %d %s", other, r.status, r.body)
		}
	}
	if r := g.do("GET", "/a2a/boundary?principal=org_b", apiKey(ka), nil); r.status != 403 || r.errorCode(t) != string(domain.CodeForbidden) {
		t.Fatalf("org_a asking for org_b's boundary: %d %s, want 403", r.status, r.body)
	}
	r = g.do("GET", "/a2a/boundary?principal=*", apiKey(ka), nil)
	if r.status != 200 || r.json(t)["principal"] != "*" || strings.Contains(string(r.body), "alice") {
		t.Fatalf("org_a reading the gate-wide boundary: %d %s", r.status, r.body)
	}
	r = g.do("GET", "/a2a/boundary", apiKey(testAdminKey), nil)
	if r.status != 200 || r.json(t)["principal"] != "*" || r.json(t)["inherited"] != nil || !strings.Contains(string(r.body), "evil") {
		t.Fatalf("admin: %d %s", r.status, r.body)
	}
	r = g.do("GET", "/a2a/boundary?principal=org_b", apiKey(testAdminKey), nil)
	if r.status != 200 || r.json(t)["principal"] != "org_b" || !strings.Contains(string(r.body), "zed") {
		t.Fatalf("admin reading org_b's: %d %s", r.status, r.body)
	}
	for name, h := range map[string]hdr{"none": nil, "bad key": apiKey("nope"), "token only": bearerH("qwed_agent_x")} {
		if r := g.do("GET", "/a2a/boundary", h, nil); r.status != 401 {
			t.Fatalf("%s: %d %s, want 401", name, r.status, r.body)
		}
	}
}

// TestA2AMetricsAreTenantScoped pins GET /a2a/metrics and the Prometheus
// counters: a principal counts its own verdicts and pairs only, the admin
// the whole gate; /metrics carries the gate-wide counts by status and
// engine with no agent or principal label.
func TestA2AMetricsAreTenantScoped(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	ka, kb := a2aTenants(t, g)

	r := g.do("GET", "/a2a/metrics", apiKey(ka), nil)
	var m a2aMetricsView
	if err := decodeFresh(r.body, &m); err != nil || r.status != 200 {
		t.Fatalf("org_a: %d %s %v", r.status, r.body, err)
	}
	if m.Scope != "org_a" || m.Total != 3 || m.Forwarded != 1 || m.Blocked != 2 || m.ByEngine["finance_guard"].Blocked != 1 ||
		m.ByEngine["trust_boundary"].Blocked != 1 || m.ByEngine["passthrough"].Forwarded != 1 || len(m.Pairs) != 2 ||
		*m.PairsCounted != 2 || m.NextAfter != nil {
		t.Fatalf("org_a's metrics: %s", r.body)
	}
	if p := m.Pairs[0]; p.Sender != "alice" || p.Receiver != "bob" || p.Forwarded != 1 || p.Blocked != 1 {
		t.Fatalf("org_a's first pair: %+v", p)
	}
	if strings.Contains(string(r.body), "zed") {
		t.Fatalf("org_a's metrics count org_b's pair: %s", r.body)
	}
	r = g.do("GET", "/a2a/metrics", apiKey(kb), nil)
	if err := decodeFresh(r.body, &m); err != nil || m.Scope != "org_b" || m.Total != 1 || strings.Contains(string(r.body), "alice") {
		t.Fatalf("org_b's metrics: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/a2a/metrics?principal=org_a", apiKey(kb), nil); r.status != 403 {
		t.Fatalf("org_b asking for org_a's metrics: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/a2a/metrics?principal=*", apiKey(kb), nil); r.status != 403 {
		t.Fatalf("org_b asking for the admin's metrics: %d %s", r.status, r.body)
	}
	r = g.do("GET", "/a2a/metrics", apiKey(testAdminKey), nil)
	if err := decodeFresh(r.body, &m); err != nil || m.Scope != "gate" || m.Total != 4 || m.Forwarded != 2 || m.Pairs != nil {
		t.Fatalf("admin's metrics: %d %s", r.status, r.body)
	}
	r = g.do("GET", "/a2a/metrics?principal=org_b", apiKey(testAdminKey), nil)
	if err := decodeFresh(r.body, &m); err != nil || m.Scope != "org_b" || m.Total != 1 {
		t.Fatalf("admin reading org_b's metrics: %d %s", r.status, r.body)
	}

	prom := string(g.do("GET", "/metrics", nil, nil).body)
	for _, want := range []string{
		`agentgate_a2a_verdicts_total{engine="passthrough",status="forwarded"} 2`,
		`agentgate_a2a_verdicts_total{engine="finance_guard",status="blocked"} 1`,
		`agentgate_a2a_verdicts_total{engine="trust_boundary",status="blocked"} 1`,
		`agentgate_a2a_verdicts_total{engine="passthrough",status="rate_limited"} 0`,
	} {
		if !strings.Contains(prom, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, line := range strings.Split(prom, "\n") {
		if strings.HasPrefix(line, "agentgate_a2a") && (strings.Contains(line, "alice") || strings.Contains(line, "org_")) {
			t.Errorf("/metrics labels an A2A counter with an agent or principal: %s", line)
		}
	}
}

// TestA2AHealthIsPublicAndRevealsNoTenant pins GET /a2a/health: no
// credentials needed, the configuration in force, and no agent id nor
// principal of any tenant.
func TestA2AHealthIsPublicAndRevealsNoTenant(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	a2aTenants(t, g)
	r := g.do("GET", "/a2a/health", nil, nil)
	var h a2aHealthView
	if err := json.Unmarshal(r.body, &h); err != nil || r.status != 200 {
		t.Fatalf("health: %d %s %v", r.status, r.body, err)
	}
	d := domain.DefaultA2AConfig()
	if h.Status != "ok" || !h.Config.BlockOnError || !h.Config.EnableCode || h.Config.MaxPayloadSizeBytes != d.MaxPayloadSizeBytes ||
		h.Config.RatePerMinute != d.RatePerMinute || h.Config.IdleEvictSeconds != 300 || h.Config.DefaultAllow {
		t.Fatalf("health: %s", r.body)
	}
	for _, s := range []string{"alice", "dave", "evil", "org_a", "org_b"} {
		if strings.Contains(string(r.body), s) {
			t.Fatalf("the public health answer reveals %q: %s", s, r.body)
		}
	}
}

// TestA2AListsArePaged pins the bound of the A2A reads: a boundary of
// thousands of agents is answered a page at a time (limit, at most
// MaxListLimit, default DefaultListLimit), each page resuming after the
// last, the whole list's count on each; a bad cursor or limit is refused.
func TestA2AListsArePaged(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	ka := g.issueKey("org_a")
	const n = 2100
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := g.changeBoundary("org_a", domain.A2AOpTrust, fmt.Sprintf("agent-%05d", i), "", ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := g.do("GET", "/a2a/boundary", apiKey(ka), nil)
	var first struct {
		TrustedAgents a2aListView `json:"trusted_agents"`
	}
	if err := json.Unmarshal(r.body, &first); err != nil || r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if first.TrustedAgents.Count != n || len(first.TrustedAgents.Agents) != DefaultListLimit || first.TrustedAgents.NextAfter == nil {
		t.Fatalf("first page: count %d, %d agents, next %v", first.TrustedAgents.Count, len(first.TrustedAgents.Agents), first.TrustedAgents.NextAfter)
	}
	var all []string
	after := ""
	for pages := 0; ; pages++ {
		path := "/a2a/boundary?list=trusted_agents&limit=1000"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		r := g.do("GET", path, apiKey(ka), nil)
		var p struct {
			TrustedAgents *a2aListView `json:"trusted_agents"`
			BlockedAgents *a2aListView `json:"blocked_agents"`
		}
		if err := json.Unmarshal(r.body, &p); err != nil || r.status != 200 || p.TrustedAgents == nil || p.BlockedAgents != nil {
			t.Fatalf("page %d: %d %s", pages, r.status, r.body)
		}
		if len(p.TrustedAgents.Agents) > MaxListLimit || pages > 3 {
			t.Fatalf("page %d of %d agents", pages, len(p.TrustedAgents.Agents))
		}
		all = append(all, p.TrustedAgents.Agents...)
		if p.TrustedAgents.NextAfter == nil {
			break
		}
		after = *p.TrustedAgents.NextAfter
	}
	if len(all) != n || all[0] != "agent-00000" || all[n-1] != fmt.Sprintf("agent-%05d", n-1) {
		t.Fatalf("paged %d agents, want %d in order", len(all), n)
	}
	for _, q := range []string{"limit=1001", "limit=0", "after=%25%25", "after=" + strings.Repeat("QUFB", 200), "list=nope",
		"principal=" + url.QueryEscape("a\x01b"), "at_seq=0", "at_seq=1&at_time=2026-03-02", "limit=1&limit=2"} {
		r := g.do("GET", "/a2a/boundary?"+q, apiKey(ka), nil)
		if r.status != 400 || r.errorCode(t) != string(domain.CodeInvalidRequest) {
			t.Fatalf("?%s: %d %s, want 400 QWED-REQ-001", q, r.status, r.body)
		}
	}
}

// TestA2ATimeTravel pins the reads as of a past event: the boundary as it
// stood then, and the counters and the verdict of the event at at_seq.
func TestA2ATimeTravel(t *testing.T) {
	g := withLog(t, newTestGate(t, gateOptions{}))
	ka := g.issueKey("org_a")
	g.a2aBoundary("org_a", domain.A2AOpTrust, "alice", "", "")
	g.a2aBoundary("org_a", domain.A2AOpTrust, "bob", "", "")
	g.a2aMessage("org_a", "alice", "bob", a2a.PayloadGeneral, `{}`)
	before := g.head()
	g.a2aBoundary("org_a", domain.A2AOpBlock, "bob", "", "")
	blocked := g.a2aMessage("org_a", "alice", "bob", a2a.PayloadGeneral, `{}`)
	if blocked.Status != a2a.StatusBlocked {
		t.Fatalf("after bob was blocked: %s", blocked.Status)
	}
	r := g.do("GET", fmt.Sprintf("/a2a/boundary?at_seq=%d", before), apiKey(ka), nil)
	if r.status != 200 {
		t.Fatalf("boundary at %d: %d %s", before, r.status, r.body)
	}
	var b struct {
		AtSeq         uint64      `json:"at_seq"`
		BlockedAgents a2aListView `json:"blocked_agents"`
		TrustedAgents a2aListView `json:"trusted_agents"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil || b.AtSeq != before || b.BlockedAgents.Count != 0 || b.TrustedAgents.Count != 2 {
		t.Fatalf("boundary at %d: %s", before, r.body)
	}
	r = g.do("GET", "/a2a/boundary", apiKey(ka), nil)
	if err := json.Unmarshal(r.body, &b); err != nil || b.BlockedAgents.Count != 1 {
		t.Fatalf("boundary now: %s", r.body)
	}
	var m a2aMetricsView
	r = g.do("GET", fmt.Sprintf("/a2a/metrics?at_seq=%d", before), apiKey(ka), nil)
	if err := decodeFresh(r.body, &m); err != nil || r.status != 200 || m.Total != 1 || m.Forwarded != 1 || m.Verdict == nil ||
		m.Verdict.Status != a2a.StatusForwarded {
		t.Fatalf("metrics at %d: %d %s", before, r.status, r.body)
	}
	r = g.do("GET", fmt.Sprintf("/a2a/metrics?at_seq=%d", g.head()), apiKey(ka), nil)
	if err := decodeFresh(r.body, &m); err != nil || m.Total != 2 || m.Blocked != 1 || m.Verdict == nil || m.Verdict.Status != a2a.StatusBlocked {
		t.Fatalf("metrics at the head: %s", r.body)
	}
	kb := g.issueKey("org_b")
	r = g.do("GET", fmt.Sprintf("/a2a/metrics?at_seq=%d", before), apiKey(kb), nil)
	if err := decodeFresh(r.body, &m); err != nil || m.Total != 0 || m.Verdict != nil || strings.Contains(string(r.body), "alice") {
		t.Fatalf("org_b's metrics at %d show org_a's: %s", before, r.body)
	}
	if r := g.do("GET", fmt.Sprintf("/a2a/boundary?at_seq=%d", g.head()+5), apiKey(ka), nil); r.status != http.StatusBadRequest {
		t.Fatalf("beyond the head: %d %s", r.status, r.body)
	}
}

// FuzzParseA2AQuery: no query string panics the A2A reads' parser, and
// what it accepts is within its bounds.
func FuzzParseA2AQuery(f *testing.F) {
	for _, s := range []string{"", "principal=org_a&list=trusted_agents&limit=10", "after=YWxpY2U", "at_seq=3&sender=a",
		"at_time=2026-03-02T10:00:00Z", "after=%00", "limit=-1", "principal=%2A", "list=blocked_pairs&after=YQBi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		got, e := parseA2AQuery(q, listTrusted, listBlocked, listPairs, listConfigured)
		if e != nil {
			if e.status != 400 {
				t.Fatalf("refused with %d", e.status)
			}
			return
		}
		if got.limit < 1 || got.limit > MaxListLimit || len(got.after) > maxCursorBytes || len(got.principal) > MaxPathIDBytes ||
			(got.atSeq != 0 && got.atTime != nil) {
			t.Fatalf("accepted out of bounds: %+v", got)
		}
	})
}

// decodeFresh decodes b into a zeroed *v (json.Unmarshal keeps the
// members b lacks).
func decodeFresh[T any](b []byte, v *T) error {
	var zero T
	*v = zero
	return json.Unmarshal(b, v)
}

// TestA2AReadsFollowTheWritesOverHTTP: through the public endpoints
// alone, each A2A read reflects the write answered just before it: a
// trust, an intercepted message, an untrust.
func TestA2AReadsFollowTheWritesOverHTTP(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	ka := g.issueKey("org_a")
	for _, a := range []string{"alice", "bob"} {
		if r := g.do("POST", "/a2a/boundary/trust/"+a, apiKey(ka), nil); r.status/100 != 2 {
			t.Fatalf("trusting %s: %d %s", a, r.status, r.body)
		}
	}
	var b struct {
		TrustedAgents a2aListView `json:"trusted_agents"`
	}
	if r := g.do("GET", "/a2a/boundary", apiKey(ka), nil); decodeFresh(r.body, &b) != nil || strings.Join(b.TrustedAgents.Agents, ",") != "alice,bob" {
		t.Fatalf("boundary after two trusts: %d %s", r.status, r.body)
	}
	r := g.do("POST", "/a2a/intercept", apiKey(ka), `{"sender_agent_id":"alice","receiver_agent_id":"bob","payload_type":"general","payload":{"message":"Hello!"}}`)
	if r.status != 200 || r.json(t)["status"] != "forwarded" {
		t.Fatalf("intercept: %d %s", r.status, r.body)
	}
	var m a2aMetricsView
	if r := g.do("GET", "/a2a/metrics", apiKey(ka), nil); decodeFresh(r.body, &m) != nil || m.Forwarded != 1 || len(m.Pairs) != 1 {
		t.Fatalf("metrics after the message: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/a2a/boundary/trust/bob", apiKey(ka), nil); r.status/100 != 2 {
		t.Fatalf("untrusting bob: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/a2a/boundary", apiKey(ka), nil); decodeFresh(r.body, &b) != nil || strings.Join(b.TrustedAgents.Agents, ",") != "alice" {
		t.Fatalf("boundary after the untrust: %d %s", r.status, r.body)
	}
}

// TestA2ATimeTravelIsBoundedInFlight: a read as of a past event folds the
// log from its start, so it takes a compliance report's slot: past
// Config.MaxConcurrentReports, 503 QWED-SYS-002 with Retry-After, then
// served again once the first is done.
func TestA2ATimeTravelIsBoundedInFlight(t *testing.T) {
	var bl *blockingLog
	g := newReportGate(t, func(c *Config) {
		bl = &blockingLog{Log: c.Log, entered: make(chan struct{}, 1), release: make(chan struct{})}
		c.Log = bl
		c.MaxConcurrentReports = 1
	})
	key := g.issueKey("org_a")
	g.a2aBoundary("org_a", domain.A2AOpTrust, "alice", "", "")
	path := fmt.Sprintf("/a2a/boundary?at_seq=%d", g.head())
	t.Cleanup(bl.let)
	first := make(chan response, 1)
	go func() { first <- g.do("GET", path, apiKey(key), nil) }()
	<-bl.entered
	r := g.do("GET", path, apiKey(key), nil)
	if r.status != http.StatusServiceUnavailable || r.errorCode(t) != string(domain.CodeUnavailable) || r.header.Get("Retry-After") != "1" {
		t.Fatalf("a time-travel read past the limit: %d %v %s", r.status, r.header, r.body)
	}
	bl.let()
	if r := <-first; r.status != http.StatusOK || !strings.Contains(string(r.body), "alice") {
		t.Fatalf("the read in flight: %d %s", r.status, r.body)
	}
	if r := g.do("GET", path, apiKey(key), nil); r.status != http.StatusOK {
		t.Fatalf("a read after the first: %d %s", r.status, r.body)
	}
}
