package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Refusals at authentication record no payload (issue 11).
//
// A command refused because its credentials do not hold for its agent
// (unknown agent, missing or wrong token, suspended agent, another
// principal's agent) is recorded with its payload withheld: the event's
// command keeps its type, request, principal, agent and token hash, and
// holds the SHA-256 and size of the payload instead of the payload. Anyone
// could otherwise write up to a body's size into the permanent log with a
// made-up token. The refusal is a function of what is kept (the
// credentials, the agent, the state), so re-deciding the withheld command
// reproduces the event byte for byte: Decide authenticates a withheld
// command as its type does and refuses it the same way.

// WithheldBody is the digest and size of a withheld payload: the hex
// SHA-256 and the length of the payload as encoding/json encodes it (the
// decoded payload, so a token sent in the body is not part of it).
type WithheldBody struct {
	Digest string `json:"digest"`
	Bytes  int64  `json:"bytes"`
}

// payload returns the payload a refusal at authentication withholds, for
// the command types whose authentication reads only the command's
// principal, agent and token hash (authAgent, agentForPrincipal); nil for
// the others.
func (c *Command) payload() any {
	var (
		p  any
		ok bool
	)
	switch c.Type {
	case CmdVerifyAction:
		p, ok = c.Verify, c.Verify != nil
	case CmdVerifyToolCall:
		p, ok = c.Tool, c.Tool != nil
	case CmdLogExecution:
		p, ok = c.Execution, c.Execution != nil
	case CmdRequestTrust:
		p, ok = c.Trust, c.Trust != nil
	case CmdSetTrustLevel:
		p, ok = c.SetTrust, c.SetTrust != nil
	case CmdSuspendAgent:
		p, ok = c.Suspend, c.Suspend != nil
	case CmdFileComplaint:
		p, ok = c.Complaint, c.Complaint != nil
	case CmdA2AMessage:
		p, ok = c.A2A, c.A2A != nil
	case CmdExecute:
		p, ok = c.Execute, c.Execute != nil
	case CmdPrepareExecute:
		// The token the gate minted is not the request's: a retry, which
		// mints another, withholds the same payload.
		if ok = c.Execute != nil; ok {
			x := *c.Execute
			x.TokenHash = ""
			p = &x
		}
	}
	if !ok {
		return nil
	}
	return p
}

// Withhold returns cmd as a refusal at authentication records it: its
// type, request, principal, agent and token hash, and the digest and size
// of its payload (no payload, no engine verdict). A command that is
// already withheld, or whose type withholds nothing, is returned as is.
func Withhold(cmd *Command) *Command {
	if cmd == nil || cmd.Withheld != nil {
		return cmd
	}
	p := cmd.payload()
	if p == nil {
		return cmd
	}
	b, err := json.Marshal(p)
	if err != nil {
		// A payload that does not encode (parameters that are not JSON)
		// cannot come from a transport; it is withheld with no digest.
		b = nil
	}
	w := &WithheldBody{Bytes: int64(len(b))}
	if b != nil {
		sum := sha256.Sum256(b)
		w.Digest = hex.EncodeToString(sum[:])
	}
	return &Command{Type: cmd.Type, Request: cmd.Request, Principal: cmd.Principal, AgentID: cmd.AgentID,
		TokenHash: cmd.TokenHash, Withheld: w}
}

// withheld decides a recorded command whose payload was withheld: it
// authenticates as the command's type does and is refused as it was. A
// withheld command whose credentials hold (never recorded: a refusal at
// authentication is what withholds a payload) is refused as malformed.
func (d *decider) withheld() *Event {
	var err *Error
	switch d.cmd.Type {
	case CmdVerifyAction, CmdVerifyToolCall, CmdRequestTrust:
		_, err = d.authAgent(false)
	case CmdLogExecution:
		_, err = d.authAgent(true)
	case CmdSetTrustLevel, CmdSuspendAgent, CmdFileComplaint:
		_, err = d.agentForPrincipal()
	case CmdPrepareExecute, CmdExecute:
		_, _, err = d.executeCaller()
	case CmdA2AMessage:
		// Only a message sent with an agent token, or with no
		// credentials, is refused at authentication.
		if d.cmd.Principal == "" && d.cmd.TokenHash == "" {
			err = Errorf(CodeMissingAPIKey, "an API key or an agent token is required")
		} else if d.cmd.Principal == "" {
			_, err = d.authAgent(false)
		}
	}
	if err == nil {
		return d.reject(fieldError(CodeInvalidRequest, "withheld", "a command without its payload can only be refused at authentication"))
	}
	return d.reject(err)
}
