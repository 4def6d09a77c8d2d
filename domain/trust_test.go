package domain

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSeed000_8_3_TrustDegradation pins each degradation rule on both sides
// of its threshold.
func TestSeed000_8_3_TrustDegradation(t *testing.T) {
	t.Run("security violation -2, floor 0", func(t *testing.T) {
		for _, c := range []struct{ from, to TrustLevel }{{3, 1}, {2, 0}, {1, 0}} {
			g := newGate(t)
			id := g.register("a", "trusted", trustPtr(c.from), Limits{}, Permissions{BlockedTools: []string{"x"}})
			ev := g.exec(toolCmd(id, "a", "x"))
			if ev.Decided.Trust == nil || ev.Decided.Trust.From != c.from || ev.Decided.Trust.To != c.to || g.s.Agents[id].Trust != c.to {
				t.Errorf("from %d: %+v", c.from, ev.Decided.Trust)
			}
		}
		g := newGate(t)
		id := g.register("a", "trusted", trustPtr(0), Limits{}, Permissions{BlockedTools: []string{"x"}})
		if ev := g.exec(toolCmd(id, "a", "x")); ev.Decided.Trust != nil {
			t.Errorf("at 0 nothing changes: %+v", ev.Decided.Trust)
		}
	})
	t.Run("denial rate", func(t *testing.T) {
		cases := []struct {
			approved, denied int
			degrade          bool
		}{
			{18, 2, false}, // 2/20 = 10%: not above
			{17, 3, true},  // 3/20
			{0, 19, false}, // 19 decisions: too few
			{0, 20, true},
			{90, 10, false}, // 10/100
		}
		for _, c := range cases {
			g := newGate(t)
			id := g.register("a", "trusted", nil, Limits{}, Permissions{})
			var last *Event
			step := 1
			for i := 0; i < c.approved; i++ {
				last = g.exec(verifyCmd(id, "a", "c", strconv.Itoa(step), "calculate", strconv.Itoa(i)))
				step++
			}
			for i := 0; i < c.denied; i++ {
				last = g.exec(verifyCmd(id, "a", "c", strconv.Itoa(step), "nonsense", ""))
			}
			got := last.Decided.Trust != nil
			if got != c.degrade || last.Decided.ResetRecent != c.degrade {
				t.Errorf("%d approved %d denied: degraded %v reset %v", c.approved, c.denied, got, last.Decided.ResetRecent)
			}
			if c.degrade && (len(g.s.Agents[id].Recent) != 0 || g.s.Agents[id].Trust != TrustAutonomous) {
				t.Errorf("%d/%d: window not cleared or trust %d", c.approved, c.denied, g.s.Agents[id].Trust)
			}
		}
		// The window is the last 100: old denials leave it.
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{})
		for i := 0; i < 20; i++ {
			g.exec(verifyCmd(id, "a", "c"+strconv.Itoa(i), "1", "calculate", "1"))
		}
		for i := 0; i < 2; i++ {
			g.exec(verifyCmd(id, "a", "c", "1", "nonsense", ""))
		}
		for i := 0; i < 100; i++ {
			g.exec(verifyCmd(id, "a", "d"+strconv.Itoa(i), "1", "calculate", "1"))
		}
		recent := g.s.Agents[id].Recent
		if len(recent) != RecentWindow || g.s.Agents[id].Trust != TrustTrusted {
			t.Fatalf("recent %d trust %d", len(recent), g.s.Agents[id].Trust)
		}
		for _, denied := range recent {
			if denied {
				t.Fatal("a denial older than the window is still in it")
			}
		}
	})
	t.Run("budget abuse", func(t *testing.T) {
		for _, c := range []struct {
			gap     time.Duration
			degrade bool
		}{{20 * time.Minute, true}, {30 * time.Minute, false}} {
			g := newGate(t)
			id := g.register("a", "trusted", nil, Limits{MaxPerRequestCost: 1}, Permissions{})
			var last *Event
			for i := 0; i < 3; i++ {
				cmd := verifyCmd(id, "a", "c", "1", "calculate", "1")
				cmd.Verify.Action.EstimatedCost = 2
				last = g.exec(cmd)
				g.now = g.now.Add(c.gap)
			}
			if (last.Decided.Trust != nil) != c.degrade {
				t.Errorf("gap %s: trust %+v", c.gap, last.Decided.Trust)
			}
			if c.degrade && len(g.s.Agents[id].BudgetDenials) != 0 {
				t.Errorf("gap %s: denials not cleared", c.gap)
			}
		}
	})
	t.Run("penalties add up", func(t *testing.T) {
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{BlockedTools: []string{"x"}})
		for i := 0; i < 19; i++ {
			g.exec(verifyCmd(id, "a", "c", "1", "nonsense", ""))
		}
		// 19 denials stay below the 20-decision minimum; the 20th decision
		// is a security violation and crosses it: -2 and -1 together.
		ev := g.exec(toolCmd(id, "a", "x"))
		tc := ev.Decided.Trust
		if tc == nil || tc.From != 3 || tc.To != 0 || !strings.Contains(tc.Reason, "security violation") || !strings.Contains(tc.Reason, "denial rate") {
			t.Fatalf("%+v", tc)
		}
	})
	t.Run("complaint suspends", func(t *testing.T) {
		g := newGate(t)
		id := g.register("a", "trusted", nil, Limits{}, Permissions{})
		ev := g.exec(&Command{Type: CmdFileComplaint, AgentID: id, Principal: "org_1", Complaint: &FileComplaint{Reason: "spam"}})
		if ev.Type != EvAgentStatusChanged || g.s.Agents[id].Status != StatusSuspended {
			t.Fatalf("%s %v", ev.Type, ev.Error)
		}
		if ev := g.exec(verifyCmd(id, "a", "c", "1", "calculate", "1")); code(ev) != CodeAgentSuspended {
			t.Fatalf("suspended agent acted: %v", ev.Error)
		}
		if ev := g.exec(&Command{Type: CmdFileComplaint, AgentID: id, Principal: "org_1", Complaint: &FileComplaint{}}); code(ev) != CodeMissingField {
			t.Fatalf("complaint without reason: %v", ev.Error)
		}
	})
}

