package eventjson

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/policy"
)

// fullEvents are events of every type with every field the fast path
// decodes set to a value that is not its zero (strings with escapes,
// HTML-escaped and non-ASCII text, negative and fractional amounts).
func fullEvents() []*domain.Event {
	at := time.Date(2026, 11, 24, 9, 30, 15, 123456789, time.UTC)
	later := at.Add(time.Hour)
	usd := func(v domain.USD) *domain.USD { return &v }
	n := func(v int64) *int64 { return &v }
	level := func(v domain.TrustLevel) *domain.TrustLevel { return &v }
	text := "a <b> & \"c\" \\ é 日本 😀 \u2028\n\t"
	cmd := func(typ domain.CommandType) *domain.Command {
		return &domain.Command{Type: typ, Request: domain.RequestID{Source: "http", ID: "req-1", Scope: "principal:org_1"}, Principal: "org_1",
			AgentID: "agent_1", TokenHash: "hash"}
	}
	ctx := domain.ActionContext{ConversationID: "c1", StepNumber: "7", UserIntent: text, PreActionStateHash: "ph", StateSource: "git_tree"}
	findings := []engines.Finding{{Rule: "R1", Severity: "high", Message: text, Line: 3, Column: -1, Snippet: "x = 1"}, {Rule: "R2"}}
	action := domain.Action{Type: "execute_sql", Query: text, Code: "print(1)", Target: "db", Parameters: json.RawMessage(`{"a":[1,2.5,"x"],"b":null}`),
		EstimatedCost: domain.USD(-1_500_000), EstimatedTokens: 1 << 40, Output: text}
	errDetails := func() *domain.Error {
		return &domain.Error{Code: domain.CodeBudgetCost, Message: text, Details: map[string]any{
			"current": 0.5, "limit": 1, "name": "n", "ok": true, "none": nil, "list": []any{1, "a", []any{}}, "sub": map[string]any{"k": -2e-9}}}
	}
	budget := domain.BudgetRemaining{DailyCost: usd(-12_345), HourlyRequests: n(1), DailyRequests: n(-2), DailyTokens: n(1 << 62),
		HourlyTools: n(0), HighRiskCalls: n(5)}
	approval := domain.Approval{ID: "act_1", AgentID: "agent_1", PrincipalID: "org_1", Kind: "action", Status: domain.ApprovalPending,
		Summary: text, Risk: domain.RiskHigh, ToLevel: level(3), CreatedAt: at, ExpiresAt: later, ResolvedAt: &later, ResolvedBy: "org_1", Reason: "r"}
	trust := &domain.TrustChange{From: 2, To: 1, Reason: text}

	verify := cmd(domain.CmdVerifyAction)
	verify.Verify = &domain.VerifyAction{Action: action, Context: ctx, Options: domain.Options{RequireAttestation: true, RiskThreshold: "medium"}}
	verify.Verdict = &domain.EngineVerdict{Engine: "sql", EngineVersion: "1.0", Status: engines.Corrected, OutcomeDigest: "od", Corrected: "SELECT 1",
		Findings: findings, Risk: domain.RiskCritical, Reason: text, Code: "QWED-ENG-002", Parameter: text}
	decided := &domain.ActionDecided{ActionID: "act_1", Kind: domain.KindAction, ActionType: "execute_sql", Tool: "t", Decision: domain.Corrected,
		Verification: domain.Verification{Status: "VERIFIED", Engine: "sql", RiskLevel: domain.RiskMedium, RiskScore: "0.5",
			ChecksPassed: []string{"context_valid", "custom check"}, ChecksFailed: []string{}, Sandbox: true, Findings: findings,
			PII: []domain.PIIFinding{{Kind: "email", Location: "parameters/to", Offset: 3}, {Kind: "card_number", Location: "output", Offset: 1 << 40}}},
		Error: errDetails(), RequestDigest: "rd", Fingerprint: "fp", StateFingerprint: "sf", ConversationID: "c1", Step: -7, StepConsumed: true,
		ReservedCost: 10, ReservedTokens: -3, HighRisk: true, Approval: &approval, Attestation: "jwt", Trust: trust, SecurityViolation: true,
		ResetRecent: true, ResetBudgetDenials: true, ConversationEvicted: "c0", Budget: budget, OutcomeDigest: "od",
		CorrectedAction: &action, CorrectedDigest: "cd",
		Notify: &domain.DecisionNotice{Principal: "org_1", Code: domain.CodeSecurityViolated, Check: "path_allowed", Status: "BLOCKED", Risk: domain.RiskHigh}}

	tool := cmd(domain.CmdVerifyToolCall)
	tool.Tool = &domain.VerifyToolCall{ToolCall: domain.ToolCall{ToolName: "send_email", Parameters: json.RawMessage(`[{"to":"x"}]`),
		EstimatedCost: 999_999_999_999, EstimatedTokens: 5}, Justification: text, Context: &ctx, Options: domain.Options{RiskThreshold: "low"}}

	exec := cmd(domain.CmdLogExecution)
	exec.Execution = &domain.LogExecution{ActionID: "act_1", Success: true, CostUSD: 1, Tokens: 2, ResultHash: "rh", Sandboxed: true, Sandbox: "gvisor"}
	executed := &domain.ExecutionLogged{ActionID: "act_1", Success: true, CostUSD: 1, Tokens: 2, ResultHash: "rh", CostDelta: -5, TokensDelta: -1,
		SameDay: true, Budget: budget, SandboxViolation: true,
		OutputFindings: []domain.PIIFinding{{Kind: "us_ssn", Location: "output", Offset: 12}}, PIIViolation: true}
	exec.OutputScan = &domain.OutputScan{Bytes: 64 << 10, SHA256: strings.Repeat("cd", 32), Findings: executed.OutputFindings}

	reject := cmd(domain.CmdRejectRequest)
	reject.Reject = &domain.RejectRequest{Error: *errDetails(), Endpoint: "/agents/x/verify", BodyDigest: "bd", BodyBytes: 1234}

	register := cmd(domain.CmdRegisterAgent)
	info := domain.AgentInfo{Name: text, Type: "autonomous", Description: "d", PrincipalID: "org_1", Framework: "f", Model: "m"}
	perms := domain.Permissions{AllowedEngines: []string{"math", "sql"}, AllowedTools: []string{}, BlockedTools: []string{"rm"},
		AllowedPaths: []string{"/srv"}, DeniedPaths: []string{"**/.env"}, AllowedHosts: []string{"api.example.com"}, AllowedSchemes: []string{"https"}, AllowedPorts: []int{443, 8443}}
	limits := domain.Limits{MaxDailyCost: 5_000_000, MaxPerRequestCost: 1, MaxRequestsPerHour: 2, MaxRequestsPerDay: 3, MaxTokensPerRequest: 4,
		MaxDailyTokens: 5, MaxToolCallsPerHour: 6, MaxHighRiskCallsDay: 7}
	register.Register = &domain.RegisterAgent{Agent: info, Permissions: perms, Budget: limits, TrustLevel: level(0), TokenHash: "th"}

	resolve := cmd(domain.CmdResolveApproval)
	resolve.Resolve = &domain.ResolveApproval{ApprovalID: "act_1", Approve: true, Reason: text}
	setTrust := cmd(domain.CmdSetTrustLevel)
	setTrust.SetTrust = &domain.SetTrustLevel{Level: 3, Reason: "r"}
	suspend := cmd(domain.CmdSuspendAgent)
	suspend.Suspend = &domain.SuspendAgent{Suspended: true, Reason: "r"}
	complaint := cmd(domain.CmdFileComplaint)
	complaint.Complaint = &domain.FileComplaint{Reason: text}
	tick := cmd(domain.CmdTick)
	tick.Tick = &domain.Tick{}
	qwed := cmd(domain.CmdQWEDVerify)
	qwed.QWEDVerify = &domain.QWEDVerify{Batch: true, Items: []domain.QWEDItem{{RequestDigest: "rd", Type: "math", Engine: "math", EngineVersion: "1",
		Status: "VERIFIED", OutcomeDigest: "od", Code: "c", Attest: true}, {}}}

	event := func(typ domain.EventType, c *domain.Command) *domain.Event {
		return &domain.Event{Seq: 1<<64 - 1, Prev: "prev", Partition: -3, Time: at, Type: typ, Command: c, AgentID: "agent_1"}
	}
	var out []*domain.Event
	add := func(ev *domain.Event) { out = append(out, ev) }
	ev := event(domain.EvActionDecided, verify)
	ev.Error, ev.Decided = errDetails(), decided
	add(ev)
	ev = event(domain.EvActionDecided, tool)
	ev.Decided = &domain.ActionDecided{ActionID: "act_2", Kind: domain.KindTool, ActionType: "tool_call", Tool: "send_email", Decision: domain.Approved,
		Verification: domain.Verification{Status: "VERIFIED", RiskLevel: domain.RiskLow, ChecksPassed: []string{}}, Budget: domain.BudgetRemaining{}}
	add(ev)
	ev = event(domain.EvExecutionLogged, exec)
	ev.Executed = executed
	add(ev)
	ev = event(domain.EvCommandRejected, reject)
	ev.Error = errDetails()
	add(ev)
	withheld := cmd(domain.CmdVerifyAction)
	withheld.TokenHash = "th"
	withheld.Withheld = &domain.WithheldBody{Digest: "wd", Bytes: 1 << 20}
	ev = event(domain.EvCommandRejected, withheld)
	ev.Error = errDetails()
	add(ev)
	ev = event(domain.EvAgentRegistered, register)
	ev.Registered = &domain.AgentRegistered{AgentID: "agent_1", DID: "did:x", Info: info, Permissions: perms, Budget: limits, TrustLevel: 2, TokenHash: "th"}
	add(ev)
	ev = event(domain.EvApprovalResolved, resolve)
	ev.Resolved = &domain.ApprovalResolved{Approval: approval, Trust: trust, ReleasedCost: 7, ReleasedTokens: 8}
	add(ev)
	ev = event(domain.EvTrustChanged, setTrust)
	ev.TrustChanged = trust
	add(ev)
	ev = event(domain.EvAgentStatusChanged, suspend)
	ev.Status = &domain.AgentStatusChange{Status: domain.StatusSuspended, Reason: text}
	add(ev)
	ev = event(domain.EvAgentStatusChanged, complaint)
	ev.Status = &domain.AgentStatusChange{Status: domain.StatusSuspended, Reason: "complaint"}
	add(ev)
	ev = event(domain.EvApprovalsExpired, tick)
	ev.Expired = &domain.ApprovalsExpired{Approvals: []domain.ApprovalResolved{{Approval: approval}, {Approval: approval, Trust: trust}}}
	add(ev)
	ev = event(domain.EvQWEDVerified, qwed)
	ev.QWEDVerified = &domain.QWEDVerified{VerificationID: "ver_1", Attestations: []string{"jwt", ""}}
	add(ev)
	ev = event(domain.EvLogCheckpointed, nil)
	ev.Checkpoint = &domain.LogCheckpoint{Seq: 9, Head: "prev", Next: domain.CheckpointPolicy{Events: 1000, Interval: domain.Duration(90 * time.Second)}, Signature: "sig"}
	add(ev)

	tools := &domain.PutToolRegistry{PrincipalID: "org_1", Tools: []domain.ToolSpec{{Name: "t", RiskLevel: domain.RiskLow, RequiresApproval: true},
		{Name: text, RiskLevel: domain.RiskCritical, RequiresVerification: true, VerificationEngine: "code", SandboxRequired: true, VerifyParameters: []string{text, "query"}}}}
	ev = event(domain.EvToolRegistrySet, cmd(domain.CmdPutToolRegistry))
	ev.Command.ToolRegistry, ev.ToolRegistry = tools, tools
	add(ev)
	pperms := &domain.PrincipalPermissions{PrincipalID: "org_1", AllowedPaths: []string{"/srv"}, DeniedPaths: []string{"**/" + text},
		AllowedHosts: []string{"*.example.com", "xn--bcher-kva.example"}, AllowedSchemes: []string{"https"}, AllowedPorts: []int{443, 8443}}
	ev = event(domain.EvPrincipalPermissionsSet, cmd(domain.CmdPutPrincipalPermissions))
	ev.Command.PrincipalPermissions, ev.PrincipalPermissions = pperms, pperms
	add(ev)
	key := &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyHash: "kh", KeyID: "k1"}
	ev = event(domain.EvPrincipalKeyIssued, cmd(domain.CmdIssuePrincipalKey))
	ev.Command.IssueKey, ev.KeyIssued = key, key
	add(ev)
	rotated := &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyHash: "kh2", KeyID: "k2", Replaces: "k1"}
	ev = event(domain.EvPrincipalKeyIssued, cmd(domain.CmdIssuePrincipalKey))
	ev.Command.IssueKey = rotated
	ev.KeyIssued = &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyHash: "kh2", KeyID: "k2", Replaces: "k1", ReplacedHash: "kh"}
	add(ev)
	ev = event(domain.EvPrincipalKeyRevoked, cmd(domain.CmdRevokePrincipalKey))
	ev.Command.RevokeKey = &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyID: "k2"}
	ev.KeyRevoked = &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyID: "k2", KeyHash: "kh2"}
	add(ev)
	ev = event(domain.EvAgentTokenRotated, cmd(domain.CmdRotateAgentToken))
	ev.Command.NewToken = &domain.AgentTokenChange{TokenHash: "th"}
	ev.TokenChanged = &domain.AgentTokenChange{TokenHash: "th"}
	add(ev)
	cfg := domain.Config{ApprovalTTL: domain.Duration(90 * time.Minute), DoomLoopGuardRequired: true, MaxSteps: 20, WithholdRefusals: true, EngineSQLRisk: true, Detectors: true, PIIGuard: true, ToolVerification: true, SandboxAttestation: true, StrictGuards: true, OutputScan: true, IDNHosts: true, PrincipalPermissions: true,
		A2A: &domain.A2AConfig{EnableFinancialVerification: true, EnableLogicVerification: true, EnableCodeVerification: true, BlockOnError: true,
			MaxPayloadSizeBytes: 1 << 20, RatePerMinute: 60, Burst: 7, IdleEvict: domain.Duration(5 * time.Minute), DefaultAllow: true,
			BypassAgents: []string{"b", text}, TrustedAgents: []string{"t"}}}
	ev = event(domain.EvConfigured, cmd(domain.CmdConfigure))
	ev.Command.Configure, ev.Configured = &domain.Configure{Config: cfg}, &cfg
	add(ev)
	msg := cmd(domain.CmdA2AMessage)
	msg.A2A = &a2a.Message{SenderAgentID: "s", ReceiverAgentID: text, PayloadType: a2a.PayloadCode,
		Payload: json.RawMessage(`{"code":"eval(\"1\") <b>","n":[1,2.5e3]}`), Timestamp: "2026-11-24T09:30:15Z", TraceID: "tr"}
	msg.A2ADigest = "sha256:" + strings.Repeat("ab", 32)
	msg.Verdict = verify.Verdict
	ev = event(domain.EvA2AVerdict, msg)
	ev.Error = &domain.Error{Code: domain.CodeA2ACode, Message: text}
	ev.A2AVerdict = &domain.A2AVerdict{Boundary: "org_1", Sender: "s", Receiver: text, PayloadType: a2a.PayloadCode, Status: a2a.StatusBlocked,
		Reason: text, Engine: a2a.EngineCode, TraceID: "tr", PayloadDigest: "sha256:ab", Attestation: "jwt", RetryAfterMs: 1500, Shadow: true,
		Details: &domain.A2ADetails{ClaimedTotal: "1.00", ComputedTotal: "2.00", Contradictions: []string{"c"}, Patterns: []string{"eval", text},
			Findings: findings, EngineError: text}}
	add(ev)
	change := &domain.A2ABoundaryChange{Op: domain.A2AOpBlockPair, Agent: "a", Sender: "s", Receiver: text}
	ev = event(domain.EvA2ABoundaryChanged, cmd(domain.CmdA2ABoundary))
	ev.Command.A2ABoundary, ev.A2ABoundary = change, change
	ev.Command.Global = true
	add(ev)
	ev = event(domain.EvPrincipalStateCopied, cmd(domain.CmdCopyPrincipalState))
	ev.Command.Copy = &domain.PrincipalStateCopy{From: 2, Seq: 12, Hash: "h", Offset: 40, Changes: []domain.CopiedChange{
		{Seq: 3, Type: domain.EvToolRegistrySet, ToolRegistry: tools},
		{Seq: 4, Type: domain.EvPrincipalPermissionsSet, PrincipalPermissions: pperms},
		{Seq: 5, Type: domain.EvPrincipalKeyIssued, KeyIssued: key},
		{Seq: 7, Type: domain.EvPrincipalKeyRevoked, KeyRevoked: &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyID: "k2", KeyHash: "kh2"}},
		{Seq: 9, Type: domain.EvConfigured, Configured: &cfg},
		{Seq: 12, Type: domain.EvA2ABoundaryChanged, Principal: text, A2ABoundary: change},
	}}
	add(ev)
	evidence := domain.TrustEvidence{DaysActive: 3, TotalActions: 100, DeniedActions: 7, DenialRate: "0.07", Attestations: 9}
	claim := domain.RequestTrustElevation{Request: "r", FromLevel: 1, ToLevel: 2, Justification: text, Evidence: evidence}
	ev = event(domain.EvTrustElevationRequested, cmd(domain.CmdRequestTrust))
	ev.Command.Trust = &claim
	ev.Elevation = &domain.TrustElevationRequested{RequestID: "r", Claimed: claim, Computed: evidence, Accepted: true, Reasons: []string{"x"}, Approval: &approval}
	add(ev)

	// The consumer policy engine.
	biz := domain.Business{ID: "shop.1", Name: text, Categories: []string{"food", "travel"}, Endpoint: "https://shop.example/x?a=1&b=<2>",
		Currency: "EUR", Owner: "org_1"}
	ev = event(domain.EvBusinessChanged, cmd(domain.CmdBusiness))
	ev.Command.Business = &domain.BusinessChange{Op: domain.OpCreate, Business: biz}
	ev.Command.Global = true
	ev.Business = &biz
	add(ev)
	bizCopy := biz
	bizCopy.Categories = []string{}
	ev = event(domain.EvPrincipalStateCopied, cmd(domain.CmdCopyPrincipalState))
	ev.Command.Copy = &domain.PrincipalStateCopy{From: 0, Seq: 14, Hash: "h", Offset: 41, Changes: []domain.CopiedChange{
		{Seq: 14, Type: domain.EvBusinessChanged, Business: &bizCopy}}}
	add(ev)
	request := json.RawMessage(`{"amount":"12.50","item":"a <b> & c","n":[1,2.5e3]}`)
	prepare := cmd(domain.CmdPrepareExecute)
	prepare.Execute = &domain.ExecuteRequest{BusinessID: "shop.1", Request: request, RequestHash: "sha256:rh", TokenHash: "tok", ReplyTo: text}
	prepare.Authenticated = &domain.AuthenticatedAgent{AgentID: "agent_1", Principal: "org_1", Partition: 3}
	ev = event(domain.EvExecutePrepared, prepare)
	ev.Prepared = &domain.ExecutePrepared{TokenHash: "tok", BusinessID: "shop.1", RequestHash: "sha256:rh", Summary: text, Consumer: "org_1",
		AgentID: "agent_1", ExpiresAt: later}
	add(ev)
	execute := cmd(domain.CmdExecute)
	execute.Execute = &domain.ExecuteRequest{BusinessID: "shop.1", Request: request, RequestHash: "sha256:rh", TokenHash: "tok"}
	ev = event(domain.EvExecuteDecided, execute)
	ev.Error = &domain.Error{Code: domain.CodeInvalidRequest, Message: text}
	ev.Transaction = &domain.Transaction{ID: "tx_1", Consumer: "org_1", AgentID: "agent_1", BusinessID: "shop.1", Categories: []string{"food"},
		AmountCents: 1250, Currency: "EUR", RequestHash: "sha256:rh", Status: domain.TxQueued, CreatedAt: at, PolicyID: "p1", Limit: text,
		Findings: []policy.Finding{{PolicyID: "p1", Version: 3, Type: policy.TypeTimeWindow, Verdict: policy.Queue, Shadow: true, Code: "QWED-POLICY-003",
			Limit: text, Message: text}, {PolicyID: "p2", Type: policy.TypeSpending, Verdict: policy.Notify, Message: "m"}},
		Notices:    []domain.Notice{{Kind: domain.NoticeQueued, PolicyID: "p1", Message: text}, {Kind: domain.NoticeLimit80, Message: "m"}},
		ApprovalID: "tx_1", ReleaseAt: &later, BusinessStatus: "ok", Data: json.RawMessage(`{"order":"<1>"}`), ConfirmationToken: "ct",
		DecidedSeq: 42, BusinessOwner: "org_2"}
	add(ev)
	outcome := cmd(domain.CmdExecuteOutcome)
	outcome.Outcome = &domain.ExecuteOutcome{TransactionID: "tx_1", HTTPStatus: 502, Status: "failed", Data: json.RawMessage(`[1,"x"]`),
		ConfirmationToken: "ct", Error: text}
	ev = event(domain.EvExecuteCompleted, outcome)
	ev.Transaction = &domain.Transaction{ID: "tx_1", Consumer: "org_1", AgentID: "agent_1", BusinessID: "shop.1", Currency: "JPY",
		RequestHash: "sha256:rh", Status: domain.TxCompleted, Notices: []domain.Notice{}}
	add(ev)
	ev = event(domain.EvExecuteTimers, cmd(domain.CmdExecuteTick))
	ev.Timers = &domain.ExecuteTimers{TokensExpired: []string{"tok"}, Released: []string{"tx_1", text}, Expired: []string{"tx_2"}}
	add(ev)
	execApproval := approval
	execApproval.Kind, execApproval.TransactionID = domain.ApprovalKindExecute, "tx_1"
	ev = event(domain.EvApprovalResolved, resolve)
	ev.Resolved = &domain.ApprovalResolved{Approval: execApproval}
	add(ev)
	hook := domain.Webhook{ID: "wh_1", URL: "https://hooks.example/<x>", Events: []string{domain.NoticeBlocked}, Consumer: "org_1"}
	ev = event(domain.EvWebhookChanged, cmd(domain.CmdWebhook))
	ev.Command.Webhook = &domain.WebhookChange{Op: domain.OpUpdate, Webhook: hook}
	ev.Webhook = &hook
	add(ev)
	delivery := domain.DeliveryResult{WebhookID: "wh_1", Seq: 77, Notice: 1, Attempt: 3, Status: "retrying", HTTPStatus: 503, Error: text, NextAt: &later}
	ev = event(domain.EvDeliveryRecorded, cmd(domain.CmdDelivery))
	ev.Command.Delivery = &delivery
	ev.Delivery = &delivery
	add(ev)
	full := policy.Policy{ID: "p<1>", Name: text, Type: policy.TypeSpending, Scope: policy.Scope{Agents: []string{"agent_1", "agent_2"}, BusinessID: "shop.1"},
		Shadow: true, Override: true, Version: 7,
		Spending:     &policy.Spending{PerTransactionCents: 1, DailyCents: 2, WeeklyCents: 3, MonthlyCents: policy.MaxCents, OnExceed: policy.OnExceedConfirm},
		Category:     &policy.Category{Mode: policy.ModeBlock, Categories: []string{"food", text}},
		Confirmation: &policy.Confirmation{Always: true, AboveCents: 5, FirstTimeBusiness: true},
		TimeWindow: &policy.TimeWindow{TimeZone: "Europe/Paris", Outside: policy.OutsideQueue,
			Windows: []policy.Window{{Days: []string{"mon", "tue"}, Start: "09:00", End: "17:30"}, {Days: []string{"sat"}, Start: "00:00", End: "24:00"}}}}
	policyCmd := cmd(domain.CmdPolicy)
	policyCmd.Policy = &domain.PolicyChange{Op: domain.OpCreate, Consumer: "org_1", Policy: full}
	policyCmd.Policy.Policy.Version = 0
	ev = event(domain.EvPolicyChanged, policyCmd)
	ev.Policy = &full
	add(ev)
	execCfg := cfg
	execCfg.Execute = &domain.ExecuteConfig{Mode: domain.ExecuteModeStrict, MaxAmountCents: 250, TokenTTL: domain.Duration(5 * time.Minute), ExpiredTokenKept: domain.Duration(3 * time.Minute)}
	ev = event(domain.EvConfigured, cmd(domain.CmdConfigure))
	ev.Command.Configure, ev.Configured = &domain.Configure{Config: execCfg}, &execCfg
	add(ev)
	noticeCfg := cfg
	noticeCfg.AgentNotices = true
	ev = event(domain.EvConfigured, cmd(domain.CmdConfigure))
	ev.Command.Configure, ev.Configured = &domain.Configure{Config: noticeCfg}, &noticeCfg
	add(ev)
	blocked := domain.AgentNotice{Principal: "org_1", AgentID: "agent_1", Kind: domain.KindTool, ActionID: text, ActionType: "tool_call",
		Tool: "database_read", Decision: domain.Denied, Status: "FAILED", Code: domain.CodeVerificationFailed, Check: "engine_verified",
		Risk: domain.RiskCritical, Partition: -3, Seq: 1 << 60, Time: at}
	ev = event(domain.EvAgentBlockRelayed, cmd(domain.CmdAgentBlocked))
	ev.Command.AgentBlocked = &blocked
	add(ev)
	return out
}

