package domain

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestIssue11_8_EveryFieldIsBoundedOnBothSides sets each bounded field to
// exactly its limit (accepted) and one byte more (refused with
// QWED-REQ-004 naming the field and the limit).
func TestIssue11_8_EveryFieldIsBoundedOnBothSides(t *testing.T) {
	ctx := func(c *Command) *ActionContext { return &c.Verify.Context }
	toolCtx := func(c *Command) *ActionContext { return c.Tool.Context }
	cases := []struct {
		field string
		max   int
		typ   CommandType
		set   func(c *Command, s string)
	}{
		{"agent_id", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { c.AgentID = s }},
		{"agent.name", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Agent.Name = s }},
		{"agent.type", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Agent.Type = s }},
		{"agent.description", MaxTextBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Agent.Description = s }},
		{"agent.principal_id", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Agent.PrincipalID = s }},
		{"agent.framework", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Agent.Framework = s }},
		{"agent.model", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Agent.Model = s }},
		{"permissions.allowed_engines[1]", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Permissions.AllowedEngines = []string{"math", s} }},
		{"permissions.allowed_tools[0]", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Permissions.AllowedTools = []string{s} }},
		{"permissions.blocked_tools[0]", MaxIDBytes, CmdRegisterAgent, func(c *Command, s string) { c.Register.Permissions.BlockedTools = []string{s} }},
		{"action.type", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Action.Type = s }},
		{"action.query", MaxQueryBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Action.Query = s }},
		{"action.code", MaxQueryBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Action.Code = s }},
		{"action.target", MaxTextBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Action.Target = s }},
		{"action.parameters", MaxParametersBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Action.Parameters = json.RawMessage(s) }},
		{"action.output", MaxOutputBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Action.Output = s }},
		{"context.conversation_id", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { ctx(c).ConversationID = s }},
		{"context.step_number", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { ctx(c).StepNumber = json.Number(s) }},
		{"context.user_intent", MaxTextBytes, CmdVerifyAction, func(c *Command, s string) { ctx(c).UserIntent = s }},
		{"context.pre_action_state_hash", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { ctx(c).PreActionStateHash = s }},
		{"context.state_source", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { ctx(c).StateSource = s }},
		{"options.risk_threshold", MaxIDBytes, CmdVerifyAction, func(c *Command, s string) { c.Verify.Options.RiskThreshold = s }},
		{"tool_call.tool_name", MaxIDBytes, CmdVerifyToolCall, func(c *Command, s string) { c.Tool.ToolCall.ToolName = s }},
		{"tool_call.parameters", MaxParametersBytes, CmdVerifyToolCall, func(c *Command, s string) { c.Tool.ToolCall.Parameters = json.RawMessage(s) }},
		{"justification", MaxTextBytes, CmdVerifyToolCall, func(c *Command, s string) { c.Tool.Justification = s }},
		{"context.conversation_id", MaxIDBytes, CmdVerifyToolCall, func(c *Command, s string) { toolCtx(c).ConversationID = s }},
		{"options.risk_threshold", MaxIDBytes, CmdVerifyToolCall, func(c *Command, s string) { c.Tool.Options.RiskThreshold = s }},
		{"action_id", MaxIDBytes, CmdLogExecution, func(c *Command, s string) { c.Execution.ActionID = s }},
		{"result_hash", MaxIDBytes, CmdLogExecution, func(c *Command, s string) { c.Execution.ResultHash = s }},
		{"sandbox", MaxIDBytes, CmdLogExecution, func(c *Command, s string) { c.Execution.Sandbox = s }},
		{"request", MaxIDBytes, CmdRequestTrust, func(c *Command, s string) { c.Trust.Request = s }},
		{"justification", MaxTextBytes, CmdRequestTrust, func(c *Command, s string) { c.Trust.Justification = s }},
		{"evidence.denial_rate", MaxIDBytes, CmdRequestTrust, func(c *Command, s string) { c.Trust.Evidence.DenialRate = json.Number(s) }},
		{"approval_id", MaxIDBytes, CmdResolveApproval, func(c *Command, s string) { c.Resolve.ApprovalID = s }},
		{"reason", MaxTextBytes, CmdResolveApproval, func(c *Command, s string) { c.Resolve.Reason = s }},
		{"reason", MaxTextBytes, CmdSetTrustLevel, func(c *Command, s string) { c.SetTrust.Reason = s }},
		{"reason", MaxTextBytes, CmdSuspendAgent, func(c *Command, s string) { c.Suspend.Reason = s }},
		{"reason", MaxTextBytes, CmdFileComplaint, func(c *Command, s string) { c.Complaint.Reason = s }},
		{"principal_id", MaxIDBytes, CmdPutToolRegistry, func(c *Command, s string) { c.ToolRegistry.PrincipalID = s }},
		{"tools[1].name", MaxIDBytes, CmdPutToolRegistry, func(c *Command, s string) { c.ToolRegistry.Tools = []ToolSpec{{Name: "a"}, {Name: s}} }},
		{"tools[0].risk_level", MaxIDBytes, CmdPutToolRegistry, func(c *Command, s string) { c.ToolRegistry.Tools = []ToolSpec{{Name: "a", RiskLevel: Risk(s)}} }},
		{"tools[0].verification_engine", MaxIDBytes, CmdPutToolRegistry, func(c *Command, s string) { c.ToolRegistry.Tools = []ToolSpec{{Name: "a", VerificationEngine: s}} }},
		{"principal_id", MaxIDBytes, CmdIssuePrincipalKey, func(c *Command, s string) { c.IssueKey.PrincipalID = s }},
		{"replaces", MaxIDBytes, CmdIssuePrincipalKey, func(c *Command, s string) { c.IssueKey.Replaces = s }},
		{"principal_id", MaxIDBytes, CmdRevokePrincipalKey, func(c *Command, s string) { c.RevokeKey.PrincipalID = s }},
		{"key_id", MaxIDBytes, CmdRevokePrincipalKey, func(c *Command, s string) { c.RevokeKey.KeyID = s }},
	}
	base := func(typ CommandType) *Command {
		c := &Command{Type: typ}
		switch typ {
		case CmdRegisterAgent:
			c.Register = &RegisterAgent{}
		case CmdVerifyAction:
			c.Verify = &VerifyAction{}
		case CmdVerifyToolCall:
			c.Tool = &VerifyToolCall{Context: &ActionContext{}}
		case CmdLogExecution:
			c.Execution = &LogExecution{}
		case CmdRequestTrust:
			c.Trust = &RequestTrustElevation{}
		case CmdResolveApproval:
			c.Resolve = &ResolveApproval{}
		case CmdSetTrustLevel:
			c.SetTrust = &SetTrustLevel{}
		case CmdSuspendAgent:
			c.Suspend = &SuspendAgent{}
		case CmdFileComplaint:
			c.Complaint = &FileComplaint{}
		case CmdPutToolRegistry:
			c.ToolRegistry = &PutToolRegistry{}
		case CmdIssuePrincipalKey:
			c.IssueKey = &IssuePrincipalKey{}
		case CmdRevokePrincipalKey:
			c.RevokeKey = &IssuePrincipalKey{}
		}
		return c
	}
	for _, tc := range cases {
		t.Run(string(tc.typ)+"/"+tc.field, func(t *testing.T) {
			at := base(tc.typ)
			tc.set(at, strings.Repeat("é", tc.max/2)+strings.Repeat("x", tc.max%2))
			if err := CheckBounds(at); err != nil {
				t.Fatalf("%s at its limit of %d bytes: %v", tc.field, tc.max, err)
			}
			over := base(tc.typ)
			tc.set(over, strings.Repeat("x", tc.max+1))
			err := CheckBounds(over)
			if err == nil || err.Code != CodeTooLong || err.Details["field"] != tc.field ||
				err.Details["max_bytes"] != tc.max || err.Details["bytes"] != tc.max+1 {
				t.Fatalf("%s one byte over: %+v", tc.field, err)
			}
		})
	}
}

