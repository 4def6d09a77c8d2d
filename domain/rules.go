package domain

import (
	"crypto/subtle"
	"fmt"
	"time"
)

// Named limits of the rules (invariant 7, docs/ARCHITECTURE.md), in addition to those in
// state.go.
const (
	// MaxConversations bounds the conversations kept per agent; a decision
	// that opens one more names the least recently updated in
	// ActionDecided.ConversationEvicted and the fold forgets it. Its last
	// committed step stays in the projections (Env.RetiredStep), so its
	// replay protection outlives it.
	MaxConversations = 10_000
	// MaxLoggedActions bounds the remembered executed action IDs per agent
	// (to answer a second LogExecution with REQ-409 rather than REQ-404).
	MaxLoggedActions = 1024
	// MaxRegistryTools bounds a principal's tool registry.
	MaxRegistryTools = 1024
	// MaxPermissionEntries bounds each permission list of an agent.
	MaxPermissionEntries = 256
	// MaxConfigSteps bounds Config.MaxSteps.
	MaxConfigSteps = 1_000_000
)

// Decide returns the event that records the outcome of cmd on s at env, or
// nil when there is nothing to record (a Tick with nothing due). It never
// mutates s and never fails: every refusal is an event too (EvCommandRejected
// with Error set, or a denied EvActionDecided).
//
// The event's Seq, Partition, Time, Type, Command (cmd itself) and AgentID
// are set here; Prev is left to the log writer. Time is env.Now in UTC,
// raised to s.LastTime if env.Now is earlier (time never runs backwards in a
// partition).
func Decide(s *State, env Env, cmd *Command) *Event {
	now := env.Now.UTC()
	if now.Before(s.LastTime) {
		now = s.LastTime.UTC()
	}
	d := &decider{s: s, env: env, now: now, cmd: cmd}
	var ev *Event
	if cmd != nil && (cmd.Type == CmdVerifyAction || cmd.Type == CmdVerifyToolCall) {
		d.block = new(decisionBlock)
		ev = &d.block.ev
	} else if cmd != nil && cmd.Type == CmdA2AMessage {
		d.a2a = new(a2aBlock)
		ev = &d.a2a.ev
	} else {
		ev = new(Event)
	}
	// ev is freshly allocated, hence zero: only the set fields are written.
	ev.Seq, ev.Partition, ev.Time, ev.Command = env.Seq, env.Partition, now, cmd
	d.ev = ev
	if cmd == nil {
		return d.reject(Errorf(CodeMissingField, "empty command"))
	}
	ev.AgentID = cmd.AgentID
	if cmd.Withheld != nil {
		return d.withheld()
	}
	if cmd.Authenticated != nil && !gateAuthenticated(cmd.Type) {
		return d.reject(fieldError(CodeInvalidRequest, "authenticated", "only a prepare or an execute carries the gate's authentication"))
	}
	switch cmd.Type {
	case CmdRegisterAgent:
		return d.register()
	case CmdVerifyAction:
		return d.verifyAction()
	case CmdVerifyToolCall:
		return d.verifyTool()
	case CmdLogExecution:
		return d.logExecution()
	case CmdRequestTrust:
		return d.requestTrust()
	case CmdResolveApproval:
		return d.resolveApproval()
	case CmdSetTrustLevel:
		return d.setTrust()
	case CmdSuspendAgent:
		return d.suspend()
	case CmdFileComplaint:
		return d.complaint()
	case CmdPutToolRegistry:
		return d.putToolRegistry()
	case CmdPutPrincipalPermissions:
		return d.putPrincipalPermissions()
	case CmdIssuePrincipalKey:
		return d.issueKey()
	case CmdRevokePrincipalKey:
		return d.revokeKey()
	case CmdRotateAgentToken, CmdRevokeAgentToken:
		return d.changeToken()
	case CmdConfigure:
		return d.configure()
	case CmdTick:
		return d.tick()
	case CmdRejectRequest:
		return d.rejectRequest()
	case CmdQWEDVerify:
		return d.qwedVerify()
	case CmdA2AMessage:
		return d.a2aMessage()
	case CmdA2ABoundary:
		return d.a2aBoundary()
	case CmdCopyPrincipalState:
		return d.copyPrincipalState()
	case CmdBusiness:
		return d.businessChange()
	case CmdPrepareExecute:
		return d.prepareExecute()
	case CmdExecute:
		return d.executeCmd()
	case CmdExecuteOutcome:
		return d.executeOutcome()
	case CmdExecuteTick:
		return d.executeTick()
	case CmdWebhook:
		return d.webhookChange()
	case CmdDelivery:
		return d.webhookDelivery()
	case CmdPolicy:
		return d.policyChange()
	case CmdAgentBlocked:
		return d.agentBlocked()
	}
	return d.reject(Errorf(CodeUnsupportedType, "unknown command type '%s'", cmd.Type))
}