// Events with every field set decode as encoding/json decodes them, on
// the fast path; re-encoding the result gives back the input.
func TestDecodeEventEveryFieldMatchesStandardLibrary(t *testing.T) {
	for _, ev := range fullEvents() {
		p, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(ev.Type), func(t *testing.T) {
			if !sameAsStandardLibrary(t, p) {
				t.Errorf("%s takes the fallback", p)
			}
			got, _ := DecodeEvent(p)
			again, _ := json.Marshal(got)
			if string(again) != string(p) {
				t.Errorf("re-encoded\n%s\nwant\n%s", again, p)
			}
		})
	}
}

// leafTypes are decoded whole (by their own decoder, or as text).
var leafTypes = map[reflect.Type]bool{
	reflect.TypeOf(time.Time{}): true, reflect.TypeOf(json.RawMessage{}): true, reflect.TypeOf(json.Number("")): true,
	reflect.TypeOf(domain.Limits{}): true,
}

// schema lists the fields of every struct type the fast path decodes,
// reachable from domain.Event: "Type.Field json-tag Go-type", sorted.
func schema() []string {
	var lines []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || leafTypes[t] {
			return
		}
		seen[t] = true
		for f := range t.Fields() {
			lines = append(lines, t.Name()+"."+f.Name+" "+f.Tag.Get("json")+" "+typeName(f.Type))
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(domain.Event{}))
	sort.Strings(lines)
	return lines
}

