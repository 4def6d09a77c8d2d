package domain

// CheckAgentCredentials is how Decide authenticates an agent command
// (authAgent), for a transport that must authenticate an agent before
// its command reaches a partition that holds it (Kafka: a prepare or an
// execute is authenticated on the partition of its agent, then decided on
// its consumer's home partition, Command.Authenticated). a is the agent
// agentID names (nil: not registered); the caller presented tokenHash
// (the SHA-256 hex of an agent token, "" for none) or the API key of
// principal ("" for none). It accepts the agent's token (compared in
// constant time), or its principal's or the admin's key, and refuses a
// suspended agent unless allowSuspended, with the errors Decide records.
func CheckAgentCredentials(a *Agent, agentID, principal, tokenHash string, allowSuspended bool) *Error {
	if a == nil {
		return Errorf(CodeAgentNotRegistered, "agent '%s' is not registered", agentID)
	}
	switch {
	case tokenMatches(tokenHash, a.TokenHash):
	case principal != "" && (principal == AdminPrincipal || principal == a.Info.PrincipalID):
	case tokenHash != "":
		return Errorf(CodeInvalidAgentToken, "invalid agent token")
	case principal != "":
		return Errorf(CodeForbidden, "principal may not act for agent '%s'", a.ID)
	default:
		return Errorf(CodeInvalidAgentToken, "agent token missing")
	}
	if a.Status == StatusSuspended && !allowSuspended {
		return Errorf(CodeAgentSuspended, "agent '%s' is suspended", a.ID)
	}
	return nil
}

// gateAuthenticated reports whether commands of type t may carry
// Command.Authenticated: an agent's prepare or execute, which the Kafka
// gate authenticates where the agent lives and decides on its consumer's
// home partition.
func gateAuthenticated(t CommandType) bool {
	return t == CmdPrepareExecute || t == CmdExecute
}

// executeCaller authenticates the agent of a prepare or an execute and
// returns it with its consumer (the agent's principal):
//
//   - Authenticated with a principal: the gate authenticated the agent on
//     its partition (Partition) and relayed the command to its consumer's
//     home partition, which need not hold the agent; accepted as it is.
//     No decoder of a client's input sets Authenticated: only the gate's
//     signed internal messages carry it, like Command.Global.
//   - Authenticated without a principal: the gate refused the agent's
//     credentials where it lives, this partition; Decide checks them
//     itself (authAgent) and records its refusal. Should they pass (the
//     gate read projections a batch behind this state: a token rotated a
//     moment ago), the command is refused as unavailable, never decided
//     away from its consumer's home: fail closed, the caller retries with
//     a new request id.
//   - No Authenticated (embedded mode, one partition; Kafka when the agent
//     lives on its consumer's home partition): authAgent.
func (d *decider) executeCaller() (agentID, consumer string, err *Error) {
	a := d.cmd.Authenticated
	if a == nil {
		ag, err := d.authAgent(false)
		if err != nil {
			return "", "", err
		}
		return ag.ID, ag.Info.PrincipalID, nil
	}
	if a.AgentID != d.cmd.AgentID || a.AgentID == "" {
		return "", "", fieldError(CodeInvalidRequest, "authenticated.agent_id", "must name the command's agent")
	}
	if a.Principal != "" {
		return a.AgentID, a.Principal, nil
	}
	if _, err := d.authAgent(false); err != nil {
		return "", "", err
	}
	return "", "", Errorf(CodeUnavailable, "the agent's credentials changed while its request was routed: nothing was decided; retry with a new request id")
}
