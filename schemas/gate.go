package schemas

import (
	"fmt"
	"slices"
)

// The gate's own schemas (docs/ARCHITECTURE.md, "Contracts"): the body of every
// command (the HTTP body of its endpoint, which is also the data of its
// CloudEvent), every event of the log, and every reply body.
const (
	// GateIDPrefix starts the $id of every gate schema.
	GateIDPrefix = "https://agentgate.dev/schemas/"
	// DefsID holds the types the command, event and reply schemas share.
	DefsID = GateIDPrefix + "defs/v1"
	// EventID is the schema of one log event (v1).
	EventID = GateIDPrefix + "event/v1"
)

// CommandBodyID returns the $id of a command body schema by name
// (gate/commands/<name>.v1.json).
func CommandBodyID(name string) string { return GateIDPrefix + "commands/" + name + "/v1" }

// ReplyBodyID returns the $id of a reply body schema by name
// (gate/replies/<name>.v1.json).
func ReplyBodyID(name string) string { return GateIDPrefix + "replies/" + name + "/v1" }

// commandBodies maps each command type that arrives from a transport to
// the name of its body schema. POST /approvals/{id}/approve and /deny
// take another body ("approval-decision") than the qwed.approval.resolve
// CloudEvent; qwed.verify is the QWED protocol's (Request, BatchRequest).
var commandBodies = map[string]string{
	"qwed.agent.register":            "register",
	"qwed.agent.action.verify":       "action-verify",
	"qwed.agent.tool.verify":         "tool-verify",
	"qwed.agent.execution.log":       "execution-log",
	"qwed.agent.trust.request":       "trust-request",
	"qwed.approval.resolve":          "approval-resolve",
	"qwed.agent.token.rotate":        "token-rotate",
	"qwed.agent.token.revoke":        "empty",
	"qwed.agent.trust.set":           "trust-set",
	"qwed.agent.suspend":             "suspend",
	"qwed.agent.complaint":           "complaint",
	"qwed.principal.tools.put":       "tools-put",
	"qwed.principal.permissions.put": "permissions-put",
	"qwed.principal.key.issue":       "empty",
	"qwed.principal.key.revoke":      "empty",
	"qwed.a2a.message":               "a2a-message",
	"qwed.a2a.boundary":              "a2a-boundary",
	"qwed.execute.prepare":           "execute",
	"qwed.execute":                   "execute",
	"qwed.business.change":           "business",
	"qwed.policy.change":             "policy-change",
	"qwed.webhook.change":            "webhook-change",
}

// replyBodies maps each command type to the name of the schema of its
// successful reply; every command may also be answered with the error
// body ("error").
var replyBodies = map[string]string{
	"qwed.agent.register":            "registration",
	"qwed.agent.action.verify":       "decision",
	"qwed.agent.tool.verify":         "decision",
	"qwed.agent.execution.log":       "execution",
	"qwed.agent.trust.request":       "trust-request",
	"qwed.approval.resolve":          "approval",
	"qwed.agent.token.rotate":        "token",
	"qwed.agent.token.revoke":        "token",
	"qwed.agent.trust.set":           "trust-changed",
	"qwed.agent.suspend":             "status",
	"qwed.agent.complaint":           "status",
	"qwed.principal.tools.put":       "tool-registry",
	"qwed.principal.permissions.put": "principal-permissions",
	"qwed.principal.key.issue":       "key-issued",
	"qwed.principal.key.revoke":      "key",
	"qwed.gate.configure":            "configured",
	"qwed.gate.tick":                 "expired",
	"qwed.gate.reject":               "error",
	"qwed.a2a.message":               "a2a-verdict",
	"qwed.a2a.boundary":              "a2a-boundary",
	"qwed.execute.prepare":           "prepare",
	"qwed.execute":                   "execute",
	"qwed.business.change":           "business",
	"qwed.policy.change":             "policy",
	"qwed.webhook.change":            "webhook",
}

// CommandTypes returns, sorted, the command types that have a body
// schema.
func CommandTypes() []string { return slices.Sorted(mapKeys(commandBodies)) }

// ReplyTypes returns, sorted, the command types that have a reply schema.
func ReplyTypes() []string { return slices.Sorted(mapKeys(replyBodies)) }

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// CommandBody returns the command body schema of that name, false for
// none.
func CommandBody(name string) (*Schema, bool) {
	s, err := Get(CommandBodyID(name))
	return s, err == nil
}

// Command returns the schema of the body of a command type (the data of
// its CloudEvent, the body of its HTTP endpoint), false for a type that
// no transport accepts.
func Command(typ string) (*Schema, bool) {
	name, ok := commandBodies[typ]
	if !ok {
		return nil, false
	}
	return CommandBody(name)
}

// ValidateCommand validates body, the data of a command of type typ,
// against the type's schema and returns the violations, sorted (nil when
// valid). An unknown type and a body that is not one JSON document are
// errors. An empty body is not a document: the endpoints that take one
// read it as {}.
func ValidateCommand(typ string, body []byte) ([]Violation, error) {
	s, ok := Command(typ)
	if !ok {
		return nil, fmt.Errorf("validating a command: no schema for type %q", typ)
	}
	return s.ValidateJSON(body)
}

// Event returns the schema of one event of the log (v1).
func Event() *Schema { return must(EventID) }

// ReplyBody returns the reply body schema of that name, false for none.
func ReplyBody(name string) (*Schema, bool) {
	s, err := Get(ReplyBodyID(name))
	return s, err == nil
}

// ValidateReply validates body, the reply to a command of type typ (the
// HTTP answer's body, the data of the reply CloudEvent): it is valid when
// it is the type's reply or the error body. The violations returned are
// those of the type's reply schema, sorted; nil when valid.
func ValidateReply(typ string, body []byte) ([]Violation, error) {
	name, ok := replyBodies[typ]
	if !ok {
		return nil, fmt.Errorf("validating a reply: no schema for the reply to %q", typ)
	}
	doc, err := Decode(body)
	if err != nil {
		return nil, err
	}
	vs := must(ReplyBodyID(name)).Validate(doc)
	if vs == nil || must(ReplyBodyID("error")).Validate(doc) == nil {
		return nil, nil
	}
	return vs, nil
}
