package domain

import (
	"encoding/json"

	"github.com/agentgate/agentgate/domain/jcs"
	"strconv"
	"time"
)

// verify_action and tool verification (QWED-Agent spec v1.1 §4, §5, §9;
// the QWED-Agent user guide).
//
// Input problems are refusals (EvCommandRejected): authentication (AGENT-001,
// AGENT-002, AUTH-003, AGENT-003), context (CTX-001, CTX-002), missing fields
// (REQ-002) and malformed values (REQ-001). A malformed
// pre_action_state_hash or state_source is REQ-001 naming the field: the
// context is present but wrong, which CTX-001 ("missing") does not describe.
// Parameters are validated with the fingerprint, before any rule runs.
//
// Everything after validation is a decision (EvActionDecided), in this
// order: LOOP-001, LOOP-002, LOOP-003, LOOP-004, action type / tool
// (REQ-005, AGENT-004, SEC-002, AGENT-005), trust × risk (TRUST-001 or
// PENDING), budgets (BUDGET-00x), attestation (SYS-001 when it cannot be
// issued). A denial never consumes the step or the budget.

// maxSafeInteger is 2^53, the largest step number accepted.
const maxSafeInteger = 1 << 53

// The names of checks reported in verification.checks_passed / _failed.
const (
	checkContext      = "context_valid"
	checkStepLimit    = "within_step_limit"
	checkReplay       = "no_replay"
	checkRepetition   = "no_repetition"
	checkDoomLoop     = "no_doom_loop"
	checkTypeKnown    = "action_type_known"
	checkToolAllowed  = "tool_allowed"
	checkEngine       = "engine_allowed"
	checkSQLSafe      = "no_sql_injection"
	checkReadOnly     = "read_only_query"
	checkTrust        = "trust_sufficient"
	checkWithinBudget = "within_budget"
	checkAttestation  = "attestation_issued"
)

// Verification statuses.
const (
	StatusVerified = "VERIFIED"
	StatusFailed   = "FAILED"
	StatusBlocked  = "BLOCKED"
)

var stateSources = map[string]bool{
	"file_tree": true, "db_snapshot": true, "conversation_digest": true, "git_tree": true, "custom": true,
}

// parseStep parses a step number: a JSON integer (no fraction, no
// exponent) between 1 and 2^53.
func parseStep(n json.Number) (int64, bool) {
	s := string(n)
	if s == "" || len(s) > 16 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	if s[0] == '0' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > maxSafeInteger {
		return 0, false
	}
	return v, true
}

// validateContext checks a context (QWED-Agent spec v1.1 §9.1; the QWED-Agent
// user guide, LOOP-004); actionType is checked between the step and the state hash
// ("" skips it, for tool calls).
func validateContext(c *ActionContext, cfg *Config, actionType *string) (int64, *Error) {
	if c.ConversationID == "" {
		e := fieldError(CodeMissingContext, "context.conversation_id", "missing required action context: conversation_id")
		return 0, e
	}
	if c.StepNumber == "" {
		return 0, fieldError(CodeMissingContext, "context.step_number", "missing required action context: step_number")
	}
	step, ok := parseStep(c.StepNumber)
	if !ok {
		return 0, fieldError(CodeInvalidStepNumber, "context.step_number",
			"invalid step_number '%s': must be an integer between 1 and 2^53", string(c.StepNumber))
	}
	if actionType != nil && *actionType == "" {
		return 0, missing("action.type")
	}
	hash, src := c.PreActionStateHash, c.StateSource
	switch {
	case hash == "" && src == "":
		if cfg.DoomLoopGuardRequired {
			return 0, fieldError(CodeMissingContext, "context.pre_action_state_hash",
				"missing required action context: pre_action_state_hash and state_source (doom loop guard required)")
		}
	case hash == "":
		return 0, fieldError(CodeMissingContext, "context.pre_action_state_hash",
			"missing required action context: pre_action_state_hash must accompany state_source")
	case src == "":
		return 0, fieldError(CodeMissingContext, "context.state_source",
			"missing required action context: state_source must accompany pre_action_state_hash")
	case !isSHA256Hex(hash):
		return 0, fieldError(CodeInvalidRequest, "context.pre_action_state_hash", "must be 64 lowercase hex digits (SHA-256)")
	case !stateSources[src]:
		return 0, fieldError(CodeInvalidRequest, "context.state_source",
			"'%s' is not one of file_tree, db_snapshot, conversation_digest, git_tree, custom", src)
	}
	return step, nil
}

