package eventjson_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/domain/policy"
)

// The frozen fixtures of schemas/testdata/events/v1 are the definition of
// the event format: one payload per event type (taken from a recorded log
// where the recorded history has one) and per case of escaping and field
// rules. Their bytes are in existing logs, so they never change: the tests
// below decode each one, encode it again and compare byte for byte.
// -update-fixtures writes them once, from fixtureEvents, after checking
// every one against encoding/json v1 (the definition the logs were written
// by); it refuses to overwrite a fixture that exists with other bytes.

var updateFixtures = flag.Bool("update-fixtures", false, "write the missing fixtures of schemas/testdata/events/v1")

const fixtureDir = "../../schemas/testdata/events/v1"

// TestFixturesRoundTrip pins the format: every fixture decodes, and the
// decoded event encodes to the fixture's bytes exactly; the fixture
// decodes to the event encoding/json (the oracle) decodes; and DecodeFoldEvent
// decodes it too.
func TestFixturesRoundTrip(t *testing.T) {
	if *updateFixtures {
		writeFixtures(t)
	}
	names := fixtureNames(t)
	if len(names) < 30 {
		t.Fatalf("%d fixtures in %s", len(names), fixtureDir)
	}
	types := map[domain.EventType]bool{}
	for _, name := range names {
		p := readFixture(t, name)
		ev, err := eventjson.DecodeEvent(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		types[ev.Type] = true
		again, err := eventjson.Marshal(ev)
		want := p
		if name == "escape.invalid_utf8" {
			// Each byte of invalid UTF-8 is written \ufffd, which reads
			// back as U+FFFD: the only payload whose round trip is not
			// the identity.
			want = bytes.ReplaceAll(p, []byte(`\ufffd`), []byte("\ufffd"))
		}
		if err != nil || !bytes.Equal(again, want) {
			t.Errorf("%s: encode(decode(fixture)) =\n%s, %v\nwant\n%s", name, again, err, p)
		}
		eventjson.SameAsOracle(t, p)
		if _, err := eventjson.DecodeFoldEvent(p); err != nil {
			t.Errorf("%s: DecodeFoldEvent: %v", name, err)
		}
	}
	for _, typ := range allEventTypes {
		if !types[typ] {
			t.Errorf("no fixture of an event of type %s", typ)
		}
	}
}

// TestFixturesAreTheEncoding pins the encoding direction: the events the
// fixtures were written from (fixtureEvents) encode to the fixtures' bytes,
// the invalid UTF-8 case (which the decoder cannot give back) included.
func TestFixturesAreTheEncoding(t *testing.T) {
	for _, f := range fixtureEvents(t) {
		if f.ev == nil {
			continue
		}
		p, err := eventjson.Marshal(f.ev)
		if want := readFixture(t, f.name); err != nil || !bytes.Equal(p, want) {
			t.Errorf("%s: the event encodes to\n%s, %v\nwant\n%s", f.name, p, err, want)
		}
	}
}

// allEventTypes are the event types the gate writes.
var allEventTypes = []domain.EventType{
	domain.EvAgentRegistered, domain.EvActionDecided, domain.EvExecutionLogged, domain.EvTrustElevationRequested,
	domain.EvApprovalResolved, domain.EvTrustChanged, domain.EvAgentStatusChanged, domain.EvToolRegistrySet,
	domain.EvPrincipalKeyIssued, domain.EvPrincipalKeyRevoked, domain.EvAgentTokenRotated, domain.EvAgentTokenRevoked,
	domain.EvConfigured, domain.EvApprovalsExpired, domain.EvCommandRejected, domain.EvLogCheckpointed,
	domain.EvQWEDVerified, domain.EvA2AVerdict, domain.EvA2ABoundaryChanged, domain.EvPrincipalStateCopied,
	// The consumer policy engine (issue 14).
	domain.EvBusinessChanged, domain.EvExecutePrepared, domain.EvExecuteDecided, domain.EvExecuteCompleted, domain.EvExecuteTimers,
}

func fixtureNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = strings.TrimSuffix(filepath.Base(f), ".json")
	}
	return files
}

