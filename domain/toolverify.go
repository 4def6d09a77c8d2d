package domain

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// Tool parameters verified (QWED-Agent spec v1.1 §5.3 requires_verification,
// verification_engine; docs/ARCHITECTURE.md, "Tool parameters, risk
// assessment and policy checks").
//
// A tool call whose tool requires verification has the named parameters
// verified by a QWED engine, as an action's query is: the transport runs
// the engine before Decide (ToolVerification names what to run) and
// attaches the most severe verdict to the command, recorded with it, and
// Decide folds that verdict into the decision exactly as for an action
// (applyVerdict), with three rules of its own:
//
//   - A parameter to verify that is present but not a JSON string, or a
//     tool requiring verification whose call carries none of the named
//     parameters while its registry entry asks for verification, or a
//     present parameter without a verdict (no engine ran): UNCERTAIN, so
//     PENDING (fail closed; the built-in defaults verify only what is
//     present).
//   - The engine's statement class (the sql engine's) is a ceiling check:
//     a class above the tool's risk (a DROP TABLE through a low-risk
//     database_read) is DENIED with QWED-AGENT-005 whatever the agent's
//     trust; within it, the tool's risk stands.
//   - CORRECTED: the gate never rewrites a tool's parameters, so a
//     correction is UNCERTAIN (PENDING) with the engine's reason.
//
// All of it applies from Config.ToolVerification on: a log written before
// it re-decides its tool calls by the rules alone.

// MaxVerifyParameters bounds a registry entry's verify_parameters.
const MaxVerifyParameters = 8

// maxParameterName bounds one name of verify_parameters, in bytes.
const maxParameterName = 64

// toolEngineActions maps a verification engine to the action type whose
// engine it is (the transport verifies a parameter as that action's
// query or code).
var toolEngineActions = map[string]string{
	"sql": "execute_sql", "code": "execute_code", "math": "calculate", "logic": "verify_logic",
}

// defaultVerifyParameters are the parameters an engine verifies when a
// registry entry names none.
var defaultVerifyParameters = map[string][]string{
	"sql":   {"query", "sql"},
	"code":  {"code", "source"},
	"math":  {"expression", "query"},
	"logic": {"query", "formula"},
}

// builtinToolVerification is what the gate verifies of the well-known
// tools of the QWED-Agent specs when the principal's registry does not
// define them: the database tools' SQL, execute_code's code and
// calculate's expression.
var builtinToolVerification = map[string]string{
	"database_read": "sql", "database_write": "sql", "read_database": "sql", "query_data": "sql",
	"execute_sql": "sql", "execute_code": "code", "calculate": "math", "verify_logic": "logic",
}

// ToolPlan is what verifying a tool call's parameters takes.
type ToolPlan struct {
	// Engine is the QWED engine ("" when the tool is not verified).
	Engine string
	// ActionType is the action type whose engine Engine is.
	ActionType string
	// Parameters are the names to verify, in order.
	Parameters []string
	// Explicit is set when the principal's registry asks for verification
	// (a call carrying none of the parameters is then uncertain).
	Explicit bool
}

// ToolVerification returns the verification plan of a call of tool name
// under principal p's registry (p may be nil): the registry entry when it
// exists (verified only when it requires verification), else the built-in
// default. An entry requiring verification without verification_engine
// takes its name's built-in engine; one naming an engine the gate does not
// know (recorded before the check) has ActionType "" (uncertain).
func ToolVerification(p *Principal, name string) ToolPlan {
	if p != nil {
		if spec, ok := p.Tools[name]; ok {
			if !spec.RequiresVerification {
				return ToolPlan{}
			}
			engine := registryEngine(&spec)
			params := spec.VerifyParameters
			if len(params) == 0 {
				params = defaultVerifyParameters[engine]
			}
			return ToolPlan{Engine: engine, ActionType: toolEngineActions[engine], Parameters: params, Explicit: true}
		}
	}
	if e, ok := builtinToolVerification[name]; ok {
		return ToolPlan{Engine: e, ActionType: toolEngineActions[e], Parameters: defaultVerifyParameters[e]}
	}
	return ToolPlan{}
}

