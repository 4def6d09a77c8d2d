package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/engines"
)

// Version is the engine version reported in its capabilities.
const Version = "1.0.0"

// Params are the stats engine's parameters (see doc.go).
type Params struct {
	// CSV is the table as CSV text with a header row.
	CSV *string `json:"csv,omitempty"`
	// Table is the table as rows of cells, the first the header.
	Table json.RawMessage `json:"table,omitempty"`
	// Variance is "sample" (n-1, the default) or "population" (n).
	Variance string `json:"variance,omitempty"`
	// Tolerance is a decimal (string or number) >= 0; absent, equality is
	// judged by rounding to the claim's decimals.
	Tolerance json.RawMessage `json:"tolerance,omitempty"`
	// ToleranceMode is "absolute" (the default when Tolerance is set) or
	// "relative" (to the claimed value).
	ToleranceMode string `json:"tolerance_mode,omitempty"`
	// Delimiter is the CSV field delimiter, one character (default ",").
	Delimiter string `json:"delimiter,omitempty"`
}

// GroupResult is one group of a group-by claim.
type GroupResult struct {
	Key           string `json:"key"`
	Value         string `json:"value,omitempty"`
	ValueExact    string `json:"value_exact,omitempty"`
	Claimed       string `json:"claimed,omitempty"`
	Holds         bool   `json:"holds"`
	Rows          int    `json:"rows"`
	Undecided     string `json:"undecided,omitempty"`
	MissingClaim  bool   `json:"missing_from_claim,omitempty"`
	MissingInData bool   `json:"missing_from_data,omitempty"`
}

// Result is the engine-specific result (QWED protocol v1.0 §6.1 "result"; for
// FAILED, expected is the computed value and actual the claimed one, as
// in §6.3.2).
type Result struct {
	IsValid   bool   `json:"is_valid"`
	Statistic string `json:"statistic,omitempty"`
	Operator  string `json:"operator,omitempty"`
	// Expected is the computed value as decimal text: exact when
	// ExpectedIsExact, otherwise rounded half away from zero at 20 places.
	Expected        string `json:"expected,omitempty"`
	ExpectedIsExact bool   `json:"expected_is_exact,omitempty"`
	// ExpectedExact is the exact value: a fraction, or ±sqrt(fraction).
	ExpectedExact string `json:"expected_exact,omitempty"`
	// Actual is the claimed value (or group key for argmax/argmin).
	Actual string `json:"actual,omitempty"`
	// Comparison says how equality was judged.
	Comparison string        `json:"comparison,omitempty"`
	Rows       int           `json:"rows"`
	Values     int           `json:"values"`
	Groups     []GroupResult `json:"groups,omitempty"`
	Message    string        `json:"message"`
}

// Proof is the derivation returned when include_proof is set.
type Proof struct {
	Method string `json:"method"`
	Exact  string `json:"exact,omitempty"`
	Square string `json:"square,omitempty"`
}

// Engine is the stats engine; the zero value is ready to use.
type Engine struct{}

// New returns the stats engine.
func New() engines.Engine { return Engine{} }

