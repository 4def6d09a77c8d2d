package domain

import (
	"encoding/json"
	"strconv"
	"testing"
)

// detectorGate is a gate configured as a new gate is (DefaultConfig:
// Detectors on, recorded in a gate.configured event).
func detectorGate(t *testing.T) *gate {
	g := newGate(t)
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: DefaultConfig()}}); ev.Type != EvConfigured {
		t.Fatalf("configuring: %s %v", ev.Type, ev.Error)
	}
	return g
}

func actionCmd(agentID, name string, step int, act Action) *Command {
	return &Command{Type: CmdVerifyAction, AgentID: agentID, TokenHash: tokenHash(name), Verify: &VerifyAction{
		Action: act, Context: ActionContext{ConversationID: "c1", StepNumber: json.Number(strconv.Itoa(step))},
	}}
}

// QWED-Agent spec v1.1 §2.2 (file operations: security check): read_file
// /etc/shadow was approved as low risk; under Config.Detectors it is a
// security violation, however the path is spelled, while an ordinary path
// passes and the agent's roots and globs narrow further.
func TestSeed2_2_FileOperations_Decide(t *testing.T) {
	g := detectorGate(t)
	trusted := trustPtr(TrustTrusted)
	scopedPerms := Permissions{AllowedPaths: []string{"/srv/data"}, DeniedPaths: []string{"**/*.sqlite"}}
	cases := []struct {
		name string
		act  Action
		want Decision
		rule string
	}{
		{"open", Action{Type: "read_file", Target: "/etc/shadow"}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Target: "/tmp/../etc//shadow"}, Denied, "sensitive_path"},
		{"open", Action{Type: "file_read", Parameters: json.RawMessage(`{"path":"/home/ann/.ssh/id_rsa"}`)}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Target: "/etc/sh%61dow"}, Denied, "unnormalisable"},
		{"open", Action{Type: "read_file"}, Denied, "no_path"},
		{"open", Action{Type: "read_file", Parameters: json.RawMessage(`{"path":"/tmp/report.txt"}`)}, Approved, ""},
		{"open", Action{Type: "read_file", Target: "/etc/passwd"}, Approved, ""},
		{"open", Action{Type: "write_file", Target: "/etc/passwd"}, Denied, "sensitive_path"},
		{"scoped", Action{Type: "read_file", Target: "/srv/data/q1.csv"}, Approved, ""},
		{"scoped", Action{Type: "read_file", Target: "/srv/data/../other/x"}, Denied, "outside_allowed_roots"},
		{"scoped", Action{Type: "read_file", Target: "/srv/data/app.sqlite"}, Denied, "denied_path"},
	}
	for i, c := range cases {
		// a fresh agent each time: denials demote an agent's trust
		name := c.name + strconv.Itoa(i)
		perms := Permissions{}
		if c.name == "scoped" {
			perms = scopedPerms
		}
		id := g.register(name, "autonomous", trusted, Limits{}, perms)
		ev := g.exec(actionCmd(id, name, 1, c.act))
		if decision(ev) != c.want {
			t.Errorf("%d %+v: %s %v; want %s", i, c.act, decision(ev), ev.Error, c.want)
			continue
		}
		if c.rule == "" {
			continue
		}
		if code(ev) != CodeSecurityViolated || ev.Error.Details["rule"] != c.rule {
			t.Errorf("%d %+v: error %+v; want %s rule %s", i, c.act, ev.Error, CodeSecurityViolated, c.rule)
		}
	}
}

