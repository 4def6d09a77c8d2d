package sql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// EngineID is the engine's id in the registry of the QWED protocol v1.0 §4.1.
const EngineID = "sql"

// Version is the engine's version (Capabilities.Version).
const Version = "1.0.0"

// Params are the sql engine's params (QWED protocol v1.0 §5.2.5 plus the engine's
// own). Unknown fields and fields of the wrong type are QWED-REQ-001.
type Params struct {
	// SchemaDDL are CREATE TABLE statements; with them, unknown tables and
	// columns are FAILED.
	SchemaDDL string `json:"schema_ddl"`
	// Dialect is postgresql (or postgres, pg, or empty), mysql, or sqlite
	// (or sqlite3); any other is UNSUPPORTED. The schema_ddl is read in
	// the same dialect.
	Dialect string `json:"dialect"`
	// SensitiveColumns and SensitiveTables extend the default lists.
	SensitiveColumns []string `json:"sensitive_columns"`
	SensitiveTables  []string `json:"sensitive_tables"`
	// MaxJoins and MaxSubqueryDepth override the policy limits (0 to
	// MaxJoinsLimit, 0 to MaxSubqueryDepthLimit).
	MaxJoins         *int `json:"max_joins"`
	MaxSubqueryDepth *int `json:"max_subquery_depth"`
	// Allow waives checks the caller decides itself (AllowDestructive,
	// AllowSensitive, AllowMultiple): a waived check that fails is listed
	// in checks_waived and does not block the verdict. Injection, schema
	// and complexity checks cannot be waived.
	Allow []string `json:"allow"`
}

// The names of params.allow, each waiving one check.
const (
	// AllowDestructive waives CheckNoDestructive.
	AllowDestructive = "destructive_operations"
	// AllowSensitive waives CheckNoSensitive.
	AllowSensitive = "sensitive_columns"
	// AllowMultiple waives CheckSingle (stacked statements that are all
	// reads; stacked statements of which one writes are an injection).
	AllowMultiple = "multiple_statements"
)

// waivable maps each name of params.allow to the check it waives.
var waivable = map[string]string{AllowDestructive: CheckNoDestructive, AllowSensitive: CheckNoSensitive, AllowMultiple: CheckSingle}

// GateAllow is params.allow as the gate's verify_action sets it: the gate
// decides destructive, sensitive and stacked reads by the statement's risk
// class (its trust × risk matrix), so the engine only classifies them.
func GateAllow() []string { return []string{AllowDestructive, AllowMultiple, AllowSensitive} }