// TestIssue11_8_NoUnboundedStringField fills, one at a time, every string
// (and json.RawMessage) field of every command payload a transport
// builds from a request with 1 MiB and expects CheckBounds to refuse it:
// a field added to a request without a bound fails here.
func TestIssue11_8_NoUnboundedStringField(t *testing.T) {
	// Minted or hashed by the gate, never read from a request as sent.
	minted := map[string]bool{"TokenHash": true, "KeyHash": true, "KeyID": true}
	huge := strings.Repeat("x", 1<<20)
	payloads := []any{&RegisterAgent{}, &VerifyAction{}, &VerifyToolCall{Context: &ActionContext{}}, &LogExecution{},
		&RequestTrustElevation{}, &ResolveApproval{}, &SetTrustLevel{}, &SuspendAgent{}, &FileComplaint{},
		&PutToolRegistry{Tools: []ToolSpec{{}}}, &IssuePrincipalKey{}}
	checked := 0
	for _, p := range payloads {
		var walk func(v reflect.Value, path string)
		walk = func(v reflect.Value, path string) {
			switch v.Kind() {
			case reflect.Pointer:
				if !v.IsNil() {
					walk(v.Elem(), path)
				}
			case reflect.Struct:
				for i := range v.NumField() {
					f := v.Type().Field(i)
					if f.IsExported() && !minted[f.Name] {
						walk(v.Field(i), path+"."+f.Name)
					}
				}
			case reflect.Slice:
				if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage
					v.SetBytes([]byte(huge))
					expectRefused(t, p, path)
					v.SetBytes(nil)
					checked++
					return
				}
				if v.Type().Elem().Kind() == reflect.String {
					v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf(huge).Convert(v.Type().Elem())))
					expectRefused(t, p, path)
					v.Set(reflect.Zero(v.Type()))
					checked++
					return
				}
				for i := range v.Len() {
					walk(v.Index(i), path+"[]")
				}
			case reflect.String:
				v.SetString(huge)
				expectRefused(t, p, path)
				v.SetString("")
				checked++
			}
		}
		walk(reflect.ValueOf(p), reflect.TypeOf(p).Elem().Name())
	}
	if checked < 40 {
		t.Fatalf("checked only %d fields", checked)
	}
}

