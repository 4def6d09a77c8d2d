package domain

import (
	"slices"
	"strconv"
	"time"
)

// Notices of blocked agent decisions (QWED-Agent spec v1.1 §2.3: FAILED,
// any risk: "Block and notify principal"). With Config.AgentNotices on, a
// verify_action or tool call decided DENIED names the agent's principal in
// ActionDecided.Notify. The notice itself (AgentNoticeOf) is
// derived from that event: the projections turn it into deliveries to the
// principal's webhooks that name NoticeAgentBlocked. On Kafka the
// principal's webhooks live on its home partition (HomeKey), not on the
// agent's: the gate relays the notice there as a CmdAgentBlocked, which
// only the gate sends, and whose event (EvAgentBlockRelayed) carries the
// notice the home partition's projections deliver. See docs/ARCHITECTURE.md,
// "Notifying the principal of blocked decisions".

// NoticeAgentBlocked is the kind of the notice of a blocked agent
// decision. A webhook receives it only when its events name it: a webhook
// without a filter receives the kinds of the execute rules only, as it did
// before the kind existed.
const NoticeAgentBlocked = "agent_blocked"

// CmdAgentBlocked relays the notice of a blocked agent decision to the
// home partition of the agent's principal (Kafka). Only the gate sends it,
// as a signed internal command: no transport builds one.
const CmdAgentBlocked CommandType = "qwed.agent.blocked"

// EvAgentBlockRelayed records a relayed notice of a blocked agent
// decision on the principal's home partition: the notice is its
// command's (Command.AgentBlocked, as Decide accepted it), so that the
// event adds no field to every event's struct (the decision block Decide
// allocates stays in its size class).
const EvAgentBlockRelayed EventType = "agent.block_relayed"

