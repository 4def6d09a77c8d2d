package domain

import "strconv"

// Registration (QWED-Agent spec v1.1 §3) and the principal and admin commands.

// agentTypeTrust maps an agent type to its default trust level (QWED-Agent spec
// v1.1 §3.3).
var agentTypeTrust = map[string]TrustLevel{
	"supervised": TrustSupervised,
	"autonomous": TrustAutonomous,
	"trusted":    TrustTrusted,
}

func (d *decider) register() *Event {
	r := d.cmd.Register
	if r == nil {
		return d.reject(missing("register"))
	}
	if r.Agent.PrincipalID == "" {
		return d.reject(missing("agent.principal_id"))
	}
	if err := d.authPrincipal(r.Agent.PrincipalID); err != nil {
		return d.reject(err)
	}
	if err := d.requestIDPresent(); err != nil {
		return d.reject(err)
	}
	id := AgentIDFor(d.cmd.Request)
	if d.s.Agents[id] != nil {
		return d.reject(&Error{Code: CodeConflict, Message: "agent '" + id + "' already registered by this request",
			Details: map[string]any{"agent_id": id}})
	}
	if err := validateRegistration(r, d.s.Config.IDNHosts); err != nil {
		return d.reject(err)
	}
	trust := agentTypeTrust[r.Agent.Type]
	if r.TrustLevel != nil {
		trust = *r.TrustLevel
	}
	d.ev.Type = EvAgentRegistered
	d.ev.AgentID = id
	d.ev.Registered = &AgentRegistered{
		AgentID: id, DID: DIDFor(id), Info: r.Agent,
		Permissions: clonePermissions(r.Permissions), Budget: r.Budget,
		TrustLevel: trust, TokenHash: r.TokenHash,
	}
	if d.s.Config.IDNHosts {
		p := &d.ev.Registered.Permissions
		p.AllowedHosts = normalizeHostEntries(p.AllowedHosts)
	}
	return d.ev
}

func validateRegistration(r *RegisterAgent, idn bool) *Error {
	if r.Agent.Name == "" {
		return missing("agent.name")
	}
	if r.Agent.Type == "" {
		return missing("agent.type")
	}
	if _, ok := agentTypeTrust[r.Agent.Type]; !ok {
		return fieldError(CodeInvalidRequest, "agent.type", "'%s' is not one of supervised, autonomous, trusted", r.Agent.Type)
	}
	if r.TokenHash == "" {
		return missing("token_hash")
	}
	if !isSHA256Hex(r.TokenHash) {
		return fieldError(CodeInvalidRequest, "token_hash", "must be 64 lowercase hex digits (SHA-256)")
	}
	if r.TrustLevel != nil && (*r.TrustLevel < TrustUntrusted || *r.TrustLevel > TrustTrusted) {
		return fieldError(CodeInvalidRequest, "trust_level", "must be 0-3")
	}
	if err := validatePermissionLists("permissions.", &r.Permissions, idn); err != nil {
		return err
	}
	return r.Budget.validate()
}

// validatePermissionLists checks an agent's (prefix "permissions.") or a
// principal's (prefix "") permission lists: at most MaxPermissionEntries
// entries each, none empty, and the path and egress policy well formed
// (validateDetectorPermissions).
func validatePermissionLists(prefix string, p *Permissions, idn bool) *Error {
	lists := []struct {
		name string
		v    []string
	}{
		{"allowed_engines", p.AllowedEngines},
		{"allowed_tools", p.AllowedTools},
		{"blocked_tools", p.BlockedTools},
		{"allowed_paths", p.AllowedPaths},
		{"denied_paths", p.DeniedPaths},
		{"allowed_hosts", p.AllowedHosts},
		{"allowed_schemes", p.AllowedSchemes},
	}
	for _, l := range lists {
		if len(l.v) > MaxPermissionEntries {
			return fieldError(CodeInvalidRequest, prefix+l.name, "at most %d entries", MaxPermissionEntries)
		}
		for i, x := range l.v {
			if x == "" {
				return fieldError(CodeInvalidRequest, prefix+l.name+"["+strconv.Itoa(i)+"]", "must not be empty")
			}
		}
	}
	return validateDetectorPermissions(prefix, p, idn)
}