// Result is the engine's result object (QWED protocol v1.0 §6.1 "result"; §6.3.2
// is_valid, expected, actual, message for FAILED).
type Result struct {
	IsValid  bool   `json:"is_valid"`
	Dialect  string `json:"dialect"`
	Message  string `json:"message"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	Class
	ChecksPassed []string `json:"checks_passed"`
	ChecksFailed []string `json:"checks_failed"`
	// ChecksWaived are the checks that failed but params.allow waived.
	ChecksWaived []string `json:"checks_waived,omitempty"`
	Limits       Limits   `json:"limits"`
}

// Limits are the policy limits a query was checked against.
type Limits struct {
	MaxJoins         int `json:"max_joins"`
	MaxSubqueryDepth int `json:"max_subquery_depth"`
}

// Proof is the derivation the engine gives with include_proof: the parser
// and the rule applied to each statement.
type Proof struct {
	Parser string   `json:"parser"`
	Steps  []string `json:"steps"`
}

// The checks of the QWED-Agent spec v1.1 §4.2 "checks_passed" the engine makes.
const (
	CheckNoDestructive = "no_destructive_operations"
	CheckNoSensitive   = "no_sensitive_columns"
	CheckSchemaValid   = "schema_valid"
	CheckNoInjection   = "no_injection_patterns"
	CheckSingle        = "single_statement"
	CheckComplexity    = "within_complexity_limits"
)

// Engine is the sql engine. It holds no state; it is safe for concurrent
// use.
type Engine struct{}

// New returns the sql engine.
func New() engines.Engine { return Engine{} }

// Capabilities is the engine's capabilities document (QWED protocol v1.0 §4.2).
func (Engine) Capabilities() engines.Capabilities {
	return engines.Capabilities{
		EngineID: EngineID,
		Name:     "SQL Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"parser":              "pg_query_go v6.2.5 (PostgreSQL 17 parser)",
			"parsers":             map[string]string{DialectPostgres: parserPostgres, DialectMySQL: parserMySQL, DialectSQLite: parserSQLite},
			"dialects":            Dialects(),
			"statement_classes":   []string{"read", "write", "unbounded_write", "ddl", "privilege", "session", "admin"},
			"risk_classification": true,
			"stacked_statements":  true,
			"tautologies":         true,
			"sensitive_columns":   true,
			"schema_validation":   true,
			"complexity_limits":   true,
			"dangerous_functions": true,
		},
		InputTypes:  []string{"sql"},
		OutputTypes: []string{"verification_result", "risk_classification", "findings", "proof"},
		Limits: map[string]int{
			"query_bytes":                MaxQueryBytes,
			"schema_ddl_bytes":           MaxSchemaDDLBytes,
			"schema_tables":              MaxSchemaTables,
			"nodes":                      MaxNodes,
			"nesting":                    MaxNesting,
			"max_joins_default":          DefaultMaxJoins,
			"max_joins":                  MaxJoinsLimit,
			"max_subquery_depth_default": DefaultMaxSubqueryDepth,
			"max_subquery_depth":         MaxSubqueryDepthLimit,
			"sensitive_names":            MaxSensitiveNames,
		},
		Params: json.RawMessage(paramsSchema),
	}
}

const paramsSchema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"schema_ddl":{"type":"string","maxLength":100000},` +
	`"dialect":{"type":"string","enum":["postgresql","postgres","pg","","mysql","sqlite","sqlite3"]},` +
	`"sensitive_columns":{"type":"array","items":{"type":"string"}},` +
	`"sensitive_tables":{"type":"array","items":{"type":"string"}},` +
	`"max_joins":{"type":"integer","minimum":0,"maximum":256},` +
	`"max_subquery_depth":{"type":"integer","minimum":0,"maximum":64},` +
	`"allow":{"type":"array","maxItems":3,"items":{"enum":["destructive_operations","sensitive_columns","multiple_statements"]}}}}`

// decodeParams reads raw strictly into options.
func decodeParams(raw json.RawMessage) (*options, *engines.Problem) {
	opt := defaultOptions()
	var p Params
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, problem(CodeInvalidRequest, "decoding sql params: "+err.Error(), map[string]any{"field": "params"})
		}
		if dec.More() {
			return nil, problem(CodeInvalidRequest, "decoding sql params: trailing data", map[string]any{"field": "params"})
		}
	}
	d, ok := normalizeDialect(p.Dialect)
	if !ok {
		return nil, problem(CodeUnsupported, "dialect "+strconv.Quote(p.Dialect)+" is not supported: the sql engine reads "+
			strings.Join(Dialects(), ", "), map[string]any{"dialect": p.Dialect, "supported": Dialects()})
	}
	opt.dialect = d
	if n := len(p.SensitiveColumns) + len(p.SensitiveTables); n > MaxSensitiveNames {
		return nil, problem(CodeInvalidRequest, "more than "+strconv.Itoa(MaxSensitiveNames)+" sensitive names",
			map[string]any{"limit": MaxSensitiveNames, "field": "sensitive_columns"})
	}
	opt.sensitiveColumns = newWordList(SensitiveColumns, p.SensitiveColumns)
	opt.sensitiveTables = newWordList(SensitiveTables, p.SensitiveTables)
	if p.MaxJoins != nil {
		if *p.MaxJoins < 0 || *p.MaxJoins > MaxJoinsLimit {
			return nil, problem(CodeInvalidRequest, "max_joins must be 0.."+strconv.Itoa(MaxJoinsLimit), map[string]any{"field": "max_joins"})
		}
		opt.maxJoins = *p.MaxJoins
	}
	if p.MaxSubqueryDepth != nil {
		if *p.MaxSubqueryDepth < 0 || *p.MaxSubqueryDepth > MaxSubqueryDepthLimit {
			return nil, problem(CodeInvalidRequest, "max_subquery_depth must be 0.."+strconv.Itoa(MaxSubqueryDepthLimit), map[string]any{"field": "max_subquery_depth"})
		}
		opt.maxSubqueryDepth = *p.MaxSubqueryDepth
	}
	if len(p.Allow) > len(waivable) {
		return nil, problem(CodeInvalidRequest, "params.allow names more than "+strconv.Itoa(len(waivable))+" checks", map[string]any{"field": "allow"})
	}
	for _, a := range p.Allow {
		check, ok := waivable[a]
		if !ok {
			return nil, problem(CodeInvalidRequest, "params.allow: "+strconv.Quote(a)+" is not a check that can be waived",
				map[string]any{"field": "allow", "supported": GateAllow()})
		}
		if opt.allow == nil {
			opt.allow = map[string]bool{}
		}
		opt.allow[check] = true
	}
	if p.SchemaDDL != "" {
		s, pr := parseSchemaIn(d, p.SchemaDDL)
		if pr != nil {
			if pr.Code == CodeSyntax {
				pr.Code = CodeInvalidRequest
			}
			return nil, pr
		}
		opt.schema = s
	}
	return opt, nil
}