// registryEngine is the engine of a registry entry: its
// verification_engine, else the built-in default of its name ("" when
// neither names one).
func registryEngine(t *ToolSpec) string {
	if t.VerificationEngine != "" {
		return t.VerificationEngine
	}
	return builtinToolVerification[t.Name]
}

// ToolSubject is one parameter of a tool call to verify.
type ToolSubject struct {
	Parameter string
	Value     string
}

// Subjects returns the parameters of the plan that params (a tool call's
// parameters) carries as strings, in the plan's order; bad names the
// first one present that is not a string ("" when none).
func (tp *ToolPlan) Subjects(params json.RawMessage) (subjects []ToolSubject, bad string) {
	if tp.Engine == "" || len(params) == 0 {
		return nil, ""
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(params, &all) != nil {
		return nil, ""
	}
	for _, name := range tp.Parameters {
		raw, ok := all[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			if bad == "" {
				bad = name
			}
			continue
		}
		subjects = append(subjects, ToolSubject{Parameter: name, Value: s})
	}
	return subjects, bad
}

// StrictSubjects is Subjects under Config.StrictGuards, which a call
// could otherwise dodge by spelling: a parameter matches a name to verify
// whatever its case and '_' or '-' ("Query", "SQL", "sql-query" for
// "sqlquery"); for a built-in SQL tool (no registry entry, which names the
// tool's parameters), every string anywhere in the call that opens like
// an SQL statement (looksLikeSQL) is verified too, named by its JSON
// pointer without the leading "/" ("statement", "queries/0"); for the
// built-in code tool, a call naming no code or source has each of its
// top-level strings verified as code. More than MaxVerifyParameters
// subjects is bad (too many to verify): the caller treats it as a
// parameter it cannot verify.
func (tp *ToolPlan) StrictSubjects(params json.RawMessage) (subjects []ToolSubject, bad string) {
	if tp.Engine == "" || len(params) == 0 {
		return nil, ""
	}
	var all map[string]any
	if json.Unmarshal(params, &all) != nil {
		return nil, ""
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	named := map[string]bool{}
	for _, n := range tp.Parameters {
		named[operandKey(n)] = true
	}
	taken := map[string]bool{}
	add := func(name, v string) {
		if !taken[name] && len(subjects) <= MaxVerifyParameters {
			taken[name] = true
			subjects = append(subjects, ToolSubject{Parameter: name, Value: v})
		}
	}
	for _, k := range names {
		if !named[operandKey(k)] {
			continue
		}
		if v, ok := all[k].(string); ok {
			add(k, v)
		} else if bad == "" {
			bad = k
		}
	}
	switch {
	case tp.Explicit:
	case tp.Engine == "sql":
		var walk func(ptr string, v any, depth int)
		walk = func(ptr string, v any, depth int) {
			switch x := v.(type) {
			case string:
				if looksLikeSQL(x) {
					add(ptr, x)
				}
			case []any:
				for i, e := range x {
					walk(ptr+"/"+strconv.Itoa(i), e, depth+1)
				}
			case map[string]any:
				if depth > maxOperandDepth {
					return
				}
				keys := make([]string, 0, len(x))
				for k := range x {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					walk(ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), x[k], depth+1)
				}
			}
		}
		for _, k := range names {
			walk(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), all[k], 1)
		}
	case tp.Engine == "code" && len(subjects) == 0 && bad == "":
		for _, k := range names {
			if v, ok := all[k].(string); ok {
				add(k, v)
			}
		}
	}
	if len(subjects) > MaxVerifyParameters && bad == "" {
		bad = strconv.Itoa(len(subjects)) + " parameters (more than " + strconv.Itoa(MaxVerifyParameters) + ")"
	}
	return subjects, bad
}