// TestSeed000_8_2_TrustElevation pins the evidence comparison.
func TestSeed000_8_2_TrustElevation(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	for i := 1; i <= 40; i++ {
		cmd := verifyCmd(id, "a", "c", strconv.Itoa(i), "calculate", strconv.Itoa(i))
		cmd.Verify.Options.RequireAttestation = i%2 == 0
		g.exec(cmd)
	}
	for i := 0; i < 2; i++ {
		g.exec(verifyCmd(id, "a", "c", "41", "write_file", "x")) // TRUST-001
	}
	g.now = g.now.Add(30*24*time.Hour + time.Hour)
	// Computed: 30 days, 42 actions, 2 denied, rate 2/42, 20 attestations.
	cases := []struct {
		name   string
		ev     TrustEvidence
		accept bool
		reason string
	}{
		{"exact", TrustEvidence{30, 42, 2, "0.047619", 20}, true, ""},
		{"modest", TrustEvidence{10, 40, 5, "0.5", 0}, true, ""},
		{"no rate", TrustEvidence{30, 42, 2, "", 20}, true, ""},
		{"exact fraction", TrustEvidence{30, 42, 2, "0.0476190476190476190476190477", 20}, true, ""},
		{"days", TrustEvidence{31, 42, 2, "", 20}, false, "days_active"},
		{"actions", TrustEvidence{30, 43, 2, "", 20}, false, "total_actions"},
		{"denials", TrustEvidence{30, 42, 1, "", 20}, false, "denied_actions"},
		{"rate", TrustEvidence{30, 42, 2, "0.0476", 20}, false, "denial_rate"},
		{"rate one micro below", TrustEvidence{30, 42, 2, "0.047618", 20}, false, "denial_rate"},
		{"attestations", TrustEvidence{30, 42, 2, "", 21}, false, "attestations"},
	}
	for _, c := range cases {
		ev := g.exec(&Command{Type: CmdRequestTrust, AgentID: id, TokenHash: tokenHash("a"), Trust: &RequestTrustElevation{
			Request: "trust_elevation", FromLevel: 1, ToLevel: 2, Evidence: c.ev}})
		el := ev.Elevation
		if el == nil || el.Accepted != c.accept || (c.reason != "" && !strings.Contains(strings.Join(el.Reasons, ";"), c.reason)) {
			t.Errorf("%s: %+v %v", c.name, el, ev.Error)
			continue
		}
		if c.accept != (el.Approval != nil) || (el.Approval != nil && g.s.Approvals[el.Approval.ID] == nil) {
			t.Errorf("%s: approval %+v", c.name, el.Approval)
		}
		if el.Computed.DaysActive != 30 || el.Computed.TotalActions != 42 || el.Computed.DeniedActions != 2 ||
			el.Computed.DenialRate != "0.047619" || el.Computed.Attestations != 20 {
			t.Errorf("computed %+v", el.Computed)
		}
	}
	bad := []struct {
		r    RequestTrustElevation
		code Code
	}{
		{RequestTrustElevation{FromLevel: 2, ToLevel: 3}, CodeConflict},
		{RequestTrustElevation{FromLevel: 1, ToLevel: 1}, CodeInvalidRequest},
		{RequestTrustElevation{FromLevel: 1, ToLevel: 4}, CodeInvalidRequest},
		{RequestTrustElevation{Request: "demotion", FromLevel: 1, ToLevel: 2}, CodeInvalidRequest},
		{RequestTrustElevation{FromLevel: 1, ToLevel: 2, Evidence: TrustEvidence{DenialRate: "-0.1"}}, CodeInvalidRequest},
		{RequestTrustElevation{FromLevel: 1, ToLevel: 2, Evidence: TrustEvidence{DenialRate: "lots"}}, CodeInvalidRequest},
	}
	for _, b := range bad {
		r := b.r
		if ev := g.exec(&Command{Type: CmdRequestTrust, AgentID: id, TokenHash: tokenHash("a"), Trust: &r}); code(ev) != b.code {
			t.Errorf("%+v: %v", b.r, ev.Error)
		}
	}
	for d, want := range map[[2]int64]string{{0, 0}: "0", {1, 3}: "0.333333", {2, 3}: "0.666667", {1, 1}: "1", {1, 8}: "0.125", {1, 2000000}: "0.000001", {1, 3000000}: "0"} {
		if got := ratePPM(d[0], d[1]); got != want {
			t.Errorf("ratePPM(%d, %d) = %s, want %s", d[0], d[1], got, want)
		}
	}
}

