package backtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// PolicyChanges are the consumer policies a backtest changes (the Agent
// Policy Engine spec §3: a recommendation of GET /transactions/analytics
// is checked with them): at the period start, each policy of Put replaces
// the consumer's policy of its id (or is added), with the version after
// its last, and each id of Delete is deleted, for the consumer of the
// selected agents (their principal). Recorded policy changes later in the
// period still apply, as they would have. The zero value changes nothing.
type PolicyChanges struct {
	Put    []policy.Policy `json:"put"`
	Delete []string        `json:"delete"`
}

// Empty reports whether the changes change nothing.
func (c PolicyChanges) Empty() bool { return len(c.Put) == 0 && len(c.Delete) == 0 }

// MaxPolicyFileBytes bounds a policy changes file.
const MaxPolicyFileBytes = 1 << 20

// ParsePolicyChanges parses a policy changes file: one JSON object
// {"put": [policy, …], "delete": ["id", …]}, each policy checked by the
// gate's own decoder (policy.Decode: unknown members, bounds, time zones,
// overlapping windows refused), at most policy.MaxPolicies of each, no id
// twice.
func ParsePolicyChanges(b []byte) (PolicyChanges, error) {
	var out PolicyChanges
	if len(b) > MaxPolicyFileBytes {
		return out, fmt.Errorf("the policy changes are larger than %d bytes", MaxPolicyFileBytes)
	}
	var raw struct {
		Put    []json.RawMessage `json:"put"`
		Delete []string          `json:"delete"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return out, fmt.Errorf("decoding policy changes (want {\"put\": [policy, …], \"delete\": [id, …]}): %w", err)
	}
	if dec.More() {
		return out, fmt.Errorf("decoding policy changes: trailing data after the object")
	}
	if len(raw.Put) > policy.MaxPolicies || len(raw.Delete) > policy.MaxPolicies {
		return out, fmt.Errorf("at most %d policies to put and %d to delete", policy.MaxPolicies, policy.MaxPolicies)
	}
	seen := map[string]bool{}
	for i, r := range raw.Put {
		p, prob := policy.Decode(r)
		if prob != nil {
			return out, fmt.Errorf("put[%d]: %s (%s)", i, prob.Message, prob.Code)
		}
		if p.Version != 0 {
			return out, fmt.Errorf("put[%d]: a policy's version is the gate's: leave it out", i)
		}
		if seen[p.ID] {
			return out, fmt.Errorf("put[%d]: policy %q is changed twice", i, p.ID)
		}
		seen[p.ID] = true
		out.Put = append(out.Put, *p)
	}
	for i, id := range raw.Delete {
		if id == "" || seen[id] {
			return out, fmt.Errorf("delete[%d]: %q is empty or changed twice", i, id)
		}
		seen[id] = true
		out.Delete = append(out.Delete, id)
	}
	slices.SortFunc(out.Put, func(a, b policy.Policy) int { return strings.Compare(a.ID, b.ID) })
	slices.Sort(out.Delete)
	return out, nil
}

// applyTo applies the changes to consumer's policies in st.
func (c PolicyChanges) applyTo(st *domain.State, consumer string) {
	if c.Empty() {
		return
	}
	if st.Exec == nil {
		st.Exec = &domain.ExecState{}
	}
	if st.Exec.Consumers == nil {
		st.Exec.Consumers = map[string]*domain.ConsumerExec{}
	}
	ce := st.Exec.Consumers[consumer]
	if ce == nil {
		ce = &domain.ConsumerExec{}
		st.Exec.Consumers[consumer] = ce
	}
	if ce.Policies == nil {
		ce.Policies = &policy.Set{}
	}
	for _, p := range c.Put {
		p.Version = ce.Policies.NextVersion(p.ID)
		ce.Policies.Put(p)
	}
	for _, id := range c.Delete {
		ce.Policies.Delete(id, ce.Policies.NextVersion(id))
	}
}
