package domain

import (
	"strings"
	"testing"
)

// putPerms is the command of PUT /principals/{id}/permissions sent with
// the key of principal by.
func putPerms(by string, p PrincipalPermissions) *Command {
	return &Command{Type: CmdPutPrincipalPermissions, Principal: by, PrincipalPermissions: &p}
}

// QWED-Agent spec v1.1 §2.2 (issue 16 items 2 and 3: a path and egress
// policy per principal): a principal's lists hold every agent of the
// principal; an agent's own lists can only narrow them (allowed lists
// intersect, denied paths unite), and another principal's agents are
// untouched.
func TestAgentSpec_2_2_PrincipalPermissions_Decide(t *testing.T) {
	g := detectorGate(t)
	ev := g.exec(putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1",
		AllowedPaths: []string{"/srv"}, DeniedPaths: []string{"**/*.sqlite"},
		AllowedHosts: []string{"*.Example.COM", "Bücher.example", "10.0.0.5"}, AllowedSchemes: []string{"https"}, AllowedPorts: []int{443, 8443}}))
	if ev.Type != EvPrincipalPermissionsSet {
		t.Fatalf("setting: %s %v", ev.Type, ev.Error)
	}
	if got := strings.Join(ev.PrincipalPermissions.AllowedHosts, " "); got != "*.example.com xn--bcher-kva.example 10.0.0.5" {
		t.Errorf("recorded hosts %q", got)
	}
	open := g.register("open", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
	narrow := g.register("narrow", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{
		AllowedPaths: []string{"/srv/reports", "/home"}, DeniedPaths: []string{"**/secret*"},
		AllowedHosts: []string{"api.example.com", "evil.example", "10.0.0.5"}, AllowedSchemes: []string{"https", "ftp"}, AllowedPorts: []int{443}})
	other := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_2", Register: &RegisterAgent{
		Agent: AgentInfo{Name: "other", Type: "autonomous", PrincipalID: "org_2"}, TrustLevel: trustPtr(TrustTrusted), TokenHash: tokenHash("other")}}).AgentID
	cases := []struct {
		agent, name string
		act         Action
		want        Decision
		rule        string
	}{
		{open, "open", Action{Type: "read_file", Target: "/srv/data/q1.csv"}, Approved, ""},
		{open, "open", Action{Type: "read_file", Target: "/tmp/x"}, Denied, "outside_allowed_roots"},
		{open, "open", Action{Type: "read_file", Target: "/srv/app.sqlite"}, Denied, "denied_path"},
		{narrow, "narrow", Action{Type: "read_file", Target: "/srv/reports/q1.csv"}, Approved, ""},
		{narrow, "narrow", Action{Type: "read_file", Target: "/srv/data/q1.csv"}, Denied, "outside_allowed_roots"},
		{narrow, "narrow", Action{Type: "read_file", Target: "/home/ann/notes"}, Denied, "outside_allowed_roots"},
		{narrow, "narrow", Action{Type: "read_file", Target: "/srv/reports/app.sqlite"}, Denied, "denied_path"},
		{narrow, "narrow", Action{Type: "read_file", Target: "/srv/reports/secret.txt"}, Denied, "denied_path"},
		{open, "open", Action{Type: "network_request", Target: "https://api.example.com/v1"}, Approved, ""},
		{open, "open", Action{Type: "network_request", Target: "https://bücher.example/"}, Approved, ""},
		{open, "open", Action{Type: "network_request", Target: "https://evil.example/"}, Denied, "host_not_allowed"},
		{open, "open", Action{Type: "network_request", Target: "http://api.example.com/"}, Denied, "scheme_not_allowed"},
		{open, "open", Action{Type: "network_request", Target: "https://api.example.com:8080/"}, Denied, "port_not_allowed"},
		{open, "open", Action{Type: "network_request", Target: "https://10.0.0.5/"}, Approved, ""},
		{narrow, "narrow", Action{Type: "network_request", Target: "https://api.example.com/v1"}, Approved, ""},
		{narrow, "narrow", Action{Type: "network_request", Target: "https://evil.example/"}, Denied, "host_not_allowed"},
		{narrow, "narrow", Action{Type: "network_request", Target: "https://cdn.example.com/"}, Denied, "host_not_allowed"},
		{narrow, "narrow", Action{Type: "network_request", Target: "ftp://api.example.com/"}, Denied, "scheme_not_allowed"},
		{narrow, "narrow", Action{Type: "network_request", Target: "https://api.example.com:8443/"}, Denied, "port_not_allowed"},
		{narrow, "narrow", Action{Type: "network_request", Target: "https://10.0.0.5/"}, Approved, ""},
		{other, "other", Action{Type: "read_file", Target: "/tmp/x"}, Approved, ""},
		{other, "other", Action{Type: "network_request", Target: "https://evil.example/"}, Approved, ""},
	}
	for i, c := range cases {
		ev := g.exec(actionCmd(c.agent, c.name, i+1, c.act))
		if decision(ev) != c.want || (c.rule != "" && (ev.Error == nil || ev.Error.Details["rule"] != c.rule)) {
			t.Errorf("%d %s %+v: %s %v; want %s %s", i, c.name, c.act, decision(ev), ev.Error, c.want, c.rule)
		}
		// A denial demotes the agent's trust: set it back.
		g.exec(&Command{Type: CmdSetTrustLevel, Principal: g.s.Agents[c.agent].Info.PrincipalID, AgentID: c.agent, SetTrust: &SetTrustLevel{Level: TrustTrusted}})
	}
	// Cleared (every list empty): the agent's own lists alone apply again.
	if ev := g.exec(putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1"})); ev.Type != EvPrincipalPermissionsSet || g.s.Principals["org_1"].Permissions != nil {
		t.Fatalf("clearing: %s %v", ev.Type, ev.Error)
	}
	if ev := g.exec(actionCmd(open, "open", 30, Action{Type: "read_file", Target: "/tmp/x"})); decision(ev) != Approved {
		t.Errorf("after clearing: %s %v", decision(ev), ev.Error)
	}
}