// Capabilities is the engine's capabilities document (QWED protocol v1.0 §4.2).
func (Engine) Capabilities() engines.Capabilities {
	return engines.Capabilities{
		EngineID: "stats",
		Name:     "Statistics Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"statistics":        []string{"count", "sum", "mean", "median", "min", "max", "percentile", "variance", "std", "correlation"},
			"group_by":          true,
			"filters":           true,
			"percentile_method": "R-7 linear interpolation",
			"variance_default":  "sample",
			"precision":         "exact rational",
		},
		InputTypes:  []string{"claim", "csv", "table"},
		OutputTypes: []string{"verification_result", "computed_value", "proof"},
		Limits: map[string]int{
			"max_query_bytes":  engines.MaxQueryBytes,
			"max_table_bytes":  MaxTableBytes,
			"max_rows":         MaxRows,
			"max_columns":      MaxColumns,
			"max_cell_bytes":   MaxCellBytes,
			"max_groups":       MaxGroups,
			"max_claim_tokens": MaxClaimTokens,
			"max_conditions":   MaxConditions,
			"max_number_chars": MaxNumberChars,
			"max_exponent":     MaxExponent,
		},
		Params: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"csv":{"type":"string"},"table":{"type":"array","items":{"type":"array"}},"variance":{"enum":["sample","population"]},"tolerance":{"type":["string","number"]},"tolerance_mode":{"enum":["absolute","relative"]},"delimiter":{"type":"string","minLength":1,"maxLength":1}}}`),
	}
}

func problemOut(code, msg string, details map[string]any) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: code, Message: msg, Details: details}}
}

func fromErr(err error) engines.Outcome {
	var re *requestError
	if errors.As(err, &re) {
		return problemOut(re.code, re.msg, re.details)
	}
	return problemOut("QWED-REQ-001", err.Error(), nil)
}

// settings are the decoded params other than the table.
type settings struct {
	population bool
	tol        Tolerance
}

func decodeParams(raw json.RawMessage) (*Table, settings, error) {
	var s settings
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, s, &requestError{code: "QWED-REQ-002", msg: "params.csv or params.table is required", details: map[string]any{"field": "params.csv"}}
	}
	if len(raw) > 2*MaxTableBytes {
		return nil, s, &requestError{code: "QWED-REQ-004", msg: "params are too long", details: map[string]any{"limit": MaxTableBytes}}
	}
	var p Params
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, s, &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("decoding params: %v", err), details: map[string]any{"field": "params"}}
	}
	if dec.More() {
		return nil, s, &requestError{code: "QWED-REQ-001", msg: "decoding params: trailing data after the object", details: map[string]any{"field": "params"}}
	}
	switch p.Variance {
	case "", "sample":
	case "population":
		s.population = true
	default:
		return nil, s, &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("params.variance %q is neither sample nor population", p.Variance), details: map[string]any{"field": "params.variance"}}
	}
	if len(p.Tolerance) > 0 && !bytes.Equal(p.Tolerance, []byte("null")) {
		text := string(p.Tolerance)
		if strings.HasPrefix(text, `"`) {
			if err := json.Unmarshal(p.Tolerance, &text); err != nil {
				return nil, s, &requestError{code: "QWED-REQ-001", msg: "params.tolerance is not a decimal", details: map[string]any{"field": "params.tolerance"}}
			}
		}
		t, _, ok := ParseDecimal(text)
		if !ok || t.Sign() < 0 {
			return nil, s, &requestError{code: "QWED-REQ-001", msg: "params.tolerance is not a decimal >= 0", details: map[string]any{"field": "params.tolerance"}}
		}
		s.tol = Tolerance{Mode: "absolute", Amount: t}
	}
	switch p.ToleranceMode {
	case "", "absolute":
	case "relative":
		if s.tol.Amount == nil {
			return nil, s, &requestError{code: "QWED-REQ-001", msg: "params.tolerance_mode needs params.tolerance", details: map[string]any{"field": "params.tolerance_mode"}}
		}
		s.tol.Mode = "relative"
	default:
		return nil, s, &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("params.tolerance_mode %q is neither absolute nor relative", p.ToleranceMode), details: map[string]any{"field": "params.tolerance_mode"}}
	}
	delim := ','
	if p.Delimiter != "" {
		r, size := utf8.DecodeRuneInString(p.Delimiter)
		if size != len(p.Delimiter) || r == '"' || r == '\n' || r == '\r' || r == utf8.RuneError {
			return nil, s, &requestError{code: "QWED-REQ-001", msg: "params.delimiter must be one character other than a quote or newline", details: map[string]any{"field": "params.delimiter"}}
		}
		delim = r
	}
	hasTable := len(p.Table) > 0 && !bytes.Equal(p.Table, []byte("null"))
	switch {
	case p.CSV != nil && hasTable:
		return nil, s, &requestError{code: "QWED-REQ-001", msg: "give params.csv or params.table, not both", details: map[string]any{"field": "params"}}
	case p.CSV != nil:
		t, err := ParseCSV(*p.CSV, delim)
		return t, s, err
	case hasTable:
		t, err := ParseJSONTable(p.Table)
		return t, s, err
	}
	return nil, s, &requestError{code: "QWED-REQ-002", msg: "params.csv or params.table is required", details: map[string]any{"field": "params.csv"}}
}

