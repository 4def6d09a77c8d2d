package domain

import (
	"encoding/json"
	"strconv"
	"strings"
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

// detectorCase is one action of a detector table: the agent ("open": no
// policy, "scoped": the test's policy), the action, the decision wanted
// and, for a refusal, the rule named in the error's details.
type detectorCase struct {
	name string
	act  Action
	want Decision
	rule string
}

// runDetectorCases decides each case for a fresh agent (denials demote an
// agent's trust) and checks its decision and QWED-SEC-002 rule.
func runDetectorCases(t *testing.T, scopedPerms Permissions, cases []detectorCase) {
	t.Helper()
	g := detectorGate(t)
	for i, c := range cases {
		name := c.name + strconv.Itoa(i)
		perms := Permissions{}
		if c.name == "scoped" {
			perms = scopedPerms
		}
		id := g.register(name, "autonomous", trustPtr(TrustTrusted), Limits{}, perms)
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

// QWED-Agent spec v1.1 §2.2 (file operations: security check): read_file
// /etc/shadow was approved as low risk; under Config.Detectors it is a
// security violation, however the path is spelled, while an ordinary path
// passes and the agent's roots and globs narrow further.
func TestSeed2_2_FileOperations_Decide(t *testing.T) {
	runDetectorCases(t, Permissions{AllowedPaths: []string{"/srv/data"}, DeniedPaths: []string{"**/*.sqlite"}}, []detectorCase{
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
	})
}

// QWED-Agent spec v1.1 §2.2 (network requests: policy check): the cloud
// metadata service in any spelling, loopback and private addresses are
// refused by default; an egress policy narrows hosts, schemes and ports.
func TestSeed2_2_NetworkRequests_Decide(t *testing.T) {
	runDetectorCases(t, Permissions{AllowedHosts: []string{"api.example.com"}, AllowedSchemes: []string{"https"}}, []detectorCase{
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
	})
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
		{AllowedHosts: []string{"xn--abc-.example"}}, {AllowedHosts: []string{"a..b"}},
		{AllowedSchemes: []string{"HTTP"}}, {AllowedPorts: []int{0}},
	} {
		ev := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
			Agent: AgentInfo{Name: "x", Type: "autonomous", PrincipalID: "org_1"}, Permissions: p, TokenHash: tokenHash("x"),
		}})
		if code(ev) != CodeInvalidRequest {
			t.Errorf("%+v: %s %v; want %s", p, ev.Type, ev.Error, CodeInvalidRequest)
		}
	}
}

// QWED-Agent spec v1.1 §2.2 (network requests; issue 16 item 3, IDN
// tricks normalised): under Config.IDNHosts a host is decided on its
// ASCII form. The fullwidth metadata service is refused as the metadata
// service, an allowed Unicode name is recorded at registration as its
// A-label and matches its URL in either spelling, and a look-alike does
// not match it.
func TestAgentSpec_2_2_NetworkIDN_Decide(t *testing.T) {
	runDetectorCases(t, Permissions{AllowedHosts: []string{"Bücher.example", "*.Example.COM"}}, []detectorCase{
		{"open", Action{Type: "network_request", Target: "http://ｍｅｔａｄａｔａ.google.internal/computeMetadata/v1/"}, Denied, "metadata_address"},
		{"open", Action{Type: "network_request", Target: "http://１６９。２５４。１６９。２５４/latest/"}, Denied, "metadata_address"},
		{"open", Action{Type: "network_request", Target: "https://xn--abc-.example/"}, Denied, "unnormalisable"},
		{"open", Action{Type: "network_request", Target: "https://bücher.example/"}, Approved, ""},
		{"scoped", Action{Type: "network_request", Target: "https://BÜCHER.example/"}, Approved, ""},
		{"scoped", Action{Type: "network_request", Target: "https://xn--bcher-kva.example/"}, Approved, ""},
		{"scoped", Action{Type: "network_request", Target: "https://api.ｅｘａｍｐｌｅ.com/"}, Approved, ""},
		{"scoped", Action{Type: "network_request", Target: "https://bucher.example/"}, Denied, "host_not_allowed"},
		{"scoped", Action{Type: "network_request", Target: "https://api.ex\u0430mple.com/"}, Denied, "host_not_allowed"},
	})
	g := detectorGate(t)
	ev := g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
		Agent:       AgentInfo{Name: "idn", Type: "autonomous", PrincipalID: "org_1"},
		Permissions: Permissions{AllowedHosts: []string{"api.example.com", "Bücher.example", "*.Example.COM", "10.0.0.5"}}, TokenHash: tokenHash("idn"),
	}})
	if ev.Type != EvAgentRegistered {
		t.Fatalf("registering: %s %v", ev.Type, ev.Error)
	}
	if got := strings.Join(ev.Registered.Permissions.AllowedHosts, " "); got != "api.example.com xn--bcher-kva.example *.example.com 10.0.0.5" {
		t.Errorf("recorded allowed_hosts %q", got)
	}
}

