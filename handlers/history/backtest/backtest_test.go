package backtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/history/backtest"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog/snapshot"
)

var (
	day1 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	day2 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	day3 = time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
)

// history is the recorded history of the tests: agent A (org_1, trust 2,
// daily limit $100) and, interleaved, agent B (org_1) and agent C (org_2).
type history struct {
	dir     string
	a, b, c string
	// seqs of A's period decisions, in order: calc $10, api_call $60,
	// calc $40 (recorded BUDGET_EXCEEDED), api_call $5; exec is the
	// execution log of the api_call $60.
	seqs [4]uint64
	exec uint64
}

func seed(t *testing.T) *history {
	t.Helper()
	h := &history{dir: t.TempDir()}
	g, err := seedlog.Start(h.dir, day1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Stop(); err != nil {
			t.Fatal(err)
		}
	}()
	must := func(cmd *domain.Command) *domain.Event {
		t.Helper()
		ev, err := g.Submit(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	limits := domain.Limits{MaxDailyCost: seedlog.USD(100)}
	h.a = must(seedlog.Register("a", "org_1", domain.TrustAutonomous, limits)).Registered.AgentID
	h.b = must(seedlog.Register("b", "org_1", domain.TrustAutonomous, limits)).Registered.AgentID
	h.c = must(seedlog.Register("c", "org_2", domain.TrustAutonomous, limits)).Registered.AgentID
	// Day 1, before the period: A spends $90 (the day resets at midnight).
	g.At(day1.Add(time.Hour))
	want(t, must(seedlog.Verify(h.a, "a0", "conv0", 1, "calculate", seedlog.USD(90))), domain.Approved)
	want(t, must(seedlog.Verify(h.b, "b0", "conv0", 1, "api_call", seedlog.USD(90))), domain.Approved)

	at := day2.Add(9 * time.Hour)
	step := func(agent, req, action string, n int, cost float64, d domain.Decision) *domain.Event {
		t.Helper()
		at = at.Add(time.Minute)
		g.At(at)
		ev := must(seedlog.Verify(agent, req, "conv1", n, action, seedlog.USD(cost)))
		want(t, ev, d)
		return ev
	}
	h.seqs[0] = step(h.a, "a1", "calculate", 1, 10, domain.Approved).Seq
	step(h.c, "c1", "api_call", 1, 10, domain.Approved)
	big := step(h.a, "a2", "api_call", 2, 60, domain.Approved)
	h.seqs[1] = big.Seq
	step(h.b, "b1", "api_call", 1, 70, domain.Approved)
	at = at.Add(time.Minute)
	g.At(at)
	h.exec = must(seedlog.Execution(h.a, "a2x", big.Decided.ActionID, seedlog.USD(60), 100)).Seq
	h.seqs[2] = step(h.a, "a3", "calculate", 3, 40, domain.BudgetExceeded).Seq
	step(h.b, "b2", "api_call", 2, 40, domain.BudgetExceeded)
	h.seqs[3] = step(h.a, "a4", "api_call", 4, 5, domain.Approved).Seq
	// Day 3, after the period.
	g.At(day3.Add(time.Hour))
	want(t, must(seedlog.Verify(h.a, "a5", "conv2", 1, "api_call", seedlog.USD(1))), domain.Approved)
	return h
}

func want(t *testing.T, ev *domain.Event, d domain.Decision) {
	t.Helper()
	if ev.Decided == nil || ev.Decided.Decision != d {
		t.Fatalf("seq %d: recorded %+v (error %+v), want %s", ev.Seq, ev.Decided, ev.Error, d)
	}
}

func run(t *testing.T, dir string, opts backtest.Options) *backtest.Result {
	t.Helper()
	snap, err := snapshot.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	res, err := backtest.Run(context.Background(), snap.Log, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func changes(t *testing.T, sets ...string) backtest.Changes {
	t.Helper()
	var c backtest.Changes
	if err := c.ParseSet(sets); err != nil {
		t.Fatal(err)
	}
	return c
}

type rowWant struct {
	seq      uint64
	recorded string
	backtest string
}

func rowsOf(res *backtest.Result) []rowWant {
	var out []rowWant
	for _, r := range res.Decisions {
		out = append(out, rowWant{r.Seq, r.Recorded.String(), r.Backtest.String()})
	}
	return out
}

// Without changes, re-deciding reproduces every recorded outcome: the
// fold of the selected agents' events alone is the state they were decided on.
func TestBacktestWithoutChangesReproducesTheLog(t *testing.T) {
	h := seed(t)
	for _, opts := range []backtest.Options{
		{AgentID: h.a, From: day2, To: day3},
		{AgentID: h.a, From: day1, To: day3.Add(48 * time.Hour)},
		{PrincipalID: "org_1", From: day1, To: day3.Add(48 * time.Hour)},
	} {
		res := run(t, h.dir, opts)
		if res.Totals.Changed != 0 || len(res.Decisions) != 0 {
			t.Fatalf("%+v: %d changed: %+v", opts, res.Totals.Changed, res.Decisions)
		}
		if res.Totals.Recorded != res.Totals.Backtest {
			t.Fatalf("recorded %+v, backtest %+v", res.Totals.Recorded, res.Totals.Backtest)
		}
		if res.Totals.Redecided == 0 {
			t.Fatal("nothing re-decided")
		}
	}
}

// Issue 5: a lower trust level turns approvals into pendings (QWED-Agent user guide
// matrix: a MEDIUM-risk api_call is APPROVED at trust 2, PENDING at 1).
func TestBacktestLowerTrustTurnsApprovedIntoPending(t *testing.T) {
	h := seed(t)
	res := run(t, h.dir, backtest.Options{AgentID: h.a, From: day2, To: day3, Changes: changes(t, "trust_level=supervised")})
	// The execution log of the action now PENDING is a conflict
	// (REQ-409): its execution could not have been logged yet.
	wantRows := []rowWant{
		{h.seqs[1], "APPROVED", "PENDING"},
		{h.exec, "execution.logged", "command.rejected QWED-REQ-409"},
		{h.seqs[3], "APPROVED", "PENDING"},
	}
	if got := rowsOf(res); !slices.Equal(got, wantRows) {
		t.Fatalf("rows %+v, want %+v", got, wantRows)
	}
	tot := res.Totals
	if tot.Decisions != 4 || tot.Changed != 3 || tot.Redecided != 5 {
		t.Fatalf("totals %+v", tot)
	}
	wantRec := backtest.Counts{Approved: 3, BudgetExceeded: 1, ReservedUSD: seedlog.USD(75), ReservedTokens: 300}
	wantBT := backtest.Counts{Approved: 1, Pending: 2, BudgetExceeded: 1, ReservedUSD: seedlog.USD(75), ReservedTokens: 300}
	if tot.Recorded != wantRec || tot.Backtest != wantBT {
		t.Fatalf("recorded %+v backtest %+v", tot.Recorded, tot.Backtest)
	}
	if len(tot.Transitions) != 2 || tot.Transitions[0] != (backtest.Transition{From: "APPROVED", To: "PENDING", Count: 2}) ||
		tot.Transitions[1] != (backtest.Transition{From: "execution.logged", To: "command.rejected QWED-REQ-409", Count: 1}) {
		t.Fatalf("transitions %+v", tot.Transitions)
	}
	if res.Decisions[0].Action != "api_call" || res.Decisions[0].AgentID != h.a || res.Decisions[0].Command != domain.CmdVerifyAction {
		t.Fatalf("row %+v", res.Decisions[0])
	}
	// Issue 17 item 12: each changed decision says what it was made on:
	// the trust change (autonomous in the log, supervised in the
	// backtest) and the action's risk.
	want := backtest.Why{TrustRecorded: domain.TrustAutonomous, TrustBacktest: domain.TrustSupervised, Risk: domain.RiskMedium}
	if w := res.Decisions[0].Why; w != want {
		t.Fatalf("why %+v, want %+v", w, want)
	}
	if got, wantCell := res.Decisions[0].Why.String(), "trust autonomous -> supervised, risk medium"; got != wantCell {
		t.Fatalf("why cell %q, want %q", got, wantCell)
	}
}

// Issue 5: a lower daily budget turns later approvals into
// BUDGET_EXCEEDED, and the denial frees budget for a later request, which
// the log shows refused: the changed state is carried forward, and so are
// its consequences (the execution log of an action now refused is refused).
func TestBacktestLowerBudgetCarriesStateForward(t *testing.T) {
	h := seed(t)
	res := run(t, h.dir, backtest.Options{AgentID: h.a, From: day2, To: day3, Changes: changes(t, "budget.max_daily_usd=50")})
	wantRows := []rowWant{
		{h.seqs[1], "APPROVED", "BUDGET_EXCEEDED QWED-AGENT-BUDGET-001"},
		{h.exec, "execution.logged", "command.rejected QWED-REQ-404"},
		{h.seqs[2], "BUDGET_EXCEEDED QWED-AGENT-BUDGET-001", "APPROVED"},
		{h.seqs[3], "APPROVED", "BUDGET_EXCEEDED QWED-AGENT-BUDGET-001"},
	}
	if got := rowsOf(res); !slices.Equal(got, wantRows) {
		t.Fatalf("rows\n %+v\nwant\n %+v", got, wantRows)
	}
	tot := res.Totals
	if tot.Decisions != 4 || tot.Changed != 4 {
		t.Fatalf("totals %+v", tot)
	}
	// Recorded: $10 + $60 + $5 reserved; backtest: $10 + $40.
	if tot.Recorded.ReservedUSD != seedlog.USD(75) || tot.Backtest.ReservedUSD != seedlog.USD(50) {
		t.Fatalf("reserved recorded %s backtest %s", tot.Recorded.ReservedUSD, tot.Backtest.ReservedUSD)
	}
	if tot.Backtest.Approved != 2 || tot.Backtest.BudgetExceeded != 2 || tot.Recorded.Approved != 3 || tot.Recorded.BudgetExceeded != 1 {
		t.Fatalf("counts recorded %+v backtest %+v", tot.Recorded, tot.Backtest)
	}
	var sum int64
	for _, tr := range tot.Transitions {
		sum += tr.Count
	}
	if sum != tot.Changed {
		t.Fatalf("transitions %+v sum to %d, changed %d", tot.Transitions, sum, tot.Changed)
	}
}

// The period bounds what is re-decided; a principal selects its agents.
func TestBacktestPeriodAndPrincipal(t *testing.T) {
	h := seed(t)
	res := run(t, h.dir, backtest.Options{PrincipalID: "org_1", From: day2, To: day3, Changes: changes(t, "trust_level=1")})
	if !slices.Equal(res.Agents, sortedIDs(h.a, h.b)) {
		t.Fatalf("agents %v, want A and B", res.Agents)
	}
	// A: two api_calls become PENDING; B: its APPROVED api_call does too
	// (its BUDGET_EXCEEDED stays), and A's execution log is a conflict;
	// C (org_2) is not re-decided.
	if res.Totals.Decisions != 6 || res.Totals.Changed != 4 {
		t.Fatalf("totals %+v rows %+v", res.Totals, res.Decisions)
	}
	for _, r := range res.Decisions {
		if r.AgentID == h.c {
			t.Fatalf("agent of another principal re-decided: %+v", r)
		}
	}
	// Day 3 alone: A's one api_call.
	res = run(t, h.dir, backtest.Options{AgentID: h.a, From: day3, To: day3.Add(24 * time.Hour), Changes: changes(t, "trust_level=1")})
	if res.Totals.Decisions != 1 || res.Totals.Changed != 1 {
		t.Fatalf("day 3 totals %+v", res.Totals)
	}
}

func sortedIDs(ids ...string) []string { slices.Sort(ids); return ids }

// Issue 5: a backtest never writes to the live log: its head and every
// byte of its directory are unchanged.
func TestBacktestNeverWritesTheLiveLog(t *testing.T) {
	h := seed(t)
	before := dirDigest(t, filepath.Join(h.dir, "log"))
	res := run(t, h.dir, backtest.Options{AgentID: h.a, From: day2, To: day3, Changes: changes(t, "budget.max_daily_usd=50", "trust_level=0")})
	if res.Totals.Changed == 0 {
		t.Fatal("the backtest changed nothing: it did not run")
	}
	after := dirDigest(t, filepath.Join(h.dir, "log"))
	if !maps(before, after) {
		t.Fatalf("the live log changed:\nbefore %v\nafter  %v", before, after)
	}
	// And the log still opens at the same head.
	snap, err := snapshot.Open(h.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Log.Head().Seq != res.LogHead {
		t.Fatalf("head %d, backtest read to %d", snap.Log.Head().Seq, res.LogHead)
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// dirDigest maps every file under dir to the SHA-256 of its bytes and its
// modification time.
func dirDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[strings.TrimPrefix(p, dir)] = hex.EncodeToString(sum[:]) + " " + info.ModTime().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no log files")
	}
	return out
}

// The settable keys: aliases, normalised values, and clear errors for an
// unknown key, a bad value or a key given twice.
func TestBacktestChanges(t *testing.T) {
	var c backtest.Changes
	if err := c.ParseSet([]string{"budget.max_daily_cost_usd=50.5", "trust_level=untrusted", "permissions.blocked_tools=b, a,a"}); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Settings)
	want := `[{"key":"budget.max_daily_usd","value":"50.5"},{"key":"permissions.blocked_tools","value":"a,b"},{"key":"trust_level","value":"0"}]`
	if string(got) != want {
		t.Fatalf("settings %s, want %s", got, want)
	}
	var a domain.Agent
	c.Apply(&a)
	if a.Budget.MaxDailyCost != seedlog.USD(50.5) || a.Trust != 0 || !slices.Equal(a.Permissions.BlockedTools, []string{"a", "b"}) {
		t.Fatalf("applied %+v", a)
	}
	var f backtest.Changes
	if err := f.ParseJSON([]byte(`{"budget.max_requests_per_hour": 10, "trust_level": "trusted", "permissions.allowed_tools": ["x","y"]}`)); err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(f.Settings)
	want = `[{"key":"budget.max_requests_per_hour","value":"10"},{"key":"permissions.allowed_tools","value":"x,y"},{"key":"trust_level","value":"3"}]`
	if string(got) != want {
		t.Fatalf("file settings %s, want %s", got, want)
	}
	for _, bad := range []struct{ set, msg string }{
		{"budget.max_monthly_usd=5", `unknown setting "budget.max_monthly_usd": the settable keys are budget.max_daily_usd,`},
		{"trust=1", `unknown setting "trust"`},
		{"trust_level=4", "parsing setting trust_level"},
		{"budget.max_daily_usd=-1", "negative"},
		{"budget.max_requests_per_hour=100001", "above the limit 100000"},
		{"budget.max_daily_tokens=1.5", "not a non-negative integer"},
		{"trust_level", "want key=value"},
	} {
		var c backtest.Changes
		err := c.ParseSet([]string{bad.set})
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("--set %s: error %v, want %q", bad.set, err, bad.msg)
		}
	}
	var twice backtest.Changes
	if err := twice.ParseSet([]string{"budget.max_daily_usd=1", "budget.max_daily_cost_usd=2"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a key given twice: %v", err)
	}
	var badFile backtest.Changes
	if err := badFile.ParseJSON([]byte(`{"nope": 1}`)); err == nil || !strings.Contains(err.Error(), `unknown setting "nope"`) {
		t.Errorf("unknown key in a file: %v", err)
	}
	if err := badFile.ParseJSON([]byte(`{"trust_level": {"x":1}}`)); err == nil {
		t.Error("an object value was accepted")
	}
	for _, k := range backtest.Keys() {
		if !strings.Contains(backtest.KeysHelp(), k.Name) {
			t.Errorf("help lacks %s", k.Name)
		}
	}
}

// The table lists each changed decision and the totals.
func TestBacktestTable(t *testing.T) {
	h := seed(t)
	res := run(t, h.dir, backtest.Options{AgentID: h.a, From: day2, To: day3, Changes: changes(t, "trust_level=1")})
	var b bytes.Buffer
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"changes: trust_level=1", "re-decided 5 commands (4 decisions): 3 changed", "APPROVED", "PENDING", "recorded", "backtest",
		"WHY", "trust autonomous -> supervised, risk medium"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	if strings.Count(out, "api_call") != 2 {
		t.Errorf("table should list the two api_calls:\n%s", out)
	}
}

// The event codec decodes every event of a recorded history (every event
// type the seed writes, checkpoints included), and encodes each back to
// its payload.
func TestEveryRecordedEventRoundTrips(t *testing.T) {
	h := seed(t)
	snap, err := snapshot.Open(h.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	n := 0
	err = snap.Log.Read(context.Background(), 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return err
		}
		if again, err := eventjson.Marshal(ev); err != nil || !bytes.Equal(again, r.Payload) {
			t.Errorf("seq %d re-encodes to\n%s, %v\nnot\n%s", r.Seq, again, err, r.Payload)
		}
		n++
		return nil
	})
	if err != nil || n < 10 {
		t.Fatalf("read %d events: %v", n, err)
	}
	if _, err := eventjson.DecodeEvent([]byte(`{"seq":"x"}`)); err == nil {
		t.Fatal("a malformed event decoded")
	}
}
