package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog/snapshot"
)

var (
	day1 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day2 = day1.Add(24 * time.Hour)
	day4 = day1.Add(72 * time.Hour)
)

type history struct {
	dir      string
	a, b     string
	activity projections.Summary
	jwks     []byte
	sign     report.SignTree
}

// signerOf returns the tree head signer of the keys in dir.
func signerOf(t testing.TB, dir string) report.SignTree {
	t.Helper()
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	return func(c attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead("node_report_test", c) }
}

// startSeedGate starts a seedlog gate in dir with its clock at at, and
// returns it with a submit that fails the test on an error.
func startSeedGate(t testing.TB, dir string, at time.Time) (*seedlog.Gate, func(*domain.Command) *domain.Event) {
	t.Helper()
	g, err := seedlog.Start(dir, at)
	if err != nil {
		t.Fatal(err)
	}
	return g, func(cmd *domain.Command) *domain.Event {
		t.Helper()
		ev, err := g.Submit(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
}

// seed records two days of agent A (org_1, trust 2, $100/day) with every
// kind of outcome, interleaved with agent B, and a day after the period.
func seed(t testing.TB) *history {
	t.Helper()
	h := &history{dir: t.TempDir()}
	g, must := startSeedGate(t, h.dir, day1.Add(8*time.Hour))
	at := day1.Add(8 * time.Hour)
	next := func() { at = at.Add(7 * time.Minute); g.At(at) }
	h.a = must(seedlog.Register("a", "org_1", domain.TrustAutonomous, domain.Limits{MaxDailyCost: seedlog.USD(100), MaxDailyTokens: 100_000})).Registered.AgentID
	h.b = must(seedlog.Register("b", "org_1", domain.TrustAutonomous, domain.Limits{})).Registered.AgentID
	step := 0
	verify := func(agent, action string, cost float64, attest bool) *domain.Event {
		next()
		step++
		cmd := seedlog.Verify(agent, "r"+itoa(step), "conv", step, action, seedlog.USD(cost))
		cmd.Verify.Options.RequireAttestation = attest
		return must(cmd)
	}
	// Day 1: approved, approved with an attestation, denied (critical SQL),
	// budget exceeded; an execution logged at a different cost.
	ok := verify(h.a, "calculate", 10, false)
	verify(h.b, "api_call", 1, false)
	verify(h.a, "calculate", 20, true)
	verify(h.a, "execute_sql", 1, false)
	verify(h.a, "calculate", 80, false)
	next()
	must(seedlog.Execution(h.a, "x1", ok.Decided.ActionID, seedlog.USD(4), 50))
	// Day 2: trust lowered to 1, an api_call is PENDING, its approval is
	// denied (its reservation released); a low-risk action is approved.
	at = day2.Add(9 * time.Hour)
	next()
	must(seedlog.SetTrust(h.a, "t1", domain.TrustSupervised))
	pend := verify(h.a, "api_call", 30, false)
	verify(h.b, "api_call", 1, false)
	next()
	must(seedlog.Resolve("res1", pend.Decided.Approval.ID, false))
	verify(h.a, "calculate", 5, false)
	// Day 4: after the period.
	at = day4.Add(time.Hour)
	verify(h.a, "calculate", 1, false)
	page, err := g.Store.Activity(h.a, day1, day1.Add(48*time.Hour), 0, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.activity = page.Summary
	h.jwks = g.Keyring.JWKS()
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	h.sign = signerOf(t, h.dir)
	return h
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func build(t *testing.T, dir string, opts report.Options) *report.Report {
	t.Helper()
	snap, err := snapshot.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	rep, err := report.Build(context.Background(), snap.Log, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// QWED-Agent spec v1.1 §7.3 / issue 5: the report's figures, trust history,
// exceptions and attestations are those of the log, and its summary is the
// projections' activity summary of the same period (QWED-Agent spec v1.1 §7.2).
func TestComplianceReportFiguresSeed000_7_3(t *testing.T) {
	h := seed(t)
	rep := build(t, h.dir, report.Options{AgentID: h.a, From: day1, To: day1.Add(48 * time.Hour)})
	s := rep.Summary
	want := report.Summary{Summary: projections.Summary{TotalActions: 6, Approved: 3, Denied: 1, Pending: 1, BudgetExceeded: 1,
		TotalCostUSD: seedlog.USD(4 + 20 + 5), TotalTokens: 50 + 100 + 100}, DenialRate: "0.3333"}
	if s != want {
		t.Fatalf("summary %+v\nwant    %+v", s, want)
	}
	// The report counts decisions as they were made; the activity summary
	// counts a PENDING action by its approval's outcome once resolved (issue
	// 17 item 11). Resolved as the exceptions say, the two agree.
	live := s.Summary
	for _, x := range rep.Exceptions {
		if x.Decision == domain.Pending {
			live.Resolve(x.Approval)
		}
	}
	if live != h.activity {
		t.Fatalf("report summary %+v, approvals resolved %+v, differs from the projections' %+v", s.Summary, live, h.activity)
	}
	if len(rep.Days) != 2 || rep.Days[0].Date != "2026-11-01" || rep.Days[0].TotalActions != 4 || rep.Days[1].TotalActions != 2 {
		t.Fatalf("days %+v", rep.Days)
	}
	if rep.Days[0].DenialRate != "0.5000" || rep.Days[1].DenialRate != "0.0000" {
		t.Fatalf("denial rates %s %s", rep.Days[0].DenialRate, rep.Days[1].DenialRate)
	}
	// Day 1's budget at its end: $10 + $20 reserved, the execution
	// corrected $10 to $4: $24 of $100.
	if b := rep.Days[0].Budget; b.CostUSD != seedlog.USD(24) || b.MaxDailyCostUSD != seedlog.USD(100) || b.MaxTokens != 100_000 || b.Requests != 2 {
		t.Fatalf("day 1 budget %+v", b)
	}
	if rep.TrustAtStart != domain.TrustAutonomous || len(rep.Trust) != 1 || rep.Trust[0].From != 2 || rep.Trust[0].To != 1 {
		t.Fatalf("trust %d %+v", rep.TrustAtStart, rep.Trust)
	}
	codes := []string{}
	for _, x := range rep.Exceptions {
		codes = append(codes, string(x.Decision)+" "+string(x.Code)+" "+string(x.Approval))
	}
	wantCodes := []string{"DENIED QWED-AGENT-TRUST-001 ", "BUDGET_EXCEEDED QWED-AGENT-BUDGET-001 ", "PENDING  denied"}
	if !reflect.DeepEqual(codes, wantCodes) {
		t.Fatalf("exceptions %q, want %q", codes, wantCodes)
	}
	if len(rep.Attestations) != 1 || rep.Attestations[0].KeyID == "" || !strings.HasPrefix(rep.Attestations[0].Token, "ey") {
		t.Fatalf("attestations %+v", rep.Attestations)
	}
	if rep.Agent.PrincipalID != "org_1" || rep.Agent.Name != "bot-a" {
		t.Fatalf("agent %+v", rep.Agent)
	}
	// Produced at the checkpoint that covers the period: it signs the
	// position the report names.
	c := rep.ProducedAt.Checkpoint
	if c == nil || c.CoversSeq != rep.ProducedAt.Seq || c.Head != rep.ProducedAt.Hash || c.EventSeq != c.CoversSeq+1 || c.KeyID == "" {
		t.Fatalf("produced at %+v checkpoint %+v", rep.ProducedAt, c)
	}
	if !rep.ProducedAt.Time.Before(day4) {
		t.Fatalf("the report reads past the period's covering checkpoint: %+v", rep.ProducedAt)
	}
}

func renderAll(t *testing.T, rep *report.Report) (js, cs, pdf []byte) {
	t.Helper()
	var a, b, c bytes.Buffer
	if err := report.WriteJSON(&a, rep); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	if err := report.WritePDF(&c, rep); err != nil {
		t.Fatal(err)
	}
	return a.Bytes(), b.Bytes(), c.Bytes()
}

// Issue 5: the same input gives byte-identical JSON, CSV and PDF.
func TestComplianceReportByteIdentical(t *testing.T) {
	h := seed(t)
	opts := report.Options{AgentID: h.a, From: day1, To: day1.Add(48 * time.Hour)}
	j1, c1, p1 := renderAll(t, build(t, h.dir, opts))
	j2, c2, p2 := renderAll(t, build(t, h.dir, opts))
	if !bytes.Equal(j1, j2) || !bytes.Equal(c1, c2) {
		t.Fatal("JSON or CSV differ between two exports")
	}
	if !bytes.Equal(p1, p2) {
		t.Fatal("PDF differs between two exports")
	}
	if !bytes.HasPrefix(p1, []byte("%PDF-")) || !bytes.Contains(p1, []byte("/CreationDate (D:2026110")) {
		t.Fatalf("PDF header or fixed creation date missing")
	}
}

// Issue 5: JSON and CSV hold the same data.
func TestComplianceReportCSVHoldsTheJSON(t *testing.T) {
	h := seed(t)
	js, cs, _ := renderAll(t, build(t, h.dir, report.Options{AgentID: h.a, From: day1, To: day1.Add(48 * time.Hour)}))
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var fromJSON map[string]any
	if err := dec.Decode(&fromJSON); err != nil {
		t.Fatal(err)
	}
	fromCSV, err := report.ParseCSV(bytes.NewReader(cs))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, fromCSV) {
		a, _ := json.Marshal(fromJSON)
		b, _ := json.Marshal(fromCSV)
		t.Fatalf("CSV differs from JSON:\n%s\n%s", a, b)
	}
	if !bytes.Contains(cs, []byte("exceptions,0,code,string,QWED-AGENT-TRUST-001")) {
		t.Fatalf("CSV lacks the first exception's code:\n%s", cs)
	}
}

// Issue 5: the PDF is read back with poppler (pdftotext for the text,
// pdftoppm for the rendered pages, whose chart page shows the bars).
func TestComplianceReportPDFReadsBack(t *testing.T) {
	for _, tool := range []string{"pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (.ci/run installs poppler-utils): %v", tool, err)
		}
	}
	h := seed(t)
	rep := build(t, h.dir, report.Options{AgentID: h.a, From: day1, To: day1.Add(48 * time.Hour)})
	_, _, pdf := renderAll(t, rep)
	dir := t.TempDir()
	file := filepath.Join(dir, "r.pdf")
	text := pdfText(t, pdf, file)
	for _, s := range []string{
		"Compliance report", h.a, "org_1", "bot-a", "2026-11-01 00:00:00Z", "2026-11-03 00:00:00Z",
		"Signed checkpoint", "covers seq " + itoa(int(rep.ProducedAt.Seq)), rep.ProducedAt.Hash,
		"Decisions per day", "Denial rate per day", "Trust-level history", "1 (supervised)",
		"Budget usage against limits", "24 / 100 (24%)", "Denied and pending actions", "QWED-AGENT-TRUST-001",
		"QWED-AGENT-BUDGET-001", "Attestations", rep.Attestations[0].KeyID, "0.3333",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the PDF text lacks %q", s)
		}
	}
	if t.Failed() {
		t.Logf("PDF text:\n%s", text)
	}
	if out, err := exec.Command("pdftoppm", "-r", "50", "-png", file, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "page-*.png"))
	if len(pages) < 4 {
		t.Fatalf("%d pages rendered, want at least 4", len(pages))
	}
	// Page 2 holds the charts: the approved bars are drawn in sea green.
	f, err := os.Open(pages[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := countNear(img, 46, 139, 87); n < 20 {
		t.Fatalf("the chart page shows %d green pixels: no approved bars", n)
	}
}

// pdfText writes pdf to file and returns its text as pdftotext -layout
// reads it.
func pdfText(t *testing.T, pdf []byte, file string) string {
	t.Helper()
	if err := os.WriteFile(file, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", file, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(out)
}

func countNear(img image.Image, r, g, b int) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if abs(int(cr>>8)-r) < 24 && abs(int(cg>>8)-g) < 24 && abs(int(cb>>8)-b) < 24 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func writeBundle(t testing.TB, h *history, opts report.Options) []byte {
	t.Helper()
	snap, err := snapshot.Open(h.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var b bytes.Buffer
	if _, err := report.WriteBundle(context.Background(), &b, snap.Log, opts, h.jwks, h.sign); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func verifyBundle(t *testing.T, b []byte) *report.BundleCheck {
	t.Helper()
	bd, err := report.ReadBundle(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	chk, err := report.VerifyBundle(context.Background(), bd, report.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return chk
}

// Issue 5 / 11: the JSON export is a self-contained bundle that verifies
// offline, and fails on a one-byte edit of an event, the tree head's
// signature, a proof or a report figure.
func TestComplianceBundleVerifiesAndDetectsEdits(t *testing.T) {
	h := seed(t)
	// Day 2 alone, and the whole history: both hold every event of A up
	// to the position, so every member is rechecked.
	b := writeBundle(t, h, report.Options{AgentID: h.a, From: day2, To: day2.Add(24 * time.Hour)})
	chk := verifyBundle(t, b)
	if !chk.OK() || chk.Signed == 0 || chk.Events < 10 || chk.Attestations != 1 {
		t.Fatalf("intact bundle: %+v", chk)
	}
	full := writeBundle(t, h, report.Options{AgentID: h.a, From: day1, To: day1.Add(48 * time.Hour)})
	if chk := verifyBundle(t, full); !chk.OK() {
		t.Fatalf("full bundle: %+v", chk)
	}
	edits := map[string]func([]byte) []byte{
		"an event's decision": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`\"decision\":\"APPROVED\"`), []byte(`\"decision\":\"APPROVEE\"`), 1)
		},
		"the tree head's signature": func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"signature":"`)) + len(`"signature":"`) + 60
			return flip(b, i)
		},
		"a proof's hash": func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"proof":["`)) + len(`"proof":["`) + 10
			return flip(b, i)
		},
		"the report's approved count": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"approved": 1,`), []byte(`"approved": 2,`), 1)
		},
		"the produced-at hash": func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"hash": "`)) + len(`"hash": "`)
			return flip(b, i)
		},
	}
	for name, edit := range edits {
		e := edit(bytes.Clone(b))
		if d := diffBytes(b, e); d != 1 {
			t.Fatalf("%s: the edit changed %d bytes", name, d)
		}
		if chk := verifyBundle(t, e); chk.OK() {
			t.Errorf("%s: the edited bundle verified", name)
		}
	}
}