// Verify decides the claim in req.Query about the table in req.Params.
func (Engine) Verify(_ context.Context, req engines.Request) engines.Outcome {
	if len(req.Query) == 0 {
		return problemOut("QWED-REQ-002", "the query (the claim) is empty", map[string]any{"field": "query"})
	}
	if len(req.Query) > engines.MaxQueryBytes {
		return problemOut("QWED-REQ-004", "the query is too long", map[string]any{"length": len(req.Query), "limit": engines.MaxQueryBytes})
	}
	t, s, err := decodeParams(req.Params)
	if err != nil {
		return fromErr(err)
	}
	claim, serr := ParseClaim(req.Query)
	if serr != nil {
		details := map[string]any{"position": serr.pos, "expected": serr.expected, "found": serr.found}
		if serr.limit {
			return problemOut("QWED-REQ-004", "the claim is too long: "+serr.Error(), details)
		}
		msg := "the claim is outside the stats grammar: " + serr.Error()
		return engines.Outcome{Status: engines.Unsupported, Result: Result{Message: msg}, Err: &engines.Problem{Code: "QWED-REQ-003", Message: msg, Details: details}}
	}
	out := evaluate(t, s, claim)
	if !req.IncludeProof {
		out.Proof = nil
	}
	return out
}

// undecided is why a claim cannot be decided on this table.
type undecided struct{ reason string }

func undecidedf(format string, args ...any) *undecided {
	return &undecided{reason: fmt.Sprintf(format, args...)}
}

func unsupportedOut(res Result, u *undecided) engines.Outcome {
	res.IsValid = false
	res.Message = "the claim cannot be decided on this table: " + u.reason
	return engines.Outcome{Status: engines.Unsupported, Result: res, Err: &engines.Problem{Code: "QWED-REQ-005", Message: res.Message}}
}

func evaluate(t *Table, s settings, c Claim) engines.Outcome {
	res := Result{Statistic: c.Statistic(), Operator: c.Op}
	rows, u := filterRows(t, c.Where)
	if u != nil {
		return unsupportedOut(res, u)
	}
	res.Rows = len(rows)
	method := methodOf(c, s)
	if c.GroupBy != "" {
		return evaluateGroups(t, s, c, rows, res, method)
	}
	q, n, u := compute(t, s, c, rows)
	if u != nil {
		return unsupportedOut(res, u)
	}
	res.Values = n
	claimed, d, ok := ParseDecimal(c.Value)
	if !ok {
		return unsupportedOut(res, undecidedf("the claimed value %q is not a decimal number", c.Value))
	}
	res.Actual = c.Value
	res.Expected, res.ExpectedIsExact, res.ExpectedExact = q.String(), q.isExactDecimal(), q.exact()
	res.Comparison = "exact"
	if c.Op == "=" || c.Op == "!=" {
		res.Comparison = s.tol.describe(d)
	}
	proof := Proof{Method: method, Exact: q.exact()}
	if q.rat == nil {
		proof.Square = ratString(q.sq)
	}
	if s.tol.holds(q, c.Op, claimed, d) {
		res.IsValid = true
		res.Message = fmt.Sprintf("%s is %s: the claim %s %s holds", res.Statistic, res.Expected, c.Op, c.Value)
		return engines.Outcome{Status: engines.Verified, Result: res, Proof: proof}
	}
	res.Message = fmt.Sprintf("%s is %s, so the claim %s %s is false", res.Statistic, res.Expected, c.Op, c.Value)
	return engines.Outcome{Status: engines.Failed, Result: res, Proof: proof}
}