func (d *decider) putToolRegistry() *Event {
	r := d.cmd.ToolRegistry
	if r == nil {
		return d.reject(missing("tool_registry"))
	}
	if r.PrincipalID == "" {
		return d.reject(missing("principal_id"))
	}
	if err := d.authPrincipal(r.PrincipalID); err != nil {
		return d.reject(err)
	}
	if len(r.Tools) > MaxRegistryTools {
		return d.reject(fieldError(CodeInvalidRequest, "tools", "at most %d tools", MaxRegistryTools))
	}
	seen := make(map[string]bool, len(r.Tools))
	for i, t := range r.Tools {
		field := "tools[" + strconv.Itoa(i) + "]"
		if t.Name == "" {
			return d.reject(missing(field + ".name"))
		}
		if seen[t.Name] {
			return d.reject(fieldError(CodeInvalidRequest, field+".name", "tool '%s' listed twice", t.Name))
		}
		seen[t.Name] = true
		if mustRisk(t.RiskLevel) != t.RiskLevel {
			return d.reject(fieldError(CodeInvalidRequest, field+".risk_level", "'%s' is not one of low, medium, high, critical", t.RiskLevel))
		}
		if err := validateVerifyParameters(&r.Tools[i], field, d.s.Config.ToolVerification); err != nil {
			return d.reject(err)
		}
	}
	reg := &PutToolRegistry{PrincipalID: r.PrincipalID, Tools: append([]ToolSpec(nil), r.Tools...)}
	d.ev.Type = EvToolRegistrySet
	d.ev.ToolRegistry = reg
	return d.ev
}

// mustRisk returns r in canonical form, or "" when it is not a risk.
func mustRisk(r Risk) Risk {
	v, err := ParseRisk(string(r))
	if err != nil {
		return ""
	}
	return v
}

func (d *decider) issueKey() *Event {
	r := d.cmd.IssueKey
	if r == nil {
		return d.reject(missing("issue_key"))
	}
	// Issuing a key is the admin's; rotating one (Replaces) is also its
	// principal's.
	if r.Replaces == "" {
		if err := d.authAdmin(); err != nil {
			return d.reject(err)
		}
	} else if err := d.authPrincipal(r.PrincipalID); err != nil {
		return d.reject(err)
	}
	if r.PrincipalID == "" {
		return d.reject(missing("principal_id"))
	}
	if r.PrincipalID == AdminPrincipal {
		return d.reject(fieldError(CodeInvalidRequest, "principal_id", "'*' is reserved for the admin key"))
	}
	if !isSHA256Hex(r.KeyHash) {
		return d.reject(fieldError(CodeInvalidRequest, "key_hash", "must be 64 lowercase hex digits (SHA-256)"))
	}
	if r.ReplacedHash != "" {
		return d.reject(fieldError(CodeInvalidRequest, "replaced_hash", "is set by the gate, not by a request"))
	}
	if p, ok := d.s.Keys[r.KeyHash]; ok {
		return d.reject(Errorf(CodeConflict, "key already issued to principal '%s'", p))
	}
	k := *r
	if r.Replaces != "" {
		h, err := d.principalKey(r.PrincipalID, r.Replaces)
		if err != nil {
			return d.reject(err)
		}
		k.ReplacedHash = h
	}
	d.ev.Type = EvPrincipalKeyIssued
	d.ev.KeyIssued = &k
	return d.ev
}

// principalKey returns the hash of principal's API key id, or the
// refusal when the principal holds no such key (revoked, another
// principal's, never issued: one answer for all, so a caller learns
// nothing of other principals' keys).
func (d *decider) principalKey(principal, id string) (string, *Error) {
	h, ok := d.s.KeyIDs[id]
	if !ok || d.s.Keys[h] != principal {
		return "", Errorf(CodeNotFound, "principal '%s' holds no API key '%s'", principal, id)
	}
	return h, nil
}