// proposal is a validated verify_action or tool call.
type proposal struct {
	kind       ActionKind
	actionID   string
	actionType string
	tool       string
	ctx        *ActionContext // nil for a tool call without context
	step       int64
	dig        digests
	opts       *Options
	threshold  Risk // "" when none
	cost       USD
	tokens     int64
}

// classification is what the action type or tool table says about a proposal.
type classification struct {
	engine    string
	risk      Risk
	riskScore string
	// deny, when set, denies at step 7 with failedCheck; blocked makes the
	// verification status BLOCKED and violation marks a security violation.
	deny        *Error
	failedCheck string
	blocked     bool
	violation   bool
	// dangerous: never approved autonomously; approval: the registry
	// requires approval; sandbox: the registry requires a sandbox.
	dangerous bool
	approval  bool
	sandbox   bool
	passed    [5]string
	npassed   int
	// verdict is what the engine verdict says (verdictNone without one);
	// verdictWhy explains an uncertain verdict.
	verdict    verdictClass
	verdictWhy string
	// applied is the verdict that was applied (nil when none was).
	applied *EngineVerdict
	// pii are the findings of the PII scan (Config.OutputScan).
	pii []PIIFinding
}

func (c *classification) pass(name string) {
	if c.npassed < len(c.passed) {
		c.passed[c.npassed] = name
		c.npassed++
	}
}

// validateCommon checks the options and estimates shared by both kinds;
// object is "action" or "tool_call", for the field names.
func validateCommon(p *proposal, object string, cost USD, tokens int64) *Error {
	if p.opts.RiskThreshold != "" {
		r, err := ParseRisk(p.opts.RiskThreshold)
		if err != nil {
			return fieldError(CodeInvalidRequest, "options.risk_threshold", "'%s' is not one of low, medium, high, critical", p.opts.RiskThreshold)
		}
		p.threshold = r
	}
	if cost < 0 || cost > maxUSD {
		return fieldError(CodeInvalidRequest, object+".estimated_cost_usd", "must be between 0 and %s", maxUSD)
	}
	if tokens < 0 {
		return fieldError(CodeInvalidRequest, object+".estimated_tokens", "must not be negative")
	}
	p.cost, p.tokens = cost, tokens
	return nil
}

func (d *decider) verifyAction() *Event {
	v := d.cmd.Verify
	if v == nil {
		return d.reject(missing("verify"))
	}
	if v.Action.Output != "" && !d.s.Config.OutputScan {
		return d.reject(unknownMember("action.output"))
	}
	a, err := d.authAgent(false)
	if err != nil {
		return d.reject(err)
	}
	if err := d.requestIDPresent(); err != nil {
		return d.reject(err)
	}
	p := proposal{kind: KindAction, actionType: v.Action.Type, ctx: &v.Context, opts: &v.Options}
	if p.step, err = validateContext(&v.Context, &d.s.Config, &v.Action.Type); err != nil {
		return d.reject(err)
	}
	if err := validateCommon(&p, "action", v.Action.EstimatedCost, v.Action.EstimatedTokens); err != nil {
		return d.reject(err)
	}
	dig, actionID, jerr := actionDigests(v, d.cmd.Request)
	if jerr != nil {
		return d.reject(jsonFault("action", v.Action.Parameters, jerr))
	}
	p.dig, p.actionID = dig, actionID
	cl := classifyAction(d.s, a, &v.Action, d.cmd.Verdict)
	if cl.deny == nil {
		var target string
		var params json.RawMessage
		outbound := d.s.Config.PIIGuard && piiOutbound[v.Action.Type]
		if outbound {
			target, params = v.Action.Target, v.Action.Parameters
		}
		if outbound || v.Action.Output != "" {
			detectPII(&cl, target, params, v.Action.Output, d.s.Config.StrictGuards, d.s.Config.OutputScan)
		}
	}
	return d.decideProposal(a, &p, &cl)
}

