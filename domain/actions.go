package domain

import (
	"strconv"
	"strings"
)

// Action types, engines and tool lists (docs/ARCHITECTURE.md, "Where the
// specifications disagree"; QWED-Agent spec v1.1 §2.2; QWED-Agent user
// guide, "Risk assessment" and ToolApprovalSystem).

// ActionSpec describes a known action type.
type ActionSpec struct {
	// Engine is the check that verifies the type: a QWED engine (math,
	// logic, sql, code) or a gate check (tool, policy, security).
	Engine string
	// Risk is the type's base risk; execute_sql and the database types
	// refine it from the sql engine's statement class (verdictRisk).
	Risk Risk
	// QWEDEngine marks engines subject to the agent's allowed_engines.
	QWEDEngine bool
	// SQL marks the types whose query the sql engine classifies.
	SQL bool
}

// actionSpecs is the table of known action types. A type not in it is
// denied (REQ-005): fail closed.
var actionSpecs = map[string]ActionSpec{
	"calculate":       {Engine: "math", Risk: RiskLow, QWEDEngine: true},
	"verify_logic":    {Engine: "logic", Risk: RiskLow, QWEDEngine: true},
	"execute_sql":     {Engine: "sql", Risk: RiskCritical, QWEDEngine: true, SQL: true},
	"execute_code":    {Engine: "code", Risk: RiskCritical, QWEDEngine: true},
	"tool_call":       {Engine: "tool", Risk: RiskMedium},
	"api_call":        {Engine: "tool", Risk: RiskMedium},
	"network_request": {Engine: "policy", Risk: RiskMedium},
	"read_file":       {Engine: "security", Risk: RiskLow},
	"file_read":       {Engine: "security", Risk: RiskLow},
	"write_file":      {Engine: "security", Risk: RiskHigh},
	"file_write":      {Engine: "security", Risk: RiskHigh},
	"delete_file":     {Engine: "security", Risk: RiskCritical},
	"file_delete":     {Engine: "security", Risk: RiskCritical},
	"database_read":   {Engine: "sql", Risk: RiskLow, QWEDEngine: true, SQL: true},
	"database_write":  {Engine: "sql", Risk: RiskHigh, QWEDEngine: true, SQL: true},
	"send_email":      {Engine: "tool", Risk: RiskMedium},
	"send_message":    {Engine: "tool", Risk: RiskMedium},
}

// LookupAction returns the spec of an action type.
func LookupAction(actionType string) (ActionSpec, bool) {
	s, ok := actionSpecs[actionType]
	return s, ok
}

// unclassifiedSQLRisk is the risk of an SQL action the sql engine gave no
// class (Config.EngineSQLRisk): critical when it holds a query, since
// nothing vouches for it (fail closed); its type's risk when it holds none
// (execute_sql's is critical).
func unclassifiedSQLRisk(spec ActionSpec, a *Action) Risk {
	if a.Query != "" {
		return RiskCritical
	}
	return spec.Risk
}

// toolDefault is the default of a tool name the principal's registry does
// not define: its risk and its category in the QWED-Agent user guide.
type toolDefault struct {
	risk Risk
	// safe tools are auto-approved by category (QWED-Agent user guide); the trust
	// matrix still applies.
	safe bool
	// dangerous tools are critical and never approved autonomously
	// (QWED-Agent user guide).
	dangerous bool
}

// toolDefaults is the one table of tool names: the safe and dangerous
// lists of the QWED-Agent user guide and, for a tool named in allowed_tools, the
// action-type names with their types' risk (init). An allowed tool not in
// it is medium; a tool neither allowed nor in a category is unknown.
var toolDefaults = map[string]toolDefault{
	"read_database": {risk: RiskLow, safe: true}, "query_data": {risk: RiskLow, safe: true},
	"search_web": {risk: RiskLow, safe: true}, "send_email": {risk: RiskMedium, safe: true},
	"log_message": {risk: RiskLow, safe: true}, "get_weather": {risk: RiskLow, safe: true},
	"delete_database": {risk: RiskCritical, dangerous: true}, "drop_table": {risk: RiskCritical, dangerous: true},
	"send_money": {risk: RiskCritical, dangerous: true}, "delete_files": {risk: RiskCritical, dangerous: true},
	"shutdown_server": {risk: RiskCritical, dangerous: true}, "revoke_access": {risk: RiskCritical, dangerous: true},
}

func init() {
	for name, s := range actionSpecs {
		if _, ok := toolDefaults[name]; !ok {
			toolDefaults[name] = toolDefault{risk: s.Risk}
		}
	}
}

// Tool-name keywords of the unknown-tool risk score, in hundredths.
var riskKeywords = []struct {
	word  string
	score int
}{
	{"delete", 90}, {"drop", 90}, {"exec", 90}, {"shell", 90}, {"sudo", 90},
	{"kill", 90}, {"shutdown", 90}, {"destroy", 90}, {"truncate", 90}, {"wipe", 90},
	{"remove", 85}, {"rm", 85}, {"admin", 80}, {"grant", 80}, {"revoke", 80},
	{"transfer", 80}, {"pay", 80}, {"money", 80}, {"deploy", 75},
	{"write", 60}, {"send", 60}, {"post", 60}, {"update", 60}, {"put", 55},
	{"create", 55}, {"upload", 60}, {"modify", 60}, {"email", 50},
	{"read", 20}, {"get", 20}, {"list", 20}, {"search", 20}, {"fetch", 25},
	{"query", 25}, {"view", 20}, {"find", 20}, {"lookup", 20},
}

// toolRiskScore is the deterministic heuristic score of an unknown tool, in
// hundredths: the highest score of the keywords found among the name's
// words (split at '_', '-', '.', ' ' and case changes are not split), 40
// when none is found.
func toolRiskScore(name string) int {
	best := -1
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' || r == ':'
	})
	for _, w := range words {
		for _, k := range riskKeywords {
			if w == k.word || (len(k.word) >= 4 && strings.HasPrefix(w, k.word)) {
				best = max(best, k.score)
			}
		}
	}
	if best < 0 {
		return 40
	}
	return best
}

// formatScore renders hundredths as a decimal with at most two decimals
// ("0.4", "0.85", "1").
func formatScore(h int) string {
	if h >= 100 {
		return "1"
	}
	if h <= 0 {
		return "0"
	}
	s := strconv.Itoa(h)
	if h < 10 {
		s = "0" + s
	}
	s = "0." + s
	return strings.TrimRight(s, "0")
}
