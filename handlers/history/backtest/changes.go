package backtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain"
)

// MaxListEntries bounds a permissions list given as a change (the domain's
// own bound on an agent's lists).
const MaxListEntries = domain.MaxPermissionEntries

// Key describes one settable key of a backtest.
type Key struct {
	// Name is the key as given to --set and in a changes file.
	Name string
	// Aliases are other accepted spellings (the flat names of the QWED-Agent spec v1.1
	// §3.1).
	Aliases []string
	// Value describes the accepted values.
	Value string
	// Help says what the key changes.
	Help string
}

// keyDef is a Key with its parser.
type keyDef struct {
	Key
	// parse reads a value (from --set text or a changes-file JSON value
	// turned into text) and returns the normalised value and the edit:
	// of an agent, or (principal keys) of its principal's path and egress
	// policy.
	parse func(text string) (string, func(*domain.Agent), error)
	// principal, set for the principal keys, edits a principal's policy
	// (then parse's edit is nil).
	principal func(text string) (string, func(*domain.PrincipalPermissions), error)
}

var keyDefs = []keyDef{
	usdKey("budget.max_daily_usd", "budget.max_daily_cost_usd", "daily cost limit (QWED-Agent spec v1.1 §6.1 cost.max_daily_usd)",
		func(l *domain.Limits) *domain.USD { return &l.MaxDailyCost }),
	usdKey("budget.max_per_request_usd", "budget.max_per_request_cost_usd", "per-request cost limit (cost.max_per_request_usd)",
		func(l *domain.Limits) *domain.USD { return &l.MaxPerRequestCost }),
	countKey("budget.max_requests_per_hour", "", domain.MaxHourlyLimit, "requests per sliding hour (requests.max_per_hour)",
		func(l *domain.Limits) *int64 { return &l.MaxRequestsPerHour }),
	countKey("budget.max_requests_per_day", "", 0, "requests per UTC day (requests.max_per_day)",
		func(l *domain.Limits) *int64 { return &l.MaxRequestsPerDay }),
	countKey("budget.max_tokens_per_request", "", 0, "tokens per request (tokens.max_per_request)",
		func(l *domain.Limits) *int64 { return &l.MaxTokensPerRequest }),
	countKey("budget.max_daily_tokens", "", 0, "tokens per UTC day (tokens.max_daily)",
		func(l *domain.Limits) *int64 { return &l.MaxDailyTokens }),
	countKey("budget.max_tool_calls_per_hour", "", domain.MaxHourlyLimit, "tool calls per sliding hour (tools.max_calls_per_hour)",
		func(l *domain.Limits) *int64 { return &l.MaxToolCallsPerHour }),
	countKey("budget.max_high_risk_calls_per_day", "", 0, "high-risk calls per UTC day",
		func(l *domain.Limits) *int64 { return &l.MaxHighRiskCallsDay }),
	{
		Key: Key{Name: "trust_level", Value: "0-3 or untrusted|supervised|autonomous|trusted",
			Help: "the agent's trust level (QWED-Agent spec v1.1 §8; the QWED-Agent user guide's decision matrix)"},
		parse: func(text string) (string, func(*domain.Agent), error) {
			lvl, err := domain.ParseTrustLevel(text)
			if err != nil {
				return "", nil, err
			}
			return strconv.Itoa(int(lvl)), func(a *domain.Agent) { a.Trust = lvl }, nil
		},
	},
	listKey("permissions.allowed_engines", "engines the agent may use (empty: any)",
		func(p *domain.Permissions) *[]string { return &p.AllowedEngines }),
	listKey("permissions.allowed_tools", "tools the agent may call (empty: any registered)",
		func(p *domain.Permissions) *[]string { return &p.AllowedTools }),
	listKey("permissions.blocked_tools", "tools the agent may never call",
		func(p *domain.Permissions) *[]string { return &p.BlockedTools }),
	policyKey("allowed_paths", "absolute roots a file action may touch (QWED-Agent spec v1.1 §2.2)"),
	policyKey("denied_paths", "globs a file action may never touch"),
	policyKey("allowed_hosts", "hosts a network request may reach (names, *.suffix, IP literals; IDN names as A-labels)"),
	policyKey("allowed_schemes", "URL schemes a network request may use (empty: http, https)"),
	policyKey("allowed_ports", "ports a network request may use (empty: any)"),
}

