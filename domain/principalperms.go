package domain

import "slices"

// A principal's default path and egress policy (QWED-Agent spec v1.1 §2.2,
// "File operations: security check", "Network requests: policy check";
// issue 16 items 2 and 3: a policy per agent or principal).
//
// PUT /principals/{id}/permissions sets, for every agent of the principal,
// the lists an agent's own permissions hold: allowed_paths, denied_paths,
// allowed_hosts, allowed_schemes, allowed_ports. An agent's lists can only
// narrow the principal's (detect, detectors.go):
//
//   - allowed lists (paths, hosts, schemes, ports) intersect: a path, host,
//     scheme or port must be admitted by every non-empty list, the
//     principal's and the agent's; an empty list admits everything, so an
//     agent with none inherits the principal's (schemes: http and https
//     when both are empty);
//   - denied_paths unite: the principal's globs, then the agent's;
//   - a loopback or private host passes only when every non-empty hosts
//     list names it exactly (a "*." entry never admits one).
//
// The command is principal-wide: on Kafka it is decided on GlobalPartition
// and copied to every other partition (global.go), as the tool registry.
// It is refused unless Config.PrincipalPermissions is on, and the policy
// applies only under it, so logs written before it re-decide unchanged.

// The command and event of a principal's permissions.
const (
	CmdPutPrincipalPermissions CommandType = "qwed.principal.permissions.put"
	EvPrincipalPermissionsSet  EventType   = "principal.permissions_set"
)

// PrincipalPermissions replaces a principal's default path and egress
// policy: the lists every agent of the principal is held to beside its
// own (see the top of this file). All lists empty clears the policy.
type PrincipalPermissions struct {
	PrincipalID    string   `json:"principal_id"`
	AllowedPaths   []string `json:"allowed_paths,omitempty"`
	DeniedPaths    []string `json:"denied_paths,omitempty"`
	AllowedHosts   []string `json:"allowed_hosts,omitempty"`
	AllowedSchemes []string `json:"allowed_schemes,omitempty"`
	AllowedPorts   []int    `json:"allowed_ports,omitempty"`
}

// empty reports whether p sets no list.
func (p *PrincipalPermissions) empty() bool {
	return len(p.AllowedPaths) == 0 && len(p.DeniedPaths) == 0 && len(p.AllowedHosts) == 0 &&
		len(p.AllowedSchemes) == 0 && len(p.AllowedPorts) == 0
}

// permissions returns p's lists as an agent's Permissions (for the
// validation the two share).
func (p *PrincipalPermissions) permissions() Permissions {
	return Permissions{AllowedPaths: p.AllowedPaths, DeniedPaths: p.DeniedPaths, AllowedHosts: p.AllowedHosts,
		AllowedSchemes: p.AllowedSchemes, AllowedPorts: p.AllowedPorts}
}

func (d *decider) putPrincipalPermissions() *Event {
	r := d.cmd.PrincipalPermissions
	if r == nil {
		return d.reject(missing("principal_permissions"))
	}
	if r.PrincipalID == "" {
		return d.reject(missing("principal_id"))
	}
	if err := d.authPrincipal(r.PrincipalID); err != nil {
		return d.reject(err)
	}
	if !d.s.Config.PrincipalPermissions {
		return d.reject(Errorf(CodeInvalidRequest, "principal permissions are not enabled in this gate's recorded configuration"))
	}
	perms := r.permissions()
	if err := validatePermissionLists("", &perms, d.s.Config.IDNHosts); err != nil {
		return d.reject(err)
	}
	rec := &PrincipalPermissions{PrincipalID: r.PrincipalID, AllowedPaths: slices.Clone(r.AllowedPaths),
		DeniedPaths: slices.Clone(r.DeniedPaths), AllowedSchemes: slices.Clone(r.AllowedSchemes),
		AllowedPorts: slices.Clone(r.AllowedPorts)}
	rec.AllowedHosts = slices.Clone(r.AllowedHosts)
	if d.s.Config.IDNHosts {
		rec.AllowedHosts = normalizeHostEntries(rec.AllowedHosts)
	}
	d.ev.Type = EvPrincipalPermissionsSet
	d.ev.PrincipalPermissions = rec
	return d.ev
}

// applyPrincipalPermissions folds a principal.permissions_set event.
func applyPrincipalPermissions(s *State, r *PrincipalPermissions) {
	p := principal(s, r.PrincipalID)
	if r.empty() {
		p.Permissions = nil
		return
	}
	p.Permissions = r
}

// principalPermissions returns the policy a's principal sets for its
// agents (nil: none, or Config.PrincipalPermissions off).
func principalPermissions(s *State, a *Agent) *PrincipalPermissions {
	if !s.Config.PrincipalPermissions {
		return nil
	}
	if p := s.Principals[a.Info.PrincipalID]; p != nil {
		return p.Permissions
	}
	return nil
}

// NormalizedPermissions checks the path and egress lists of p as a
// registration under DefaultConfig does and returns p with its hosts in
// the form the gate compares (A-labels); what-if tools (the backtest) use
// it for the lists they are given.
func NormalizedPermissions(p Permissions) (Permissions, error) {
	if err := validatePermissionLists("permissions.", &p, true); err != nil {
		return p, err
	}
	p.AllowedHosts = normalizeHostEntries(p.AllowedHosts)
	return p, nil
}
