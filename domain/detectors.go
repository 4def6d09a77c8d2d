package domain

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain/guard"
	"github.com/agentgate/agentgate/domain/jcs"
)

// The checks of the detectors (QWED-Agent spec v1.1 §2.2).
const (
	checkPathAllowed   = "path_allowed"
	checkEgressAllowed = "egress_allowed"
)

// validateDetectorPermissions checks the path and egress policy of a
// registration: roots normalised and absolute, globs well formed, hosts
// names, "*." suffixes or IP literals (lower-case ASCII names before
// Config.IDNHosts; under it any name guard.NormalizeHostEntry converts),
// schemes lower-case letters, ports 1-65535.
func validateDetectorPermissions(prefix string, p *Permissions, idn bool) *Error {
	for i, r := range p.AllowedPaths {
		if guard.ValidRoot(r) != nil {
			return fieldError(CodeInvalidRequest, prefix+"allowed_paths["+strconv.Itoa(i)+"]", "must be a normalised absolute path")
		}
	}
	for i, g := range p.DeniedPaths {
		if err := guard.ValidGlob(g); err != nil {
			return fieldError(CodeInvalidRequest, prefix+"denied_paths["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	for i, h := range p.AllowedHosts {
		check := guard.ValidHostEntry
		if idn {
			check = func(e string) error { _, err := guard.NormalizeHostEntry(e); return err }
		}
		if err := check(h); err != nil {
			return fieldError(CodeInvalidRequest, prefix+"allowed_hosts["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	for i, s := range p.AllowedSchemes {
		for _, c := range []byte(s) {
			if c < 'a' || c > 'z' {
				return fieldError(CodeInvalidRequest, prefix+"allowed_schemes["+strconv.Itoa(i)+"]", "must be lower-case letters")
			}
		}
	}
	if len(p.AllowedPorts) > MaxPermissionEntries {
		return fieldError(CodeInvalidRequest, prefix+"allowed_ports", "at most %d entries", MaxPermissionEntries)
	}
	for i, n := range p.AllowedPorts {
		if n < 1 || n > 65535 {
			return fieldError(CodeInvalidRequest, prefix+"allowed_ports["+strconv.Itoa(i)+"]", "must be 1-65535")
		}
	}
	return nil
}

// normalizeHostEntries returns hosts with each entry in the form
// guard.CheckURL compares (guard.NormalizeHostEntry), or hosts itself when
// every entry is already in that form (a registration of lower-case ASCII
// names records the same bytes as before Config.IDNHosts). The entries
// were validated first.
func normalizeHostEntries(hosts []string) []string {
	var out []string
	for i, h := range hosts {
		n, err := guard.NormalizeHostEntry(h)
		if err != nil || n == h {
			if out != nil {
				out = append(out, h)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(hosts)), hosts[:i]...)
		}
		out = append(out, n)
	}
	if out == nil {
		return hosts
	}
	return out
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
// (fail closed). Under Config.StrictGuards (strict) every path or URL the
// action names is checked (operands), else only the first. It reports
// whether it denied.
func detect(cl *classification, s *State, a *Agent, act *Action) bool {
	strict := s.Config.StrictGuards
	if op, ok := fileOps[act.Type]; ok {
		paths, bad := []string{actionOperand(act, "path", "file_path", "file", "filename")}, ""
		if strict {
			paths, bad = operands(act.Target, act.Parameters, pathKeys)
		}
		return checkPaths(cl, s, a, act.Type, op, paths, bad, true, strict)
	}
	if act.Type != "network_request" && act.Type != "api_call" {
		return false
	}
	urls, bad := []string{actionOperand(act, "url", "uri", "endpoint")}, ""
	if strict {
		urls, bad = operands(act.Target, act.Parameters, urlKeys)
	}
	return checkURLs(cl, s, a, act.Type, urls, bad, act.Type == "network_request", strict)
}

// detectTool applies the detectors to a tool call (Config.StrictGuards):
// a tool named after a file action type or network_request and api_call
// is checked as that action is; any other tool has the URLs its
// parameters name checked as an api_call's, and the paths they name
// against the paths denied by default and the agent's denied globs (not
// its allowed roots: a tool's "path" need not be a local file).
//
// Tool names are compared folded (toolKey: "READ_FILE", "file.read" and
// "readFile" are read_file), and a tool that is not a file action type
// but whose name says it writes, moves or deletes ("save_file",
// "remove-dir") has its paths checked as a write or a delete.
func detectTool(cl *classification, s *State, a *Agent, name string, params json.RawMessage) bool {
	key, v := toolKey(name), decodeParams(params)
	if op, ok := foldedFileOps[key]; ok {
		paths, bad := operandsOf("", v, pathKeys)
		return checkPaths(cl, s, a, name, op, paths, bad, true, true)
	}
	urls, bad := operandsOf("", v, urlKeys)
	if key != "networkrequest" && key != "apicall" {
		urls = absoluteURLs(urls)
	}
	if checkURLs(cl, s, a, name, urls, bad, key == "networkrequest", true) {
		return true
	}
	paths, bad := operandsOf("", v, pathKeys)
	return checkPaths(cl, s, a, name, toolFileOp(name), toolPaths(paths), bad, false, true)
}

// toolPaths reads the path parameters of a tool that is not a file action
// type as such a tool may mean them, rather than refusing what a file
// action may not hold: a URL ("target": "https://…") is not a path and is
// dropped; backslashes are separators ("C:\Users\ann\.ssh\id_rsa");
// percent-escapes are decoded once ("/etc/sh%61dow" is /etc/shadow, "a%20b"
// is "a b"). What is left unnormalisable (control bytes, NFKC changes) is
// still refused.
func toolPaths(paths []string) []string {
	out := paths[:0:0]
	for _, p := range paths {
		if strings.Contains(p, "://") {
			continue
		}
		out = append(out, percentDecode(strings.ReplaceAll(p, "\\", "/")))
	}
	return out
}

// percentDecode decodes every %XX escape of s once.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	unhex := func(c byte) (byte, bool) {
		switch {
		case '0' <= c && c <= '9':
			return c - '0', true
		case 'a' <= c && c <= 'f':
			return c - 'a' + 10, true
		case 'A' <= c && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if h, ok := unhex(s[i+1]); ok {
				if l, ok := unhex(s[i+2]); ok {
					b = append(b, h<<4|l)
					i += 2
					continue
				}
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// absoluteURLs reads the URL parameters of a tool that is not a network
// action type as such a tool's caller writes them: a path ("/v1/items",
// relative to the tool's own base) names no destination and is dropped;
// a scheme-relative "//host/…" and a bare "host/…" are read as http URLs,
// so "169.254.169.254/latest" is still the metadata service.
func absoluteURLs(urls []string) []string {
	out := urls[:0:0]
	for _, u := range urls {
		switch {
		case strings.HasPrefix(u, "//"):
			out = append(out, "http:"+u)
		case strings.HasPrefix(u, "/"):
		case !strings.Contains(u, "://"):
			out = append(out, "http://"+u)
		default:
			out = append(out, u)
		}
	}
	return out
}

// toolKey folds a tool name as operandKey folds a parameter's, dropping
// dots too.
func toolKey(name string) string { return strings.ReplaceAll(operandKey(name), ".", "") }

// foldedFileOps is fileOps under toolKey.
var foldedFileOps = func() map[string]guard.FileOp {
	m := map[string]guard.FileOp{}
	for k, op := range fileOps {
		m[toolKey(k)] = op
	}
	return m
}()

// toolFileOp is what a tool that is not a file action type does to the
// paths it names, read from the words of its name.
func toolFileOp(name string) guard.FileOp {
	op := guard.FileRead
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' }) {
		switch w {
		case "delete", "remove", "rm", "unlink", "rmdir", "erase", "wipe", "truncate":
			return guard.FileDelete
		case "write", "save", "append", "edit", "create", "put", "move", "mv", "rename", "copy", "cp", "overwrite", "chmod", "chown", "mkdir", "touch", "patch":
			op = guard.FileWrite
		}
	}
	return op
}

// securityDeny denies cl with QWED-SEC-002 as a security violation.
func securityDeny(cl *classification, check, rule, reason string, details map[string]any) bool {
	details["rule"] = rule
	cl.deny = &Error{Code: CodeSecurityViolated, Message: reason, Details: details}
	cl.failedCheck, cl.blocked, cl.violation = check, true, true
	return true
}

// checkPaths checks each of paths (bad: why the operands could not be
// read). A file action (file) must name a path, and its agent's allowed
// roots apply; another tool's paths are checked against the denials only.
// strict (Config.StrictGuards) matches the denials without case and reads
// NFD paths as NFC (guard.FilePolicy).
func checkPaths(cl *classification, s *State, a *Agent, kind string, op guard.FileOp, paths []string, bad string, file, strict bool) bool {
	d := map[string]any{"action_type": kind}
	switch {
	case bad != "":
		return securityDeny(cl, checkPathAllowed, "unnormalisable", "file access refused: "+bad, d)
	case file && (len(paths) == 0 || paths[0] == ""):
		return securityDeny(cl, checkPathAllowed, "no_path", "file action names no path (action.target or parameters.path)", map[string]any{})
	case len(paths) == 0:
		return false
	}
	pol := guard.FilePolicy{AllowedRoots: a.Permissions.AllowedPaths, DeniedGlobs: a.Permissions.DeniedPaths, FoldCase: strict, NFC: strict}
	if pp := principalPermissions(s, a); pp != nil {
		pol.PrincipalRoots = pp.AllowedPaths
		if len(pp.DeniedPaths) > 0 {
			pol.DeniedGlobs = append(slices.Clip(pp.DeniedPaths), a.Permissions.DeniedPaths...)
		}
	}
	if !file {
		pol.AllowedRoots, pol.PrincipalRoots = nil, nil
	}
	for _, p := range paths {
		if f := guard.CheckFile(pol, op, p); f != nil {
			if f.Path != "" {
				d["path"] = f.Path
			}
			return securityDeny(cl, checkPathAllowed, f.Rule, "file access refused: "+f.Reason, d)
		}
	}
	cl.pass(checkPathAllowed)
	return false
}

// checkURLs checks each of urls (bad: why the operands could not be
// read); a network request (required) must name one. strict
// (Config.StrictGuards) refuses internal names (guard.EgressPolicy).
func checkURLs(cl *classification, s *State, a *Agent, kind string, urls []string, bad string, required, strict bool) bool {
	d := map[string]any{"action_type": kind}
	switch {
	case bad != "":
		return securityDeny(cl, checkEgressAllowed, "unnormalisable", "network request refused: "+bad, d)
	case len(urls) == 0 || urls[0] == "":
		if !required {
			return false
		}
		return securityDeny(cl, checkEgressAllowed, "no_url", "network request names no URL (action.target or parameters.url)", map[string]any{})
	}
	pol := guard.EgressPolicy{AllowedHosts: a.Permissions.AllowedHosts, AllowedSchemes: a.Permissions.AllowedSchemes, AllowedPorts: a.Permissions.AllowedPorts, Strict: strict,
		ASCIIHosts: !s.Config.IDNHosts}
	if pp := principalPermissions(s, a); pp != nil {
		pol.PrincipalHosts, pol.PrincipalSchemes, pol.PrincipalPorts = pp.AllowedHosts, pp.AllowedSchemes, pp.AllowedPorts
	}
	for _, u := range urls {
		if f := guard.CheckURL(pol, u); f != nil {
			if f.Host != "" {
				d["host"] = f.Host
			}
			return securityDeny(cl, checkEgressAllowed, f.Rule, "network request refused: "+f.Reason, d)
		}
	}
	cl.pass(checkEgressAllowed)
	return false
}

// pathKeys and urlKeys are the parameter names, folded (operandKey), whose
// values Config.StrictGuards checks as paths and as URLs.
var (
	pathKeys = map[string]bool{"path": true, "paths": true, "filepath": true, "filepaths": true, "file": true,
		"files": true, "filename": true, "filenames": true, "target": true, "destination": true, "dest": true,
		"dir": true, "directory": true}
	urlKeys = map[string]bool{"url": true, "urls": true, "uri": true, "uris": true, "endpoint": true,
		"endpoints": true, "baseurl": true, "href": true}
)

// maxOperands bounds the paths or URLs one action or tool call may name;
// maxOperandDepth the nesting the search for them goes through: what a
// request's parameters may hold (jcs.MaxDepth), so no accepted request
// is refused for its depth alone.
const (
	maxOperands     = 32
	maxOperandDepth = jcs.MaxDepth
)

// operandKey folds a parameter name: lower case, without '_' and '-'
// ("File_Path", "file-path" and "filePath" are "filepath").
func operandKey(k string) string {
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// operands is every path or URL an action names: its target, then the
// values of the parameters whose folded name is in keys, at any depth, in
// the order of their sorted names: a string, or the strings of an array.
// bad says why they cannot all be read (a named parameter that is a
// number or a boolean, more than maxOperands of them, deeper than
// maxOperandDepth): the caller refuses then, rather than guessing.
func operands(target string, params json.RawMessage, keys map[string]bool) (out []string, bad string) {
	return operandsOf(target, decodeParams(params), keys)
}

// decodeParams decodes a call's parameters for operandsOf (nil when
// there are none or they do not decode).
func decodeParams(params json.RawMessage) any {
	var v any
	if len(params) == 0 || json.Unmarshal(params, &v) != nil {
		return nil
	}
	return v
}

// operandsOf is operands of parameters already decoded (decodeParams).
func operandsOf(target string, v any, keys map[string]bool) (out []string, bad string) {
	if target != "" {
		out = append(out, target)
	}
	if v == nil {
		return out, ""
	}
	var walk func(v any, named bool, depth int) string
	walk = func(v any, named bool, depth int) string {
		if depth > maxOperandDepth {
			return "parameters nested deeper than " + strconv.Itoa(maxOperandDepth)
		}
		switch x := v.(type) {
		case string:
			if named && x != "" { // an empty parameter names nothing
				if len(out) == maxOperands {
					return "more than " + strconv.Itoa(maxOperands) + " paths or URLs"
				}
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				if why := walk(e, named, depth+1); why != "" {
					return why
				}
			}
		case map[string]any:
			names := make([]string, 0, len(x))
			for k := range x {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				if why := walk(x[k], keys[operandKey(k)], depth+1); why != "" {
					return why
				}
			}
		case nil:
		default:
			if named {
				return "a path or URL parameter that is not a string"
			}
		}
		return ""
	}
	return out, walk(v, false, 0)
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
// call's parameters (Config.PIIGuard; "" and nil when not scanned), and an
// action's declared output (Config.OutputScan; "" when none): a blocking
// finding denies with QWED-SEC-003, its details naming the kinds and where
// they are, never the values; else no_pii_leakage passes. With full
// (Config.OutputScan) every input is read whole (guard.ScanMode.All: no number
// of addresses hides a card number after them) and every finding,
// blocking or not, is kept for the decision's verification block
// (Verification.PII), and the parameters' keys are scanned too, a key
// holding a finding named by its index in the locations, never by its
// text (guard.ScanMode.Keys). strict (Config.StrictGuards) reads as
// guard.ScanStrict does.
func detectPII(cl *classification, target string, params json.RawMessage, output string, strict, full bool) {
	mode := guard.ScanMode{Strict: strict, All: full, Keys: full}
	scan := func(text string) []guard.PIIFinding { return guard.ScanWith(text, mode) }
	var found []PIIFinding
	add := func(list []guard.PIIFinding, where func(string) string) {
		for _, f := range list {
			found = append(found, PIIFinding{Kind: f.Kind, Location: where(f.Where), Offset: int64(f.Offset)})
		}
	}
	add(scan(target), func(string) string { return "target" })
	if len(params) > 0 {
		add(guard.ScanJSONWith(params, mode), func(w string) string { return "parameters" + w })
	}
	add(scanOutput(output, mode), func(w string) string { return locOutput + w })
	if full {
		cl.pii = found
	}
	var kinds, where []string
	for _, f := range found {
		if piiBlocking[f.Kind] {
			kinds = append(kinds, f.Kind)
			where = append(where, f.Location)
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