// revokeKey revokes a principal API key by ID: the admin's or the
// principal's own command. The key stops authenticating at once.
func (d *decider) revokeKey() *Event {
	r := d.cmd.RevokeKey
	if r == nil {
		return d.reject(missing("revoke_key"))
	}
	if r.PrincipalID == "" {
		return d.reject(missing("principal_id"))
	}
	if err := d.authPrincipal(r.PrincipalID); err != nil {
		return d.reject(err)
	}
	if r.KeyID == "" {
		return d.reject(missing("key_id"))
	}
	if r.KeyHash != "" || r.Replaces != "" || r.ReplacedHash != "" {
		return d.reject(Errorf(CodeInvalidRequest, "a revocation names the key by principal_id and key_id only"))
	}
	h, err := d.principalKey(r.PrincipalID, r.KeyID)
	if err != nil {
		return d.reject(err)
	}
	d.ev.Type = EvPrincipalKeyRevoked
	d.ev.KeyRevoked = &IssuePrincipalKey{PrincipalID: r.PrincipalID, KeyID: r.KeyID, KeyHash: h}
	return d.ev
}

// changeToken rotates an agent's token (the agent itself, its principal
// or the admin) or revokes it (its principal or the admin): the old token
// stops authenticating at once. A revoked agent authenticates with no
// token until its principal rotates one.
func (d *decider) changeToken() *Event {
	r := d.cmd.NewToken
	if r == nil {
		return d.reject(missing("new_token"))
	}
	var err *Error
	if d.cmd.Type == CmdRotateAgentToken {
		_, err = d.authAgent(true)
	} else {
		_, err = d.agentForPrincipal()
	}
	if err != nil {
		return d.reject(err)
	}
	switch {
	case d.cmd.Type == CmdRotateAgentToken && !isSHA256Hex(r.TokenHash):
		return d.reject(fieldError(CodeInvalidRequest, "new_token.token_hash", "must be 64 lowercase hex digits (SHA-256)"))
	case d.cmd.Type == CmdRevokeAgentToken && r.TokenHash != "":
		return d.reject(fieldError(CodeInvalidRequest, "new_token.token_hash", "must be empty: a revocation sets no token"))
	}
	d.ev.Type = EvAgentTokenRotated
	if d.cmd.Type == CmdRevokeAgentToken {
		d.ev.Type = EvAgentTokenRevoked
	}
	d.ev.TokenChanged = &AgentTokenChange{TokenHash: r.TokenHash}
	return d.ev
}

func (d *decider) configure() *Event {
	r := d.cmd.Configure
	if r == nil {
		return d.reject(missing("configure"))
	}
	if err := d.authAdmin(); err != nil {
		return d.reject(err)
	}
	c := r.Config
	if c.MaxSteps < 1 || c.MaxSteps > MaxConfigSteps {
		return d.reject(fieldError(CodeInvalidRequest, "config.max_steps", "must be between 1 and %d", MaxConfigSteps))
	}
	if c.ApprovalTTL <= 0 {
		return d.reject(fieldError(CodeInvalidRequest, "config.approval_ttl", "must be positive"))
	}
	if c.A2A != nil {
		if err := c.A2A.Validate(); err != nil {
			return d.reject(err)
		}
	}
	if c.Execute != nil {
		if err := c.Execute.Validate(); err != nil {
			return d.reject(err)
		}
	}
	d.ev.Type = EvConfigured
	d.ev.Configured = &c
	return d.ev
}

// rejectRequest records a refusal made by the transport.
func (d *decider) rejectRequest() *Event {
	r := d.cmd.Reject
	if r == nil {
		return d.reject(missing("reject"))
	}
	e := r.Error
	e.Details = cloneDetails(e.Details)
	return d.reject(&e)
}