func methodOf(c Claim, s settings) string {
	switch c.Func {
	case "percentile":
		return "R-7 linear interpolation on the sorted values: h = (n-1)p, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h])"
	case "median":
		return "the middle value of the sorted values (mean of the two middle values for even n)"
	case "variance", "std":
		if s.population {
			return "population variance: sum((x - mean)^2) / n; std is its square root, compared through squares"
		}
		return "sample variance: sum((x - mean)^2) / (n - 1); std is its square root, compared through squares"
	case "correlation":
		return "Pearson r = Sxy / sqrt(Sxx Syy) over rows where both values are present; r^2 compared exactly with the sign of Sxy"
	case "count":
		if len(c.Columns) > 0 {
			return "the number of non-missing cells"
		}
		return "the number of rows"
	}
	return "exact rational arithmetic on the decimal values"
}

func evaluateGroups(t *Table, s settings, c Claim, rows []int, res Result, method string) engines.Outcome {
	gi, ok := t.column(c.GroupBy)
	if !ok {
		return unsupportedOut(res, unknownColumn(t, c.GroupBy))
	}
	byKey := map[string][]int{}
	for _, r := range rows {
		k := t.Rows[r][gi]
		if missing(k) {
			continue
		}
		if _, ok := byKey[k]; !ok && len(byKey) == MaxGroups {
			return problemOut("QWED-REQ-004", "the group-by makes too many groups", map[string]any{"limit": MaxGroups})
		}
		byKey[k] = append(byKey[k], r)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	type gv struct {
		key string
		q   quantity
		u   *undecided
		n   int
	}
	vals := make([]gv, len(keys))
	for i, k := range keys {
		q, _, u := compute(t, s, c, byKey[k])
		vals[i] = gv{key: k, q: q, u: u, n: len(byKey[k])}
	}
	if c.Arg != "" {
		res.Actual = c.Key
		for _, v := range vals {
			g := GroupResult{Key: v.key, Rows: v.n}
			if v.u != nil {
				g.Undecided = v.u.reason
				res.Groups = append(res.Groups, g)
				return unsupportedOut(res, undecidedf("group %q: %s", v.key, v.u.reason))
			}
			g.Value, g.ValueExact = v.q.String(), v.q.exact()
			res.Groups = append(res.Groups, g)
		}
		if len(vals) == 0 {
			return unsupportedOut(res, undecidedf("there are no groups"))
		}
		best := []string{vals[0].key}
		bq := vals[0].q
		for _, v := range vals[1:] {
			k := cmpQ(v.q, bq)
			if c.Arg == "argmin" {
				k = -k
			}
			switch {
			case k > 0:
				best, bq = []string{v.key}, v.q
			case k == 0:
				best = append(best, v.key)
			}
		}
		res.Expected = strings.Join(best, ", ")
		for i := range res.Groups {
			res.Groups[i].Holds = slices.Contains(best, res.Groups[i].Key)
		}
		isBest := len(best) == 1 && best[0] == c.Key
		if len(best) > 1 && slices.Contains(best, c.Key) {
			return unsupportedOut(res, undecidedf("groups %s tie for %s", strings.Join(best, ", "), c.Arg))
		}
		holds := isBest == (c.Op == "=")
		if holds {
			res.IsValid = true
			res.Message = fmt.Sprintf("%s is %s: the claim holds", res.Statistic, res.Expected)
			return engines.Outcome{Status: engines.Verified, Result: res, Proof: Proof{Method: method}}
		}
		res.Message = fmt.Sprintf("%s is %s, so the claim %s %s is false", res.Statistic, res.Expected, c.Op, c.Key)
		return engines.Outcome{Status: engines.Failed, Result: res, Proof: Proof{Method: method}}
	}
	claimed := map[string]string{}
	for _, g := range c.Groups {
		claimed[g.Key] = g.Value
	}
	failed := 0
	var firstU *undecided
	var actual, expected []string
	for _, v := range vals {
		g := GroupResult{Key: v.key, Rows: v.n}
		cv, inClaim := claimed[v.key]
		delete(claimed, v.key)
		if v.u != nil {
			g.Undecided = v.u.reason
			if firstU == nil {
				firstU = undecidedf("group %q: %s", v.key, v.u.reason)
			}
		} else {
			g.Value, g.ValueExact = v.q.String(), v.q.exact()
			expected = append(expected, v.key+": "+g.Value)
		}
		if !inClaim {
			g.MissingClaim = true
			failed++
			res.Groups = append(res.Groups, g)
			continue
		}
		g.Claimed = cv
		actual = append(actual, v.key+": "+cv)
		if v.u == nil {
			r, d, ok := ParseDecimal(cv)
			if !ok {
				return unsupportedOut(res, undecidedf("the claimed value %q is not a decimal number", cv))
			}
			g.Holds = s.tol.holds(v.q, c.Op, r, d)
			if !g.Holds {
				failed++
			}
		}
		res.Groups = append(res.Groups, g)
	}
	for _, g := range c.Groups { // claimed groups absent from the data, in claim order
		if _, ok := claimed[g.Key]; ok {
			res.Groups = append(res.Groups, GroupResult{Key: g.Key, Claimed: g.Value, MissingInData: true})
			actual = append(actual, g.Key+": "+g.Value)
			failed++
		}
	}
	res.Expected = "{" + strings.Join(expected, ", ") + "}"
	res.Actual = "{" + strings.Join(actual, ", ") + "}"
	res.Comparison = "exact"
	if c.Op == "=" || c.Op == "!=" {
		res.Comparison = s.tol.describe(-1)
		if s.tol.Mode == "" {
			res.Comparison = "each value rounded half away from zero to its claimed decimal places equals the claim"
		}
	}
	switch {
	case failed > 0:
		res.Message = fmt.Sprintf("%s is %s, so the claim is false for %d group(s)", res.Statistic, res.Expected, failed)
		return engines.Outcome{Status: engines.Failed, Result: res, Proof: Proof{Method: method}}
	case firstU != nil:
		return unsupportedOut(res, firstU)
	}
	res.IsValid = true
	res.Message = fmt.Sprintf("%s is %s: the claim holds for every group", res.Statistic, res.Expected)
	return engines.Outcome{Status: engines.Verified, Result: res, Proof: Proof{Method: method}}
}

func unknownColumn(t *Table, name string) *undecided {
	return undecidedf("no column %q (columns: %s)", name, strings.Join(t.Header, ", "))
}

// filterRows returns the indexes of the rows every condition matches. A
// missing cell matches no condition; = and != compare as numbers when both
// sides are numbers and as text otherwise; < <= > >= need numbers.
func filterRows(t *Table, conds []Condition) ([]int, *undecided) {
	type cc struct {
		col int
		Condition
		num *big.Rat
	}
	cs := make([]cc, len(conds))
	for i, c := range conds {
		ci, ok := t.column(c.Column)
		if !ok {
			return nil, unknownColumn(t, c.Column)
		}
		num, _, _ := ParseDecimal(c.Value)
		if num == nil && c.Op != "=" && c.Op != "!=" {
			return nil, undecidedf("condition %s %s %q compares order with a value that is not a number", c.Column, c.Op, c.Value)
		}
		cs[i] = cc{col: ci, Condition: c, num: num}
	}
	rows := make([]int, 0, len(t.Rows))
rowLoop:
	for r, row := range t.Rows {
		for _, c := range cs {
			cell := row[c.col]
			if missing(cell) {
				continue rowLoop
			}
			var k int
			cellNum, _, isNum := ParseDecimal(cell)
			switch {
			case c.num != nil && isNum:
				k = cellNum.Cmp(c.num)
			case c.Op == "=" || c.Op == "!=":
				k = strings.Compare(cell, c.Value)
				if k != 0 {
					k = 1
				}
			default:
				return nil, undecidedf("row %d: column %q value %q is not a number", r+1, t.Header[c.col], cell)
			}
			if !opHolds(c.Op, k) {
				continue rowLoop
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func opHolds(op string, k int) bool {
	switch op {
	case "=":
		return k == 0
	case "!=":
		return k != 0
	case "<":
		return k < 0
	case "<=":
		return k <= 0
	case ">":
		return k > 0
	}
	return k >= 0
}