// QWED-Agent spec v1.1 §2.2 (network requests: policy check): the cloud
// metadata service in any spelling, loopback and private addresses are
// refused by default; an egress policy narrows hosts, schemes and ports.
func TestSeed2_2_NetworkRequests_Decide(t *testing.T) {
	g := detectorGate(t)
	trusted := trustPtr(TrustTrusted)
	scopedPerms := Permissions{AllowedHosts: []string{"api.example.com"}, AllowedSchemes: []string{"https"}}
	cases := []struct {
		name string
		act  Action
		want Decision
		rule string
	}{
		{"open", Action{Type: "network_request", Target: "http://169.254.169.254/latest/meta-data/"}, Denied, "metadata_address"},
		{"open", Action{Type: "network_request", Parameters: json.RawMessage(`{"url":"http://2852039166/"}`)}, Denied, "metadata_address"},
		{"open", Action{Type: "network_request", Target: "http://0x7f.1:8080/admin"}, Denied, "non_public_address"},
		{"open", Action{Type: "api_call", Target: "http://[::ffff:10.0.0.1]/"}, Denied, "non_public_address"},
		{"open", Action{Type: "network_request", Target: "http://api.example.com@127.0.0.1/"}, Denied, "unnormalisable"},
		{"open", Action{Type: "network_request"}, Denied, "no_url"},
		{"open", Action{Type: "api_call"}, Approved, ""},
		{"open", Action{Type: "network_request", Target: "https://api.example.com/v1"}, Approved, ""},
		{"scoped", Action{Type: "network_request", Target: "https://API.example.com./v1"}, Approved, ""},
		{"scoped", Action{Type: "network_request", Target: "http://api.example.com/v1"}, Denied, "scheme_not_allowed"},
		{"scoped", Action{Type: "network_request", Target: "https://evil.example/"}, Denied, "host_not_allowed"},
	}
	for i, c := range cases {
		// a fresh agent each time: denials demote an agent's trust
		name := c.name + strconv.Itoa(i)
		perms := Permissions{}
		if c.name == "scoped" {
			perms = scopedPerms
		}
		id := g.register(name, "autonomous", trusted, Limits{}, perms)
		ev := g.exec(actionCmd(id, name, 1, c.act))
		if decision(ev) != c.want {
			t.Errorf("%d %+v: %s %v; want %s", i, c.act, decision(ev), ev.Error, c.want)
			continue
		}
		if c.rule != "" && (code(ev) != CodeSecurityViolated || ev.Error.Details["rule"] != c.rule) {
			t.Errorf("%d %+v: error %+v; want %s rule %s", i, c.act, ev.Error, CodeSecurityViolated, c.rule)
		}
	}
}

// A log written before Config.Detectors re-decides as it was recorded:
// without the switch, read_file /etc/shadow and a request to the metadata
// service are approved on their type's risk, as they were.
func TestDetectors_OffInLogsWrittenBefore(t *testing.T) {
	g := newGate(t)
	id := g.register("old", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
	for i, act := range []Action{{Type: "read_file", Target: "/etc/shadow"}, {Type: "network_request", Target: "http://169.254.169.254/"}} {
		if ev := g.exec(actionCmd(id, "old", i+1, act)); decision(ev) != Approved {
			t.Errorf("%+v without Detectors: %s %v", act, decision(ev), ev.Error)
		}
	}
	if b, _ := json.Marshal(initialConfig()); string(b) != `{"approval_ttl":"24h0m0s","doom_loop_guard_required":false,"max_steps":50}` {
		t.Errorf("initial config encodes as %s", b)
	}
}

// Registration refuses a path or egress policy it could not apply.
func TestDetectors_RegistrationValidates(t *testing.T) {
	g := detectorGate(t)
	for _, p := range []Permissions{
		{AllowedPaths: []string{"srv/data"}}, {AllowedPaths: []string{"/srv/../etc"}}, {DeniedPaths: []string{"/a**"}},
		{AllowedHosts: []string{"API.example.com"}}, {AllowedSchemes: []string{"HTTP"}}, {AllowedPorts: []int{0}},
	} {
		ev := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
			Agent: AgentInfo{Name: "x", Type: "autonomous", PrincipalID: "org_1"}, Permissions: p, TokenHash: tokenHash("x"),
		}})
		if code(ev) != CodeInvalidRequest {
			t.Errorf("%+v: %s %v; want %s", p, ev.Type, ev.Error, CodeInvalidRequest)
		}
	}
}
