package code

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// Version is the engine's version (Capabilities and the result).
const Version = "1.0.0"

// The languages the engine analyses (canonical names).
const (
	langPython     = "python"
	langJavaScript = "javascript"
	langBash       = "bash"
)

// The check types of params.check_types.
const (
	CheckSecurity = "security"
	CheckQuality  = "quality"
)

// languageAliases maps every accepted params.language spelling (lower
// case) to its canonical name.
var languageAliases = map[string]string{
	"python": langPython, "python3": langPython, "py": langPython,
	"javascript": langJavaScript, "js": langJavaScript, "node": langJavaScript, "nodejs": langJavaScript,
	"bash": langBash, "shell": langBash, "sh": langBash,
}

// Languages returns the canonical language names the engine analyses.
func Languages() []string { return []string{langBash, langJavaScript, langPython} }

// Params are the engine's parameters (QWED protocol v1.0 §5.2.3).
type Params struct {
	// Language is python (default), javascript (js, node) or bash (shell,
	// sh), case-insensitive.
	Language string `json:"language"`
	// CheckTypes are "security" (always applied) and "quality"; default
	// ["security"].
	CheckTypes []string `json:"check_types"`
}

// Engine is the code engine. It is stateless and safe for concurrent use.
type Engine struct{}

// New returns the code engine.
func New() engines.Engine { return Engine{} }

// paramsSchema is the JSON Schema of Params.
const paramsSchema = `{"type":"object","properties":{` +
	`"language":{"type":"string","enum":["python","python3","py","javascript","js","node","nodejs","bash","shell","sh"],"default":"python"},` +
	`"check_types":{"type":"array","items":{"type":"string","enum":["security","quality"]},"default":["security"]}}}`

// Capabilities is the engine's §4.2 document.
func (Engine) Capabilities() engines.Capabilities {
	ids := make([]string, 0, len(rules))
	for _, r := range Rules() {
		ids = append(ids, r.ID)
	}
	return engines.Capabilities{
		EngineID: "code",
		Name:     "Code Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"technology":        "tree-sitter syntax trees",
			"languages":         Languages(),
			"check_types":       []string{CheckQuality, CheckSecurity},
			"security":          true,
			"quality":           true,
			"alias_resolution":  true,
			"constant_folding":  true,
			"payload_decoding":  []string{"base16", "base32", "base64", "hex", "rot13"},
			"data_flow":         "flow-insensitive through assignments",
			"severities":        []string{SevCritical, SevHigh, SevMedium, SevLow, SevInfo},
			"blocking_severity": []string{SevCritical, SevHigh},
			"rules":             ids,
		},
		InputTypes:  []string{"code"},
		OutputTypes: []string{"verification_result", "findings", "proof"},
		Limits: map[string]int{
			"max_code_bytes": MaxCodeBytes, "max_nodes": MaxNodes, "max_depth": MaxDepth,
			"max_parse_checks": MaxParseChecks, "max_steps": MaxSteps, "max_findings": MaxFindings,
			"max_payload_depth": MaxPayloadDepth,
		},
		Params: json.RawMessage(paramsSchema),
	}
}

// Result is the §6.1 result object of the code engine.
type Result struct {
	// IsSafe is true when no finding is critical or high.
	IsSafe bool `json:"is_safe"`
	// Language is the canonical language analysed.
	Language string `json:"language"`
	// RiskLevel is the highest finding severity as a risk: critical, high,
	// medium, or low (low, info or nothing).
	RiskLevel string `json:"risk_level"`
	// Message summarises the outcome.
	Message string `json:"message"`
	// CheckTypes are the checks applied, sorted.
	CheckTypes []string `json:"check_types"`
	// SeverityCounts counts the findings by severity.
	SeverityCounts SeverityCounts `json:"severity_counts"`
	// Findings are sorted by line, column and rule; never null.
	Findings []engines.Finding `json:"findings"`
	// FindingsOmitted counts findings beyond MaxFindings.
	FindingsOmitted int `json:"findings_omitted,omitempty"`
}

// SeverityCounts counts findings by severity.
type SeverityCounts struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
	Info     int `json:"info"`
}

// Proof is the derivation returned with include_proof: what was parsed and
// how names were resolved.
type Proof struct {
	Parser   string   `json:"parser"`
	Nodes    int      `json:"nodes"`
	Depth    int      `json:"depth"`
	Steps    int      `json:"analysis_steps"`
	Aliases  []Alias  `json:"aliases"`
	RuleHits []string `json:"rules_matched"`
}