// flip changes the byte at i to another of the same class.
func flip(b []byte, i int) []byte {
	switch {
	case b[i] >= '0' && b[i] <= '8', b[i] >= 'a' && b[i] <= 'y', b[i] >= 'A' && b[i] <= 'Y':
		b[i]++
	default:
		b[i]--
	}
	return b
}

func diffBytes(a, b []byte) int {
	if len(a) != len(b) {
		return -1
	}
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// The bundle's event strings decode to the exact payload bytes, whatever
// they hold.
func TestBundleStringsAreByteExact(t *testing.T) {
	h := seed(t)
	b := writeBundle(t, h, report.Options{AgentID: h.a, From: day1, To: day4})
	bd, err := report.ReadBundle(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Open(h.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	stored := map[uint64]string{}
	err = snap.Log.Read(context.Background(), 1, func(r streams.Record) error {
		stored[r.Seq] = string(r.Payload)
		return nil
	})
	if err != nil || len(bd.Events) < 10 {
		t.Fatalf("%d events: %v", len(bd.Events), err)
	}
	for _, e := range bd.Events {
		if stored[e.Seq] != e.Event {
			t.Errorf("seq %d differs in the bundle", e.Seq)
		}
	}
}

// tenantMarker is in every request of principal Q's agent and in a
// refused request that names P's agent: no byte of it may reach P's
// bundle.
const tenantMarker = "Q-SECRET-7f3a9c-do-not-disclose"

// Issue 11 item 3: a bundle for agent A of principal P holds A's events
// and nothing of principal Q's: not Q's decisions, not the
// approvals.expired event that expired A's and Q's approvals together,
// not a refused request naming A that Q sent. It verifies, reports A's
// expired approval as expired (derived from A's events), and dropping,
// altering or adding an event, or substituting a hash in a proof, is
// detected.
func TestComplianceBundleIsTenantScoped(t *testing.T) {
	dir := t.TempDir()
	at := day1.Add(8 * time.Hour)
	g, must := startSeedGate(t, dir, at)
	next := func() { at = at.Add(time.Minute); g.At(at) }
	a := must(seedlog.Register("a", "org_p", domain.TrustSupervised, domain.Limits{})).Registered.AgentID
	q := must(seedlog.Register("q", "org_q", domain.TrustSupervised, domain.Limits{})).Registered.AgentID
	secret := func(agent, id string, step int, action string) *domain.Command {
		cmd := seedlog.Verify(agent, id, "conv", step, action, seedlog.USD(1))
		cmd.Verify.Action.Query = tenantMarker + " " + id
		return cmd
	}
	next()
	must(seedlog.Verify(a, "a1", "conv", 1, "calculate", seedlog.USD(1)))
	next()
	pendA := must(seedlog.Verify(a, "a2", "conv", 2, "api_call", seedlog.USD(2)))
	next()
	pendQ := must(secret(q, "q1", 1, "api_call"))
	if pendA.Decided.Decision != domain.Pending || pendQ.Decided.Decision != domain.Pending {
		t.Fatalf("want two PENDING decisions, got %s and %s", pendA.Decided.Decision, pendQ.Decided.Decision)
	}
	next()
	forged := secret(a, "forged", 3, "calculate")
	forged.TokenHash = "not-the-token"
	if ev := must(forged); ev.Type != domain.EvCommandRejected || ev.AgentID != a {
		t.Fatalf("a wrong token is recorded as %s of %q", ev.Type, ev.AgentID)
	}
	// Both approvals expire in one tick.
	at = at.Add(48 * time.Hour)
	g.At(at)
	if ev := must(&domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}}); ev.Expired == nil || len(ev.Expired.Approvals) != 2 {
		t.Fatalf("the tick expired %+v", ev.Expired)
	}
	for i := range 3 {
		next()
		must(secret(q, "q"+itoa(i+2), i+2, "calculate"))
	}
	next()
	must(seedlog.Verify(a, "a3", "conv", 3, "calculate", seedlog.USD(1)))
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	h := &history{dir: dir, a: a, sign: signerOf(t, dir)}
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	h.jwks = kr.JWKS()
	opts := report.Options{AgentID: a, From: day1, To: day4}
	raw := writeBundle(t, h, opts)
	for _, forbidden := range []string{tenantMarker, q, "org_q", string(domain.EvApprovalsExpired), string(domain.EvCommandRejected)} {
		if bytes.Contains(raw, []byte(forbidden)) {
			t.Errorf("the bundle of %s holds %q", a, forbidden)
		}
	}
	chk := verifyBundle(t, raw)
	if !chk.OK() || chk.Events != 4 || chk.Unsigned != 0 {
		t.Fatalf("bundle: %+v", chk)
	}
	bd, err := report.ReadBundle(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if x := bd.Report.Exceptions; len(x) != 1 || x[0].ActionID != pendA.Decided.ActionID || x[0].Approval != domain.ApprovalExpired {
		t.Fatalf("exceptions %+v, want A's PENDING action, expired", x)
	}
	if s := bd.Report.Summary; s.TotalActions != 3 || s.Pending != 1 || s.TotalCostUSD != seedlog.USD(2) {
		t.Fatalf("summary %+v: the expired reservation must be released", s)
	}
	// The report of the full log is the bundle's.
	if rep := build(t, dir, opts); !reflect.DeepEqual(rep, bd.Report) {
		t.Fatalf("the report differs from the bundle's:\n%+v\n%+v", rep, bd.Report)
	}

	tamper := map[string]func(b *report.Bundle){
		"an own event dropped": func(b *report.Bundle) {
			b.Events = append(b.Events[:2:2], b.Events[3:]...)
		},
		"the last own event dropped": func(b *report.Bundle) {
			b.Events = b.Events[:len(b.Events)-1]
		},
		"an own event altered": func(b *report.Bundle) {
			b.Events[1].Event = strings.Replace(b.Events[1].Event, `"calculate"`, `"calculata"`, 1)
		},
		"a foreign digest substituted in a proof": func(b *report.Bundle) {
			b.Events[1].Proof[0] = b.Events[3].Proof[0]
		},
		"an own event's seq changed": func(b *report.Bundle) {
			b.Events[1].Seq++
		},
		"the tree's size changed": func(b *report.Bundle) {
			b.Tree.Size--
		},
		"the checkpoint removed": func(b *report.Bundle) {
			b.Checkpoint = nil
		},
	}
	for name, edit := range tamper {
		bd, err := report.ReadBundle(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		edit(bd)
		chk, err := report.VerifyBundle(context.Background(), bd, report.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if chk.OK() {
			t.Errorf("%s: the bundle verified", name)
		} else {
			t.Logf("%s: %s", name, chk.Problems[0])
		}
	}
}

// TestSummaryJSONUnchanged pins the bytes of a day's summary: the report
// counts with the projections' Summary (embedded), and its members keep
// the order and names the report had when it counted on its own.
func TestSummaryJSONUnchanged(t *testing.T) {
	d := report.Day{Date: "2026-11-01", Summary: report.Summary{Summary: projections.Summary{TotalActions: 6, Approved: 1,
		Denied: 2, Corrected: 3, Pending: 4, BudgetExceeded: 5, TotalCostUSD: seedlog.USD(7), TotalTokens: 8}, DenialRate: "0.3333"}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"date":"2026-11-01","total_actions":6,"approved":1,"denied":2,"corrected":3,"pending":4,"budget_exceeded":5,` +
		`"total_cost_usd":7,"total_tokens":8,"denial_rate":"0.3333","budget":{"cost_usd":0,"max_daily_cost_usd":0,` +
		`"requests":0,"max_requests_per_day":0,"tokens":0,"max_daily_tokens":0,"high_risk_calls":0,"max_high_risk_calls_per_day":0}}`
	if string(b) != want {
		t.Fatalf("day\n%s\nwant\n%s", b, want)
	}
}