func (d *decider) verifyTool() *Event {
	v := d.cmd.Tool
	if v == nil {
		return d.reject(missing("tool"))
	}
	a, err := d.authAgent(false)
	if err != nil {
		return d.reject(err)
	}
	if err := d.requestIDPresent(); err != nil {
		return d.reject(err)
	}
	if v.ToolCall.ToolName == "" {
		return d.reject(missing("tool_call.tool_name"))
	}
	p := proposal{kind: KindTool, actionType: string(KindTool), tool: v.ToolCall.ToolName, ctx: v.Context, opts: &v.Options}
	if v.Context != nil {
		if p.step, err = validateContext(v.Context, &d.s.Config, nil); err != nil {
			return d.reject(err)
		}
	}
	if err := validateCommon(&p, "tool_call", v.ToolCall.EstimatedCost, v.ToolCall.EstimatedTokens); err != nil {
		return d.reject(err)
	}
	dig, actionID, jerr := toolDigests(v, d.cmd.Request)
	if jerr != nil {
		return d.reject(jsonFault("tool_call", v.ToolCall.Parameters, jerr))
	}
	p.dig, p.actionID = dig, actionID
	cl := classifyTool(d.s, a, v.ToolCall.ToolName)
	if d.s.Config.ToolVerification {
		plan := ToolVerification(d.s.Principals[a.Info.PrincipalID], v.ToolCall.ToolName)
		verifyToolParameters(&cl, &plan, v.ToolCall.ToolName, v.ToolCall.Parameters, d.cmd.Verdict, d.s.Config.StrictGuards)
	}
	if d.s.Config.Detectors && d.s.Config.StrictGuards && cl.deny == nil {
		detectTool(&cl, d.s, a, v.ToolCall.ToolName, v.ToolCall.Parameters)
	}
	if d.s.Config.PIIGuard && cl.deny == nil {
		detectPII(&cl, "", v.ToolCall.Parameters, "", d.s.Config.StrictGuards, d.s.Config.OutputScan)
	}
	return d.decideProposal(a, &p, &cl)
}

// jsonFault names the part of a request that is not deterministic JSON:
// the parameters when they are at fault (the usual case), else the object.
func jsonFault(object string, params json.RawMessage, err error) *Error {
	if len(params) > 0 {
		if _, perr := jcs.Transform(params); perr != nil {
			return fieldError(CodeInvalidRequest, object+".parameters", "not deterministic JSON: %v", perr)
		}
	}
	return fieldError(CodeInvalidRequest, object, "not deterministic JSON: %v", err)
}