// expectRefused wraps payload p in its command and expects CheckBounds to
// refuse it.
func expectRefused(t *testing.T, p any, path string) {
	t.Helper()
	c := &Command{}
	switch p := p.(type) {
	case *RegisterAgent:
		c.Register = p
	case *VerifyAction:
		c.Verify = p
	case *VerifyToolCall:
		c.Tool = p
	case *LogExecution:
		c.Execution = p
	case *RequestTrustElevation:
		c.Trust = p
	case *ResolveApproval:
		c.Resolve = p
	case *SetTrustLevel:
		c.SetTrust = p
	case *SuspendAgent:
		c.Suspend = p
	case *FileComplaint:
		c.Complaint = p
	case *PutToolRegistry:
		c.ToolRegistry = p
	case *IssuePrincipalKey:
		c.IssueKey = p
	}
	if err := CheckBounds(c); err == nil || err.Code != CodeTooLong {
		t.Errorf("%s of 1 MiB: CheckBounds = %v", path, err)
	}
}

// TestErrorCatalogueLookups pins the catalogue's two lookups against the
// table itself: every code's HTTPStatus and Description are its row's, and
// a code outside the catalogue is a 500 described by its own name.
func TestErrorCatalogueLookups(t *testing.T) {
	for _, c := range Catalogue {
		if !c.Code.Known() || c.Code.HTTPStatus() != c.HTTPStatus || c.Code.Description() != c.Description {
			t.Errorf("%s: known %v, status %d, description %q; the row says %d, %q",
				c.Code, c.Code.Known(), c.Code.HTTPStatus(), c.Code.Description(), c.HTTPStatus, c.Description)
		}
	}
	if u := Code("QWED-NOPE-001"); u.Known() || u.HTTPStatus() != 500 || u.Description() != "QWED-NOPE-001" {
		t.Errorf("unknown code: known %v, status %d, description %q", u.Known(), u.HTTPStatus(), u.Description())
	}
}
