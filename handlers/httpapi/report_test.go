package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/schemas/openapi"
	"github.com/agentgate/agentgate/streams"
)

// newReportGate is newTestGate with the log wired to the compliance
// report endpoint.
func newReportGate(t *testing.T, opts ...func(*Config)) *testGate {
	t.Helper()
	clock := gatetest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: testAdminKey, Clock: clock.Now, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Worker.Run(ctx) }()
	reg := prometheus.NewRegistry()
	cfg := Config{Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash, JWKS: g.Keyring.JWKS,
		Registry: reg, Logger: logger, Clock: clock.Now, Log: g.Log,
		SignTreeHead: func(c attest.TreeHeadClaims) (string, error) { return g.Keyring.SignTreeHead(g.NodeID, c) }}
	for _, o := range opts {
		o(&cfg)
	}
	h := New(cfg)
	srv := httptest.NewServer(openapi.Hook(t, h))
	tg := &testGate{t: t, gate: g, srv: srv, client: srv.Client(), clock: clock, reg: reg}
	tg.stop = func() {
		srv.Close()
		cancel()
		<-done
		g.Close()
	}
	t.Cleanup(tg.stop)
	return tg
}

// QWED-Agent spec v1.1 §7.3: GET /agents/{id}/compliance-report in the three formats,
// for the owning principal (another principal is refused); the JSON is a
// bundle that verifies offline; a bad format is QWED-REQ-001.
func TestSeed000_7_3_ComplianceReport(t *testing.T) {
	g := newReportGate(t)
	key := g.issueKey("org_a")
	other := g.issueKey("org_b")
	a := g.register(key, "org_a", 2, map[string]any{"max_daily_cost_usd": 10})
	for i, typ := range []string{"calculate", "execute_sql", "api_call"} {
		g.clock.Advance(time.Minute)
		if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq(typ, "1+1", "c1", i+1)); r.status >= 500 {
			t.Fatalf("verify: %d %s", r.status, r.body)
		}
	}
	path := "/agents/" + a.id + "/compliance-report?from=2026-03-01&to=2026-03-03"
	r := g.do("GET", path+"&format=json", apiKey(key), nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("json: %d %s", r.status, r.body)
	}
	b, err := report.ReadBundle(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Report.Summary; s.TotalActions != 3 || s.Approved != 2 || s.Denied != 1 {
		t.Fatalf("summary %+v", s)
	}
	chk, err := report.VerifyBundle(context.Background(), b, report.VerifyOptions{})
	if err != nil || !chk.OK() {
		t.Fatalf("bundle: %v %+v", err, chk)
	}
	r = g.do("GET", path+"&format=csv", apiKey(key), nil)
	if r.status != http.StatusOK || !strings.HasPrefix(string(r.body), "section,index,field,type,value") ||
		!strings.Contains(string(r.body), "summary,,total_actions,number,3") {
		t.Fatalf("csv: %d %s", r.status, r.body)
	}
	r = g.do("GET", path+"&format=pdf", apiKey(testAdminKey), nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) ||
		!strings.Contains(r.header.Get("Content-Disposition"), "compliance-"+a.id+"-20260301-20260303.pdf") {
		t.Fatalf("pdf: %d %v", r.status, r.header)
	}
	again := g.do("GET", path+"&format=pdf", apiKey(key), nil)
	if !bytes.Equal(again.body, r.body) {
		t.Fatal("two PDF reports of the same period differ")
	}
	if r := g.do("GET", path, apiKey(other), nil); r.status != http.StatusForbidden || r.errorCode(t) != string(domain.CodeForbidden) {
		t.Fatalf("other principal: %d %s", r.status, r.body)
	}
	if r := g.do("GET", path+"&format=docx", apiKey(key), nil); r.status != http.StatusBadRequest || r.errorCode(t) != string(domain.CodeInvalidRequest) {
		t.Fatalf("bad format: %d %s", r.status, r.body)
	}
	if r := g.do("GET", path, nil, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d %s", r.status, r.body)
	}
}

// Issue 11 item 3: principal P's bundle of its agent holds nothing of
// principal Q's events (a marker in Q's queries is absent) and verifies.
func TestComplianceBundleHoldsNoOtherTenant(t *testing.T) {
	const marker = "Q-TENANT-MARKER-41c7e2"
	g := newReportGate(t)
	keyP, keyQ := g.issueKey("org_p"), g.issueKey("org_q")
	a := g.register(keyP, "org_p", 2, nil)
	q := g.register(keyQ, "org_q", 2, nil)
	for i := range 3 {
		g.clock.Advance(time.Minute)
		if r := g.do("POST", "/agents/"+q.id+"/verify", bearerH(q.token), verifyReq("calculate", marker+"+"+strconv.Itoa(i), "cq", i+1)); r.status != 200 {
			t.Fatalf("verify q: %d %s", r.status, r.body)
		}
		if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1+"+strconv.Itoa(i), "ca", i+1)); r.status != 200 {
			t.Fatalf("verify a: %d %s", r.status, r.body)
		}
	}
	r := g.do("GET", "/agents/"+a.id+"/compliance-report?from=2026-03-01&to=2026-03-03", apiKey(keyP), nil)
	if r.status != http.StatusOK {
		t.Fatalf("bundle: %d %s", r.status, r.body)
	}
	for _, s := range []string{marker, q.id, "org_q"} {
		if bytes.Contains(r.body, []byte(s)) {
			t.Errorf("P's bundle holds %q", s)
		}
	}
	b, err := report.ReadBundle(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	chk, err := report.VerifyBundle(context.Background(), b, report.VerifyOptions{})
	if err != nil || !chk.OK() || chk.Events != 4 {
		t.Fatalf("bundle: %v %+v", err, chk)
	}
}