// Alias is one entry of the import/alias table: a bound name and the
// canonical module or callable it stands for.
type Alias struct {
	Name      string `json:"name"`
	Canonical string `json:"canonical"`
}

// Analysis is the outcome of analysing one source text.
type Analysis struct {
	Language string
	Findings []engines.Finding
	Omitted  int
	Nodes    int
	Depth    int
	Steps    int
	Aliases  []Alias
}

// Risk is the highest severity of the findings as a risk level (critical,
// high, medium or low).
func (an Analysis) Risk() string {
	best := -1
	for _, f := range an.Findings {
		best = max(best, severityRank(f.Severity))
	}
	switch best {
	case 4:
		return SevCritical
	case 3:
		return SevHigh
	case 2:
		return SevMedium
	}
	return SevLow
}

// Blocking returns the critical and high findings.
func (an Analysis) Blocking() []engines.Finding {
	var out []engines.Finding
	for _, f := range an.Findings {
		if blocking(f.Severity) {
			out = append(out, f)
		}
	}
	return out
}

// NormalizeLanguage maps a params.language spelling to its canonical name
// ("" means python); false for a language the engine does not analyse.
func NormalizeLanguage(language string) (string, bool) {
	l := strings.ToLower(strings.TrimSpace(language))
	if l == "" {
		return langPython, true
	}
	c, ok := languageAliases[l]
	return c, ok
}

// Analyse parses and analyses source in the language (any accepted
// spelling; "" is python). A problem is QWED-REQ-005 for an unknown
// language, QWED-REQ-003 (details: position, line, column, expected,
// found) for source that does not parse, QWED-REQ-004 (details: limit,
// max, found) for a crossed limit. It is pure and deterministic.
func Analyse(language, source string, checkTypes []string) (Analysis, *engines.Problem) {
	lang, ok := NormalizeLanguage(language)
	if !ok {
		return Analysis{}, &engines.Problem{
			Code:    "QWED-REQ-005",
			Message: "Unsupported verification type: the code engine does not analyse language '" + truncate(language, 40) + "'",
			Details: map[string]any{"language": truncate(language, 40), "supported": Languages()},
		}
	}
	quality := false
	for _, c := range checkTypes {
		if c == CheckQuality {
			quality = true
		}
	}
	g := grammarFor(lang)
	p, err := parse(g, source)
	if err != nil {
		return Analysis{Language: lang}, problemOf(err, source, lang)
	}
	rep := newReporter(source)
	budget := 0
	an := Analysis{Language: lang, Nodes: p.nodes, Depth: p.depth}
	var aliases map[string]string
	switch lang {
	case langPython:
		aliases, err = analysePython(p, rep, quality, 0, &budget)
	case langJavaScript:
		aliases, err = analyseJS(p, rep, quality, &budget)
	case langBash:
		err = analyseShell(p, rep, quality, &budget)
	}
	if err != nil {
		return an, problemOf(err, source, lang)
	}
	an.Findings, an.Omitted, an.Steps = rep.sorted(), rep.omitted, budget
	for _, k := range sortedKeys(aliases) {
		an.Aliases = append(an.Aliases, Alias{Name: k, Canonical: aliases[k]})
	}
	return an, nil
}

// problemOf turns a parse or limit error into a §8 problem.
func problemOf(err error, src, lang string) *engines.Problem {
	var se *syntaxError
	var le *limitError
	switch {
	case errors.As(err, &se):
		return &engines.Problem{
			Code:    "QWED-REQ-003",
			Message: "Invalid query syntax: " + languageTitle(lang) + " " + se.Error(),
			Details: map[string]any{
				"position": charOffset(src, se.offset), "line": se.line, "column": se.column,
				"expected": se.expected, "found": se.found, "language": lang,
			},
		}
	case errors.As(err, &le):
		msg := "Query too long: "
		if le.limit != "bytes" {
			msg = "Query too complex: "
		}
		return &engines.Problem{
			Code: "QWED-REQ-004", Message: msg + le.Error(),
			Details: map[string]any{"limit": le.limit, "max": le.max, "found": le.found},
		}
	}
	return &engines.Problem{Code: "QWED-ENG-002", Message: "Verification failed unexpectedly: " + err.Error()}
}

