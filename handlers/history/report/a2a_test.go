package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/projections"
)

// a2aMarker is in the payload of the other tenants' messages sent as the
// reported agent: it must not reach the agent's report or bundle.
const a2aMarker = "other-tenant-a2a-payload"

// seedA2A records agent A's A2A messages under its principal's boundary
// (forwarded, blocked by finance_guard, code_guard and the boundary, rate
// limited), the same sender id relayed by another principal and by the
// admin, and one message after the period.
func seedA2A(t *testing.T) (*history, *report.A2A) {
	t.Helper()
	dir := t.TempDir()
	at := day1.Add(8 * time.Hour)
	g, must := startSeedGate(t, dir, at)
	a := must(seedlog.Register("a", "org_p", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	n := 0
	cmd := func(principal string, c *domain.Command) *domain.Event {
		n++
		c.Principal, c.Request = principal, domain.RequestID{Source: "a2a-report", ID: itoa(n)}
		return must(c)
	}
	boundary := func(principal, op, agent, sender, receiver string) {
		ev := cmd(principal, &domain.Command{Type: domain.CmdA2ABoundary,
			A2ABoundary: &domain.A2ABoundaryChange{Op: op, Agent: agent, Sender: sender, Receiver: receiver}})
		if ev.Type != domain.EvA2ABoundaryChanged {
			t.Fatalf("boundary change refused: %+v", ev.Error)
		}
	}
	msg := func(principal, receiver string, pt a2a.PayloadType, payload string) a2a.Status {
		ev := cmd(principal, &domain.Command{Type: domain.CmdA2AMessage,
			A2A: &a2a.Message{SenderAgentID: a, ReceiverAgentID: receiver, PayloadType: pt, Payload: json.RawMessage(payload)}})
		if ev.A2AVerdict == nil {
			t.Fatalf("message refused: %+v", ev.Error)
		}
		return ev.A2AVerdict.Status
	}
	for _, x := range []string{a, "r1", "r2"} {
		boundary("org_p", domain.A2AOpTrust, x, "", "")
		boundary("org_q", domain.A2AOpTrust, x, "", "")
		boundary(domain.AdminPrincipal, domain.A2AOpTrust, x, "", "")
	}
	boundary("org_p", domain.A2AOpBlockPair, "", a, "r3")
	got := map[a2a.Status]int{}
	got[msg("org_p", "r1", a2a.PayloadGeneral, `{"m":1}`)]++
	got[msg("org_p", "r1", a2a.PayloadFinancial, `{"data":{"claimed_total":999.99,"line_items":[{"description":"w","amount":50,"quantity":2}]}}`)]++
	got[msg("org_p", "r2", a2a.PayloadCode, `{"code":"import os; os.system('rm -rf /')"}`)]++
	got[msg("org_p", "r3", a2a.PayloadGeneral, `{}`)]++
	msg("org_q", "r1", a2a.PayloadGeneral, `{"m":"`+a2aMarker+`"}`)
	msg(domain.AdminPrincipal, "r1", a2a.PayloadGeneral, `{"m":"`+a2aMarker+`"}`)
	for got[a2a.StatusRateLimited] == 0 && n < 200 {
		got[msg("org_p", "r2", a2a.PayloadGeneral, `{}`)]++
	}
	if got[a2a.StatusRateLimited] != 1 || got[a2a.StatusBlocked] != 3 {
		t.Fatalf("verdicts %v: want 3 blocked and one rate limited", got)
	}
	g.At(day4)
	msg("org_p", "r1", a2a.PayloadGeneral, `{}`)
	h := &history{dir: dir, a: a, jwks: g.Keyring.JWKS()}
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	h.sign = signerOf(t, dir)
	fwd := int64(got[a2a.StatusForwarded])
	want := &report.A2A{
		StatusCounts: projections.StatusCounts{Forwarded: fwd, Blocked: 3, RateLimited: 1},
		Total:        fwd + 4,
		ByEngine: []report.A2AEngine{
			{Engine: a2a.EngineCode, StatusCounts: projections.StatusCounts{Blocked: 1}},
			{Engine: a2a.EngineFinance, StatusCounts: projections.StatusCounts{Blocked: 1}},
			{Engine: a2a.EnginePassthrough, StatusCounts: projections.StatusCounts{Forwarded: fwd}},
			{Engine: a2a.EngineTrust, StatusCounts: projections.StatusCounts{Blocked: 1, RateLimited: 1}},
		},
		Pairs: []projections.A2APair{
			{Sender: a, Receiver: "r1", StatusCounts: projections.StatusCounts{Forwarded: 1, Blocked: 1}},
			{Sender: a, Receiver: "r2", StatusCounts: projections.StatusCounts{Forwarded: fwd - 1, Blocked: 1, RateLimited: 1}},
			{Sender: a, Receiver: "r3", StatusCounts: projections.StatusCounts{Blocked: 1}},
		},
	}
	return h, want
}

// Issue 13 item 10: the compliance report counts the agent's A2A verdicts
// under its principal's boundary, forwarded against blocked, rate limited
// and errors, per engine and per pair, in JSON, CSV and PDF, and nothing
// another principal (or the admin) relayed as the same sender.
func TestComplianceReportCountsA2AVerdicts(t *testing.T) {
	h, want := seedA2A(t)
	rep := build(t, h.dir, report.Options{AgentID: h.a, From: day1, To: day2})
	gotJSON, _ := json.Marshal(rep.A2A)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("A2A section:\n got %s\nwant %s", gotJSON, wantJSON)
	}
	js, cs, pdf := renderAll(t, rep)
	for _, s := range []string{`"a2a": {`, `"rate_limited": 1`, `"engine": "finance_guard"`} {
		if !bytes.Contains(js, []byte(s)) {
			t.Errorf("the JSON lacks %s", s)
		}
	}
	for _, s := range []string{"a2a,,blocked,number,3", "a2a,,by_engine[1].engine,string,finance_guard", "a2a,,pairs[2].receiver,string,r3"} {
		if !bytes.Contains(cs, []byte(s)) {
			t.Errorf("the CSV lacks %s", s)
		}
	}
	text := pdfText(t, pdf, filepath.Join(t.TempDir(), "r.pdf"))
	for _, s := range []string{"Agent-to-agent messages (QWED A2A)", "Rate limited", "finance_guard", "code_guard", "trust_boundary", "r3"} {
		if !strings.Contains(text, s) {
			t.Errorf("the PDF text lacks %q", s)
		}
	}
	if t.Failed() {
		t.Logf("PDF text:\n%s", text)
	}

	// Without A2A messages in the period, no section (and the PDF says so).
	quiet := build(t, h.dir, report.Options{AgentID: h.a, From: day2, To: day4})
	if quiet.A2A != nil {
		t.Fatalf("A2A section of a period without messages: %+v", quiet.A2A)
	}
}

// Issue 13 item 10: the bundle holds the agent's verdicts (and only its
// principal's), verifies offline, and fails when the A2A figures are
// edited.
func TestComplianceBundleHoldsTheAgentsA2AVerdicts(t *testing.T) {
	h, _ := seedA2A(t)
	raw := writeBundle(t, h, report.Options{AgentID: h.a, From: day1, To: day2})
	if bytes.Contains(raw, []byte(a2aMarker)) {
		t.Fatal("the bundle holds a message another principal relayed")
	}
	if !bytes.Contains(raw, []byte(`a2a.verdict`)) {
		t.Fatal("the bundle holds no A2A verdict")
	}
	chk := verifyBundle(t, raw)
	if !chk.OK() {
		t.Fatalf("bundle: %+v", chk)
	}
	edited := bytes.Replace(raw, []byte(`"rate_limited": 1`), []byte(`"rate_limited": 2`), 1)
	if bytes.Equal(edited, raw) {
		t.Fatal("the bundle's report has no rate_limited count to edit")
	}
	if chk := verifyBundle(t, edited); chk.OK() {
		t.Fatal("a bundle whose A2A figures were edited verified")
	}
}
