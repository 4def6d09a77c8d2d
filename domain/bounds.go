package domain

import (
	"encoding/json"
	"strconv"

	"github.com/agentgate/agentgate/domain/engines"
)

// Field limits (issue 11 item 8). Every identifier and text of a command's
// request is bounded, so that no request can grow the decided state or a
// read by more than these sizes (a 900 KB conversation_id kept per
// conversation took the heap to 2.2 GB). Sizes are bytes of the decoded
// string (of the JSON text for parameters).
const (
	// MaxIDBytes bounds an identifier: agent, principal, conversation,
	// action and approval ids, agent and tool names, types, engines,
	// framework and model names, hashes, trust request kinds.
	MaxIDBytes = 256
	// MaxTextBytes bounds a free text: a description, a justification, a
	// reason, a user intent, an action target.
	MaxTextBytes = 4 << 10
	// MaxQueryBytes bounds an action's query and code: the query limit of
	// the QWED protocol (QWED protocol v1.0 §5.1, 100000).
	MaxQueryBytes = engines.MaxQueryBytes
	// MaxParametersBytes bounds the JSON text of an action's or a tool
	// call's parameters.
	MaxParametersBytes = 64 << 10
)

// CheckBounds returns the first field of cmd's request over its limit, as
// a QWED-REQ-004 error whose details name the field, its limit and its
// size ({"field", "max_bytes", "bytes"}); nil when every field fits. The
// transports call it on the command they built, before submitting it
// (Decide does not: a log written before the limits may hold longer
// fields, and re-deciding it must give the recorded decisions).
func CheckBounds(cmd *Command) *Error {
	b := bounds{}
	b.id("agent_id", cmd.AgentID)
	switch {
	case cmd.Register != nil:
		r := cmd.Register
		b.id("agent.name", r.Agent.Name)
		b.id("agent.type", r.Agent.Type)
		b.text("agent.description", r.Agent.Description)
		b.id("agent.principal_id", r.Agent.PrincipalID)
		b.id("agent.framework", r.Agent.Framework)
		b.id("agent.model", r.Agent.Model)
		b.ids("permissions.allowed_engines", r.Permissions.AllowedEngines)
		b.ids("permissions.allowed_tools", r.Permissions.AllowedTools)
		b.ids("permissions.blocked_tools", r.Permissions.BlockedTools)
		b.ids("permissions.allowed_paths", r.Permissions.AllowedPaths)
		b.ids("permissions.denied_paths", r.Permissions.DeniedPaths)
		b.ids("permissions.allowed_hosts", r.Permissions.AllowedHosts)
		b.ids("permissions.allowed_schemes", r.Permissions.AllowedSchemes)
	case cmd.Verify != nil:
		v := cmd.Verify
		b.id("action.type", v.Action.Type)
		b.limit("action.query", len(v.Action.Query), MaxQueryBytes)
		b.limit("action.code", len(v.Action.Code), MaxQueryBytes)
		b.text("action.target", v.Action.Target)
		b.params("action.parameters", v.Action.Parameters)
		b.limit("action.output", len(v.Action.Output), MaxOutputBytes)
		b.context("context", &v.Context)
		b.id("options.risk_threshold", v.Options.RiskThreshold)
	case cmd.Tool != nil:
		t := cmd.Tool
		b.id("tool_call.tool_name", t.ToolCall.ToolName)
		b.params("tool_call.parameters", t.ToolCall.Parameters)
		b.text("justification", t.Justification)
		if t.Context != nil {
			b.context("context", t.Context)
		}
		b.id("options.risk_threshold", t.Options.RiskThreshold)
	case cmd.Execution != nil:
		b.id("action_id", cmd.Execution.ActionID)
		b.id("result_hash", cmd.Execution.ResultHash)
		b.id("sandbox", cmd.Execution.Sandbox)
	case cmd.Trust != nil:
		b.id("request", cmd.Trust.Request)
		b.text("justification", cmd.Trust.Justification)
		b.id("evidence.denial_rate", string(cmd.Trust.Evidence.DenialRate))
	case cmd.Resolve != nil:
		b.id("approval_id", cmd.Resolve.ApprovalID)
		b.text("reason", cmd.Resolve.Reason)
	case cmd.SetTrust != nil:
		b.text("reason", cmd.SetTrust.Reason)
	case cmd.Suspend != nil:
		b.text("reason", cmd.Suspend.Reason)
	case cmd.Complaint != nil:
		b.text("reason", cmd.Complaint.Reason)
	case cmd.ToolRegistry != nil:
		b.id("principal_id", cmd.ToolRegistry.PrincipalID)
		for i := range cmd.ToolRegistry.Tools {
			t := &cmd.ToolRegistry.Tools[i]
			f := "tools[" + strconv.Itoa(i) + "]"
			b.id(f+".name", t.Name)
			b.id(f+".risk_level", string(t.RiskLevel))
			b.id(f+".verification_engine", t.VerificationEngine)
			b.ids(f+".verify_parameters", t.VerifyParameters)
		}
	case cmd.PrincipalPermissions != nil:
		r := cmd.PrincipalPermissions
		b.id("principal_id", r.PrincipalID)
		b.ids("allowed_paths", r.AllowedPaths)
		b.ids("denied_paths", r.DeniedPaths)
		b.ids("allowed_hosts", r.AllowedHosts)
		b.ids("allowed_schemes", r.AllowedSchemes)
	case cmd.IssueKey != nil:
		b.id("principal_id", cmd.IssueKey.PrincipalID)
		b.id("replaces", cmd.IssueKey.Replaces)
		b.id("replaced_hash", cmd.IssueKey.ReplacedHash)
	case cmd.RevokeKey != nil:
		b.id("principal_id", cmd.RevokeKey.PrincipalID)
		b.id("key_id", cmd.RevokeKey.KeyID)
	}
	return b.err
}

// bounds collects the first field over its limit.
type bounds struct{ err *Error }

func (b *bounds) limit(field string, n, maxBytes int) {
	if b.err != nil || n <= maxBytes {
		return
	}
	b.err = TooLong(field, n, maxBytes)
}

// TooLong is CheckBounds's error for a field of n bytes over its limit
// maxBytes: QWED-REQ-004 naming the field, the limit and the size.
func TooLong(field string, n, maxBytes int) *Error {
	return &Error{Code: CodeTooLong,
		Message: field + " is " + strconv.Itoa(n) + " bytes long: the limit is " + strconv.Itoa(maxBytes) + " bytes",
		Details: map[string]any{"field": field, "max_bytes": maxBytes, "bytes": n}}
}

func (b *bounds) id(field, s string)   { b.limit(field, len(s), MaxIDBytes) }
func (b *bounds) text(field, s string) { b.limit(field, len(s), MaxTextBytes) }

func (b *bounds) params(field string, p json.RawMessage) {
	b.limit(field, len(p), MaxParametersBytes)
}

func (b *bounds) ids(field string, list []string) {
	for i, s := range list {
		b.id(field+"["+strconv.Itoa(i)+"]", s)
	}
}

func (b *bounds) context(field string, c *ActionContext) {
	b.id(field+".conversation_id", c.ConversationID)
	b.id(field+".step_number", string(c.StepNumber))
	b.text(field+".user_intent", c.UserIntent)
	b.id(field+".pre_action_state_hash", c.PreActionStateHash)
	b.id(field+".state_source", c.StateSource)
}