// sqlOpeners are the first words of SQL statements StrictSubjects
// verifies wherever a built-in SQL tool's call carries them.
var sqlOpeners = map[string]bool{
	"select": true, "insert": true, "update": true, "delete": true, "drop": true, "create": true,
	"alter": true, "truncate": true, "grant": true, "revoke": true, "with": true, "merge": true,
	"replace": true, "upsert": true, "call": true, "exec": true, "execute": true, "copy": true,
	"attach": true, "detach": true, "pragma": true, "vacuum": true, "declare": true, "lock": true,
	"rename": true, "load": true, "handler": true, "explain": true, "prepare": true, "set": true,
	"do": true, "values": true, "table": true, "begin": true, "commit": true, "rollback": true,
	"import": true, "export": true, "backup": true, "restore": true, "shutdown": true, "kill": true,
	"flush": true, "optimize": true, "repair": true, "purge": true, "reindex": true, "cluster": true,
	"analyze": true, "comment": true, "security": true, "reset": true, "savepoint": true, "release": true,
}

// looksLikeSQL reports whether s opens, after white space, parentheses
// and comments, with a word of sqlOpeners (in any case).
func looksLikeSQL(s string) bool {
	for {
		s = strings.TrimLeft(s, " \t\r\n\f\v(;")
		switch {
		case strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return false
			}
			s = s[i+1:]
			continue
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s[2:], "*/")
			if i < 0 {
				return false
			}
			s = s[i+4:]
			continue
		}
		break
	}
	end := 0
	for end < len(s) && (s[end]|0x20 >= 'a' && s[end]|0x20 <= 'z') {
		end++
	}
	return end > 0 && sqlOpeners[strings.ToLower(s[:end])]
}

// ToolSubjectAction is the action a transport verifies subject of a tool
// call as: the plan's action type with the subject as its query or code,
// and the call's parameters (the engine picks the params it declares).
func ToolSubjectAction(tp *ToolPlan, subject ToolSubject, params json.RawMessage) *Action {
	a := &Action{Type: tp.ActionType, Parameters: params}
	if tp.ActionType == "execute_code" {
		a.Code = subject.Value
	} else {
		a.Query = subject.Value
	}
	return a
}

// MayRunToolEngine reports whether the transport should run the engine on
// cmd's tool call, given the agent as last committed (nil when unknown):
// only when the caller authenticates as the agent, the agent is active
// and the tool is not blocked for it (MayRunEngine's rules, without
// allowed_engines: the gate, not the agent, asks for this verification).
func MayRunToolEngine(a *Agent, cmd *Command) bool {
	if cmd == nil || cmd.Tool == nil || !authenticatesActive(a, cmd) {
		return false
	}
	return !contains(a.Permissions.BlockedTools, cmd.Tool.ToolCall.ToolName)
}

// verdictSeverity orders tool verdicts, most severe first (the transport
// keeps the most severe of a call's parameters).
func verdictSeverity(v *EngineVerdict) int {
	for i := range v.Findings {
		if severe(&v.Findings[i]) {
			return 0
		}
	}
	switch v.Status {
	case engines.Blocked:
		return 0
	case engines.Failed:
		return 1
	case engines.Verified:
		return 4
	case engines.Corrected:
		if v.Corrected != "" {
			return 3
		}
	}
	return 2 // uncertain
}

// MoreSevereVerdict reports whether a is more severe than b for a tool
// call (a nil b is less severe than anything); at equal severity the
// higher statement class is, else the first.
func MoreSevereVerdict(a, b *EngineVerdict) bool {
	if b == nil {
		return true
	}
	sa, sb := verdictSeverity(a), verdictSeverity(b)
	if sa != sb {
		return sa < sb
	}
	return mustRisk(a.Risk).Rank() > mustRisk(b.Risk).Rank()
}