// classifyAction applies the action type table and the engine verdict v
// (step 7; v may be nil) under the state's configuration:
// Config.Detectors, StrictGuards, IDNHosts and PrincipalPermissions
// (detectors.go); Config.EngineSQLRisk: the risk of an SQL action comes
// from the sql engine's class alone, never from the tokenizer of logs
// written before it.
func classifyAction(s *State, a *Agent, act *Action, v *EngineVerdict) classification {
	cfg := &s.Config
	engineSQL := cfg.EngineSQLRisk
	spec, ok := actionSpecs[act.Type]
	if !ok {
		return classification{risk: RiskCritical, failedCheck: checkTypeKnown,
			deny: &Error{Code: CodeUnsupportedType, Message: "unsupported action type '" + act.Type + "'",
				Details: map[string]any{"action_type": act.Type}}}
	}
	cl := classification{engine: spec.Engine}
	if !spec.QWEDEngine {
		v = nil // only the QWED engines' verdicts count
	}
	var sr *SQLRisk
	switch {
	case v != nil && v.Risk != "" && v.Engine == spec.Engine:
		cl.risk = verdictRisk(spec, v)
	case spec.SQL && engineSQL:
		cl.risk = unclassifiedSQLRisk(spec, act)
	case spec.SQL:
		cl.risk, sr = legacySQLRisk(spec, act)
	default:
		cl.risk = spec.Risk
	}
	cl.pass(checkTypeKnown)
	if contains(a.Permissions.BlockedTools, act.Type) {
		cl.deny = &Error{Code: CodeToolNotAllowed, Message: "action type '" + act.Type + "' is blocked for this agent",
			Details: map[string]any{"action_type": act.Type}}
		cl.failedCheck, cl.blocked, cl.violation = checkToolAllowed, true, true
		return cl
	}
	if cfg.Detectors && detect(&cl, s, a, act) {
		return cl
	}
	if sr != nil && sr.Violation {
		cl.deny = &Error{Code: CodeSecurityViolated, Message: "SQL rejected: " + sr.Reason,
			Details: map[string]any{"statement": sr.Statement, "reason": sr.Reason}}
		cl.failedCheck, cl.blocked, cl.violation = checkSQLSafe, true, true
		return cl
	}
	if spec.QWEDEngine && len(a.Permissions.AllowedEngines) > 0 && !contains(a.Permissions.AllowedEngines, spec.Engine) {
		cl.deny = &Error{Code: CodeVerificationFailed, Message: "engine '" + spec.Engine + "' not allowed for this agent",
			Details: map[string]any{"engine": spec.Engine}}
		cl.failedCheck = checkEngine
		return cl
	}
	if spec.QWEDEngine {
		cl.pass(checkEngine)
	}
	if v != nil {
		cl.applied = v
		applyVerdict(&cl, spec, act, v)
		if cl.deny != nil {
			return cl
		}
	}
	if sr != nil {
		cl.pass(checkSQLSafe)
		if sr.Risk == RiskLow {
			cl.pass(checkReadOnly)
		}
	}
	return cl
}

