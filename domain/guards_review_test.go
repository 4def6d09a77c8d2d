package domain

import (
	"encoding/json"
	"strconv"
	"testing"
)

// QWED-Agent spec v1.1 §2.2 (second review): the path guard read only
// action.target, else the first of parameters.path|file_path|…, so a
// benign target beside a sensitive parameters.path, a second path
// parameter, a name in another case or an array of paths went unchecked.
// Under Config.StrictGuards every path the action names is checked, in
// any case on case-insensitive file systems, and a path parameter that is
// not a string is refused.
func TestAgentSpec_2_2_FileGuardEveryOperand(t *testing.T) {
	p := func(s string) json.RawMessage { return json.RawMessage(s) }
	runDetectorCases(t, Permissions{AllowedPaths: []string{"/srv/data"}, DeniedPaths: []string{"**/*.sqlite"}}, []detectorCase{
		{"open", Action{Type: "read_file", Target: "/tmp/ok", Parameters: p(`{"path":"/etc/shadow"}`)}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Parameters: p(`{"path":"/tmp/ok","file_path":"/etc/shadow"}`)}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Parameters: p(`{"Path":"/etc/shadow"}`)}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Parameters: p(`{"paths":["/tmp/a","/root/.bashrc"]}`)}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Parameters: p(`{"options":{"filePath":"/home/a/.aws/credentials"}}`)}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Parameters: p(`{"path":3}`)}, Denied, "unnormalisable"},
		{"open", Action{Type: "read_file", Parameters: p(`{"file":"","path":"/tmp/report.txt"}`)}, Approved, ""},
		{"open", Action{Type: "read_file", Parameters: p(`{"path":""}`)}, Denied, "no_path"},
		{"open", Action{Type: "read_file", Target: "/home/u/.SSH/authorized_keys"}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Target: "/home/u/project/.ENV"}, Denied, "sensitive_path"},
		{"open", Action{Type: "write_file", Target: "/ETC/cron.d/job"}, Denied, "sensitive_path"},
		{"open", Action{Type: "read_file", Target: "/tmp/Report.txt", Parameters: p(`{"encoding":"utf-8","path":"/tmp/Report.txt"}`)}, Approved, ""},
		{"scoped", Action{Type: "read_file", Target: "/srv/data/q1.csv", Parameters: p(`{"destination":"/srv/other"}`)}, Denied, "outside_allowed_roots"},
		{"scoped", Action{Type: "read_file", Target: "/srv/data/App.SQLite"}, Denied, "denied_path"},
	})
}

// QWED-Agent spec v1.1 §2.2 (second review): the egress guard read only
// action.target, else the first of parameters.url|uri|endpoint, so a
// public target beside parameters.url naming the metadata service, or a
// base_url, passed. Under Config.StrictGuards every URL is checked.
func TestAgentSpec_2_2_EgressGuardEveryOperand(t *testing.T) {
	p := func(s string) json.RawMessage { return json.RawMessage(s) }
	runDetectorCases(t, Permissions{}, []detectorCase{
		{"open", Action{Type: "network_request", Target: "https://example.com/", Parameters: p(`{"url":"http://169.254.169.254/"}`)}, Denied, "metadata_address"},
		{"open", Action{Type: "api_call", Parameters: p(`{"base_url":"http://10.0.0.7/"}`)}, Denied, "non_public_address"},
		{"open", Action{Type: "api_call", Parameters: p(`{"URL":"http://127.0.0.1:2375/containers"}`)}, Denied, "non_public_address"},
		{"open", Action{Type: "api_call", Parameters: p(`{"request":{"endpoints":["https://example.com/","http://[::1]/"]}}`)}, Denied, "non_public_address"},
		{"open", Action{Type: "network_request", Parameters: p(`{"url":["http://0x7f.1/"]}`)}, Denied, "non_public_address"},
		{"open", Action{Type: "network_request", Parameters: p(`{"url":true}`)}, Denied, "unnormalisable"},
		{"open", Action{Type: "api_call", Parameters: p(`{"method":"GET","body":"see http://10.0.0.1/"}`)}, Approved, ""},
		{"open", Action{Type: "network_request", Target: "https://example.com/", Parameters: p(`{"url":"https://example.com/"}`)}, Approved, ""},
	})
}

