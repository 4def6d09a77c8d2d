package eventjson

import (
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// One function per type reachable from domain.Event, writing its fields in
// struct order under their json tags: a pointer or slice field tagged
// omitempty is skipped when nil or empty, a nested struct never is. The
// tests fill every field of every type by reflection and compare with
// json.Marshal, so a field added to the domain without being added here
// fails them.

func (e *encoder) event(ev *domain.Event) {
	e.open()
	e.uintField("seq", ev.Seq)
	e.strField("prev", ev.Prev)
	e.intField("partition", int64(ev.Partition))
	e.timeField("time", ev.Time)
	e.strField("type", string(ev.Type))
	if ev.Command != nil {
		e.key("command")
		e.command(ev.Command)
	}
	e.optStr("agent_id", ev.AgentID)
	if ev.Error != nil {
		e.key("error")
		start := len(e.buf)
		e.error(ev.Error)
		e.evErr, e.evErrJSON = ev.Error, [2]int{start, len(e.buf)}
	}
	if ev.Registered != nil {
		e.key("registered")
		e.agentRegistered(ev.Registered)
	}
	if ev.Decided != nil {
		e.key("decided")
		e.actionDecided(ev.Decided)
	}
	if ev.Executed != nil {
		e.key("executed")
		e.executionLogged(ev.Executed)
	}
	if ev.Elevation != nil {
		e.key("elevation")
		e.elevationRequested(ev.Elevation)
	}
	if ev.Resolved != nil {
		e.key("resolved")
		e.approvalResolved(ev.Resolved)
	}
	if ev.TrustChanged != nil {
		e.key("trust_changed")
		e.trustChange(ev.TrustChanged)
	}
	if ev.Status != nil {
		e.key("status")
		e.statusChange(ev.Status)
	}
	if ev.ToolRegistry != nil {
		e.key("tool_registry")
		e.toolRegistry(ev.ToolRegistry)
	}
	if ev.KeyIssued != nil {
		e.key("key_issued")
		e.issueKey(ev.KeyIssued)
	}
	if ev.Configured != nil {
		e.key("configured")
		e.config(ev.Configured)
	}
	if ev.Expired != nil {
		e.key("expired")
		e.approvalsExpired(ev.Expired)
	}
	if ev.QWEDVerified != nil {
		e.key("qwed_verified")
		e.qwedVerified(ev.QWEDVerified)
	}
	if ev.Checkpoint != nil {
		e.key("checkpoint")
		e.checkpoint(ev.Checkpoint)
	}
	if ev.KeyRevoked != nil {
		e.key("key_revoked")
		e.issueKey(ev.KeyRevoked)
	}
	if ev.TokenChanged != nil {
		e.key("token_changed")
		e.tokenChange(ev.TokenChanged)
	}
	if ev.A2AVerdict != nil {
		e.key("a2a_verdict")
		e.a2aVerdict(ev.A2AVerdict)
	}
	if ev.A2ABoundary != nil {
		e.key("a2a_boundary")
		e.a2aBoundary(ev.A2ABoundary)
	}
	e.execEvent(ev)
	if ev.PrincipalPermissions != nil {
		e.key("principal_permissions")
		e.principalPermissions(ev.PrincipalPermissions)
	}
	e.close()
}

func (e *encoder) timeField(name string, t time.Time) {
	e.key(name)
	e.time(t)
}

// error writes a domain.Error; its details are the one dynamic value of
// an event (see value).
func (e *encoder) error(x *domain.Error) {
	e.open()
	e.strField("code", string(x.Code))
	e.strField("message", x.Message)
	if len(x.Details) > 0 {
		e.key("details")
		e.object(x.Details, 0)
	}
	e.close()
}

// Commands.

func (e *encoder) command(c *domain.Command) {
	e.open()
	e.strField("type", string(c.Type))
	e.key("request")
	e.open()
	e.strField("source", c.Request.Source)
	e.strField("id", c.Request.ID)
	e.optStr("scope", c.Request.Scope)
	e.close()
	e.optStr("principal", c.Principal)
	e.optStr("agent_id", c.AgentID)
	e.optStr("token_hash", c.TokenHash)
	if c.Register != nil {
		e.key("register")
		e.registerAgent(c.Register)
	}
	if c.Verify != nil {
		e.key("verify")
		e.verifyAction(c.Verify)
	}
	if c.Tool != nil {
		e.key("tool")
		e.verifyToolCall(c.Tool)
	}
	if c.Execution != nil {
		e.key("execution")
		e.logExecution(c.Execution)
	}
	if c.Trust != nil {
		e.key("trust")
		e.requestTrust(c.Trust)
	}
	if c.Resolve != nil {
		e.key("resolve")
		e.resolveApproval(c.Resolve)
	}
	if c.SetTrust != nil {
		e.key("set_trust")
		e.setTrustLevel(c.SetTrust)
	}
	if c.Suspend != nil {
		e.key("suspend")
		e.suspendAgent(c.Suspend)
	}
	if c.Complaint != nil {
		e.key("complaint")
		e.open()
		e.strField("reason", c.Complaint.Reason)
		e.close()
	}
	if c.ToolRegistry != nil {
		e.key("tool_registry")
		e.toolRegistry(c.ToolRegistry)
	}
	if c.IssueKey != nil {
		e.key("issue_key")
		e.issueKey(c.IssueKey)
	}
	if c.Configure != nil {
		e.key("configure")
		e.open()
		e.key("config")
		e.config(&c.Configure.Config)
		e.close()
	}
	if c.Tick != nil {
		e.key("tick")
		e.open()
		e.close()
	}
	if c.Reject != nil {
		e.key("reject")
		e.rejectRequest(c.Reject)
	}
	if c.QWEDVerify != nil {
		e.key("qwed_verify")
		e.qwedVerify(c.QWEDVerify)
	}
	if c.Verdict != nil {
		e.key("verdict")
		e.engineVerdict(c.Verdict)
	}
	if c.Withheld != nil {
		e.key("withheld")
		e.open()
		e.strField("digest", c.Withheld.Digest)
		e.intField("bytes", c.Withheld.Bytes)
		e.close()
	}
	if c.RevokeKey != nil {
		e.key("revoke_key")
		e.issueKey(c.RevokeKey)
	}
	if c.NewToken != nil {
		e.key("new_token")
		e.tokenChange(c.NewToken)
	}
	if c.A2A != nil {
		e.key("a2a")
		e.a2aMessage(c.A2A)
	}
	e.optStr("a2a_digest", c.A2ADigest)
	if c.A2ABoundary != nil {
		e.key("a2a_boundary")
		e.a2aBoundary(c.A2ABoundary)
	}
	e.optBool("global", c.Global)
	if c.Copy != nil {
		e.key("copy")
		e.stateCopy(c.Copy)
	}
	e.execCommand(c)
	if c.OutputScan != nil {
		e.key("output_scan")
		e.open()
		e.intField("bytes", c.OutputScan.Bytes)
		e.strField("sha256", c.OutputScan.SHA256)
		e.optPII("findings", c.OutputScan.Findings)
		e.close()
	}
	if c.PrincipalPermissions != nil {
		e.key("principal_permissions")
		e.principalPermissions(c.PrincipalPermissions)
	}
	e.close()
}

func (e *encoder) stateCopy(c *domain.PrincipalStateCopy) {
	e.open()
	e.intField("from", int64(c.From))
	e.uintField("seq", c.Seq)
	e.strField("hash", c.Hash)
	e.intField("offset", c.Offset)
	e.key("changes")
	if c.Changes == nil {
		e.null()
	} else {
		e.buf = append(e.buf, '[')
		for i := range c.Changes {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.copiedChange(&c.Changes[i])
		}
		e.buf = append(e.buf, ']')
	}
	e.close()
}

func (e *encoder) copiedChange(c *domain.CopiedChange) {
	e.open()
	e.uintField("seq", c.Seq)
	e.strField("type", string(c.Type))
	e.optStr("principal", c.Principal)
	if c.ToolRegistry != nil {
		e.key("tool_registry")
		e.toolRegistry(c.ToolRegistry)
	}
	if c.KeyIssued != nil {
		e.key("key_issued")
		e.issueKey(c.KeyIssued)
	}
	if c.KeyRevoked != nil {
		e.key("key_revoked")
		e.issueKey(c.KeyRevoked)
	}
	if c.Configured != nil {
		e.key("configured")
		e.config(c.Configured)
	}
	if c.A2ABoundary != nil {
		e.key("a2a_boundary")
		e.a2aBoundary(c.A2ABoundary)
	}
	if c.Business != nil {
		e.key("business")
		e.business(c.Business)
	}
	if c.PrincipalPermissions != nil {
		e.key("principal_permissions")
		e.principalPermissions(c.PrincipalPermissions)
	}
	e.close()
}

func (e *encoder) tokenChange(t *domain.AgentTokenChange) {
	e.open()
	e.strField("token_hash", t.TokenHash)
	e.close()
}

func (e *encoder) registerAgent(r *domain.RegisterAgent) {
	e.open()
	e.key("agent")
	e.agentInfo(&r.Agent)
	e.key("permissions")
	e.permissions(&r.Permissions)
	e.key("budget")
	e.limits(&r.Budget)
	if r.TrustLevel != nil {
		e.intField("trust_level", int64(*r.TrustLevel))
	}
	e.optStr("token_hash", r.TokenHash)
	e.close()
}

func (e *encoder) agentInfo(a *domain.AgentInfo) {
	e.open()
	e.strField("name", a.Name)
	e.strField("type", a.Type)
	e.optStr("description", a.Description)
	e.strField("principal_id", a.PrincipalID)
	e.optStr("framework", a.Framework)
	e.optStr("model", a.Model)
	e.close()
}

func (e *encoder) permissions(p *domain.Permissions) {
	e.open()
	e.optStrings("allowed_engines", p.AllowedEngines)
	e.optStrings("allowed_tools", p.AllowedTools)
	e.optStrings("blocked_tools", p.BlockedTools)
	e.pathEgressLists(p.AllowedPaths, p.DeniedPaths, p.AllowedHosts, p.AllowedSchemes, p.AllowedPorts)
	e.close()
}

func (e *encoder) principalPermissions(p *domain.PrincipalPermissions) {
	e.open()
	e.strField("principal_id", p.PrincipalID)
	e.pathEgressLists(p.AllowedPaths, p.DeniedPaths, p.AllowedHosts, p.AllowedSchemes, p.AllowedPorts)
	e.close()
}

// pathEgressLists writes the path and egress lists an agent's and a
// principal's permissions share, each omitted when empty.
func (e *encoder) pathEgressLists(paths, denied, hosts, schemes []string, ports []int) {
	e.optStrings("allowed_paths", paths)
	e.optStrings("denied_paths", denied)
	e.optStrings("allowed_hosts", hosts)
	e.optStrings("allowed_schemes", schemes)
	if len(ports) > 0 {
		e.key("allowed_ports")
		e.buf = append(e.buf, '[')
		for i, n := range ports {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = appendInt(e.buf, int64(n))
		}
		e.buf = append(e.buf, ']')
	}
}

// limits writes domain.Limits as its MarshalJSON does (the flat form,
// limits that are not set omitted).
func (e *encoder) limits(l *domain.Limits) {
	e.open()
	e.optUSD("max_daily_cost_usd", l.MaxDailyCost)
	e.optUSD("max_per_request_cost_usd", l.MaxPerRequestCost)
	e.optInt("max_requests_per_hour", l.MaxRequestsPerHour)
	e.optInt("max_requests_per_day", l.MaxRequestsPerDay)
	e.optInt("max_tokens_per_request", l.MaxTokensPerRequest)
	e.optInt("max_daily_tokens", l.MaxDailyTokens)
	e.optInt("max_tool_calls_per_hour", l.MaxToolCallsPerHour)
	e.optInt("max_high_risk_calls_per_day", l.MaxHighRiskCallsDay)
	e.close()
}

func (e *encoder) verifyAction(v *domain.VerifyAction) {
	e.open()
	e.key("action")
	e.action(&v.Action)
	e.key("context")
	e.actionContext(&v.Context)
	e.key("options")
	e.options(&v.Options)
	e.close()
}

func (e *encoder) action(a *domain.Action) {
	e.open()
	e.strField("type", a.Type)
	e.optStr("query", a.Query)
	e.optStr("code", a.Code)
	e.optStr("target", a.Target)
	if len(a.Parameters) > 0 {
		e.key("parameters")
		e.raw(a.Parameters)
	}
	e.optUSD("estimated_cost_usd", a.EstimatedCost)
	e.optInt("estimated_tokens", a.EstimatedTokens)
	e.optStr("output", a.Output)
	e.close()
}

func (e *encoder) actionContext(c *domain.ActionContext) {
	e.open()
	e.strField("conversation_id", c.ConversationID)
	e.optNumber("step_number", c.StepNumber)
	e.optStr("user_intent", c.UserIntent)
	e.optStr("pre_action_state_hash", c.PreActionStateHash)
	e.optStr("state_source", c.StateSource)
	e.close()
}

func (e *encoder) options(o *domain.Options) {
	e.open()
	e.optBool("require_attestation", o.RequireAttestation)
	e.optStr("risk_threshold", o.RiskThreshold)
	e.close()
}

func (e *encoder) verifyToolCall(v *domain.VerifyToolCall) {
	e.open()
	e.key("tool_call")
	e.toolCall(&v.ToolCall)
	e.optStr("justification", v.Justification)
	if v.Context != nil {
		e.key("context")
		e.actionContext(v.Context)
	}
	e.key("options")
	e.options(&v.Options)
	e.close()
}

func (e *encoder) toolCall(t *domain.ToolCall) {
	e.open()
	e.strField("tool_name", t.ToolName)
	if len(t.Parameters) > 0 {
		e.key("parameters")
		e.raw(t.Parameters)
	}
	e.optUSD("estimated_cost_usd", t.EstimatedCost)
	e.optInt("estimated_tokens", t.EstimatedTokens)
	e.close()
}

func (e *encoder) logExecution(x *domain.LogExecution) {
	e.open()
	e.strField("action_id", x.ActionID)
	e.boolField("success", x.Success)
	e.usdField("cost_usd", x.CostUSD)
	e.intField("tokens", x.Tokens)
	e.optStr("result_hash", x.ResultHash)
	e.optBool("sandboxed", x.Sandboxed)
	e.optStr("sandbox", x.Sandbox)
	e.close()
}

func (e *encoder) requestTrust(r *domain.RequestTrustElevation) {
	e.open()
	e.strField("request", r.Request)
	e.intField("from_level", int64(r.FromLevel))
	e.intField("to_level", int64(r.ToLevel))
	e.optStr("justification", r.Justification)
	e.key("evidence")
	e.trustEvidence(&r.Evidence)
	e.close()
}

func (e *encoder) trustEvidence(t *domain.TrustEvidence) {
	e.open()
	e.intField("days_active", t.DaysActive)
	e.intField("total_actions", t.TotalActions)
	e.intField("denied_actions", t.DeniedActions)
	e.optNumber("denial_rate", t.DenialRate)
	e.intField("attestations", t.Attestations)
	e.close()
}

func (e *encoder) resolveApproval(r *domain.ResolveApproval) {
	e.open()
	e.strField("approval_id", r.ApprovalID)
	e.boolField("approve", r.Approve)
	e.optStr("reason", r.Reason)
	e.close()
}

func (e *encoder) setTrustLevel(s *domain.SetTrustLevel) {
	e.open()
	e.intField("trust_level", int64(s.Level))
	e.optStr("reason", s.Reason)
	e.close()
}

func (e *encoder) suspendAgent(s *domain.SuspendAgent) {
	e.open()
	e.boolField("suspended", s.Suspended)
	e.optStr("reason", s.Reason)
	e.close()
}

func (e *encoder) toolRegistry(r *domain.PutToolRegistry) {
	e.open()
	e.strField("principal_id", r.PrincipalID)
	e.key("tools")
	if r.Tools == nil {
		e.null()
	} else {
		e.buf = append(e.buf, '[')
		for i := range r.Tools {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.toolSpec(&r.Tools[i])
		}
		e.buf = append(e.buf, ']')
	}
	e.close()
}

func (e *encoder) toolSpec(t *domain.ToolSpec) {
	e.open()
	e.strField("name", t.Name)
	e.strField("risk_level", string(t.RiskLevel))
	e.optBool("requires_verification", t.RequiresVerification)
	e.optBool("requires_approval", t.RequiresApproval)
	e.optStr("verification_engine", t.VerificationEngine)
	e.optBool("sandbox_required", t.SandboxRequired)
	e.optStrings("verify_parameters", t.VerifyParameters)
	e.close()
}

func (e *encoder) issueKey(k *domain.IssuePrincipalKey) {
	e.open()
	e.strField("principal_id", k.PrincipalID)
	e.strField("key_hash", k.KeyHash)
	e.strField("key_id", k.KeyID)
	e.optStr("replaces", k.Replaces)
	e.optStr("replaced_hash", k.ReplacedHash)
	e.close()
}

func (e *encoder) config(c *domain.Config) {
	e.open()
	e.durationField("approval_ttl", c.ApprovalTTL)
	e.boolField("doom_loop_guard_required", c.DoomLoopGuardRequired)
	e.intField("max_steps", c.MaxSteps)
	e.optBool("withhold_refusals", c.WithholdRefusals)
	e.optBool("engine_sql_risk", c.EngineSQLRisk)
	e.optBool("detectors", c.Detectors)
	e.optBool("pii_guard", c.PIIGuard)
	e.optBool("tool_verification", c.ToolVerification)
	e.optBool("sandbox_attestation", c.SandboxAttestation)
	e.optBool("strict_guards", c.StrictGuards)
	e.optBool("output_scan", c.OutputScan)
	e.optBool("idn_hosts", c.IDNHosts)
	e.optBool("principal_permissions", c.PrincipalPermissions)
	if c.A2A != nil {
		e.key("a2a")
		e.a2aConfig(c.A2A)
	}
	if c.Execute != nil {
		e.key("execute")
		e.executeConfig(c.Execute)
	}
	e.optBool("agent_notices", c.AgentNotices)
	e.close()
}

func (e *encoder) a2aConfig(c *domain.A2AConfig) {
	e.open()
	e.boolField("enable_financial_verification", c.EnableFinancialVerification)
	e.boolField("enable_logic_verification", c.EnableLogicVerification)
	e.boolField("enable_code_verification", c.EnableCodeVerification)
	e.boolField("block_on_error", c.BlockOnError)
	e.intField("max_payload_size_bytes", c.MaxPayloadSizeBytes)
	e.intField("rate_per_minute", c.RatePerMinute)
	e.intField("burst", c.Burst)
	e.durationField("idle_evict", c.IdleEvict)
	e.boolField("default_allow", c.DefaultAllow)
	e.optStrings("bypass_agents", c.BypassAgents)
	e.optStrings("trusted_agents", c.TrustedAgents)
	e.close()
}

// durationField writes a domain.Duration as its MarshalJSON does: the
// time.Duration string ("24h0m0s").
func (e *encoder) durationField(name string, d domain.Duration) {
	e.strField(name, time.Duration(d).String())
}

func (e *encoder) rejectRequest(r *domain.RejectRequest) {
	e.open()
	e.key("error")
	e.error(&r.Error)
	e.strField("endpoint", r.Endpoint)
	e.optStr("body_digest", r.BodyDigest)
	e.intField("body_bytes", r.BodyBytes)
	e.close()
}

func (e *encoder) qwedVerify(q *domain.QWEDVerify) {
	e.open()
	e.optBool("batch", q.Batch)
	e.key("items")
	if q.Items == nil {
		e.null()
	} else {
		e.buf = append(e.buf, '[')
		for i := range q.Items {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.qwedItem(&q.Items[i])
		}
		e.buf = append(e.buf, ']')
	}
	e.close()
}

func (e *encoder) qwedItem(it *domain.QWEDItem) {
	e.open()
	e.strField("request_digest", it.RequestDigest)
	e.strField("type", it.Type)
	e.optStr("engine", it.Engine)
	e.optStr("engine_version", it.EngineVersion)
	e.strField("status", it.Status)
	e.strField("outcome_digest", it.OutcomeDigest)
	e.optStr("code", it.Code)
	e.optBool("attest", it.Attest)
	e.close()
}

func (e *encoder) engineVerdict(v *domain.EngineVerdict) {
	e.open()
	e.strField("engine", v.Engine)
	e.optStr("engine_version", v.EngineVersion)
	e.strField("status", string(v.Status))
	e.strField("outcome_digest", v.OutcomeDigest)
	e.optStr("corrected", v.Corrected)
	e.optFindings(v.Findings)
	e.optStr("risk", string(v.Risk))
	e.optStr("reason", v.Reason)
	e.optStr("code", v.Code)
	e.optStr("parameter", v.Parameter)
	e.close()
}

// optFindings writes a findings field tagged omitempty.
func (e *encoder) optFindings(list []engines.Finding) {
	if len(list) == 0 {
		return
	}
	e.key("findings")
	e.findings(list)
}

// findings writes a list of findings (null when nil).
func (e *encoder) findings(list []engines.Finding) {
	if list == nil {
		e.null()
		return
	}
	e.buf = append(e.buf, '[')
	for i := range list {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.finding(&list[i])
	}
	e.buf = append(e.buf, ']')
}

func (e *encoder) finding(f *engines.Finding) {
	e.open()
	e.strField("rule", f.Rule)
	e.strField("severity", f.Severity)
	e.strField("message", f.Message)
	e.optInt("line", int64(f.Line))
	e.optInt("column", int64(f.Column))
	e.optStr("snippet", f.Snippet)
	e.close()
}

// Event payloads.

func (e *encoder) agentRegistered(r *domain.AgentRegistered) {
	e.open()
	e.strField("agent_id", r.AgentID)
	e.strField("did", r.DID)
	e.key("agent")
	e.agentInfo(&r.Info)
	e.key("permissions")
	e.permissions(&r.Permissions)
	e.key("budget")
	e.limits(&r.Budget)
	e.intField("trust_level", int64(r.TrustLevel))
	e.strField("token_hash", r.TokenHash)
	e.close()
}

func (e *encoder) actionDecided(d *domain.ActionDecided) {
	e.open()
	e.strField("action_id", d.ActionID)
	e.strField("kind", string(d.Kind))
	e.strField("action_type", d.ActionType)
	e.optStr("tool", d.Tool)
	e.strField("decision", string(d.Decision))
	e.key("verification")
	e.verification(&d.Verification)
	if d.Error != nil {
		e.key("error")
		if d.Error == e.evErr {
			e.buf = append(e.buf, e.buf[e.evErrJSON[0]:e.evErrJSON[1]]...)
		} else {
			e.error(d.Error)
		}
	}
	e.strField("request_digest", d.RequestDigest)
	e.optStr("fingerprint", d.Fingerprint)
	e.optStr("state_fingerprint", d.StateFingerprint)
	e.optStr("conversation_id", d.ConversationID)
	e.optInt("step", d.Step)
	e.boolField("step_consumed", d.StepConsumed)
	e.optUSD("reserved_cost_usd", d.ReservedCost)
	e.optInt("reserved_tokens", d.ReservedTokens)
	e.optBool("high_risk", d.HighRisk)
	if d.Approval != nil {
		e.key("approval")
		e.approval(d.Approval)
	}
	e.optStr("attestation", d.Attestation)
	if d.Trust != nil {
		e.key("trust")
		e.trustChange(d.Trust)
	}
	e.optBool("security_violation", d.SecurityViolation)
	e.optBool("reset_recent", d.ResetRecent)
	e.optBool("reset_budget_denials", d.ResetBudgetDenials)
	e.optStr("conversation_evicted", d.ConversationEvicted)
	e.key("budget_remaining")
	e.budgetRemaining(&d.Budget)
	e.optStr("outcome_digest", d.OutcomeDigest)
	if d.CorrectedAction != nil {
		e.key("corrected_action")
		e.action(d.CorrectedAction)
	}
	e.optStr("corrected_digest", d.CorrectedDigest)
	if d.Notify != nil {
		e.key("notify")
		e.decisionNotice(d.Notify)
	}
	e.close()
}

func (e *encoder) verification(v *domain.Verification) {
	e.open()
	e.strField("status", v.Status)
	e.optStr("engine", v.Engine)
	e.strField("risk_level", string(v.RiskLevel))
	e.optStr("risk_score", v.RiskScore)
	e.stringsField("checks_passed", v.ChecksPassed)
	e.optStrings("checks_failed", v.ChecksFailed)
	e.optBool("sandbox_required", v.Sandbox)
	e.optFindings(v.Findings)
	e.optPII("pii", v.PII)
	e.close()
}

// optPII writes a list of PII findings tagged omitempty.
func (e *encoder) optPII(name string, list []domain.PIIFinding) {
	if len(list) == 0 {
		return
	}
	e.key(name)
	e.buf = append(e.buf, '[')
	for i := range list {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		f := &list[i]
		e.open()
		e.strField("kind", f.Kind)
		e.strField("location", f.Location)
		e.intField("offset", f.Offset)
		e.close()
	}
	e.buf = append(e.buf, ']')
}

func (e *encoder) budgetRemaining(b *domain.BudgetRemaining) {
	e.open()
	if b.DailyCost != nil {
		e.key("daily_cost_usd")
		e.usdPtr(b.DailyCost)
	}
	e.optInt64Ptr("hourly_requests", b.HourlyRequests)
	e.optInt64Ptr("daily_requests", b.DailyRequests)
	e.optInt64Ptr("daily_tokens", b.DailyTokens)
	e.optInt64Ptr("hourly_tool_calls", b.HourlyTools)
	e.optInt64Ptr("high_risk_calls", b.HighRiskCalls)
	e.close()
}

// optInt64Ptr writes a *int64 field tagged omitempty (nil is omitted).
func (e *encoder) optInt64Ptr(name string, v *int64) {
	if v != nil {
		e.key(name)
		e.int64Ptr(v)
	}
}

func (e *encoder) approval(a *domain.Approval) {
	e.open()
	e.strField("approval_id", a.ID)
	e.strField("agent_id", a.AgentID)
	e.strField("principal_id", a.PrincipalID)
	e.strField("kind", a.Kind)
	e.strField("status", string(a.Status))
	e.strField("summary", a.Summary)
	e.optStr("risk_level", string(a.Risk))
	if a.ToLevel != nil {
		e.intField("to_level", int64(*a.ToLevel))
	}
	e.timeField("created_at", a.CreatedAt)
	e.timeField("expires_at", a.ExpiresAt)
	if a.ResolvedAt != nil {
		e.key("resolved_at")
		e.timePtr(a.ResolvedAt)
	}
	e.optStr("resolved_by", a.ResolvedBy)
	e.optStr("reason", a.Reason)
	e.optStr("transaction_id", a.TransactionID)
	e.close()
}

func (e *encoder) trustChange(t *domain.TrustChange) {
	e.open()
	e.intField("from", int64(t.From))
	e.intField("to", int64(t.To))
	e.strField("reason", t.Reason)
	e.close()
}

func (e *encoder) executionLogged(x *domain.ExecutionLogged) {
	e.open()
	e.strField("action_id", x.ActionID)
	e.boolField("success", x.Success)
	e.usdField("cost_usd", x.CostUSD)
	e.intField("tokens", x.Tokens)
	e.optStr("result_hash", x.ResultHash)
	e.usdField("cost_delta_usd", x.CostDelta)
	e.intField("tokens_delta", x.TokensDelta)
	e.boolField("same_day", x.SameDay)
	e.key("budget_remaining")
	e.budgetRemaining(&x.Budget)
	e.optBool("sandbox_violation", x.SandboxViolation)
	e.optPII("output_findings", x.OutputFindings)
	e.optBool("pii_violation", x.PIIViolation)
	e.close()
}

func (e *encoder) elevationRequested(r *domain.TrustElevationRequested) {
	e.open()
	e.strField("request_id", r.RequestID)
	e.key("claimed")
	e.requestTrust(&r.Claimed)
	e.key("computed")
	e.trustEvidence(&r.Computed)
	e.boolField("accepted", r.Accepted)
	e.optStrings("reasons", r.Reasons)
	if r.Approval != nil {
		e.key("approval")
		e.approval(r.Approval)
	}
	e.close()
}

func (e *encoder) approvalResolved(r *domain.ApprovalResolved) {
	e.open()
	e.key("approval")
	e.approval(&r.Approval)
	if r.Trust != nil {
		e.key("trust")
		e.trustChange(r.Trust)
	}
	e.optUSD("released_cost_usd", r.ReleasedCost)
	e.optInt("released_tokens", r.ReleasedTokens)
	e.close()
}

func (e *encoder) statusChange(s *domain.AgentStatusChange) {
	e.open()
	e.strField("status", s.Status)
	e.strField("reason", s.Reason)
	e.close()
}

func (e *encoder) approvalsExpired(x *domain.ApprovalsExpired) {
	e.open()
	e.key("approvals")
	if x.Approvals == nil {
		e.null()
	} else {
		e.buf = append(e.buf, '[')
		for i := range x.Approvals {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.approvalResolved(&x.Approvals[i])
		}
		e.buf = append(e.buf, ']')
	}
	e.close()
}

func (e *encoder) qwedVerified(q *domain.QWEDVerified) {
	e.open()
	e.strField("verification_id", q.VerificationID)
	e.stringsField("attestations", q.Attestations)
	e.close()
}

func (e *encoder) checkpoint(c *domain.LogCheckpoint) {
	e.open()
	e.uintField("seq", c.Seq)
	e.strField("head", c.Head)
	e.key("next")
	e.open()
	e.intField("events", c.Next.Events)
	e.durationField("interval", c.Next.Interval)
	e.close()
	e.strField("signature", c.Signature)
	e.close()
}

func (e *encoder) a2aMessage(m *a2a.Message) {
	e.open()
	e.strField("sender_agent_id", m.SenderAgentID)
	e.strField("receiver_agent_id", m.ReceiverAgentID)
	e.strField("payload_type", string(m.PayloadType))
	e.key("payload")
	e.raw(m.Payload)
	e.optStr("timestamp", m.Timestamp)
	e.optStr("trace_id", m.TraceID)
	e.close()
}

func (e *encoder) a2aBoundary(c *domain.A2ABoundaryChange) {
	e.open()
	e.strField("op", c.Op)
	e.optStr("agent", c.Agent)
	e.optStr("sender", c.Sender)
	e.optStr("receiver", c.Receiver)
	e.close()
}

func (e *encoder) a2aVerdict(v *domain.A2AVerdict) {
	e.open()
	e.strField("boundary", v.Boundary)
	e.strField("sender", v.Sender)
	e.strField("receiver", v.Receiver)
	e.strField("payload_type", string(v.PayloadType))
	e.strField("status", string(v.Status))
	e.strField("reason", v.Reason)
	e.strField("engine_used", v.Engine)
	e.strField("trace_id", v.TraceID)
	e.strField("payload_digest", v.PayloadDigest)
	e.strField("attestation_jwt", v.Attestation)
	e.optInt("retry_after_ms", v.RetryAfterMs)
	e.optBool("shadow", v.Shadow)
	if v.Details != nil {
		e.key("details")
		e.a2aDetails(v.Details)
	}
	e.close()
}

func (e *encoder) a2aDetails(d *domain.A2ADetails) {
	e.open()
	e.optStr("claimed_total", d.ClaimedTotal)
	e.optStr("computed_total", d.ComputedTotal)
	e.optStrings("contradictions", d.Contradictions)
	e.optStrings("patterns", d.Patterns)
	e.optFindings(d.Findings)
	e.optStr("engine_error", d.EngineError)
	e.close()
}