// classifyTool applies the tool rules of the QWED-Agent spec v1.1 §5 and
// the QWED-Agent user guide in order: blocked, principal registry, allowed_tools,
// safe list, dangerous list, unknown.
func classifyTool(s *State, a *Agent, name string) classification {
	if contains(a.Permissions.BlockedTools, name) {
		return classification{engine: "tool", risk: RiskCritical, failedCheck: checkToolAllowed, blocked: true, violation: true,
			deny: &Error{Code: CodeToolNotAllowed, Message: "tool '" + name + "' is blocked for this agent",
				Details: map[string]any{"tool": name}}}
	}
	cl := classification{engine: "tool"}
	if p := s.Principals[a.Info.PrincipalID]; p != nil {
		if spec, ok := p.Tools[name]; ok {
			cl.risk = spec.RiskLevel
			if _, err := ParseRisk(string(cl.risk)); err != nil {
				cl.risk = RiskCritical
			}
			if spec.VerificationEngine != "" {
				cl.engine = spec.VerificationEngine
			}
			cl.approval, cl.sandbox = spec.RequiresApproval, spec.SandboxRequired
			cl.pass(checkToolAllowed)
			return cl
		}
	}
	def, known := toolDefaults[name]
	if contains(a.Permissions.AllowedTools, name) {
		cl.risk = RiskMedium
		if known {
			cl.risk = def.risk
		}
		cl.pass(checkToolAllowed)
		return cl
	}
	if def.safe {
		cl.risk = def.risk
		cl.pass(checkToolAllowed)
		return cl
	}
	if def.dangerous {
		cl.risk, cl.dangerous = RiskCritical, true
		cl.pass(checkToolAllowed)
		return cl
	}
	score := formatScore(toolRiskScore(name))
	cl.risk, cl.riskScore, cl.blocked, cl.failedCheck = RiskCritical, score, true, checkToolAllowed
	cl.deny = &Error{Code: CodeToolNotAllowed,
		Message: "Unknown tool '" + name + "' requires explicit allowlisting (risk_score=" + score + ")",
		Details: map[string]any{"tool": name, "risk_score": json.Number(score)}}
	return cl
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// matrix is the trust × risk decision matrix of the QWED-Agent user guide
// (docs/ARCHITECTURE.md, "Where the specifications disagree"). An out-of-range
// trust level is treated as untrusted.
func matrix(t TrustLevel, r Risk) Decision {
	rank := r.Rank()
	switch t {
	case TrustSupervised:
		switch rank {
		case 0:
			return Approved
		case 1:
			return Pending
		}
		return Denied
	case TrustAutonomous:
		switch rank {
		case 0, 1:
			return Approved
		case 2:
			return Pending
		}
		return Denied
	case TrustTrusted:
		return Approved
	}
	if rank == 0 {
		return Pending
	}
	return Denied
}

// decideProposal runs steps 3 to 11 on a validated proposal.
func (d *decider) decideProposal(a *Agent, p *proposal, cl *classification) *Event {
	// A duplicate action ID is a retried request the caller did not catch.
	if _, open := a.OpenActions[p.actionID]; open || d.s.Approvals[p.actionID] != nil {
		return d.reject(Errorf(CodeConflict, "request already decided as action '%s'", p.actionID))
	}
	ev := d.ev
	ev.Type = EvActionDecided
	// The block was allocated zeroed by Decide and decideProposal fills it
	// once: setting the fields one by one spares rewriting (with write
	// barriers) a struct that is already zero.
	dec := &d.block.dec
	dec.ActionID, dec.Kind, dec.ActionType, dec.Tool = p.actionID, p.kind, p.actionType, p.tool
	dec.RequestDigest, dec.Fingerprint, dec.StateFingerprint = p.dig.request, p.dig.fingerprint, p.dig.stateFingerprint
	dec.Step = p.step
	ev.Decided = dec
	ver := &dec.Verification
	ver.Engine, ver.RiskLevel, ver.RiskScore, ver.Sandbox, ver.PII = cl.engine, cl.risk, cl.riskScore, cl.sandbox, cl.pii
	ver.ChecksPassed = d.block.checks[:0]
	if v := cl.applied; v != nil {
		ver.Findings, dec.OutcomeDigest = v.Findings, v.OutcomeDigest
	}
	if p.ctx != nil {
		dec.ConversationID = p.ctx.ConversationID
	}
	deny := func(err *Error, check string, status string) *Event {
		dec.Decision, dec.Error = Denied, err
		if err.Code == CodeBudgetCost || err.Code == CodeBudgetRate || err.Code == CodeBudgetTokens {
			dec.Decision = BudgetExceeded
		}
		ev.Error = err
		ver.Status = status
		ver.ChecksFailed = []string{check}
		dec.Budget = remaining(a, d.now, budgetRequest{}, false, &d.block.budget)
		dec.Notify = notice(&d.s.Config, dec, a.Info.PrincipalID)
		d.degrade(a, dec)
		return ev
	}
	// Steps 3-6: conversation controls.
	var conv *Conversation
	if p.ctx != nil {
		ver.ChecksPassed = append(ver.ChecksPassed, checkContext)
		conv = a.Conversations[p.ctx.ConversationID]
		last, known := int64(0), conv != nil
		if known {
			last = conv.LastStep
		} else if d.env.RetiredStep != nil {
			// Evicted from the state at MaxConversations: its replay
			// protection outlives it (the conversation restarts from
			// its last step, its LOOP-003/004 windows empty).
			last, known = d.env.RetiredStep(a.ID, p.ctx.ConversationID)
		}
		if p.step > d.s.Config.MaxSteps {
			return deny(&Error{Code: CodeStepLimit,
				Message: "conversation step limit exceeded (max " + strconv.FormatInt(d.s.Config.MaxSteps, 10) + " steps)",
				Details: map[string]any{"max_steps": d.s.Config.MaxSteps, "step_number": p.step}}, checkStepLimit, StatusFailed)
		}
		ver.ChecksPassed = append(ver.ChecksPassed, checkStepLimit)
		if known && p.step <= last {
			return deny(&Error{Code: CodeReplay,
				Message: "replay or out-of-order step " + strconv.FormatInt(p.step, 10) + " (last committed step " + strconv.FormatInt(last, 10) + ")",
				Details: map[string]any{"step_number": p.step, "last_step": last}}, checkReplay, StatusFailed)
		}
		ver.ChecksPassed = append(ver.ChecksPassed, checkReplay)
		if conv != nil && conv.LastFingerprint == p.dig.fingerprint && conv.Repeats >= 2 {
			return deny(&Error{Code: CodeRepetitiveLoop,
				Message: "repetitive action loop detected: the same action was already committed " + strconv.FormatInt(conv.Repeats, 10) + " consecutive times",
				Details: map[string]any{"fingerprint": p.dig.fingerprint, "consecutive": conv.Repeats}}, checkRepetition, StatusFailed)
		}
		ver.ChecksPassed = append(ver.ChecksPassed, checkRepetition)
		if p.dig.stateFingerprint != "" {
			if n := countOf(conv, p.dig.stateFingerprint); n >= DoomThreshold-1 {
				return deny(&Error{Code: CodeDoomLoop,
					Message: "no-progress doom loop detected: same action on unchanged state " + strconv.Itoa(n+1) + " times",
					Details: map[string]any{"state_fingerprint": p.dig.stateFingerprint, "occurrences": n, "window": DoomWindow}},
					checkDoomLoop, StatusFailed)
			}
			ver.ChecksPassed = append(ver.ChecksPassed, checkDoomLoop)
		}
	}
	// Step 7: action type or tool.
	ver.ChecksPassed = append(ver.ChecksPassed, cl.passed[:cl.npassed]...)
	if cl.deny != nil {
		status := StatusFailed
		if cl.blocked {
			status = StatusBlocked
		}
		dec.SecurityViolation = cl.violation
		return deny(cl.deny, cl.failedCheck, status)
	}
	// Step 8: trust × risk, then the escalations that can only make it stricter.
	decision := matrix(a.Trust, cl.risk)
	if decision == Denied {
		return deny(&Error{Code: CodeInsufficientTrust,
			Message: "trust level " + strconv.Itoa(int(a.Trust)) + " (" + a.Trust.String() + ") is insufficient for " + string(cl.risk) + " risk",
			Details: map[string]any{"trust_level": int(a.Trust), "risk_level": string(cl.risk)}}, checkTrust, StatusFailed)
	}
	pendingWhy := ""
	switch {
	case decision == Pending:
		pendingWhy = "trust level " + strconv.Itoa(int(a.Trust)) + " requires approval for " + string(cl.risk) + " risk"
	case p.threshold != "" && cl.risk.Rank() > p.threshold.Rank():
		decision, pendingWhy = Pending, "risk "+string(cl.risk)+" above the requested threshold "+string(p.threshold)
	case cl.approval:
		decision, pendingWhy = Pending, "the tool registry requires approval"
	case cl.dangerous:
		decision, pendingWhy = Pending, "dangerous tool: never approved autonomously"
	case cl.verdict == verdictUncertain:
		decision, pendingWhy = Pending, cl.verdictWhy+": principal approval required"
	case cl.verdict == verdictCorrected && cl.risk != RiskLow:
		decision, pendingWhy = Pending, "corrected action at "+string(cl.risk)+" risk: principal approval required"
	case cl.verdict == verdictCorrected:
		decision = Corrected
	}
	if decision == Corrected {
		c, digest, err := correctedAction(&d.cmd.Verify.Action, cl.applied.Corrected)
		if err != nil {
			return deny(&Error{Code: CodeInvalidRequest, Message: "the corrected action is not deterministic JSON"}, checkEngineVerdict, StatusFailed)
		}
		dec.CorrectedAction, dec.CorrectedDigest = c, digest
	}
	ver.ChecksPassed = append(ver.ChecksPassed, checkTrust)
	// Step 9: budgets.
	req := budgetRequest{cost: p.cost, tokens: p.tokens, tool: p.kind == KindTool, highRisk: cl.risk.Rank() >= RiskHigh.Rank()}
	if err := checkBudget(a, d.now, req); err != nil {
		return deny(err, checkWithinBudget, StatusFailed)
	}
	ver.ChecksPassed = append(ver.ChecksPassed, checkWithinBudget)
	// Step 10: attestation.
	if p.opts.RequireAttestation || (decision == Approved && req.highRisk) {
		tok, ok := d.attest(a, p, decision, cl)
		if !ok {
			return deny(&Error{Code: CodeInternal, Message: "attestation could not be issued"}, checkAttestation, StatusFailed)
		}
		dec.Attestation = tok
		ver.ChecksPassed = append(ver.ChecksPassed, checkAttestation)
	}
	// Admitted: APPROVED, CORRECTED or PENDING consume the step and the
	// budget.
	ver.Status = StatusVerified
	if cl.applied != nil {
		ver.Status = string(cl.applied.Status)
	}
	dec.Decision = decision
	dec.StepConsumed = p.ctx != nil
	if p.ctx != nil && conv == nil && len(a.Conversations) >= MaxConversations {
		dec.ConversationEvicted = leastRecentConversation(a)
	}
	dec.ReservedCost, dec.ReservedTokens, dec.HighRisk = p.cost, p.tokens, req.highRisk
	dec.Budget = remaining(a, d.now, req, true, &d.block.budget)
	if decision == Pending {
		dec.Approval = &Approval{
			ID: p.actionID, AgentID: a.ID, PrincipalID: a.Info.PrincipalID, Kind: string(p.kind),
			Status: ApprovalPending, Summary: summary(p, cl.risk, pendingWhy), Risk: cl.risk,
			CreatedAt: d.now, ExpiresAt: d.now.Add(time.Duration(d.s.Config.ApprovalTTL)),
		}
	}
	d.degrade(a, dec)
	return ev
}

// countOf counts fp in the conversation's LOOP-004 window.
func countOf(c *Conversation, fp string) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, x := range c.StateWindow {
		if x == fp {
			n++
		}
	}
	return n
}

