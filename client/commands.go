package client

import "github.com/agentgate/agentgate/domain"

// Register returns the registration command (QWED-Agent spec v1.1 §3.1), authenticated
// by a principal's API key. The reply's data holds agent_id and, once,
// agent_token.
func Register(apiKey string, agent domain.AgentInfo, perms domain.Permissions, budget domain.Limits) Command {
	return Command{Type: domain.CmdRegisterAgent, APIKey: apiKey, Data: struct {
		Agent       domain.AgentInfo   `json:"agent"`
		Permissions domain.Permissions `json:"permissions"`
		Budget      domain.Limits      `json:"budget"`
	}{agent, perms, budget}, principal: agent.PrincipalID}
}

// Verify returns the action verification command of an agent (QWED-Agent spec v1.1
// §4.1), authenticated by its token.
func Verify(agentID, token string, v domain.VerifyAction) Command {
	return Command{Type: domain.CmdVerifyAction, AgentID: agentID, Data: struct {
		domain.VerifyAction
		AgentToken string `json:"agent_token"`
	}{v, token}}
}

// VerifyTool returns the tool call verification command (QWED-Agent spec v1.1 §5.1).
func VerifyTool(agentID, token string, v domain.VerifyToolCall) Command {
	return Command{Type: domain.CmdVerifyToolCall, AgentID: agentID, Data: struct {
		domain.VerifyToolCall
		AgentToken string `json:"agent_token"`
	}{v, token}}
}

// LogExecution returns the execution report of an approved action.
func LogExecution(agentID, token string, e domain.LogExecution) Command {
	return Command{Type: domain.CmdLogExecution, AgentID: agentID, Data: struct {
		domain.LogExecution
		AgentToken string `json:"agent_token"`
	}{e, token}}
}

// ResolveApproval returns a principal's approval or denial of a pending
// approval of agentID's action (the agent routes it to its partition).
func ResolveApproval(apiKey, agentID string, r domain.ResolveApproval) Command {
	return Command{Type: domain.CmdResolveApproval, AgentID: agentID, APIKey: apiKey, Data: r}
}

// QWEDVerify returns a qwed.verify command (QWED protocol v1.0 §5.1 single or §5.3
// batch request as body), authenticated by a principal's API key. The
// reply's data is POST /verify's answer; the call is recorded in the
// gate's log like every verification.
func QWEDVerify(apiKey string, body any) Command {
	return Command{Type: domain.CmdQWEDVerify, APIKey: apiKey, Data: body}
}