// TestSeed000_8_2_ElevationApproval: approving the elevation changes trust;
// only the agent's principal or the admin resolves; a second resolution is
// a conflict.
func TestSeed000_8_2_ElevationApproval(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	ev := g.exec(&Command{Type: CmdRequestTrust, AgentID: id, TokenHash: tokenHash("a"), Trust: &RequestTrustElevation{FromLevel: 1, ToLevel: 3}})
	apID := ev.Elevation.Approval.ID
	if !strings.HasPrefix(apID, "trust_") || *ev.Elevation.Approval.ToLevel != 3 {
		t.Fatalf("%+v", ev.Elevation.Approval)
	}
	resolve := func(by string, approve bool) *Event {
		return g.exec(&Command{Type: CmdResolveApproval, Principal: by, Resolve: &ResolveApproval{ApprovalID: apID, Approve: approve}})
	}
	if ev := resolve("org_2", true); code(ev) != CodeForbidden {
		t.Fatalf("other principal: %v", ev.Error)
	}
	if ev := resolve("", true); code(ev) != CodeMissingAPIKey {
		t.Fatalf("no principal: %v", ev.Error)
	}
	ev = resolve(AdminPrincipal, true)
	if ev.Resolved == nil || ev.Resolved.Trust == nil || ev.Resolved.Trust.To != 3 || g.s.Agents[id].Trust != 3 ||
		g.s.Approvals[apID].Status != ApprovalApproved || g.s.Approvals[apID].ResolvedBy != AdminPrincipal {
		t.Fatalf("%+v %v", ev.Resolved, ev.Error)
	}
	if ev := resolve("org_1", false); code(ev) != CodeConflict {
		t.Fatalf("second resolution: %v", ev.Error)
	}
	if ev := g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{ApprovalID: "nope"}}); code(ev) != CodeNotFound {
		t.Fatalf("unknown approval: %v", ev.Error)
	}
	if ev := g.exec(&Command{Type: CmdResolveApproval, Principal: "org_1", Resolve: &ResolveApproval{}}); code(ev) != CodeMissingField {
		t.Fatalf("no approval id: %v", ev.Error)
	}
}

// TestSeed000_8_PrincipalCommands pins SetTrustLevel and SuspendAgent.
func TestSeed000_8_PrincipalCommands(t *testing.T) {
	g := newGate(t)
	id := g.register("a", "supervised", nil, Limits{}, Permissions{})
	cases := []struct {
		cmd  Command
		code Code
	}{
		{Command{Type: CmdSetTrustLevel, AgentID: id, Principal: "org_1", SetTrust: &SetTrustLevel{Level: 3}}, ""},
		{Command{Type: CmdSetTrustLevel, AgentID: id, Principal: "org_1", SetTrust: &SetTrustLevel{Level: 4}}, CodeInvalidRequest},
		{Command{Type: CmdSetTrustLevel, AgentID: id, TokenHash: tokenHash("a"), SetTrust: &SetTrustLevel{Level: 3}}, CodeMissingAPIKey},
		{Command{Type: CmdSetTrustLevel, AgentID: "agent_nope", Principal: "org_1", SetTrust: &SetTrustLevel{Level: 3}}, CodeAgentNotRegistered},
		{Command{Type: CmdSuspendAgent, AgentID: id, Principal: "org_9", Suspend: &SuspendAgent{Suspended: true}}, CodeForbidden},
		{Command{Type: CmdSuspendAgent, AgentID: id, Principal: AdminPrincipal, Suspend: &SuspendAgent{Suspended: true}}, ""},
	}
	for i, c := range cases {
		cmd := c.cmd
		if ev := g.exec(&cmd); code(ev) != c.code {
			t.Errorf("case %d: %s %v", i, ev.Type, ev.Error)
		}
	}
	if a := g.s.Agents[id]; a.Trust != 3 || a.Status != StatusSuspended {
		t.Fatalf("trust %d status %s", a.Trust, a.Status)
	}
	b, _ := json.Marshal(g.events[len(g.events)-1].Status)
	if string(b) != `{"status":"suspended","reason":"set by principal"}` {
		t.Fatalf("%s", b)
	}
}