// validateVerifyParameters checks a registry entry's verification fields.
func validateVerifyParameters(t *ToolSpec, field string, strict bool) *Error {
	if len(t.VerifyParameters) > MaxVerifyParameters {
		return fieldError(CodeInvalidRequest, field+".verify_parameters", "at most %d parameters", MaxVerifyParameters)
	}
	for i, p := range t.VerifyParameters {
		if p == "" || len(p) > maxParameterName {
			return fieldError(CodeInvalidRequest, field+".verify_parameters["+strconv.Itoa(i)+"]",
				"must be a parameter name of 1 to %d bytes", maxParameterName)
		}
	}
	if strict && t.RequiresVerification && toolEngineActions[registryEngine(t)] == "" {
		return fieldError(CodeInvalidRequest, field+".verification_engine",
			"'%s' is not one of sql, code, math, logic (requires_verification needs an engine; only the well-known tools have a default)", t.VerificationEngine)
	}
	return nil
}

// verifyToolParameters folds the tool plan and the command's verdict v
// into cl (Config.ToolVerification; see the top of this file); strict is
// Config.StrictGuards (StrictSubjects).
func verifyToolParameters(cl *classification, plan *ToolPlan, name string, params json.RawMessage, v *EngineVerdict, strict bool) {
	if plan.Engine == "" || cl.deny != nil {
		return
	}
	cl.engine = plan.Engine
	uncertain := func(why string) {
		cl.verdict, cl.verdictWhy = verdictUncertain, why
	}
	if plan.ActionType == "" {
		uncertain("tool '" + name + "' requires verification by unknown engine '" + plan.Engine + "'")
		return
	}
	subjects, bad := plan.Subjects(params)
	if strict {
		subjects, bad = plan.StrictSubjects(params)
	}
	switch {
	case bad != "":
		uncertain("parameter '" + bad + "' of tool '" + name + "' is not a string the " + plan.Engine + " engine can verify")
		return
	case len(subjects) == 0 && plan.Explicit:
		uncertain("tool '" + name + "' requires verification but carries none of its parameters to verify")
		return
	case len(subjects) == 0:
		return
	case v == nil:
		uncertain("parameter '" + subjects[0].Parameter + "' of tool '" + name + "' was not verified (no " + plan.Engine + " engine ran)")
		return
	}
	found := false
	for _, s := range subjects {
		found = found || s.Parameter == v.Parameter
	}
	if !found {
		uncertain("the verdict does not answer a parameter of tool '" + name + "' to verify")
		return
	}
	cl.applied = v
	applyVerdict(cl, ActionSpec{Engine: plan.Engine}, &Action{Type: "tool " + name}, v)
	if cl.deny != nil {
		cl.deny.Details["parameter"] = v.Parameter
		return
	}
	if cl.verdict == verdictCorrected {
		uncertain("engine '" + v.Engine + "' corrected parameter '" + v.Parameter + "' (the gate does not rewrite tool parameters)")
		return
	}
	// An unknown class ranks as critical (Risk.Rank): fail closed.
	if class := mustRisk(v.Risk); v.Risk != "" && class.Rank() > cl.risk.Rank() {
		if class == "" {
			class = RiskCritical
		}
		if cl.npassed > 0 && cl.passed[cl.npassed-1] == checkEngineVerdict {
			cl.npassed-- // the engine verified it, the gate refutes it
		}
		cl.deny = &Error{Code: CodeVerificationFailed,
			Message: "verification failed: parameter '" + v.Parameter + "' is a " + string(class) +
				" risk statement, above the " + string(cl.risk) + " risk of tool '" + name + "'",
			Details: map[string]any{"engine": v.Engine, "parameter": v.Parameter, "statement_risk": string(class),
				"tool_risk": string(cl.risk), "outcome_digest": v.OutcomeDigest}}
		cl.failedCheck = checkEngineVerdict
	}
}