// blockingLog is a log whose reads wait until release is closed, telling
// entered when one starts.
type blockingLog struct {
	streams.Log
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// let releases the reads held, once. A test registers it as a cleanup
// after its server's, so that one that fails while a read is held lets it
// go rather than leaving the server's close waiting on it until the
// binary's timeout.
func (l *blockingLog) let() { l.once.Do(func() { close(l.release) }) }

func (l *blockingLog) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
	select {
	case l.entered <- struct{}{}:
	default:
	}
	<-l.release
	return l.Log.Read(ctx, from, fn)
}

// Issue 11 item 3: past Config.MaxConcurrentReports reports being
// rendered, another is refused at once with 503 QWED-SYS-002 and
// Retry-After; once the first is done, reports are served again.
func TestComplianceReportsAreBoundedInFlight(t *testing.T) {
	var bl *blockingLog
	g := newReportGate(t, func(c *Config) {
		bl = &blockingLog{Log: c.Log, entered: make(chan struct{}, 1), release: make(chan struct{})}
		c.Log = bl
		c.MaxConcurrentReports = 1
	})
	t.Cleanup(bl.let)
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	path := "/agents/" + a.id + "/compliance-report?format=csv"
	first := make(chan response, 1)
	go func() { first <- g.do("GET", path, apiKey(key), nil) }()
	<-bl.entered
	r := g.do("GET", path, apiKey(key), nil)
	if r.status != http.StatusServiceUnavailable || r.errorCode(t) != string(domain.CodeUnavailable) || r.header.Get("Retry-After") != "1" {
		t.Fatalf("a report past the limit: %d %v %s", r.status, r.header, r.body)
	}
	bl.let()
	if r := <-first; r.status != http.StatusOK {
		t.Fatalf("the report in flight: %d %s", r.status, r.body)
	}
	if r := g.do("GET", path, apiKey(key), nil); r.status != http.StatusOK {
		t.Fatalf("a report after the first: %d %s", r.status, r.body)
	}
}

// Issue 11 item 3: one principal's reports never take every render slot:
// with two, a tenant's second report in flight is refused while another
// tenant's is served.
func TestComplianceReportSlotsAreSharedAcrossTenants(t *testing.T) {
	var bl *blockingLog
	g := newReportGate(t, func(c *Config) {
		bl = &blockingLog{Log: c.Log, entered: make(chan struct{}, 2), release: make(chan struct{})}
		c.Log = bl
		c.MaxConcurrentReports = 2
	})
	t.Cleanup(bl.let)
	keyA, keyB := g.issueKey("org_a"), g.issueKey("org_b")
	a1, a2 := g.register(keyA, "org_a", 2, nil), g.register(keyA, "org_a", 2, nil)
	b := g.register(keyB, "org_b", 2, nil)
	report := func(id string) string { return "/agents/" + id + "/compliance-report?format=csv" }
	first := make(chan response, 1)
	go func() { first <- g.do("GET", report(a1.id), apiKey(keyA), nil) }()
	<-bl.entered
	r := g.do("GET", report(a2.id), apiKey(keyA), nil)
	if r.status != http.StatusServiceUnavailable || r.errorCode(t) != string(domain.CodeUnavailable) ||
		!strings.Contains(string(r.body), "concurrent_reports_per_principal") {
		t.Fatalf("org_a's second report in flight: %d %s", r.status, r.body)
	}
	second := make(chan response, 1)
	go func() { second <- g.do("GET", report(b.id), apiKey(keyB), nil) }()
	<-bl.entered // org_b's report was admitted: it reads the log
	bl.let()
	for _, ch := range []chan response{first, second} {
		if r := <-ch; r.status != http.StatusOK {
			t.Fatalf("a report in flight: %d %s", r.status, r.body)
		}
	}
}

// Issue 17 item 10: without from and to the report covers the agent's
// days, as agentgate export's does (it was the last 30 days, export's the
// whole log): from the day of its registration to the end of the day of
// its last action.
func TestComplianceReportDefaultPeriodIsTheAgentsDays(t *testing.T) {
	g := newReportGate(t)
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	g.clock.Advance(26 * time.Hour) // 2026-03-03
	if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), verifyReq("calculate", "1+1", "c1", 1)); r.status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	g.clock.Advance(72 * time.Hour) // later reads do not move the period
	r := g.do("GET", "/agents/"+a.id+"/compliance-report", apiKey(key), nil)
	if r.status != http.StatusOK {
		t.Fatalf("report: %d %s", r.status, r.body)
	}
	b, err := report.ReadBundle(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	p := b.Report.Period
	if !p.From.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) || !p.To.Equal(time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)) || b.Report.Summary.TotalActions != 1 {
		t.Fatalf("default period %v to %v, %d actions; want 2026-03-02 to 2026-03-04, 1 action", p.From, p.To, b.Report.Summary.TotalActions)
	}
	if !strings.Contains(r.header.Get("Content-Disposition"), "compliance-"+a.id+"-20260302-20260304.json") {
		t.Fatalf("Content-Disposition %q", r.header.Get("Content-Disposition"))
	}
	if chk, err := report.VerifyBundle(context.Background(), b, report.VerifyOptions{}); err != nil || !chk.OK() {
		t.Fatalf("bundle: %v %+v", err, chk)
	}
}
