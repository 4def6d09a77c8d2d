package domain

import (
	"encoding/json"
	"strconv"

	"github.com/agentgate/agentgate/domain/guard"
)

// The checks of the detectors (QWED-Agent spec v1.1 §2.2).
const (
	checkPathAllowed   = "path_allowed"
	checkEgressAllowed = "egress_allowed"
)

// validateDetectorPermissions checks the path and egress policy of a
// registration: roots normalised and absolute, globs well formed, hosts
// lower-case ASCII names, "*." suffixes or IP literals, schemes lower-case
// letters, ports 1-65535.
func validateDetectorPermissions(p *Permissions) *Error {
	for i, r := range p.AllowedPaths {
		if guard.ValidRoot(r) != nil {
			return fieldError(CodeInvalidRequest, "permissions.allowed_paths["+strconv.Itoa(i)+"]", "must be a normalised absolute path")
		}
	}
	for i, g := range p.DeniedPaths {
		if err := guard.ValidGlob(g); err != nil {
			return fieldError(CodeInvalidRequest, "permissions.denied_paths["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	for i, h := range p.AllowedHosts {
		if err := guard.ValidHostEntry(h); err != nil {
			return fieldError(CodeInvalidRequest, "permissions.allowed_hosts["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	for i, s := range p.AllowedSchemes {
		for _, c := range []byte(s) {
			if c < 'a' || c > 'z' {
				return fieldError(CodeInvalidRequest, "permissions.allowed_schemes["+strconv.Itoa(i)+"]", "must be lower-case letters")
			}
		}
	}
	if len(p.AllowedPorts) > MaxPermissionEntries {
		return fieldError(CodeInvalidRequest, "permissions.allowed_ports", "at most %d entries", MaxPermissionEntries)
	}
	for i, n := range p.AllowedPorts {
		if n < 1 || n > 65535 {
			return fieldError(CodeInvalidRequest, "permissions.allowed_ports["+strconv.Itoa(i)+"]", "must be 1-65535")
		}
	}
	return nil
}

// fileOps maps the file action types to what they do.
var fileOps = map[string]guard.FileOp{
	"read_file": guard.FileRead, "file_read": guard.FileRead,
	"write_file": guard.FileWrite, "file_write": guard.FileWrite,
	"delete_file": guard.FileDelete, "file_delete": guard.FileDelete,
}

// actionOperand is what an action names for the detectors: its target,
// else the first string parameter among keys.
func actionOperand(act *Action, keys ...string) string {
	if act.Target != "" {
		return act.Target
	}
	if len(act.Parameters) == 0 {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(act.Parameters, &m) != nil {
		return ""
	}
	for _, k := range keys {
		var s string
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// detect applies the path policy to a file action and the egress policy
// to a network request or an API call naming a URL (Config.Detectors):
// a refusal denies with QWED-SEC-002, BLOCKED, a security violation; a
// file action or network request naming nothing to check is refused too
// (fail closed). It reports whether it denied.
func detect(cl *classification, a *Agent, act *Action) bool {
	deny := func(check, rule, reason string, details map[string]any) bool {
		details["rule"] = rule
		cl.deny = &Error{Code: CodeSecurityViolated, Message: reason, Details: details}
		cl.failedCheck, cl.blocked, cl.violation = check, true, true
		return true
	}
	if op, ok := fileOps[act.Type]; ok {
		p := actionOperand(act, "path", "file_path", "file", "filename")
		if p == "" {
			return deny(checkPathAllowed, "no_path", "file action names no path (action.target or parameters.path)", map[string]any{})
		}
		pol := guard.FilePolicy{AllowedRoots: a.Permissions.AllowedPaths, DeniedGlobs: a.Permissions.DeniedPaths}
		if f := guard.CheckFile(pol, op, p); f != nil {
			d := map[string]any{"action_type": act.Type}
			if f.Path != "" {
				d["path"] = f.Path
			}
			return deny(checkPathAllowed, f.Rule, "file access refused: "+f.Reason, d)
		}
		cl.pass(checkPathAllowed)
		return false
	}
	if act.Type != "network_request" && act.Type != "api_call" {
		return false
	}
	u := actionOperand(act, "url", "uri", "endpoint")
	if u == "" {
		if act.Type == "api_call" {
			return false
		}
		return deny(checkEgressAllowed, "no_url", "network request names no URL (action.target or parameters.url)", map[string]any{})
	}
	pol := guard.EgressPolicy{AllowedHosts: a.Permissions.AllowedHosts, AllowedSchemes: a.Permissions.AllowedSchemes, AllowedPorts: a.Permissions.AllowedPorts}
	if f := guard.CheckURL(pol, u); f != nil {
		d := map[string]any{"action_type": act.Type}
		if f.Host != "" {
			d["host"] = f.Host
		}
		return deny(checkEgressAllowed, f.Rule, "network request refused: "+f.Reason, d)
	}
	cl.pass(checkEgressAllowed)
	return false
}

// checkNoPII is QWED-Agent spec v1.1 §5.2's no_pii_leakage policy.
const checkNoPII = "no_pii_leakage"

// piiOutbound are the action types whose target and parameters leave the
// agent (messages, requests, writes): what they carry is the action's
// output as its caller declares it.
var piiOutbound = map[string]bool{
	"send_email": true, "send_message": true, "api_call": true, "network_request": true,
	"write_file": true, "file_write": true, "tool_call": true,
}

// piiBlocking are the findings that refuse an output: credentials and
// checksummed financial and national identifiers. Emails and phone
// numbers are what messages are addressed to, and an entropy finding may
// be an opaque identifier: they are not refused.
var piiBlocking = map[string]bool{
	guard.PIICard: true, guard.PIIIBAN: true, guard.PIISSN: true, guard.PIISecret: true, guard.PIIPrivateKey: true,
}

// detectPII scans an outbound action's target and parameters, or a tool
// call's parameters (Config.PIIGuard): a blocking finding denies with
// QWED-SEC-003, its details naming the kinds and where they are, never
// the values; else no_pii_leakage passes.
func detectPII(cl *classification, target string, params json.RawMessage) {
	var found []guard.PIIFinding
	for _, f := range guard.Scan(target) {
		f.Where = "target"
		found = append(found, f)
	}
	if len(params) > 0 {
		for _, f := range guard.ScanJSON(params) {
			f.Where = "parameters" + f.Where
			found = append(found, f)
		}
	}
	var kinds, where []string
	for _, f := range found {
		if piiBlocking[f.Kind] {
			kinds = append(kinds, f.Kind)
			where = append(where, f.Where)
		}
	}
	if len(kinds) == 0 {
		cl.pass(checkNoPII)
		return
	}
	cl.deny = &Error{Code: CodePIIDetected, Message: "PII detected (redacted): " + kinds[0] + " in " + where[0],
		Details: map[string]any{"kinds": kinds, "locations": where}}
	cl.failedCheck, cl.blocked, cl.violation = checkNoPII, true, true
}
