package backtest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/backtest"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
)

// QWED-Agent spec v1.1 §2.2 in a backtest (issue 16): the what-if keys of
// the path and egress lists, the agent's (permissions.*) and its
// principal's (principal.*, PUT /principals/{id}/permissions), re-decide
// the file and network actions of the period under the changed lists.
func TestAgentSpec_2_2_BacktestPathAndEgressKeys(t *testing.T) {
	dir := t.TempDir()
	g, err := seedlog.Start(dir, day1)
	if err != nil {
		t.Fatal(err)
	}
	must := func(cmd *domain.Command) *domain.Event {
		t.Helper()
		ev, err := g.Submit(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	if ev := must(&domain.Command{Type: domain.CmdConfigure, Principal: domain.AdminPrincipal,
		Configure: &domain.Configure{Config: domain.DefaultConfig()}}); ev.Type != domain.EvConfigured {
		t.Fatalf("configuring: %s %v", ev.Type, ev.Error)
	}
	a := must(seedlog.Register("a", "org_1", domain.TrustTrusted, domain.Limits{})).Registered.AgentID
	at := day2.Add(9 * time.Hour)
	var seqs []uint64
	for i, target := range []string{"/srv/data/q1.csv", "https://api.example.com/v1", "https://bücher.example/", "ftp://files.example/x"} {
		at = at.Add(time.Minute)
		g.At(at)
		typ := "read_file"
		if i > 0 {
			typ = "network_request"
		}
		cmd := seedlog.Verify(a, "r"+string(rune('0'+i)), "conv", i+1, typ, 0)
		cmd.Verify.Action.Target, cmd.Verify.Action.Query = target, ""
		ev := must(cmd)
		want := domain.Approved
		if i == 3 {
			want = domain.Denied // ftp is not a default scheme
		}
		if ev.Decided == nil || ev.Decided.Decision != want {
			t.Fatalf("%s: recorded %+v %v", target, ev.Decided, ev.Error)
		}
		seqs = append(seqs, ev.Seq)
	}
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	// A denial demotes the agent (trusted to autonomous): the changed
	// state is carried forward, and later medium-risk requests wait for
	// an approval.
	pend1, pend2 := rowWant{seqs[1], "APPROVED", "PENDING"}, rowWant{seqs[2], "APPROVED", "PENDING"}
	cases := []struct {
		sets []string
		rows []rowWant
	}{
		{[]string{"permissions.allowed_paths=/home"}, []rowWant{{seqs[0], "APPROVED", "DENIED QWED-SEC-002"}, pend1, pend2}},
		{[]string{"permissions.denied_paths=**/*.csv"}, []rowWant{{seqs[0], "APPROVED", "DENIED QWED-SEC-002"}, pend1, pend2}},
		{[]string{"permissions.allowed_hosts=Bücher.example"}, []rowWant{{seqs[1], "APPROVED", "DENIED QWED-SEC-002"}, pend2}},
		{[]string{"permissions.allowed_schemes=https,ftp"}, []rowWant{{seqs[1], "APPROVED", "DENIED QWED-SEC-002"}, {seqs[3], "DENIED QWED-SEC-002", "APPROVED"}}[1:]},
		{[]string{"permissions.allowed_ports=8443"}, []rowWant{{seqs[1], "APPROVED", "DENIED QWED-SEC-002"}, {seqs[2], "APPROVED", "DENIED QWED-SEC-002"}}},
		{[]string{"principal.allowed_paths=/home"}, []rowWant{{seqs[0], "APPROVED", "DENIED QWED-SEC-002"}, pend1, pend2}},
		{[]string{"principal.allowed_hosts=*.example.com"}, []rowWant{{seqs[2], "APPROVED", "DENIED QWED-SEC-002"}}},
		{[]string{"principal.allowed_schemes=ftp"}, []rowWant{{seqs[1], "APPROVED", "DENIED QWED-SEC-002"}, {seqs[2], "APPROVED", "DENIED QWED-SEC-002"}, {seqs[3], "DENIED QWED-SEC-002", "DENIED QWED-AGENT-TRUST-001"}}},
		{[]string{"principal.allowed_hosts=api.example.com", "permissions.allowed_hosts=bücher.example"}, []rowWant{{seqs[1], "APPROVED", "DENIED QWED-SEC-002"}, {seqs[2], "APPROVED", "DENIED QWED-SEC-002"}}},
	}
	for _, c := range cases {
		res := run(t, dir, backtest.Options{AgentID: a, From: day2, To: day3, Changes: changes(t, c.sets...)})
		if got := rowsOf(res); !slices.Equal(got, c.rows) {
			t.Errorf("%v: rows %+v, want %+v", c.sets, got, c.rows)
		}
	}
	var bad backtest.Changes
	for _, s := range []string{"permissions.allowed_paths=srv", "principal.allowed_hosts=xn--abc-.example", "permissions.allowed_ports=0", "principal.allowed_ports=x"} {
		if err := bad.ParseSet([]string{s}); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
}
