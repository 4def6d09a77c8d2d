package command

import (
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain"
)

// eventEndpoints maps the CloudEvent types of docs/ARCHITECTURE.md's contracts
// (on POST /events and the requests topic) to the endpoint whose JSON body is
// their data.
var eventEndpoints = map[string]*Endpoint{
	string(domain.CmdRegisterAgent):   RegisterAgent,
	string(domain.CmdVerifyAction):    VerifyAction,
	string(domain.CmdVerifyToolCall):  VerifyToolCall,
	string(domain.CmdLogExecution):    LogExecution,
	string(domain.CmdRequestTrust):    RequestTrust,
	string(domain.CmdResolveApproval): ResolveApproval,
	// Credentials (issue 11): an agent rotates its own token; its
	// principal revokes it. API keys are principal-wide state, changed
	// through the HTTP API only (every partition must record the change).
	string(domain.CmdRotateAgentToken): RotateToken,
	string(domain.CmdRevokeAgentToken): RevokeToken,
	// Agent-to-agent interception (issue 13): messages, and boundary
	// changes (the Kafka gate broadcasts those to every partition).
	string(domain.CmdA2AMessage):  A2AMessage,
	string(domain.CmdA2ABoundary): A2ABoundary,
	// The consumer policy engine (issue 14): an agent's prepare and
	// execute. Businesses are principal-wide state, changed through the
	// HTTP API only.
	string(domain.CmdPrepareExecute): PrepareExecute,
	string(domain.CmdExecute):        Execute,
	// Webhooks of the consumer policy engine (issue 14).
	string(domain.CmdWebhook): WebhookChange,
	// A consumer's policies: qwed.policy.change {op, consumer, policy}.
	string(domain.CmdPolicy): ChangePolicy,
}

// EventTypes returns, sorted, the CloudEvent types that are commands of
// the gate (the contracts of docs/ARCHITECTURE.md; qwed.verify, the QWED
// protocol's, aside).
func EventTypes() []string {
	out := make([]string, 0, len(eventEndpoints))
	for t := range eventEndpoints {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// ForEvent returns the endpoint of a CloudEvent type; an unknown type is
// refused with QWED-REQ-005 naming the attribute.
func ForEvent(typ string) (*Endpoint, *Rejection) {
	ep, ok := eventEndpoints[typ]
	if !ok {
		return nil, Reject(domain.CodeUnsupportedType, map[string]any{"attribute": "type"},
			"CloudEvent type %q is not a command of the gate", Clip(typ))
	}
	return ep, nil
}

// BuildEvent builds the command of a CloudEvent: typ selects the endpoint
// (ForEvent), data is its JSON body, subject the agent; then as Build.
func (t Transport) BuildEvent(typ, subject string, data []byte, id domain.RequestID, cr Credentials) (Built, *Rejection) {
	ep, r := ForEvent(typ)
	if r != nil {
		return Built{}, r
	}
	return t.Build(ep, &Input{Body: data, AgentID: subject}, &cr, id)
}

// HTTPSource is the CloudEvent source of the HTTP API's own commands
// (their RequestID's source). The namespace ("http" and "http/…") is the
// API's: a CloudEvent that names it is refused (SourceRejection), so that
// it cannot pass for an HTTP request. URI sources such as
// "http://host/path" are outside it.
const HTTPSource = "http"

// SourceRejection refuses a CloudEvent source in the HTTP API's namespace
// with QWED-REQ-001 naming the attribute; nil for any other.
func SourceRejection(source string) *Rejection {
	if source != HTTPSource && !strings.HasPrefix(source, HTTPSource+"/") {
		return nil
	}
	return Reject(domain.CodeInvalidRequest, map[string]any{"attribute": "source"},
		"CloudEvent source %q is in the namespace of the HTTP API's own requests (%q)", Clip(source), HTTPSource)
}