// QWED-Agent spec v1.1 §2.2 and §5 (second review): the path and egress
// guards applied to actions only, so an agent allowed the tool read_file
// (or network_request, or any tool taking a url) ran it on /etc/shadow or
// the metadata service through POST /agents/{id}/tools/{tool}. Under
// Config.StrictGuards a tool named after a file or network action type is
// checked as that action; any other tool's URLs are checked as an
// api_call's and its paths against the denials.
func TestAgentSpec_2_2_ToolCallsGuarded(t *testing.T) {
	g := detectorGate(t)
	cases := []struct {
		tool, params string
		want         Decision
		rule         string
	}{
		{"read_file", `{"path":"/etc/shadow"}`, Denied, "sensitive_path"},
		{"read_file", `{"encoding":"utf-8"}`, Denied, "no_path"},
		{"read_file", `{"path":"/tmp/report.txt"}`, Approved, ""},
		{"network_request", `{"url":"http://169.254.169.254/latest/meta-data/"}`, Denied, "metadata_address"},
		{"network_request", `{"method":"GET"}`, Denied, "no_url"},
		{"fetch_url", `{"url":"http://[64:ff9b::a9fe:a9fe]/"}`, Denied, "metadata_address"},
		{"fetch_url", `{"url":"https://example.com/"}`, Approved, ""},
		{"upload_report", `{"file":"/home/ann/.ssh/id_ed25519","to":"https://example.com/"}`, Denied, "sensitive_path"},
		{"upload_report", `{"file":"/tmp/q1.csv"}`, Approved, ""},
		{"READ_FILE", `{"path":"/etc/shadow"}`, Denied, "sensitive_path"},
		{"file.write", `{"path":"/etc/cron.d/x"}`, Denied, "sensitive_path"},
		{"save_config", `{"path":"/etc/cron.d/x"}`, Denied, "sensitive_path"},
		{"remove-dir", `{"dir":"/usr/lib"}`, Denied, "sensitive_path"},
		{"show_config", `{"path":"/etc/hosts"}`, Approved, ""},
		{"get_weather", `{"endpoint":"/v1/weather","url":"example.com/today"}`, Approved, ""},
		{"search_web", `{"url":"169.254.169.254/latest/meta-data/"}`, Denied, "metadata_address"},
		{"search_web", `{"url":"//10.0.0.1/admin"}`, Denied, "non_public_address"},
		{"share_link", `{"target":"https://example.com/my%20doc","path":"/docs/a%20b.pdf"}`, Approved, ""},
		{"upload_report", `{"file":"C:\\Users\\ann\\.ssh\\id_rsa"}`, Denied, "sensitive_path"},
		{"upload_report", `{"file":"/etc/sh%61dow"}`, Denied, "sensitive_path"},
		{"upload_report", `{"file":"/tmp/a\u0000b"}`, Denied, "unnormalisable"},
	}
	for i, c := range cases {
		name := "tg" + strconv.Itoa(i)
		id := g.register(name, "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{AllowedTools: []string{c.tool}})
		cmd := toolCmd(id, name, c.tool)
		cmd.Tool.ToolCall.Parameters = json.RawMessage(c.params)
		ev := g.exec(cmd)
		if decision(ev) != c.want {
			t.Errorf("%d %s %s: %s %v; want %s", i, c.tool, c.params, decision(ev), ev.Error, c.want)
			continue
		}
		if c.rule != "" && (code(ev) != CodeSecurityViolated || ev.Error.Details["rule"] != c.rule) {
			t.Errorf("%d %s %s: error %+v; want %s rule %s", i, c.tool, c.params, ev.Error, CodeSecurityViolated, c.rule)
		}
	}
}

// A log written before Config.StrictGuards re-decides as recorded: only
// the target was checked, and tool calls were not.
func TestStrictGuards_OffInLogsWrittenBefore(t *testing.T) {
	g := newGate(t)
	cfg := DefaultConfig()
	cfg.StrictGuards = false
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvConfigured {
		t.Fatalf("configuring: %s %v", ev.Type, ev.Error)
	}
	id := g.register("old", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{AllowedTools: []string{"read_file"}})
	if ev := g.exec(actionCmd(id, "old", 1, Action{Type: "read_file", Target: "/tmp/ok", Parameters: json.RawMessage(`{"path":"/etc/shadow"}`)})); decision(ev) != Approved {
		t.Errorf("action without StrictGuards: %s %v; want APPROVED as recorded", decision(ev), ev.Error)
	}
	cmd := toolCmd(id, "old", "read_file")
	cmd.Tool.ToolCall.Parameters = json.RawMessage(`{"path":"/etc/shadow"}`)
	if ev := g.exec(cmd); decision(ev) != Approved {
		t.Errorf("tool call without StrictGuards: %s %v; want APPROVED as recorded", decision(ev), ev.Error)
	}
}

// QWED-Agent spec v1.1 §5.3 (second review): what StrictSubjects hands
// the engine, and that a log written before Config.StrictGuards keeps
// deciding a built-in tool's unnamed parameters by the rules alone.
func TestAgentSpec5_3_StrictSubjects(t *testing.T) {
	sql := ToolVerification(nil, "database_read")
	for _, c := range []struct {
		params string
		want   string
		bad    bool
	}{
		{`{"Query":"DROP TABLE t"}`, "Query", false},
		{`{"statement":"-- c\n drop table t","table":"users"}`, "statement", false},
		{`{"q":[{"s":"(SELECT 1)"}]}`, "q/0/s", false},
		{`{"table":"users","note":"see the docs"}`, "", false},
		{`{"SQL":3}`, "", true},
		{`{"a":["select 1","select 2","select 3","select 4","select 5","select 6","select 7","select 8","select 9"]}`, "a/0", true},
	} {
		subs, bad := sql.StrictSubjects(json.RawMessage(c.params))
		first := ""
		if len(subs) > 0 {
			first = subs[0].Parameter
		}
		if first != c.want || (bad != "") != c.bad {
			t.Errorf("%s: subjects %v bad %q; want first %q bad %v", c.params, subs, bad, c.want, c.bad)
		}
	}
	code := ToolVerification(nil, "execute_code")
	if subs, _ := code.StrictSubjects(json.RawMessage(`{"language":"python","script":"import os"}`)); len(subs) != 2 {
		t.Errorf("execute_code without code: subjects %v; want both strings", subs)
	}
	g := newGate(t)
	cfg := DefaultConfig()
	cfg.StrictGuards = false
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	id := g.register("old", "autonomous", trustPtr(TrustTrusted), Limits{}, Permissions{})
	cmd := toolCmd(id, "old", "query_data")
	cmd.Tool.ToolCall.Parameters = json.RawMessage(`{"statement":"DROP TABLE users"}`)
	if ev := g.exec(cmd); decision(ev) != Approved {
		t.Errorf("without StrictGuards: %s %v; want APPROVED as recorded", decision(ev), ev.Error)
	}
}