// typeName names t as Go source does; json.RawMessage keeps its name under
// GOEXPERIMENT=jsonv2, where it is an alias of jsontext.Value.
func typeName(t reflect.Type) string {
	return strings.ReplaceAll(t.String(), reflect.TypeFor[json.RawMessage]().String(), "json.RawMessage")
}

// setFields adds to set the "Type.Field" of every field of v (and of the
// structs it holds) that is not zero.
func setFields(v reflect.Value, set map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setFields(v.Elem(), set)
		}
	case reflect.Slice:
		if v.Type() != reflect.TypeOf(json.RawMessage{}) {
			for i := range v.Len() {
				setFields(v.Index(i), set)
			}
		}
	case reflect.Struct:
		if leafTypes[v.Type()] {
			return
		}
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[v.Type().Name()+"."+v.Type().Field(i).Name] = true
			}
			setFields(v.Field(i), set)
		}
	}
}

// The events of TestDecodeEventEveryFieldMatchesStandardLibrary set every
// field of every type the fast path decodes, so that each of its cases is
// pinned against encoding/json.
func TestFullEventsSetEveryFastPathField(t *testing.T) {
	set := map[string]bool{}
	for _, ev := range fullEvents() {
		setFields(reflect.ValueOf(ev), set)
	}
	for _, line := range schema() {
		if name := strings.Fields(line)[0]; !set[name] {
			t.Errorf("no full event sets %s", name)
		}
	}
}

// The JSON shape of the types the fast path decodes is the one it was
// written for (testdata/schema.golden): a field added, renamed or given
// another type fails here, so that fastevent.go is taught the change (a
// field it does not know only sends its events to the fallback, but a new
// type, one with its own UnmarshalJSON say, would not be noticed). After
// updating fastevent.go and fullEvents, rewrite the file with
// go test -run TestFastPathSchema -update.
func TestFastPathSchema(t *testing.T) {
	got := strings.Join(schema(), "\n") + "\n"
	path := filepath.Join("testdata", "schema.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the decoded types changed: teach fastevent.go and fullEvents the change, then rewrite %s with -update\ngot:\n%s", path, got)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/schema.golden")