// readFixture returns a fixture's payload: the file's one line, without
// its newline.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := bytes.CutSuffix(b, []byte("\n"))
	if !ok || bytes.Contains(p, []byte("\n")) {
		t.Fatalf("%s: not one line ending in a newline", name)
	}
	return p
}

// writeFixtures writes the fixtures fixtureEvents makes that are missing.
func writeFixtures(t *testing.T) {
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtureEvents(t) {
		p, ev := f.payload, f.ev
		if p == nil {
			var err error
			if p, err = eventjson.Marshal(ev); err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
		} else {
			ev = new(domain.Event)
			if err := json.Unmarshal(p, ev); err != nil {
				t.Fatal(err)
			}
		}
		if want, err := json.Marshal(ev); eventjson.OracleIsV2 || err != nil || !bytes.Equal(p, want) {
			t.Fatalf("%s: the payload is not encoding/json v1's (%v):\n%s\n%s", f.name, err, p, want)
		}
		path := filepath.Join(fixtureDir, f.name+".json")
		if old, err := os.ReadFile(path); err == nil {
			if !bytes.Equal(old, append(p, '\n')) {
				t.Fatalf("%s exists with other bytes: fixtures are frozen", path)
			}
			continue
		}
		if err := os.WriteFile(path, append(p, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type fixture struct {
	name string
	// payload is a recorded payload; ev is the event otherwise.
	payload []byte
	ev      *domain.Event
}

// fixtureEvents returns the fixtures: the first event of each type in the
// recorded history, events of the other types, and the escaping and field
// cases as edits of a recorded decision.
func fixtureEvents(t *testing.T) []fixture {
	var out []fixture
	seen := map[string]bool{}
	for _, p := range recordedHistory(t) {
		var probe struct {
			Type     string
			Decided  *struct{ Decision string }
			Executed *struct{}
		}
		if err := json.Unmarshal(p, &probe); err != nil {
			t.Fatal(err)
		}
		name := probe.Type
		if probe.Decided != nil {
			name += "." + strings.ToLower(probe.Decided.Decision)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, fixture{name: "recorded." + name, payload: p})
		}
	}
	at := time.Date(2026, 11, 24, 9, 30, 0, 123456000, time.UTC)
	base := func(seq uint64, typ domain.EventType) *domain.Event {
		return &domain.Event{Seq: seq, Prev: strings.Repeat("ab", 32), Partition: 3, Time: at, Type: typ,
			AgentID: "agent_0123456789abcdef"}
	}
	req := domain.RequestID{Source: "http", ID: "req-1"}
	toLevel := domain.TrustLevel(2)
	approval := domain.Approval{ID: "apr_0123456789abcdef0123", AgentID: "agent_0123456789abcdef", PrincipalID: "org_1",
		Kind: "trust_elevation", Status: domain.ApprovalPending, Summary: "trust 1 -> 2", Risk: domain.RiskMedium,
		ToLevel: &toLevel, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	evs := map[string]*domain.Event{}
	{
		ev := base(5, domain.EvTrustElevationRequested)
		ev.Command = &domain.Command{Type: domain.CmdRequestTrust, Request: req, AgentID: ev.AgentID,
			Trust: &domain.RequestTrustElevation{Request: "elev-1", FromLevel: 1, ToLevel: 2, Justification: "needs writes"}}
		ev.Elevation = &domain.TrustElevationRequested{RequestID: "trq_1", Claimed: *ev.Command.Trust,
			Computed: domain.TrustEvidence{}, Accepted: true, Reasons: []string{"clean history"}, Approval: &approval}
		evs["type.trust.elevation_requested"] = ev
	}
	{
		ev := base(6, domain.EvToolRegistrySet)
		ev.AgentID = ""
		ev.ToolRegistry = &domain.PutToolRegistry{PrincipalID: "org_1", Tools: []domain.ToolSpec{
			{Name: "send_email", RiskLevel: domain.RiskHigh, RequiresApproval: true},
			{Name: "run_sql", RiskLevel: domain.RiskCritical, RequiresVerification: true, VerificationEngine: "sql", SandboxRequired: true},
		}}
		ev.Command = &domain.Command{Type: domain.CmdPutToolRegistry, Request: req, Principal: "org_1", ToolRegistry: ev.ToolRegistry}
		evs["type.principal.tools_set"] = ev
	}
	key := &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyHash: strings.Repeat("cd", 32), KeyID: "key_1"}
	{
		ev := base(7, domain.EvPrincipalKeyIssued)
		ev.AgentID = ""
		ev.KeyIssued = key
		ev.Command = &domain.Command{Type: domain.CmdIssuePrincipalKey, Request: req, Principal: "org_1", IssueKey: key}
		evs["type.principal.key_issued"] = ev
	}
	{
		ev := base(8, domain.EvPrincipalKeyRevoked)
		ev.AgentID = ""
		ev.KeyRevoked = key
		ev.Command = &domain.Command{Type: domain.CmdRevokePrincipalKey, Request: req, Principal: "org_1", RevokeKey: key}
		evs["type.principal.key_revoked"] = ev
	}
	{
		ev := base(9, domain.EvAgentTokenRotated)
		ev.TokenChanged = &domain.AgentTokenChange{TokenHash: strings.Repeat("ef", 32)}
		ev.Command = &domain.Command{Type: domain.CmdRotateAgentToken, Request: req, AgentID: ev.AgentID}
		evs["type.agent.token_rotated"] = ev
	}
	{
		ev := base(10, domain.EvAgentTokenRevoked)
		ev.TokenChanged = &domain.AgentTokenChange{}
		ev.Command = &domain.Command{Type: domain.CmdRevokeAgentToken, Request: req, AgentID: ev.AgentID}
		evs["type.agent.token_revoked"] = ev
	}
	{
		ev := base(11, domain.EvConfigured)
		ev.AgentID = ""
		// The configuration a gate wrote when v1 was frozen (DefaultConfig
		// has since gained engine_sql_risk).
		cfg := domain.Config{ApprovalTTL: domain.Duration(24 * time.Hour), MaxSteps: 50, WithholdRefusals: true}
		ev.Configured = &cfg
		ev.Command = &domain.Command{Type: domain.CmdConfigure, Request: req, Configure: &domain.Configure{Config: cfg}}
		evs["type.gate.configured"] = ev
	}
	{
		ev := base(12, domain.EvQWEDVerified)
		ev.AgentID = ""
		ev.QWEDVerified = &domain.QWEDVerified{VerificationID: "ver_0123456789abcdef0123", Attestations: []string{"", "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"}}
		evs["type.qwed.verified"] = ev
	}
	{
		ev := base(13, domain.EvCommandRejected)
		ev.Error = &domain.Error{Code: "QWED-SEC-002", Message: "Malicious payload detected: eval of input",
			Details: map[string]any{"findings": []engines.Finding{{Rule: "py.eval", Severity: "critical", Message: "eval of input", Line: 3, Column: 7, Snippet: "eval(x)"}},
				"language": "python", "risk_level": "critical"}}
		ev.Command = &domain.Command{Type: domain.CmdRejectRequest, Request: req, Principal: "org_1",
			Reject: &domain.RejectRequest{Error: *ev.Error, Endpoint: "/verify/code", BodyDigest: strings.Repeat("01", 32), BodyBytes: 120}}
		evs["details.struct_order"] = ev
	}
	// Agent-to-agent interception (issue 13): a verdict of each status and
	// guard, a boundary change, a configuration with A2A settings.
	a2aVerdict := func(seq uint64, name string, typ a2a.PayloadType, payload string, v domain.A2AVerdict, e *domain.Error) {
		ev := base(seq, domain.EvA2AVerdict)
		ev.AgentID = ""
		ev.Command = &domain.Command{Type: domain.CmdA2AMessage, Request: domain.RequestID{Source: "http", ID: "a2a-" + name, Scope: "principal:org_1"},
			Principal: "org_1", A2A: &a2a.Message{SenderAgentID: "procurement-agent", ReceiverAgentID: "treasury-agent", PayloadType: typ,
				Payload: json.RawMessage(payload), TraceID: "demo_" + name}}
		v.Boundary, v.Sender, v.Receiver, v.PayloadType, v.TraceID = "org_1", "procurement-agent", "treasury-agent", typ, "demo_"+name
		v.PayloadDigest = "sha256:" + strings.Repeat("5a", 32)
		if v.Status != a2a.StatusError {
			v.Attestation = "eyJhbGciOiJFUzI1NiIsInR5cCI6InF3ZWQtYTJhLWF0dGVzdGF0aW9uK2p3dCJ9.e30.c2ln"
		}
		ev.A2AVerdict, ev.Error = &v, e
		evs["type.a2a.verdict."+name] = ev
	}
	fin := `{"data":{"claimed_total":150.00,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`
	a2aVerdict(14, "forwarded", a2a.PayloadFinancial, fin, domain.A2AVerdict{Status: a2a.StatusForwarded, Engine: a2a.EngineFinance,
		Reason: "verified by finance_guard"}, nil)
	why := "Mathematical hallucination detected: claimed_total=999.99, computed_total=150.00"
	a2aVerdict(15, "blocked_finance", a2a.PayloadFinancial, strings.Replace(fin, "150.00", "999.99", 1), domain.A2AVerdict{Status: a2a.StatusBlocked,
		Engine: a2a.EngineFinance, Reason: why, Details: &domain.A2ADetails{ClaimedTotal: "999.99", ComputedTotal: "150.00"}},
		&domain.Error{Code: domain.CodeA2AFinance, Message: why})
	why = "Logical contradiction detected: claims both asserted and negated: ['budget_approved']"
	a2aVerdict(16, "blocked_logic", a2a.PayloadLogic, `{"assertions":[{"claim":"budget_approved"},{"claim":"budget_approved","negated":true}]}`,
		domain.A2AVerdict{Status: a2a.StatusBlocked, Engine: a2a.EngineLogic, Reason: why, Details: &domain.A2ADetails{Contradictions: []string{"budget_approved"}}},
		&domain.Error{Code: domain.CodeA2ALogic, Message: why})
	why = "Dangerous code pattern detected: os.system"
	a2aVerdict(17, "blocked_code", a2a.PayloadCode, `{"code":"import os\nos.system(\"rm -rf /\")","language":"python"}`,
		domain.A2AVerdict{Status: a2a.StatusBlocked, Engine: a2a.EngineCode, Reason: why, Details: &domain.A2ADetails{Patterns: []string{"os.system"},
			Findings: []engines.Finding{{Rule: "py.os_system", Severity: "critical", Message: "os.system runs a shell command", Line: 2, Column: 1, Snippet: "os.system"}}}},
		&domain.Error{Code: domain.CodeA2ACode, Message: why})
	why = "sender 'procurement-agent' is blocked"
	a2aVerdict(18, "blocked_trust", a2a.PayloadGeneral, `{"message":"Hello!"}`,
		domain.A2AVerdict{Status: a2a.StatusBlocked, Engine: a2a.EngineTrust, Reason: why}, &domain.Error{Code: domain.CodeA2ATrustBlocked, Message: why})
	why = "rate limit of pair 'procurement-agent' -> 'treasury-agent' exceeded: retry after 1000 ms"
	a2aVerdict(19, "rate_limited", a2a.PayloadDataQuery, `{"query":"balance"}`,
		domain.A2AVerdict{Status: a2a.StatusRateLimited, Engine: a2a.EngineTrust, Reason: why, RetryAfterMs: 1000},
		&domain.Error{Code: domain.CodeA2ARateLimited, Message: why})
	a2aVerdict(20, "error", a2a.PayloadGeneral, `{"message":"Hello!"}`,
		domain.A2AVerdict{Status: a2a.StatusError, Engine: a2a.EnginePassthrough, Reason: "attestation could not be issued"},
		&domain.Error{Code: domain.CodeA2AAttestation, Message: "attestation could not be issued"})
	a2aVerdict(21, "shadow", a2a.PayloadFinancial, `{"data":{"claimed_total":"NaN","line_items":[]}}`,
		domain.A2AVerdict{Status: a2a.StatusForwarded, Engine: a2a.EngineFinance, Shadow: true,
			Reason: "finance_guard failed; forwarded in shadow mode (block_on_error false)", Details: &domain.A2ADetails{EngineError: "claimed_total is not a number"}}, nil)
	{
		ev := base(22, domain.EvA2ABoundaryChanged)
		ev.AgentID = ""
		change := &domain.A2ABoundaryChange{Op: domain.A2AOpBlockPair, Sender: "agent-A", Receiver: "agent-B"}
		ev.Command = &domain.Command{Type: domain.CmdA2ABoundary, Request: req, Principal: "org_1", A2ABoundary: change}
		ev.A2ABoundary = change
		evs["type.a2a.boundary_changed"] = ev
	}
	{
		// A consumer's policy created by the admin (version 1), and one
		// deleted by its consumer (version 3: the change after update 2).
		ev := base(25, domain.EvPolicyChanged)
		ev.AgentID = ""
		sent := policy.Policy{ID: "office-hours", Name: "Office hours", Type: policy.TypeTimeWindow, Scope: policy.Scope{Agents: []string{"agent_0123456789abcdef"}},
			TimeWindow: &policy.TimeWindow{TimeZone: "Europe/Paris", Outside: policy.OutsideQueue,
				Windows: []policy.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:30"}}}}
		ev.Command = &domain.Command{Type: domain.CmdPolicy, Request: req, Principal: domain.AdminPrincipal,
			Policy: &domain.PolicyChange{Op: domain.OpCreate, Consumer: "org_1", Policy: sent}}
		recorded := sent.Clone()
		recorded.Version = 1
		ev.Policy = &recorded
		evs["type.policy.changed"] = ev

		ev = base(26, domain.EvPolicyChanged)
		ev.AgentID = ""
		ev.Command = &domain.Command{Type: domain.CmdPolicy, Request: req, Principal: "org_1",
			Policy: &domain.PolicyChange{Op: domain.OpDelete, Policy: policy.Policy{ID: "daily-cap"}}}
		ev.Policy = &policy.Policy{ID: "daily-cap", Type: policy.TypeSpending, Scope: policy.Scope{BusinessID: "shop.1"}, Shadow: true, Version: 3,
			Spending: &policy.Spending{PerTransactionCents: 5000, DailyCents: 10000, OnExceed: policy.OnExceedConfirm}}
		evs["type.policy.changed.delete"] = ev
	}
	{
		ev := base(24, domain.EvPrincipalStateCopied)
		ev.AgentID, ev.Partition = "", 1
		revoked := &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyHash: strings.Repeat("cd", 32), KeyID: "key_1"}
		ev.Command = &domain.Command{Type: domain.CmdCopyPrincipalState, Request: domain.RequestID{Source: "agentgate/global", ID: "0/41"},
			Copy: &domain.PrincipalStateCopy{From: 0, Seq: 41, Hash: strings.Repeat("ef", 32), Offset: 57, Changes: []domain.CopiedChange{
				{Seq: 38, Type: domain.EvPrincipalKeyIssued, KeyIssued: key},
				{Seq: 40, Type: domain.EvA2ABoundaryChanged, Principal: "org_1",
					A2ABoundary: &domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: "agent-A"}},
				{Seq: 41, Type: domain.EvPrincipalKeyRevoked, KeyRevoked: revoked},
			}}}
		evs["type.principal.state_copied"] = ev
	}
	{
		ev := base(23, domain.EvConfigured)
		ev.AgentID = ""
		a := domain.DefaultA2AConfig()
		a.TrustedAgents, a.BypassAgents = []string{"agent-A", "agent-B"}, []string{"audit-agent"}
		cfg := domain.Config{ApprovalTTL: domain.Duration(24 * time.Hour), MaxSteps: 50, WithholdRefusals: true, EngineSQLRisk: true, A2A: &a}
		ev.Configured = &cfg
		ev.Command = &domain.Command{Type: domain.CmdConfigure, Request: req, Principal: domain.AdminPrincipal, Configure: &domain.Configure{Config: cfg}}
		evs["type.gate.configured.a2a"] = ev
	}
	execFixtures(base, req, evs)
	// The escaping and field cases: edits of a recorded approved decision.
	typical := func(t *testing.T) *domain.Event {
		p := eventjson.BenchEvent(t, "approved")
		var ev domain.Event
		if err := json.Unmarshal(p, &ev); err != nil {
			t.Fatal(err)
		}
		return &ev
	}
	text := func(name, s string) {
		ev := typical(t)
		ev.Command.Verify.Action.Query = s
		ev.Command.Verify.Context.ConversationID = s
		ev.Decided.ConversationID = s
		evs["escape."+name] = ev
	}
	text("control", "a\x00\x01\x1f\x7f\b\f\n\r\t\"\\/z")
	text("invalid_utf8", "a\xffb\xc3(c\xed\xa0\x80d\xf0\x9f\x98e\xc0\xaf")
	text("line_separators", "a\u2028b\u2029c")
	text("html", "<script>a && b > c</script>")
	text("non_ascii", "é日本語🎉\ufffd")
	{
		ev := typical(t)
		ev.Seq = 1<<64 - 1
		ev.Partition = -1 << 31
		ev.Command.Verify.Action.EstimatedTokens = 1<<63 - 1
		ev.Command.Verify.Context.StepNumber = "123456789012345678901234567890"
		ev.Decided.ReservedTokens = -1 << 63
		ev.Decided.Step = 1<<63 - 1
		evs["number.big"] = ev
	}
	for name, amount := range map[string]domain.USD{"micro": 1, "half": 1_500_000, "whole": 100_000_000, "negative": -10_000,
		"max_fast": 999_999_999_999, "large": 5_000_000_250_000} {
		ev := typical(t)
		ev.Command.Verify.Action.EstimatedCost = amount
		ev.Decided.ReservedCost = amount
		evs["money."+name] = ev
	}
	{
		ev := typical(t)
		ev.Error = &domain.Error{Code: domain.CodeInvalidRequest, Message: "values",
			Details: map[string]any{"uint64": uint64(1<<64 - 1), "int64": int64(-1 << 63), "number": json.Number("1e400"),
				"usd": domain.USD(1_500_000), "float": 0.1, "tiny": 1e-7, "huge": 1e21, "bool": true, "null": nil,
				"strings": []string{"a", "<b>"}, "empty_list": []string{}, "list": []any{1, "x", nil},
				"object": map[string]any{"z": 1, "a": map[string]any{"nested": true}}, "html": "<&>",
				"time": at, "raw": json.RawMessage(` { "b" : [1, 2], "a" : "<\u2028>" } `)}}
		evs["details.values"] = ev
	}
	{
		ev := typical(t)
		ev.Command.Verify.Action.Parameters = json.RawMessage(`{"to":["a@example.com"],"html":"<p>&amp;</p>","n":1.50,"deep":{"x":[true,false,null]}}`)
		evs["field.raw_parameters"] = ev
	}
	{
		ev := typical(t)
		ev.Command.Verify.Action.Query = ""
		ev.Command.Verify.Action.EstimatedCost = 0
		ev.Command.Verify.Context.StepNumber = ""
		ev.Decided.Verification.ChecksPassed = nil
		ev.Decided.Verification.ChecksFailed = []string{}
		ev.Decided.ConversationID = ""
		ev.AgentID = ""
		ev.Prev = ""
		evs["field.empty"] = ev
	}
	{
		ev := typical(t)
		ev.Time = time.Date(2026, 3, 29, 2, 30, 0, 1, time.FixedZone("", -(9*3600+30*60)))
		evs["field.time_offset"] = ev
	}
	names := make([]string, 0, len(evs))
	for n := range evs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, fixture{name: n, ev: evs[n]})
	}
	return out
}