// A log written before Config.IDNHosts re-decides as it was recorded: a
// non-ASCII host is refused as unnormalisable, and so is a registration
// naming one.
func TestAgentSpec_2_2_NetworkIDN_OffInLogsWrittenBefore(t *testing.T) {
	g := newGate(t)
	cfg := DefaultConfig()
	cfg.IDNHosts = false
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvConfigured {
		t.Fatalf("configuring: %s %v", ev.Type, ev.Error)
	}
	id := g.register("old", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
	ev := g.exec(actionCmd(id, "old", 1, Action{Type: "network_request", Target: "http://ｍｅｔａｄａｔａ.google.internal/"}))
	if decision(ev) != Denied || ev.Error.Details["rule"] != "unnormalisable" {
		t.Errorf("without IDNHosts: %s %v", decision(ev), ev.Error)
	}
	ev = g.exec(&Command{Type: CmdRegisterAgent, Principal: "org_1", Register: &RegisterAgent{
		Agent:       AgentInfo{Name: "x", Type: "autonomous", PrincipalID: "org_1"},
		Permissions: Permissions{AllowedHosts: []string{"Bücher.example"}}, TokenHash: tokenHash("x"),
	}})
	if code(ev) != CodeInvalidRequest {
		t.Errorf("registering a Unicode host without IDNHosts: %s %v", ev.Type, ev.Error)
	}
}

// QWED-Agent spec v1.1 §5.2 no_pii_leakage, QWED protocol v1.0 §8
// QWED-SEC-003: an outbound action or a tool call carrying a card
// number, an IBAN, an SSN or a credential is refused, its details naming
// the kind and place but never the value; addresses and phone numbers
// pass, and so do non-outbound actions and logs written before PIIGuard.
func TestSeed5_2_NoPIILeakage_Decide(t *testing.T) {
	g := detectorGate(t)
	card := "4111 1111 1111 1111"
	cases := []struct {
		act  *Action
		tool json.RawMessage
		want Decision
		kind string
	}{
		{act: &Action{Type: "send_email", Parameters: json.RawMessage(`{"to":"ann@example.com","body":"card ` + card + `"}`)}, want: Denied, kind: "card_number"},
		{act: &Action{Type: "api_call", Target: "https://api.example.com/?key=AKIAIOSFODNN7EXAMPLE"}, want: Denied, kind: "secret"},
		{act: &Action{Type: "send_message", Parameters: json.RawMessage(`{"text":"pay to GB82WEST12345698765432"}`)}, want: Denied, kind: "iban"},
		{act: &Action{Type: "send_email", Parameters: json.RawMessage(`{"to":"ann@example.com","body":"call +44 20 7946 0958"}`)}, want: Approved},
		{act: &Action{Type: "read_file", Target: "/tmp/cards-" + "4111111111111111" + ".txt"}, want: Approved},
		{tool: json.RawMessage(`{"note":"ssn 078-05-1120"}`), want: Denied, kind: "us_ssn"},
		{tool: json.RawMessage(`{"note":"order 12345"}`), want: Approved},
	}
	for i, c := range cases {
		name := "pii" + strconv.Itoa(i)
		id := g.register(name, "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
		var cmd *Command
		if c.act != nil {
			cmd = actionCmd(id, name, 1, *c.act)
		} else {
			cmd = toolCmd(id, name, "send_email")
			cmd.Tool.ToolCall.Parameters = c.tool
		}
		ev := g.exec(cmd)
		if decision(ev) != c.want {
			t.Errorf("%d: %s %v; want %s", i, decision(ev), ev.Error, c.want)
			continue
		}
		if c.kind == "" {
			continue
		}
		if code(ev) != CodePIIDetected {
			t.Errorf("%d: error %+v; want %s", i, ev.Error, CodePIIDetected)
			continue
		}
		if kinds, _ := ev.Error.Details["kinds"].([]string); len(kinds) == 0 || kinds[0] != c.kind {
			t.Errorf("%d: details %v; want kind %s", i, ev.Error.Details, c.kind)
		}
		if b, _ := json.Marshal(ev.Error); strings.Contains(string(b), "AKIAIOSFODNN7EXAMPLE") || strings.Contains(string(b), "4111") {
			t.Errorf("%d: the error holds the value found: %s", i, b)
		}
	}
	old := newGate(t)
	id := old.register("old", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
	if ev := old.exec(actionCmd(id, "old", 1, *cases[0].act)); decision(ev) != Approved {
		t.Errorf("without PIIGuard: %s %v; want APPROVED as recorded", decision(ev), ev.Error)
	}
}