// Verify decides req (QWED protocol v1.0 §5.2.5): ERROR for a syntax error
// (QWED-REQ-003), a bound (QWED-REQ-004) or bad params (QWED-REQ-001);
// UNSUPPORTED for another dialect; BLOCKED (QWED-SEC-002) on a high or critical
// finding, and on a failed check of no_destructive_operations,
// no_sensitive_columns or single_statement that params.allow does not waive
// (result.security_violation set); FAILED on a schema violation or a policy
// limit; VERIFIED only when no check failed. It never panics.
func (Engine) Verify(_ context.Context, req engines.Request) (out engines.Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = engines.Outcome{Status: engines.Error, Err: problem(CodeEngine, "verifying sql: internal error", nil)}
		}
	}()
	opt, p := decodeParams(req.Params)
	if p != nil {
		if p.Code == CodeUnsupported {
			return engines.Outcome{Status: engines.Unsupported, Err: p}
		}
		return engines.Outcome{Status: engines.Error, Err: p}
	}
	c, p := classify(req.Query, opt)
	if p != nil {
		return engines.Outcome{Status: engines.Error, Err: p}
	}
	res := Result{Dialect: opt.dialect, Class: c, ChecksPassed: []string{}, ChecksFailed: []string{},
		Limits: Limits{MaxJoins: opt.maxJoins, MaxSubqueryDepth: opt.maxSubqueryDepth}}
	var policy []string // the failed checks that block (not waived)
	check := func(name string, ok bool) {
		switch {
		case ok:
			res.ChecksPassed = append(res.ChecksPassed, name)
		case opt.allow[name]:
			res.ChecksWaived = append(res.ChecksWaived, name)
		default:
			res.ChecksFailed = append(res.ChecksFailed, name)
			if name == CheckNoDestructive || name == CheckNoSensitive || name == CheckSingle {
				policy = append(policy, name)
			}
		}
	}
	var limitMsgs []string
	if c.Complexity.Joins > opt.maxJoins {
		limitMsgs = append(limitMsgs, strconv.Itoa(c.Complexity.Joins)+" joins, over the limit of "+strconv.Itoa(opt.maxJoins))
	}
	if c.Complexity.SubqueryDepth > opt.maxSubqueryDepth {
		limitMsgs = append(limitMsgs, "subqueries nested "+strconv.Itoa(c.Complexity.SubqueryDepth)+" deep, over the limit of "+strconv.Itoa(opt.maxSubqueryDepth))
	}
	sensitive, injection := false, false
	for _, f := range c.Findings {
		switch f.Rule {
		case "sql.sensitive_column", "sql.select_star_sensitive":
			sensitive = true
		case "sql.tautology", "sql.stacked_statements":
			injection = injection || f.Severity == "critical" || f.Severity == "high"
		}
	}
	destroys := false
	for _, st := range c.Statements {
		destroys = destroys || destructive(st)
	}
	check(CheckNoDestructive, !destroys)
	check(CheckNoInjection, !injection)
	check(CheckNoSensitive, !sensitive)
	check(CheckSingle, c.Complexity.Statements == 1)
	if opt.schema != nil {
		check(CheckSchemaValid, len(c.SchemaErrors) == 0)
	}
	check(CheckComplexity, len(limitMsgs) == 0)

	out = engines.Outcome{Findings: c.Findings}
	switch {
	case c.Violation:
		res.Message = "blocked: " + firstBlocking(c.Findings)
		out.Status = engines.Blocked
		out.Err = problem(CodeMalicious, "Malicious payload detected: "+firstBlocking(c.Findings),
			map[string]any{"findings": blockingRules(c.Findings)})
	case len(policy) > 0:
		why := policyReasons(c, policy)
		res.Violation = true
		res.Message = "blocked by security policy: " + strings.Join(why, "; ")
		res.Expected = "a single statement that neither destroys data nor reads or writes sensitive columns"
		res.Actual = c.Statement + " (" + string(c.Risk) + " risk, " + strconv.Itoa(c.Complexity.Statements) + " statements)"
		out.Status = engines.Blocked
		out.Err = problem(CodeMalicious, "Blocked by security policy: "+strings.Join(why, "; "),
			map[string]any{"checks_failed": policy, "statement": c.Statement, "risk_level": string(c.Risk),
				"waive_with": "params.allow"})
	case len(c.SchemaErrors) > 0:
		e := c.SchemaErrors[0]
		res.Message = e.Message
		if n := len(c.SchemaErrors); n > 1 {
			res.Message += " (and " + strconv.Itoa(n-1) + " more schema errors)"
		}
		res.Expected = "tables and columns defined in schema_ddl"
		res.Actual = e.Kind + " " + e.Name + " at position " + strconv.Itoa(e.Position)
		out.Status = engines.Failed
	case len(limitMsgs) > 0:
		res.Message = "query too complex: " + strings.Join(limitMsgs, "; ")
		res.Expected = "at most " + strconv.Itoa(opt.maxJoins) + " joins and subqueries nested at most " + strconv.Itoa(opt.maxSubqueryDepth) + " deep"
		res.Actual = strconv.Itoa(c.Complexity.Joins) + " joins, subquery depth " + strconv.Itoa(c.Complexity.SubqueryDepth)
		out.Status = engines.Failed
	default:
		res.IsValid = true
		res.Message = c.Statement + ": " + string(c.Risk) + " risk (" + c.Reason + ")"
		out.Status = engines.Verified
	}
	out.Result = res
	if req.IncludeProof {
		pr := Proof{Parser: map[string]string{DialectPostgres: parserPostgres, DialectMySQL: parserMySQL, DialectSQLite: parserSQLite}[opt.dialect]}
		for i, st := range c.Statements {
			pr.Steps = append(pr.Steps, "statement "+strconv.Itoa(i+1)+" at "+strconv.Itoa(st.Position)+": "+
				st.Statement+" -> "+st.Class+", "+string(st.Risk)+": "+st.Reason)
		}
		for _, f := range c.Findings {
			pr.Steps = append(pr.Steps, "finding "+f.Rule+" ("+f.Severity+") at "+strconv.Itoa(f.Line)+":"+strconv.Itoa(f.Column)+": "+f.Message)
		}
		for _, e := range c.SchemaErrors {
			pr.Steps = append(pr.Steps, "schema "+e.Kind+" "+e.Name+" at "+strconv.Itoa(e.Position)+": "+e.Message)
		}
		out.Proof = pr
	}
	return out
}