// policyKey is a path or egress list (QWED-Agent spec v1.1 §2.2) of the
// agent (permissions.<name>) or of its principal (principal.<name>, the
// policy of PUT /principals/{id}/permissions): validated and normalised
// as the gate does at registration. Both are keys of keyDefs, the agent's
// first; a principal key changes the policy of each selected agent's
// principal at the period start.
func policyKey(name, help string) keyDef {
	value := "comma-separated entries (a JSON array in a changes file), empty to clear"
	parse := func(text string) (string, domain.Permissions, error) {
		var p domain.Permissions
		for s := range strings.SplitSeq(text, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if name == "allowed_ports" {
				n, err := strconv.Atoi(s)
				if err != nil {
					return "", p, fmt.Errorf("%q is not a port", s)
				}
				p.AllowedPorts = append(p.AllowedPorts, n)
				continue
			}
			*policyList(&p, name) = append(*policyList(&p, name), s)
		}
		if len(*policyList(&p, name)) > MaxListEntries || len(p.AllowedPorts) > MaxListEntries {
			return "", p, fmt.Errorf("at most %d entries", MaxListEntries)
		}
		p, err := domain.NormalizedPermissions(p)
		if err != nil {
			return "", p, err
		}
		slices.Sort(p.AllowedPorts)
		p.AllowedPorts = slices.Compact(p.AllowedPorts)
		if l := policyList(&p, name); l != nil {
			slices.Sort(*l)
			*l = slices.Compact(*l)
		}
		if name == "allowed_ports" {
			ports := make([]string, len(p.AllowedPorts))
			for i, n := range p.AllowedPorts {
				ports[i] = strconv.Itoa(n)
			}
			return strings.Join(ports, ","), p, nil
		}
		return strings.Join(*policyList(&p, name), ","), p, nil
	}
	return keyDef{
		Key: Key{Name: "permissions." + name, Value: value, Help: "the agent's " + help},
		parse: func(text string) (string, func(*domain.Agent), error) {
			v, p, err := parse(text)
			if err != nil {
				return "", nil, err
			}
			return v, func(a *domain.Agent) { setPolicyList(&a.Permissions, name, p) }, nil
		},
	}
}

// principalKey is policyKey's principal.<name> twin.
func principalKey(agentKey keyDef) keyDef {
	name := strings.TrimPrefix(agentKey.Name, "permissions.")
	return keyDef{
		Key: Key{Name: "principal." + name, Value: agentKey.Value,
			Help: strings.Replace(agentKey.Help, "the agent's ", "the principal's default ", 1) + ", for all its agents"},
		principal: func(text string) (string, func(*domain.PrincipalPermissions), error) {
			v, edit, err := agentKey.parse(text)
			if err != nil {
				return "", nil, err
			}
			var a domain.Agent
			edit(&a)
			return v, func(pp *domain.PrincipalPermissions) {
				switch name {
				case "allowed_paths":
					pp.AllowedPaths = a.Permissions.AllowedPaths
				case "denied_paths":
					pp.DeniedPaths = a.Permissions.DeniedPaths
				case "allowed_hosts":
					pp.AllowedHosts = a.Permissions.AllowedHosts
				case "allowed_schemes":
					pp.AllowedSchemes = a.Permissions.AllowedSchemes
				case "allowed_ports":
					pp.AllowedPorts = a.Permissions.AllowedPorts
				}
			}, nil
		},
	}
}

func init() {
	n := len(keyDefs)
	for i := range n {
		if k := keyDefs[i]; strings.HasPrefix(k.Name, "permissions.") && slices.Contains(policyListNames, strings.TrimPrefix(k.Name, "permissions.")) {
			keyDefs = append(keyDefs, principalKey(k))
		}
	}
}

// policyListNames are the path and egress lists.
var policyListNames = []string{"allowed_paths", "denied_paths", "allowed_hosts", "allowed_schemes", "allowed_ports"}

