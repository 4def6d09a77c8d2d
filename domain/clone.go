package domain

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Clone returns a deep copy of s: no map, slice or pointer is shared, so
// applying events to the copy leaves s untouched (replay --verify and the
// tests re-decide on copies).
func (s *State) Clone() *State {
	c := &State{Config: s.Config, LastTime: s.LastTime, Keys: maps.Clone(s.Keys), KeyIDs: maps.Clone(s.KeyIDs), A2A: s.A2A.clone(), Copies: maps.Clone(s.Copies),
		Exec: s.Exec.clone()}
	c.Config.A2A = s.Config.A2A.clone()
	c.Config.Execute = s.Config.Execute.clone()
	if s.Agents != nil {
		c.Agents = make(map[string]*Agent, len(s.Agents))
		for id, a := range s.Agents {
			c.Agents[id] = a.clone()
		}
	}
	if s.Approvals != nil {
		c.Approvals = make(map[string]*Approval, len(s.Approvals))
		for id, ap := range s.Approvals {
			c.Approvals[id] = cloneApproval(ap)
		}
	}
	if s.Principals != nil {
		c.Principals = make(map[string]*Principal, len(s.Principals))
		for id, p := range s.Principals {
			if p == nil {
				c.Principals[id] = nil
				continue
			}
			c.Principals[id] = &Principal{ID: p.ID, Tools: maps.Clone(p.Tools), Permissions: p.Permissions}
		}
	}
	return c
}

func (c *A2AConfig) clone() *A2AConfig {
	if c == nil {
		return nil
	}
	v := *c
	v.BypassAgents = slices.Clone(c.BypassAgents)
	v.TrustedAgents = slices.Clone(c.TrustedAgents)
	return &v
}

func (a *Agent) clone() *Agent {
	if a == nil {
		return nil
	}
	c := *a
	c.Permissions = clonePermissions(a.Permissions)
	c.Usage.HourlyRequests = slices.Clone(a.Usage.HourlyRequests)
	c.Usage.HourlyToolCalls = slices.Clone(a.Usage.HourlyToolCalls)
	if a.Conversations != nil {
		c.Conversations = make(map[string]*Conversation, len(a.Conversations))
		for id, conv := range a.Conversations {
			if conv == nil {
				c.Conversations[id] = nil
				continue
			}
			cc := *conv
			cc.StateWindow = slices.Clone(conv.StateWindow)
			c.Conversations[id] = &cc
		}
	}
	if a.OpenActions != nil {
		c.OpenActions = make(map[string]*OpenAction, len(a.OpenActions))
		for id, oa := range a.OpenActions {
			if oa == nil {
				c.OpenActions[id] = nil
				continue
			}
			o := *oa
			c.OpenActions[id] = &o
		}
	}
	c.OpenOrder = slices.Clone(a.OpenOrder)
	c.Recent = slices.Clone(a.Recent)
	c.BudgetDenials = slices.Clone(a.BudgetDenials)
	c.LoggedActions = slices.Clone(a.LoggedActions)
	return &c
}

func clonePermissions(p Permissions) Permissions {
	return Permissions{
		AllowedEngines: slices.Clone(p.AllowedEngines),
		AllowedTools:   slices.Clone(p.AllowedTools),
		BlockedTools:   slices.Clone(p.BlockedTools),
		AllowedPaths:   slices.Clone(p.AllowedPaths),
		DeniedPaths:    slices.Clone(p.DeniedPaths),
		AllowedHosts:   slices.Clone(p.AllowedHosts),
		AllowedSchemes: slices.Clone(p.AllowedSchemes),
		AllowedPorts:   slices.Clone(p.AllowedPorts),
	}
}

func cloneApproval(ap *Approval) *Approval {
	if ap == nil {
		return nil
	}
	c := *ap
	c.ToLevel = cloneTrustPtr(ap.ToLevel)
	if ap.ResolvedAt != nil {
		t := *ap.ResolvedAt
		c.ResolvedAt = &t
	}
	return &c
}

func cloneTrustPtr(t *TrustLevel) *TrustLevel {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

// cloneDetails deep-copies error details (JSON-like values).
func cloneDetails(d map[string]any) map[string]any {
	if d == nil {
		return nil
	}
	out := make(map[string]any, len(d))
	for k, v := range d {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneDetails(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case json.RawMessage:
		return slices.Clone(x)
	case *time.Time:
		if x == nil {
			return x
		}
		t := *x
		return &t
	}
	return v
}