// policyReasons explains each failed policy check of c.
func policyReasons(c Class, failed []string) []string {
	var out []string
	for _, name := range failed {
		switch name {
		case CheckNoDestructive:
			for _, st := range c.Statements {
				if destructive(st) {
					out = append(out, st.Statement+" is destructive ("+st.Reason+")")
					break
				}
			}
		case CheckNoSensitive:
			for _, f := range c.Findings {
				if f.Rule == "sql.sensitive_column" || f.Rule == "sql.select_star_sensitive" {
					out = append(out, f.Message)
					break
				}
			}
		case CheckSingle:
			out = append(out, strconv.Itoa(c.Complexity.Statements)+" statements where one is expected")
		}
	}
	return out
}

// destructive reports whether a statement destroys or rewrites data or
// schema, or changes privileges or the server: a critical statement that
// is not a read.
func destructive(st Statement) bool { return st.Risk == RiskCritical && st.Class != "read" }

func blockingRules(fs []engines.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Severity == "critical" || f.Severity == "high" {
			out = append(out, f.Rule)
		}
	}
	return out
}

// ProblemOf returns the §8 problem of an error from Classify or
// ParseSchema, and false for any other error.
func ProblemOf(err error) (engines.Problem, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem, true
	}
	return engines.Problem{}, false
}