// policyList is the string list name of p (nil for allowed_ports).
func policyList(p *domain.Permissions, name string) *[]string {
	switch name {
	case "allowed_paths":
		return &p.AllowedPaths
	case "denied_paths":
		return &p.DeniedPaths
	case "allowed_hosts":
		return &p.AllowedHosts
	case "allowed_schemes":
		return &p.AllowedSchemes
	}
	return new([]string)
}

// setPolicyList sets list name of dst from src (a fresh copy).
func setPolicyList(dst *domain.Permissions, name string, src domain.Permissions) {
	if name == "allowed_ports" {
		dst.AllowedPorts = slices.Clone(src.AllowedPorts)
		return
	}
	*policyList(dst, name) = slices.Clone(*policyList(&src, name))
}

// Keys returns the settable keys, in the order of their help text.
func Keys() []Key {
	out := make([]Key, len(keyDefs))
	for i := range keyDefs {
		out[i] = keyDefs[i].Key
	}
	return out
}

// KeysHelp renders the settable keys for --help and the README.
func KeysHelp() string {
	var b strings.Builder
	for _, k := range Keys() {
		name := k.Name
		if len(k.Aliases) > 0 {
			name += " (or " + strings.Join(k.Aliases, ", ") + ")"
		}
		fmt.Fprintf(&b, "  %s = %s\n      %s\n", name, k.Value, k.Help)
	}
	return b.String()
}

func usdKey(name, alias, help string, field func(*domain.Limits) *domain.USD) keyDef {
	return keyDef{
		Key: Key{Name: name, Aliases: []string{alias}, Value: "dollars, 0 = no limit", Help: help},
		parse: func(text string) (string, func(*domain.Agent), error) {
			v, err := domain.ParseUSD(text)
			if err != nil {
				return "", nil, err
			}
			return v.String(), func(a *domain.Agent) { *field(&a.Budget) = v }, nil
		},
	}
}

func countKey(name, alias string, maxV int64, help string, field func(*domain.Limits) *int64) keyDef {
	value := "integer ≥ 0, 0 = no limit"
	if maxV > 0 {
		value = fmt.Sprintf("integer 0-%d, 0 = no limit", maxV)
	}
	var aliases []string
	if alias != "" {
		aliases = []string{alias}
	}
	return keyDef{
		Key: Key{Name: name, Aliases: aliases, Value: value, Help: help},
		parse: func(text string) (string, func(*domain.Agent), error) {
			v, err := strconv.ParseInt(text, 10, 64)
			if err != nil || v < 0 {
				return "", nil, fmt.Errorf("%q is not a non-negative integer", text)
			}
			if maxV > 0 && v > maxV {
				return "", nil, fmt.Errorf("%d is above the limit %d", v, maxV)
			}
			return strconv.FormatInt(v, 10), func(a *domain.Agent) { *field(&a.Budget) = v }, nil
		},
	}
}

func listKey(name, help string, field func(*domain.Permissions) *[]string) keyDef {
	return keyDef{
		Key: Key{Name: name, Value: "comma-separated names (a JSON array in a changes file), empty to clear", Help: help},
		parse: func(text string) (string, func(*domain.Agent), error) {
			var list []string
			for s := range strings.SplitSeq(text, ",") {
				if s = strings.TrimSpace(s); s != "" {
					list = append(list, s)
				}
			}
			if len(list) > MaxListEntries {
				return "", nil, fmt.Errorf("%d entries, at most %d", len(list), MaxListEntries)
			}
			slices.Sort(list)
			list = slices.Compact(list)
			return strings.Join(list, ","), func(a *domain.Agent) { *field(&a.Permissions) = slices.Clone(list) }, nil
		},
	}
}

// Setting is one parsed change: a key and its normalised value.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	apply func(*domain.Agent)
	// applyPrincipal edits a principal's path and egress policy (the
	// principal.* keys; apply is then nil).
	applyPrincipal func(*domain.PrincipalPermissions)
}

// Changes are the settings a backtest changes, sorted by key. The zero
// value changes nothing (the backtest then reproduces the recorded
// decisions).
type Changes struct {
	Settings []Setting
}