// decodeParams decodes req.Params strictly (a field of the wrong type is
// QWED-REQ-001; unknown fields are ignored, §9.3).
func decodeParams(raw json.RawMessage) (Params, []string, *engines.Problem) {
	var p Params
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &p); err != nil {
			field := "params"
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				field = "params." + te.Field
			}
			return p, nil, &engines.Problem{
				Code: "QWED-REQ-001", Message: "Invalid request format: " + field + " has the wrong type",
				Details: map[string]any{"field": field},
			}
		}
	}
	checks := []string{CheckSecurity}
	for _, c := range p.CheckTypes {
		switch c {
		case CheckSecurity:
		case CheckQuality:
			if !containsStr(checks, CheckQuality) {
				checks = append(checks, CheckQuality)
			}
		default:
			return p, nil, &engines.Problem{
				Code: "QWED-REQ-001", Message: "Invalid request format: params.check_types has an unknown check '" + truncate(c, 40) + "'",
				Details: map[string]any{"field": "params.check_types", "found": truncate(c, 40), "expected": []string{CheckQuality, CheckSecurity}},
			}
		}
	}
	sort.Strings(checks)
	return p, checks, nil
}

// Verify analyses req.Query (QWED protocol v1.0 §5.2.3): BLOCKED with QWED-SEC-002
// when a finding is critical or high, VERIFIED (with the findings)
// otherwise; ERROR with QWED-REQ-003/004/001 for code that does not parse,
// crosses a limit or bad params; UNSUPPORTED with QWED-REQ-005 for an
// unknown language.
func (Engine) Verify(_ context.Context, req engines.Request) (out engines.Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = engines.Outcome{Status: engines.Error, Err: &engines.Problem{
				Code: "QWED-ENG-002", Message: "Verification failed unexpectedly"}}
		}
	}()
	params, checks, prob := decodeParams(req.Params)
	if prob != nil {
		return engines.Outcome{Status: engines.Error, Err: prob}
	}
	if req.Query == "" {
		return engines.Outcome{Status: engines.Error, Err: &engines.Problem{
			Code: "QWED-REQ-002", Message: "Missing required field: query", Details: map[string]any{"field": "query"}}}
	}
	an, prob := Analyse(params.Language, req.Query, checks)
	if prob != nil {
		st := engines.Error
		if prob.Code == "QWED-REQ-005" {
			st = engines.Unsupported
		}
		return engines.Outcome{Status: st, Err: prob}
	}
	res := resultOf(an, checks)
	out = engines.Outcome{Status: engines.Verified, Result: res, Findings: an.Findings}
	if req.IncludeProof {
		out.Proof = proofOf(an)
	}
	if bl := an.Blocking(); len(bl) > 0 {
		out.Status = engines.Blocked
		out.Err = &engines.Problem{
			Code:    "QWED-SEC-002",
			Message: "Malicious payload detected: " + bl[0].Message,
			Details: map[string]any{"findings": bl, "language": an.Language, "risk_level": an.Risk()},
		}
	}
	return out
}

func resultOf(an Analysis, checks []string) Result {
	r := Result{
		Language: an.Language, RiskLevel: an.Risk(), CheckTypes: checks,
		Findings: an.Findings, FindingsOmitted: an.Omitted,
	}
	if r.Findings == nil {
		r.Findings = []engines.Finding{}
	}
	for _, f := range an.Findings {
		switch f.Severity {
		case SevCritical:
			r.SeverityCounts.Critical++
		case SevHigh:
			r.SeverityCounts.High++
		case SevMedium:
			r.SeverityCounts.Medium++
		case SevLow:
			r.SeverityCounts.Low++
		default:
			r.SeverityCounts.Info++
		}
	}
	bl := len(an.Blocking())
	r.IsSafe = bl == 0
	switch {
	case bl > 0:
		r.Message = "Blocked: " + itoa(bl) + " critical or high finding(s)"
	case len(an.Findings) > 0:
		r.Message = "No blocking finding; " + itoa(len(an.Findings)) + " finding(s) of medium, low or info severity"
	default:
		r.Message = "No finding"
	}
	return r
}

func proofOf(an Analysis) Proof {
	p := Proof{
		Parser: "tree-sitter " + an.Language, Nodes: an.Nodes, Depth: an.Depth, Steps: an.Steps,
		Aliases: an.Aliases, RuleHits: []string{},
	}
	if p.Aliases == nil {
		p.Aliases = []Alias{}
	}
	for _, f := range an.Findings {
		if !containsStr(p.RuleHits, f.Rule) {
			p.RuleHits = append(p.RuleHits, f.Rule)
		}
	}
	sort.Strings(p.RuleHits)
	return p
}