// decider carries one Decide call.
type decider struct {
	s     *State
	env   Env
	now   time.Time
	cmd   *Command
	ev    *Event
	block *decisionBlock // verify commands only
	a2a   *a2aBlock      // A2A messages only
	// unauthenticated is set when authAgent or agentForPrincipal refused
	// the command: its refusal withholds the payload (withhold.go).
	unauthenticated bool
}

// decisionBlock co-allocates what one decision needs: the event, its
// payload, the passed checks and the budget figures (one allocation instead
// of four on the hot path).
//
// Its size is held under 1,016 bytes (TestDecisionBlockSizeClass): with the
// 8-byte malloc header of a pointerful object over 512 bytes it is then a
// 1,024-byte allocation; 8 bytes more and it is a 1,152-byte one. checks
// holds nine names (1,008 bytes): a decision passing ten or more (a SQL
// read in a conversation, a tool with several guards, an attestation)
// grows its ChecksPassed on the heap, one more allocation.
type decisionBlock struct {
	ev     Event
	dec    ActionDecided
	checks [9]string
	budget remainingFigures
}

// reject turns the event into a rejection with err.
func (d *decider) reject(err *Error) *Event {
	d.ev.Type = EvCommandRejected
	d.ev.Error = err
	if d.unauthenticated && d.s.Config.WithholdRefusals {
		d.ev.Command = Withhold(d.cmd)
	}
	return d.ev
}

// missing is the REQ-002 error for a missing payload or field.
func missing(field string) *Error {
	return fieldError(CodeMissingField, field, "missing required field '%s'", field)
}

// fieldError returns an error with details.field set.
func fieldError(code Code, field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if code == CodeInvalidRequest {
		msg = field + ": " + msg
	}
	return &Error{Code: code, Message: msg, Details: map[string]any{"field": field}}
}

// authAgent authenticates an agent-side command: the agent must exist, and
// the caller must present its token (compared in constant time) or be its
// principal or the admin. A suspended agent is refused unless
// allowSuspended.
func (d *decider) authAgent(allowSuspended bool) (*Agent, *Error) {
	a, err := d.agentCredentials(allowSuspended)
	d.unauthenticated = err != nil
	return a, err
}

// agentCredentials is authAgent's check (CheckAgentCredentials).
func (d *decider) agentCredentials(allowSuspended bool) (*Agent, *Error) {
	cmd := d.cmd
	if cmd.AgentID == "" {
		return nil, missing("agent_id")
	}
	a := d.s.Agents[cmd.AgentID]
	if err := CheckAgentCredentials(a, cmd.AgentID, cmd.Principal, cmd.TokenHash, allowSuspended); err != nil {
		return nil, err
	}
	return a, nil
}

// tokenMatches compares two token hashes in constant time (QWED-Agent spec
// v1.1 §9.8) with crypto/subtle. Hashes are 64 hex digits; anything else
// never matches. The conversions to []byte do not escape, so the compiler
// makes them without a copy: nothing is allocated.
func tokenMatches(presented, stored string) bool {
	const n = 64
	return len(presented) == n && len(stored) == n &&
		subtle.ConstantTimeCompare([]byte(presented), []byte(stored)) == 1
}

// authPrincipal checks that the caller is owner's principal or the admin.
func (d *decider) authPrincipal(owner string) *Error {
	p := d.cmd.Principal
	switch {
	case p == AdminPrincipal:
		return nil
	case p == "":
		return Errorf(CodeMissingAPIKey, "principal API key required")
	case p != owner:
		return Errorf(CodeForbidden, "principal '%s' may not act for principal '%s'", p, owner)
	}
	return nil
}

// authAdmin checks that the caller is the admin.
func (d *decider) authAdmin() *Error {
	switch d.cmd.Principal {
	case AdminPrincipal:
		return nil
	case "":
		return Errorf(CodeMissingAPIKey, "admin API key required")
	}
	return Errorf(CodeForbidden, "admin API key required")
}

// agentForPrincipal loads the agent of a principal-side command and checks
// the caller owns it.
func (d *decider) agentForPrincipal() (*Agent, *Error) {
	a, err := d.principalsAgent()
	d.unauthenticated = err != nil
	return a, err
}

// principalsAgent is agentForPrincipal's check.
func (d *decider) principalsAgent() (*Agent, *Error) {
	if d.cmd.AgentID == "" {
		return nil, missing("agent_id")
	}
	a := d.s.Agents[d.cmd.AgentID]
	if a == nil {
		return nil, Errorf(CodeAgentNotRegistered, "agent '%s' is not registered", d.cmd.AgentID)
	}
	if err := d.authPrincipal(a.Info.PrincipalID); err != nil {
		return nil, err
	}
	return a, nil
}

// requestIDPresent checks that a command that mints an ID names its request.
func (d *decider) requestIDPresent() *Error {
	if d.cmd.Request.ID == "" {
		return missing("request.id")
	}
	return nil
}