// AgentNotice is the notice of a blocked agent decision: who, what was
// refused and why, by code and check, and where the decision is in the
// log. It never holds the action's parameters, query, code or target, nor
// the decision's message (which may quote them): Reason is the code's
// catalogue description.
type AgentNotice struct {
	// Principal is the agent's principal, the consumer whose webhooks
	// receive the notice.
	Principal  string     `json:"principal_id"`
	AgentID    string     `json:"agent_id"`
	Kind       ActionKind `json:"kind"`
	ActionID   string     `json:"action_id"`
	ActionType string     `json:"action_type"`
	Tool       string     `json:"tool,omitempty"`
	Decision   Decision   `json:"decision"`
	// Status is the verification status (FAILED or BLOCKED), Code the
	// decision's error code, Check the check that failed, Risk the
	// action's risk level.
	Status string `json:"status"`
	Code   Code   `json:"code"`
	Check  string `json:"check,omitempty"`
	Risk   Risk   `json:"risk_level"`
	// Partition, Seq and Time are the decision's event's.
	Partition int32     `json:"partition"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
}

// Reason is the notice's message: the catalogue's description of its
// code.
func (n *AgentNotice) Reason() string { return n.Code.Description() }

// DecisionNotice is what a blocked decision records of its notice
// (ActionDecided.Notify): the principal notified, and the code, check,
// verification status and risk it was blocked with, copied from the
// decision, so that a fold that skips the decision's error and
// verification block (eventjson.DecodeFoldEvent) derives the same notice.
type DecisionNotice struct {
	Principal string `json:"principal_id"`
	Code      Code   `json:"code"`
	Check     string `json:"check,omitempty"`
	Status    string `json:"status"`
	Risk      Risk   `json:"risk_level"`
}

// notice returns the DecisionNotice of dec, a decision of an agent of
// principal, when its principal is notified of it: with
// Config.AgentNotices, a DENIED decision (FAILED or BLOCKED by a check,
// the trust matrix or a guard). BUDGET_EXCEEDED is a routine limit
// answered with a 429 (§4.3), PENDING the approval flow, and a refusal
// before any decision (a malformed request, a bad or suspended agent) is
// no decision on an action.
func notice(c *Config, dec *ActionDecided, principal string) *DecisionNotice {
	if !c.AgentNotices || dec.Decision != Denied || principal == "" {
		return nil
	}
	n := &DecisionNotice{Principal: principal, Status: dec.Verification.Status, Risk: dec.Verification.RiskLevel}
	if dec.Error != nil {
		n.Code = dec.Error.Code
	}
	if len(dec.Verification.ChecksFailed) > 0 {
		n.Check = dec.Verification.ChecksFailed[0]
	}
	return n
}

// AgentNoticeOf returns the notice an event carries: the blocked decision
// of an action.decided event with a DecisionNotice, or the relayed notice
// of an agent.block_relayed event. It reads only what
// eventjson.DecodeFoldEvent decodes.
func AgentNoticeOf(ev *Event) (*AgentNotice, bool) {
	switch {
	case ev.Type == EvAgentBlockRelayed && ev.Command != nil && ev.Command.AgentBlocked != nil:
		return ev.Command.AgentBlocked, true
	case ev.Type != EvActionDecided || ev.Decided == nil || ev.Decided.Notify == nil:
		return nil, false
	}
	dec, why := ev.Decided, ev.Decided.Notify
	return &AgentNotice{
		Principal: why.Principal, AgentID: ev.AgentID, Kind: dec.Kind, ActionID: dec.ActionID,
		ActionType: dec.ActionType, Tool: dec.Tool, Decision: dec.Decision, Status: why.Status,
		Code: why.Code, Check: why.Check, Risk: why.Risk, Partition: ev.Partition, Seq: ev.Seq, Time: ev.Time,
	}, true
}

// agentBlocked decides a CmdAgentBlocked: the notice, relayed by the gate
// from the agent's partition, recorded on its principal's home partition
// for the projections to deliver. The command's principal is the
// notice's; every field is bounded as a request's are (the gate sends
// only notices it derived, yet Decide trusts no input's size).
func (d *decider) agentBlocked() *Event {
	n := d.cmd.AgentBlocked
	switch {
	case !d.s.Config.AgentNotices:
		return d.reject(Errorf(CodeUnsupportedType, "this gate does not relay agent notices"))
	case n == nil:
		return d.reject(missing("agent_blocked"))
	case n.Principal == "" || n.Principal == AdminPrincipal || n.Principal != d.cmd.Principal:
		return d.reject(fieldError(CodeInvalidRequest, "agent_blocked.principal_id", "is not the command's principal"))
	case n.AgentID == "":
		return d.reject(missing("agent_blocked.agent_id"))
	case n.ActionID == "":
		return d.reject(missing("agent_blocked.action_id"))
	case n.Kind != KindAction && n.Kind != KindTool:
		return d.reject(fieldError(CodeInvalidRequest, "agent_blocked.kind", "is not action or tool_call"))
	case n.Decision != Denied:
		return d.reject(fieldError(CodeInvalidRequest, "agent_blocked.decision", "only a DENIED decision is notified"))
	case !n.Code.Known():
		return d.reject(fieldError(CodeInvalidRequest, "agent_blocked.code", "is not a code of the catalogue"))
	case n.Seq == 0 || n.Partition < 0 || n.Time.IsZero():
		return d.reject(fieldError(CodeInvalidRequest, "agent_blocked.seq", "does not name a decision of the log"))
	case !slices.Contains([]Risk{RiskLow, RiskMedium, RiskHigh, RiskCritical, ""}, n.Risk):
		return d.reject(fieldError(CodeInvalidRequest, "agent_blocked.risk_level", "is not a risk level"))
	}
	for _, f := range [...]struct{ name, v string }{
		{"principal_id", n.Principal}, {"agent_id", n.AgentID}, {"action_id", n.ActionID},
		{"action_type", n.ActionType}, {"tool", n.Tool}, {"status", n.Status}, {"check", n.Check},
	} {
		if len(f.v) > MaxIDBytes {
			return d.reject(fieldError(CodeTooLong, "agent_blocked."+f.name, "is longer than %d bytes", MaxIDBytes))
		}
	}
	d.ev.Type = EvAgentBlockRelayed
	return d.ev
}

// AgentBlockedRequest is the request ID of the relay of the notice of the
// decision at seq of partition: retried, or produced again after a
// restart, it is the same request, recorded once.
func AgentBlockedRequest(partition int32, seq uint64) RequestID {
	return RequestID{Source: AgentBlockedSource, ID: strconv.FormatInt(int64(partition), 10) + "/" + strconv.FormatUint(seq, 10)}
}

// AgentBlockedSource is the request source of the relayed notices.
const AgentBlockedSource = "agentgate/agent-notices"