// Only the principal (or the admin) sets its policy; the lists are
// validated and bounded as an agent's are; a log written before
// Config.PrincipalPermissions refuses the command and applies no policy.
func TestAgentSpec_2_2_PrincipalPermissions_Refusals(t *testing.T) {
	g := detectorGate(t)
	for _, c := range []struct {
		cmd  *Command
		code Code
	}{
		{putPerms("org_2", PrincipalPermissions{PrincipalID: "org_1", AllowedPaths: []string{"/"}}), CodeForbidden},
		{&Command{Type: CmdPutPrincipalPermissions, AgentID: "agent_x", TokenHash: tokenHash("x"), PrincipalPermissions: &PrincipalPermissions{PrincipalID: "org_1"}}, CodeMissingAPIKey},
		{putPerms("org_1", PrincipalPermissions{}), CodeMissingField},
		{putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", AllowedPaths: []string{"srv"}}), CodeInvalidRequest},
		{putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", DeniedPaths: []string{"/a**"}}), CodeInvalidRequest},
		{putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", AllowedHosts: []string{"xn--abc-.example"}}), CodeInvalidRequest},
		{putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", AllowedSchemes: []string{"HTTP"}}), CodeInvalidRequest},
		{putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", AllowedPorts: []int{70000}}), CodeInvalidRequest},
		{putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", AllowedHosts: make([]string, MaxPermissionEntries+1)}), CodeInvalidRequest},
	} {
		ev := g.exec(c.cmd)
		if ev.Type != EvCommandRejected || code(ev) != c.code {
			t.Errorf("%+v: %s %v; want %s", c.cmd.PrincipalPermissions, ev.Type, ev.Error, c.code)
		}
	}
	if ev := g.exec(putPerms(AdminPrincipal, PrincipalPermissions{PrincipalID: "org_1", AllowedPaths: []string{"/srv"}})); ev.Type != EvPrincipalPermissionsSet {
		t.Errorf("admin override: %s %v", ev.Type, ev.Error)
	}

	old := newGate(t)
	cfg := DefaultConfig()
	cfg.PrincipalPermissions = false
	old.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	if ev := old.exec(putPerms("org_1", PrincipalPermissions{PrincipalID: "org_1", AllowedPaths: []string{"/srv"}})); code(ev) != CodeInvalidRequest {
		t.Errorf("without PrincipalPermissions: %s %v", ev.Type, ev.Error)
	}
	// A policy already in the state (copied, or set before the switch was
	// turned off) is not applied without the switch.
	principal(old.s, "org_1").Permissions = &PrincipalPermissions{PrincipalID: "org_1", AllowedPaths: []string{"/srv"}}
	id := old.register("old", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
	if ev := old.exec(actionCmd(id, "old", 1, Action{Type: "read_file", Target: "/tmp/x"})); decision(ev) != Approved {
		t.Errorf("policy applied without PrincipalPermissions: %s %v", decision(ev), ev.Error)
	}
}
