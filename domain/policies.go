package domain

import (
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/policy"
)

// PolicyChange is the payload of CmdPolicy: Op is create, update or delete
// (delete reads Policy.ID only).
type PolicyChange struct {
	Op string `json:"op"`
	// Consumer is the principal whose policy changes: the principal of the
	// API key, which may leave it out; the admin must name one.
	Consumer string `json:"consumer,omitempty"`
	// Policy is the policy as the client sent it (policy.Decode's checks
	// apply again in Decide); the client never sets its version.
	Policy policy.Policy `json:"policy"`
}

// MaxConsumerPolicies bounds the policies of one consumer.
const MaxConsumerPolicies = policy.MaxPolicies

// maxConsumerBytes bounds the consumer an admin names.
const maxConsumerBytes = 256

// PolicyReply is the reply to a policy change: the consumer, the op and
// the policy after the change (the policy deleted, for a delete), with the
// version the change gave it, and the log position of the change (the
// at_seq that reads this version).
type PolicyReply struct {
	Consumer string        `json:"consumer"`
	Op       string        `json:"op"`
	Policy   policy.Policy `json:"policy"`
	Seq      uint64        `json:"seq"`
}

// policyConsumer returns the consumer of a policy command: the consumer
// it names, else its principal.
func policyConsumer(cmd *Command) string {
	if c := cmd.Policy; c != nil && c.Consumer != "" {
		return c.Consumer
	}
	return cmd.Principal
}

// consumerPolicies returns the current policies of a consumer (nil for
// none).
func consumerPolicies(s *State, consumer string) *policy.Set {
	if s.Exec == nil {
		return nil
	}
	if ce := s.Exec.Consumers[consumer]; ce != nil {
		return ce.Policies
	}
	return nil
}

// policyChange decides a qwed.policy.change command. Only API keys change
// policies: a principal's key its own (the consumer of its agents), the
// admin's any consumer it names; an agent's token none. create refuses an
// id in use (REQ-409), update and delete an unknown one (REQ-404); the
// policy is checked as policy.Decode checks a body (a recorded command is
// checked again when re-decided). Each change gives the policy the version
// after its last one (1 for a new id): the event carries the policy with
// that version, the deleted one for a delete.
func (d *decider) policyChange() *Event {
	c := d.cmd.Policy
	if c == nil {
		return d.reject(missing("policy"))
	}
	switch p := d.cmd.Principal; {
	case p == "" && d.cmd.TokenHash != "":
		return d.reject(Errorf(CodeForbidden, "an agent token cannot change policies: use the consumer's API key"))
	case p == "":
		return d.reject(Errorf(CodeMissingAPIKey, "a principal API key is required"))
	case p == AdminPrincipal && c.Consumer == "":
		return d.reject(fieldError(CodeMissingField, "consumer", "the admin must name the consumer whose policy changes"))
	case p != AdminPrincipal && c.Consumer != "" && c.Consumer != p:
		return d.reject(Errorf(CodeForbidden, "principal may not change the policies of consumer '%s'", c.Consumer))
	case len(c.Consumer) > maxConsumerBytes || !utf8.ValidString(c.Consumer) || c.Consumer == AdminPrincipal:
		return d.reject(fieldError(CodeInvalidRequest, "consumer", "must be a principal id of at most %d bytes", maxConsumerBytes))
	}
	set := consumerPolicies(d.s, policyConsumer(d.cmd))
	id := c.Policy.ID
	var p policy.Policy
	switch c.Op {
	case OpCreate, OpUpdate:
		if c.Policy.Version != 0 {
			return d.reject(fieldError(CodeInvalidRequest, "version", "is set by the gate, not by a client"))
		}
		p = c.Policy.Clone() // Validate normalizes: never the recorded command
		if pr := policy.Validate(&p); pr != nil {
			return d.reject(policyProblem(pr))
		}
		cur := set.Get(id)
		switch {
		case c.Op == OpCreate && cur != nil:
			return d.reject(Errorf(CodeConflict, "policy '%s' exists: update it", id))
		case c.Op == OpUpdate && cur == nil:
			return d.reject(Errorf(CodeNotFound, "no policy '%s'", id))
		case cur == nil && set.Len() >= MaxConsumerPolicies:
			return d.reject(fieldError(CodeInvalidRequest, "policy", "the consumer already has %d policies (the limit)", MaxConsumerPolicies))
		}
	case OpDelete:
		if id == "" {
			return d.reject(missing("policy.id"))
		}
		cur := set.Get(id)
		if cur == nil {
			return d.reject(Errorf(CodeNotFound, "no policy '%s'", id))
		}
		p = cur.Clone()
	case "":
		return d.reject(missing("op"))
	default:
		return d.reject(fieldError(CodeInvalidRequest, "op", "'%s' is not one of create, update, delete", c.Op))
	}
	p.Version = set.NextVersion(id)
	d.ev.Type = EvPolicyChanged
	d.ev.Policy = &p
	return d.ev
}

// policyProblem converts a problem of package policy into the catalogue's
// error.
func policyProblem(p *policy.Problem) *Error {
	e := &Error{Code: Code(p.Code), Message: p.Message, Details: p.Details()}
	if !e.Code.Known() {
		e.Code = CodeInvalidRequest
	}
	return e
}

// applyPolicyChanged folds a policy.changed event: the policy, with its
// version, becomes the consumer's current one, or is deleted.
func applyPolicyChanged(s *State, ev *Event) {
	if ev.Command == nil || ev.Command.Policy == nil || ev.Policy == nil {
		return
	}
	consumer := policyConsumer(ev.Command)
	if s.Exec == nil {
		s.Exec = &ExecState{}
	}
	if s.Exec.Consumers == nil {
		s.Exec.Consumers = map[string]*ConsumerExec{}
	}
	ce := s.Exec.Consumers[consumer]
	if ce == nil {
		ce = &ConsumerExec{}
		s.Exec.Consumers[consumer] = ce
	}
	if ce.Policies == nil {
		ce.Policies = &policy.Set{}
	}
	if ev.Command.Policy.Op == OpDelete {
		ce.Policies.Delete(ev.Policy.ID, ev.Policy.Version)
	} else {
		ce.Policies.Put(*ev.Policy)
	}
	if ce.Policies.Len() == 0 && len(ce.Policies.Tombstones) == 0 && ce.Policies.Floor == 0 {
		ce.Policies = nil
	}
}
