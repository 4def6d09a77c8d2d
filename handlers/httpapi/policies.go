package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
)

// A consumer's policies (the Agent Policy Engine spec §3.3): GET and POST
// /policies, GET, PUT and DELETE /policies/{id}. They take an API key
// only: a principal's key reads and changes its own policies (the
// consumer of its agents); the admin's those of the consumer its
// ?consumer= names. Another consumer's policy does not exist for a
// principal (404), whatever the verb.

// policyRoutes registers the policy endpoints.
func (a *api) policyRoutes() {
	limited := writeOptions{admit: a.executeAdmit}
	a.handle("POST /policies", a.writeWith(command.CreatePolicy, policyInput, limited))
	a.handle("GET /policies", a.listPolicies)
	a.handle("GET /policies/{id}", a.getPolicy)
	a.handle("PUT /policies/{id}", a.writeWith(command.UpdatePolicy, policyInput, limited))
	a.handle("DELETE /policies/{id}", a.writeWith(command.DeletePolicy, policyInput, limited))
}

// policyInput is the input of a policy change besides its body: the
// policy of the path, and the consumer an admin names (?consumer=).
func policyInput(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "id")
	if e != nil {
		return command.Input{}, e
	}
	consumer, e := consumerParam(r)
	return command.Input{PolicyID: id, Consumer: consumer}, e
}

// consumerParam is the ?consumer= of a policy request, bounded.
func consumerParam(r *http.Request) (string, *apiError) {
	c := r.URL.Query().Get("consumer")
	if len(c) > command.MaxConsumerBytes {
		return "", reject(domain.CodeTooLong, map[string]any{"field": "consumer", "max_bytes": command.MaxConsumerBytes},
			"consumer is longer than %d bytes", command.MaxConsumerBytes)
	}
	return c, nil
}

// policyReader is the consumer whose policies a read reads: the key's
// principal, or the consumer the admin names (required); a principal
// naming another consumer is refused.
func (a *api) policyReader(r *http.Request, c *call) (string, *apiError) {
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		return "", e
	}
	consumer, e := consumerParam(r)
	if e != nil {
		return "", e
	}
	switch p := c.creds.Principal; {
	case p == domain.AdminPrincipal && consumer == "":
		return "", reject(domain.CodeMissingField, map[string]any{"field": "consumer"},
			"the admin key reads the policies of the consumer ?consumer= names")
	case p == domain.AdminPrincipal:
		return consumer, nil
	case consumer != "" && consumer != p:
		return "", reject(domain.CodeForbidden, map[string]any{"field": "consumer"},
			"the API key's principal may read its own policies only")
	}
	return c.creds.Principal, nil
}

// policiesOf returns the current policies of consumer (none: nil).
func (a *api) policiesOf(consumer string) (*policy.Set, *apiError) {
	ce, err := a.cfg.Store.Consumer(consumer)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return nil, nil
	case err != nil:
		a.log.Error("reading policies", "err", err)
		return nil, failure(domain.CodeUnavailable, "the policies cannot be read")
	}
	return ce.Policies, nil
}

// policiesView is the answer of GET /policies.
type policiesView struct {
	Consumer string          `json:"consumer"`
	Policies []policy.Policy `json:"policies"`
}

// policyView is the answer of GET /policies/{id}.
type policyView struct {
	Consumer string        `json:"consumer"`
	Policy   policy.Policy `json:"policy"`
}

// listPolicies answers GET /policies: the consumer's current policies,
// each with its version, in id order (at most policy.MaxPolicies).
func (a *api) listPolicies(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	consumer, e := a.policyReader(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	set, e := a.policiesOf(consumer)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	v := policiesView{Consumer: consumer, Policies: []policy.Policy{}}
	if set != nil {
		v.Policies = append(v.Policies, set.Policies...)
	}
	writeValue(w, http.StatusOK, v)
}

// getPolicy answers GET /policies/{id}: the consumer's current version of
// the policy.
func (a *api) getPolicy(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	consumer, e := a.policyReader(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	id, e := pathValue(r, "id")
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	if seqText := r.URL.Query().Get("at_seq"); seqText != "" {
		a.getPolicyAt(w, r, c, consumer, id, seqText)
		return
	}
	set, e := a.policiesOf(consumer)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	p := set.Get(id)
	if p == nil {
		a.fail(r.Context(), w, c, reject(domain.CodeNotFound, map[string]any{"policy_id": id}, "no policy %q", id))
		return
	}
	writeValue(w, http.StatusOK, policyView{Consumer: consumer, Policy: *p})
}

// policyAtView is the answer of GET /policies/{id}?at_seq=N: the policy
// as it was after event N, and the seq of the change that made it so.
type policyAtView struct {
	Consumer string        `json:"consumer"`
	Policy   policy.Policy `json:"policy"`
	AtSeq    uint64        `json:"at_seq"`
	Seq      uint64        `json:"seq"`
}

// getPolicyAt answers GET /policies/{id}?at_seq=N (issue 14: "GET
// /policies/{id}?at_seq= shows it as it was"): the version in force after
// the event at N (on Kafka: N of the consumer's home partition, as a
// change's reply names it); 404 when the policy did not exist then (not
// yet created, or deleted).
func (a *api) getPolicyAt(w http.ResponseWriter, r *http.Request, c *call, consumer, id, seqText string) {
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil || seq == 0 {
		a.fail(r.Context(), w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "at_seq", "expected": "positive integer"},
			"at_seq must be a positive integer"))
		return
	}
	v, err := a.cfg.Store.PolicyAt(consumer, id, seq)
	if a.caughtUp(r.Context(), err) {
		v, err = a.cfg.Store.PolicyAt(consumer, id, seq)
	}
	switch {
	case errors.Is(err, projections.ErrNotFound) || err == nil && v.Deleted:
		a.fail(r.Context(), w, c, reject(domain.CodeNotFound, map[string]any{"policy_id": id, "at_seq": seq},
			"no policy %q at seq %d", id, seq))
	case err != nil:
		a.log.Error("reading a policy's versions", "err", err)
		e := failure(domain.CodeUnavailable, "the policy's versions cannot be read")
		writeJSON(w, e.status, e.body())
	default:
		writeValue(w, http.StatusOK, policyAtView{Consumer: consumer, Policy: v.Policy, AtSeq: seq, Seq: v.Seq})
	}
}
