package domain

import (
	"encoding/json"

	"github.com/agentgate/agentgate/domain/a2a"
)

// Engine verdicts of A2A messages (issue 13): a code_execution message is
// checked by the code engine as well as code_guard's patterns, and a
// logic_assertion message carrying a logic-DSL formula under "dsl" by the
// logic engine as well as logic_guard. As for a verify_action, the engine
// runs before Decide, outside the pure core (the worker, on the caller's
// goroutine), and its answer is attached to the command as Command.Verdict
// and recorded with it: Decide combines it with the guard (core's rules),
// and a replay re-decides from the recorded verdict without the engine.

// A2AEngineAction returns the action the verification engine checks for
// an A2A message, in the shape a verify_action of that engine has, so the
// transport's ActionVerifier runs it as it runs an action's engine:
//
//   - code_execution: an execute_code action on the payload's "code", its
//     "language" (when the payload names one) as parameters.language;
//   - logic_assertion with a "dsl" string: a verify_logic action on it.
//
// Nil when no engine applies: another payload type, a payload without
// code or dsl, or one its guard refuses anyway (a2a.CodeOf or
// a2a.LogicDSL: the guard's problem then decides, and no engine runs).
// Whether the guard is enabled is the decided configuration's business:
// Decide ignores the verdict of a disabled guard.
func A2AEngineAction(m *a2a.Message) *Action {
	if m == nil {
		return nil
	}
	switch m.PayloadType {
	case a2a.PayloadCode:
		code, lang, p := a2a.CodeOf(m.Payload)
		if p != nil || code == "" {
			return nil
		}
		act := &Action{Type: "execute_code", Code: code}
		if lang != "" {
			// json.Marshal of a string cannot fail.
			params, _ := json.Marshal(struct {
				Language string `json:"language"`
			}{lang})
			act.Parameters = params
		}
		return act
	case a2a.PayloadLogic:
		if dsl, ok := a2a.LogicDSL(m.Payload); ok && dsl != "" {
			return &Action{Type: "verify_logic", Query: dsl}
		}
	}
	return nil
}

// MayRunA2AEngine reports whether the transport should run the engine of
// an A2A message (A2AEngineAction), given the agent of its token as last
// committed (nil when it is not known): when the message comes with an
// API key the transport authenticated (cmd.Principal: a principal's or
// the admin's), or with the token of its sender, an active agent, as
// Decide's credentials check says (a2aCredentials). A message Decide will
// refuse for its credentials therefore costs no engine (or solver) time;
// the transport records NotRunVerdict instead, an engine error, so that a
// message that does authenticate by the time it is decided is never
// forwarded unverified (block_on_error) or is marked shadow.
func MayRunA2AEngine(a *Agent, cmd *Command) bool {
	if cmd == nil || cmd.A2A == nil {
		return false
	}
	if cmd.Principal != "" {
		return true
	}
	return a != nil && a.ID == cmd.AgentID && a.ID == cmd.A2A.SenderAgentID && a.Status != StatusSuspended &&
		tokenMatches(cmd.TokenHash, a.TokenHash)
}