func summary(p *proposal, r Risk, why string) string {
	what := p.actionType
	if p.kind == KindTool {
		what = "tool " + p.tool
	}
	s := what + " (" + string(r) + " risk)"
	if p.ctx != nil {
		s += " in conversation " + p.ctx.ConversationID + " step " + strconv.FormatInt(p.step, 10)
	}
	return s + ": " + why
}

// attest signs the decision's claims; false when no signer is configured
// or it fails (the caller then denies: fail closed).
func (d *decider) attest(a *Agent, p *proposal, decision Decision, cl *classification) (string, bool) {
	if d.env.Signer == nil {
		return "", false
	}
	c := AttestationClaims{
		Subject: a.DID, ActionID: p.actionID, IssuedAt: d.now, Decision: decision,
		RequestDigest: p.dig.request, AgentID: a.ID, Step: p.step,
		Seq: d.env.Seq, Partition: d.env.Partition, Risk: cl.risk,
	}
	if v := cl.applied; v != nil {
		c.Engine, c.Status, c.OutcomeDigest = v.Engine, string(v.Status), v.OutcomeDigest
		c.CorrectedDigest = d.block.dec.CorrectedDigest
	}
	if p.ctx != nil {
		c.ConversationID = p.ctx.ConversationID
	}
	tok, err := d.env.Signer.Sign(c)
	if err != nil || tok == "" {
		return "", false
	}
	return tok, true
}
