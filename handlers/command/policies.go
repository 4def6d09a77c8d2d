package command

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// A consumer's policies (the Agent Policy Engine spec §3.3): POST
// /policies, PUT and DELETE /policies/{id}, and the CloudEvent
// qwed.policy.change. Only API keys change policies: a principal's key its
// own (the consumer of its agents); the admin's those of the consumer it
// names (Input.Consumer: the HTTP API's consumer query parameter, the
// change's consumer member in a CloudEvent). Decide checks both again.

// MaxConsumerBytes bounds the consumer an admin names.
const MaxConsumerBytes = 256

// policyRejection is the refusal of a policy package policy.Decode
// refused: its catalogue code, member and message.
func policyRejection(p *policy.Problem) *Rejection {
	code := domain.Code(p.Code)
	if !code.Known() {
		code = domain.CodeInvalidRequest
	}
	return Reject(code, p.Details(), "%s", p.Message)
}

// checkConsumer refuses a consumer over its bound.
func checkConsumer(c string) *Rejection {
	if len(c) > MaxConsumerBytes {
		return Reject(domain.CodeTooLong, map[string]any{"field": "consumer", "max_bytes": MaxConsumerBytes},
			"consumer is longer than %d bytes", MaxConsumerBytes)
	}
	return nil
}

// decodePolicyBody decodes a policy as a client sends it (policy.Decode):
// the body of POST /policies and PUT /policies/{id}, whose id must be the
// path's.
func decodePolicyBody(body []byte, pathID string) (*policy.Policy, *Rejection) {
	p, pr := policy.Decode(body)
	if pr != nil {
		return nil, policyRejection(pr)
	}
	if pathID != "" && p.ID != pathID {
		return nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "id"},
			"id %q in the body does not match the policy %q of the path", Clip(p.ID), Clip(pathID))
	}
	return p, nil
}

// policyCommand is the command of a policy change.
func policyCommand(op, consumer string, p policy.Policy) *domain.Command {
	return &domain.Command{Type: domain.CmdPolicy, Policy: &domain.PolicyChange{Op: op, Consumer: consumer, Policy: p}}
}

func policyEndpoint(op string) *Endpoint {
	return &Endpoint{auth: AuthPrincipal, body: "policy", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
		if r := checkConsumer(in.Consumer); r != nil {
			return nil, nil, r
		}
		p, r := decodePolicyBody(in.Body, in.PolicyID)
		if r != nil {
			return nil, nil, r
		}
		return policyCommand(op, in.Consumer, *p), nil, nil
	}}
}

// CreatePolicy is POST /policies and UpdatePolicy PUT /policies/{id}: the
// body is the whole policy (its id the path's, for an update).
var (
	CreatePolicy = policyEndpoint(domain.OpCreate)
	UpdatePolicy = policyEndpoint(domain.OpUpdate)
)

// DeletePolicy is DELETE /policies/{id}.
var DeletePolicy = &Endpoint{auth: AuthPrincipal, body: "empty", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b struct{}
	if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	if r := checkConsumer(in.Consumer); r != nil {
		return nil, nil, r
	}
	return policyCommand(domain.OpDelete, in.Consumer, policy.Policy{ID: in.PolicyID}), nil, nil
}}

// policyChangeBody is the data of a qwed.policy.change CloudEvent.
type policyChangeBody struct {
	Op       string          `json:"op"`
	Consumer *string         `json:"consumer"`
	Policy   json.RawMessage `json:"policy"`
}

// ChangePolicy is the CloudEvent qwed.policy.change: {op, consumer,
// policy}; a delete reads policy.id only.
var ChangePolicy = &Endpoint{auth: AuthPrincipal, body: "policy-change", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b policyChangeBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	var consumer string
	if b.Consumer != nil {
		if consumer = *b.Consumer; consumer == "" {
			return nil, nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "consumer"},
				"consumer is empty: leave it out, or name the consumer")
		}
	}
	if r := checkConsumer(consumer); r != nil {
		return nil, nil, r
	}
	if len(b.Policy) == 0 || bytes.Equal(b.Policy, []byte("null")) {
		return nil, nil, missing("policy")
	}
	switch b.Op {
	case domain.OpCreate, domain.OpUpdate:
		p, r := decodePolicyBody(b.Policy, "")
		if r != nil {
			return nil, nil, r
		}
		return policyCommand(b.Op, consumer, *p), nil, nil
	case domain.OpDelete:
		var id struct {
			ID string `json:"id"`
		}
		if e := decodeJSON(b.Policy, &id, decodeOptions{}); e != nil {
			return nil, nil, e
		}
		return policyCommand(b.Op, consumer, policy.Policy{ID: id.ID}), nil, nil
	case "":
		return nil, nil, missing("op")
	}
	return nil, nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "op"},
		"op %s is not one of create, update, delete", strconv.Quote(Clip(b.Op)))
}}