// Apply edits a's settings.
func (c Changes) Apply(a *domain.Agent) {
	for _, s := range c.Settings {
		if s.apply != nil {
			s.apply(a)
		}
	}
}

// ApplyPrincipal edits the path and egress policy of principal pid in st
// (the principal.* keys; none: st is unchanged). The policy decides only
// where the log's configuration enables principal permissions.
func (c Changes) ApplyPrincipal(st *domain.State, pid string) {
	var edits []func(*domain.PrincipalPermissions)
	for _, s := range c.Settings {
		if s.applyPrincipal != nil {
			edits = append(edits, s.applyPrincipal)
		}
	}
	if len(edits) == 0 {
		return
	}
	if st.Principals == nil {
		st.Principals = map[string]*domain.Principal{}
	}
	p := st.Principals[pid]
	if p == nil {
		p = &domain.Principal{ID: pid}
		st.Principals[pid] = p
	}
	pp := domain.PrincipalPermissions{PrincipalID: pid}
	if p.Permissions != nil {
		pp = *p.Permissions // replaced, never changed in place
	}
	for _, e := range edits {
		e(&pp)
	}
	p.Permissions = &pp
}

// lookup finds the key named name (or one of its aliases).
func lookup(name string) *keyDef {
	for i := range keyDefs {
		if keyDefs[i].Name == name || slices.Contains(keyDefs[i].Aliases, name) {
			return &keyDefs[i]
		}
	}
	return nil
}

// UnknownKeyError reports a key that is not settable.
type UnknownKeyError struct{ Key string }

func (e *UnknownKeyError) Error() string {
	names := make([]string, len(keyDefs))
	for i := range keyDefs {
		names[i] = keyDefs[i].Name
	}
	return fmt.Sprintf("unknown setting %q: the settable keys are %s", e.Key, strings.Join(names, ", "))
}

// add parses one key and value into c; a key given twice is an error.
func (c *Changes) add(key, text string) error {
	def := lookup(strings.TrimSpace(key))
	if def == nil {
		return &UnknownKeyError{Key: key}
	}
	for _, s := range c.Settings {
		if s.Key == def.Name {
			return fmt.Errorf("setting %s given twice", def.Name)
		}
	}
	s := Setting{Key: def.Name}
	var err error
	if def.principal != nil {
		s.Value, s.applyPrincipal, err = def.principal(strings.TrimSpace(text))
	} else {
		s.Value, s.apply, err = def.parse(strings.TrimSpace(text))
	}
	if err != nil {
		return fmt.Errorf("parsing setting %s: %w", def.Name, err)
	}
	c.Settings = append(c.Settings, s)
	slices.SortFunc(c.Settings, func(a, b Setting) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// ParseSet parses --set assignments ("key=value"). A later file or
// assignment may not repeat a key.
func (c *Changes) ParseSet(assignments []string) error {
	for _, a := range assignments {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("parsing --set %q: want key=value", a)
		}
		if err := c.add(k, v); err != nil {
			return err
		}
	}
	return nil
}

// ParseJSON parses a changes file: one JSON object of key → value, where a
// value is a number or a string (a trust level name, an amount), or an
// array of strings for a permissions list.
func (c *Changes) ParseJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("decoding changes: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("decoding changes: trailing data after the object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		text, err := jsonText(obj[k])
		if err != nil {
			return fmt.Errorf("decoding changes member %s: %w", k, err)
		}
		if err := c.add(k, text); err != nil {
			return err
		}
	}
	return nil
}

// jsonText turns a changes-file value into the text --set would take.
func jsonText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case len(raw) > 0 && raw[0] == '[':
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return "", fmt.Errorf("want an array of strings: %w", err)
		}
		for _, s := range list {
			if strings.Contains(s, ",") {
				return "", fmt.Errorf("name %q contains a comma", s)
			}
		}
		return strings.Join(list, ","), nil
	case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		var n json.Number
		err := json.Unmarshal(raw, &n)
		return n.String(), err
	}
	return "", fmt.Errorf("want a number, a string or an array of strings, got %s", raw)
}
