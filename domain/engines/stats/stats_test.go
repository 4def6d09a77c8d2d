package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

const sales = `region,price,qty,latency,a,b,flat
EU,10,5,100,1,2,7
US,12.5,7,120,2,4,7
EU,15,3,80,3,6,7
AS,,4,200,4,8,7
US,9.5,1,95,5,10.5,7
`

func csvParams(csv string, extra map[string]any) json.RawMessage {
	m := map[string]any{"csv": csv}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

func run(q string, p json.RawMessage) engines.Outcome {
	return New().Verify(context.Background(), engines.Request{Query: q, Type: "stats", Params: p})
}

func col(vals ...string) string { return "x\n" + strings.Join(vals, "\n") + "\n" }

// TestSeed002_4_1_StatsClaims pins the stats engine on the claim forms of
// issue 4 and hard cases (rounding boundaries, irrational roots, exact
// decimals, ties, missing values).
func TestSeed002_4_1_StatsClaims(t *testing.T) {
	sqrt2 := col("0", "2") // sample variance 2, std sqrt(2)
	cases := []struct {
		name     string
		csv      string
		query    string
		extra    map[string]any
		status   engines.Status
		expected string // Result.Expected (checked when set)
	}{
		{"mean", sales, "mean(price) = 11.75", nil, engines.Verified, "11.75"},
		{"mean wrong gives value", sales, "mean(price) = 12.5", nil, engines.Failed, "11.75"},
		{"mean rounds to claim decimals", sales, "mean(price) = 11.8", nil, engines.Verified, ""},
		{"median of", sales, "median of price is 11.25", nil, engines.Verified, "11.25"},
		{"sum where", sales, "sum(qty) where region = 'EU' = 8", nil, engines.Verified, "8"},
		{"sum where wrong", sales, "sum(qty) where region = 'EU' = 40", nil, engines.Failed, "8"},
		{"sum where two conditions", sales, "sum(qty) where region = US and price > 10 = 7", nil, engines.Verified, ""},
		{"count rows", sales, "count = 5", nil, engines.Verified, "5"},
		{"count column skips missing", sales, "count(price) = 4", nil, engines.Verified, "4"},
		{"count where numeric", sales, "count where price >= 10 is 3", nil, engines.Verified, ""},
		{"p90 R-7", col("1", "2", "3", "4", "5", "6", "7", "8", "9", "10"), "p90(x) = 9.1", nil, engines.Verified, "9.1"},
		{"p90 latency", sales, "p90(latency) = 168", nil, engines.Verified, "168"},
		{"percentile 0 is min", sales, "percentile(latency, 0) = 80", nil, engines.Verified, ""},
		{"quantile 0.25", col("1", "2", "3", "4", "5"), "quantile(x, 0.25) = 2", nil, engines.Verified, "2"},
		{"q3", col("1", "2", "3", "4"), "q3(x) = 3.25", nil, engines.Verified, "3.25"},
		{"min max", sales, "min(price) = 9.5", nil, engines.Verified, ""},
		{"max is at least", sales, "the maximum of latency is at least 200", nil, engines.Verified, ""},
		{"non-terminating mean", col("1", "1", "2"), "mean(x) = 1.33", nil, engines.Verified, "1.33333333333333333333"},
		{"non-terminating mean too precise", col("1", "1", "2"), "mean(x) = 1.334", nil, engines.Failed, ""},
		{"half away from zero up", col("12.45"), "mean(x) = 12.5", nil, engines.Verified, ""},
		{"half away from zero not down", col("12.55"), "mean(x) = 12.5", nil, engines.Failed, "12.55"},
		{"negative half away", col("-12.45"), "mean(x) = -12.5", nil, engines.Verified, ""},
		{"negative upper edge excluded", col("-12.55"), "mean(x) = -12.5", nil, engines.Failed, ""},
		{"trailing zero claims two decimals", col("12.506"), "mean(x) = 12.50", nil, engines.Failed, ""},
		{"exact decimals 0.1+0.2", col("0.1", "0.2"), "sum(x) = 0.3", map[string]any{"tolerance": "0"}, engines.Verified, "0.3"},
		{"exponent cells", col("1e3", "2.5E-1"), "sum(x) = 1000.25", nil, engines.Verified, ""},
		{"sample std default", col("2", "4", "4", "4", "5", "5", "7", "9"), "std(x) = 2.14", nil, engines.Verified, "2.13808993529939507748"},
		{"population std", col("2", "4", "4", "4", "5", "5", "7", "9"), "std(x) = 2", map[string]any{"variance": "population"}, engines.Verified, "2"},
		{"sample variance", col("2", "4", "4", "4", "5", "5", "7", "9"), "variance(x) = 4.571", nil, engines.Verified, ""},
		{"sqrt2 rounds", sqrt2, "std(x) = 1.4142", nil, engines.Verified, "1.4142135623730950488"},
		{"sqrt2 wrong last digit", sqrt2, "std(x) = 1.4143", nil, engines.Failed, ""},
		{"sqrt2 order", sqrt2, "std(x) < 1.41422", nil, engines.Verified, ""},
		{"sqrt2 order false", sqrt2, "std(x) < 1.41421", nil, engines.Failed, ""},
		{"std of one value", col("3"), "std(x) = 0", nil, engines.Unsupported, ""},
		{"correlation perfect", sales, "correlation(a, b) > 0.9", nil, engines.Verified, ""},
		{"correlation negative", "x,y\n1,3\n2,2\n3,1\n", "corr(x, y) > 0", nil, engines.Failed, ""},
		{"correlation constant", sales, "correlation(a, flat) > 0.5", nil, engines.Unsupported, ""},
		{"absolute tolerance holds", sales, "mean(price) = 11.7", map[string]any{"tolerance": 0.05}, engines.Verified, ""},
		{"absolute tolerance fails", sales, "mean(price) = 11.7", map[string]any{"tolerance": "0.04"}, engines.Failed, ""},
		{"relative tolerance", sales, "mean(price) = 12", map[string]any{"tolerance": "0.03", "tolerance_mode": "relative"}, engines.Verified, ""},
		{"is not", sales, "sum(qty) is not 21", nil, engines.Verified, ""},
		{"is less than", sales, "mean of latency is less than 100", nil, engines.Failed, "119"},
		{"group map", sales, "group by region: sum(qty) = {EU: 8, US: 8, AS: 4}", nil, engines.Verified, "{AS: 4, EU: 8, US: 8}"},
		{"group map wrong value", sales, "group by region: sum(qty) = {EU: 8, US: 7, AS: 4}", nil, engines.Failed, ""},
		{"group map missing group", sales, "group by region: sum(qty) = EU: 8, US: 8", nil, engines.Failed, ""},
		{"group map extra group", sales, "group by region: sum(qty) = EU: 8, US: 8, AS: 4, JP: 0", nil, engines.Failed, ""},
		{"group argmax", sales, "group by region: argmax sum(price) = EU", nil, engines.Verified, "EU"},
		{"group argmin wrong", sales, "group by region: lowest sum(qty) is EU", nil, engines.Failed, "AS"},
		{"group argmax tie", sales, "group by region: argmax sum(qty) = EU", nil, engines.Unsupported, ""},
		{"group with undefined std", sales, "group by region: std(qty) = {EU: 1.41, US: 4.24, AS: 0}", nil, engines.Unsupported, ""},
		{"unknown column", sales, "mean(cost) = 3", nil, engines.Unsupported, ""},
		{"non-numeric cell", sales, "mean(region) = 3", nil, engines.Unsupported, ""},
		{"unknown function", sales, "mode(price) = 10", nil, engines.Unsupported, ""},
		{"trailing words", sales, "mean(price) = 11.75 probably", nil, engines.Unsupported, ""},
		{"case-insensitive column", sales, "MEAN(Price) = 11.75", nil, engines.Verified, ""},
		{"empty selection sum is 0", sales, "sum(qty) where region = 'JP' = 0", nil, engines.Verified, "0"},
		{"empty selection mean undefined", sales, "mean(qty) where region = 'JP' = 0", nil, engines.Unsupported, ""},
		{"backtick column", "unit price,n\n2,1\n4,1\n", "mean(`unit price`) = 3", nil, engines.Verified, ""},
		{"standard deviation words", sales, "the standard deviation of qty is at most 3", nil, engines.Verified, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := run(tc.query, csvParams(tc.csv, tc.extra))
			if out.Status != tc.status {
				b, _ := json.Marshal(out)
				t.Fatalf("status %s, want %s: %s", out.Status, tc.status, b)
			}
			res := out.Result.(Result)
			if res.IsValid != (tc.status == engines.Verified) {
				t.Fatalf("is_valid %v with %s", res.IsValid, out.Status)
			}
			if tc.expected != "" && res.Expected != tc.expected {
				t.Fatalf("expected %q, want %q", res.Expected, tc.expected)
			}
			if tc.status == engines.Unsupported && (out.Err == nil || res.Message == "") {
				t.Fatalf("unsupported without a reason: %+v", out)
			}
		})
	}
}

// TestSeed002_6_3_2_StatsFailedCarriesValue: FAILED gives the computed
// value exactly (expected) next to the claim (actual).
func TestSeed002_6_3_2_StatsFailedCarriesValue(t *testing.T) {
	out := run("mean(x) = 2", csvParams(col("1", "1", "2"), nil))
	res := out.Result.(Result)
	if out.Status != engines.Failed || res.Expected != "1.33333333333333333333" || res.ExpectedExact != "4/3" || res.ExpectedIsExact || res.Actual != "2" {
		t.Fatalf("%+v", res)
	}
	out = run("std(x) = 2", csvParams(col("0", "2"), nil))
	res = out.Result.(Result)
	if out.Status != engines.Failed || res.ExpectedExact != "sqrt(2)" {
		t.Fatalf("%+v", res)
	}
	out = run("corr(x, y) = 0", csvParams("x,y\n1,2\n2,1\n3,3\n", nil))
	res = out.Result.(Result)
	if out.Status != engines.Failed || res.Expected != "0.5" || res.ExpectedExact != "1/2" {
		t.Fatalf("%+v", res)
	}
}

// TestStatsJSONTable: params.table with numbers, strings, booleans and
// null cells gives the same answers as the CSV.
func TestStatsJSONTable(t *testing.T) {
	p := json.RawMessage(`{"table":[["region","price"],["EU",10],["US","12.5"],["EU",15],["AS",null],["US",9.5]]}`)
	for q, want := range map[string]engines.Status{
		"mean(price) = 11.75":               engines.Verified,
		"count(price) = 4":                  engines.Verified,
		"sum(price) where region = EU = 25": engines.Verified,
		"max(price) = 12.5":                 engines.Failed,
	} {
		if out := run(q, p); out.Status != want {
			t.Errorf("%q: %s, want %s (%+v)", q, out.Status, want, out.Err)
		}
	}
}

// TestSeed002_8_3_StatsRequestErrors pins the §8 codes of bad params and
// the details of a claim outside the grammar.
func TestSeed002_8_3_StatsRequestErrors(t *testing.T) {
	cases := []struct {
		name string
		q    string
		p    string
		code string
	}{
		{"no params", "count = 1", ``, "QWED-REQ-002"},
		{"neither", "count = 1", `{}`, "QWED-REQ-002"},
		{"both", "count = 1", `{"csv":"a\n1\n","table":[["a"],[1]]}`, "QWED-REQ-001"},
		{"unknown field", "count = 1", `{"csv":"a\n1\n","rows":3}`, "QWED-REQ-001"},
		{"csv wrong type", "count = 1", `{"csv":3}`, "QWED-REQ-001"},
		{"ragged csv", "count = 1", `{"csv":"a,b\n1\n"}`, "QWED-REQ-001"},
		{"bad quote", "count = 1", `{"csv":"a\n\"1\n"}`, "QWED-REQ-001"},
		{"duplicate header", "count = 1", `{"csv":"a,a\n1,2\n"}`, "QWED-REQ-001"},
		{"empty csv", "count = 1", `{"csv":""}`, "QWED-REQ-001"},
		{"table object cell", "count = 1", `{"table":[["a"],[{"x":1}]]}`, "QWED-REQ-001"},
		{"bad variance", "count = 1", `{"csv":"a\n1\n","variance":"biased"}`, "QWED-REQ-001"},
		{"negative tolerance", "count = 1", `{"csv":"a\n1\n","tolerance":"-1"}`, "QWED-REQ-001"},
		{"relative without tolerance", "count = 1", `{"csv":"a\n1\n","tolerance_mode":"relative"}`, "QWED-REQ-001"},
		{"bad delimiter", "count = 1", `{"csv":"a\n1\n","delimiter":"ab"}`, "QWED-REQ-001"},
		{"empty query", "", `{"csv":"a\n1\n"}`, "QWED-REQ-002"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := run(tc.q, json.RawMessage(tc.p))
			if out.Status != engines.Error || out.Err == nil || out.Err.Code != tc.code {
				t.Fatalf("got %s %+v, want ERROR %s", out.Status, out.Err, tc.code)
			}
		})
	}
	out := run("mean(price) = = 3", csvParams(sales, nil))
	if out.Status != engines.Unsupported || out.Err.Code != "QWED-REQ-003" {
		t.Fatalf("%+v", out)
	}
	d := out.Err.Details
	if d["position"] != 14 || d["found"] != `"="` || d["expected"] != "a number" {
		t.Fatalf("details %v", d)
	}
	// A semicolon delimiter works.
	if out := run("sum(a) = 3", csvParams("a;b\n1;2\n2;3\n", map[string]any{"delimiter": ";"})); out.Status != engines.Verified {
		t.Fatalf("delimiter: %+v", out)
	}
}

// TestStatsLimits pins every limit on both sides.
func TestStatsLimits(t *testing.T) {
	expectLimit := func(t *testing.T, out engines.Outcome) {
		t.Helper()
		if out.Status != engines.Error || out.Err == nil || out.Err.Code != "QWED-REQ-004" {
			t.Fatalf("want QWED-REQ-004, got %s %+v", out.Status, out.Err)
		}
	}
	t.Run("rows", func(t *testing.T) {
		rows := "x\n" + strings.Repeat("1\n", MaxRows)
		if out := run("count = 100000", csvParams(rows, nil)); out.Status != engines.Verified {
			t.Fatalf("at MaxRows: %s %+v", out.Status, out.Err)
		}
		expectLimit(t, run("count = 100001", csvParams(rows+"1\n", nil)))
	})
	t.Run("columns", func(t *testing.T) {
		names := make([]string, MaxColumns+1)
		for i := range names {
			names[i] = fmt.Sprintf("c%d", i)
		}
		at := strings.Join(names[:MaxColumns], ",") + "\n"
		if out := run("count = 0", csvParams(at, nil)); out.Status != engines.Verified {
			t.Fatalf("at MaxColumns: %s %+v", out.Status, out.Err)
		}
		expectLimit(t, run("count = 0", csvParams(strings.Join(names, ",")+"\n", nil)))
	})
	t.Run("cell bytes", func(t *testing.T) {
		cell := strings.Repeat("a", MaxCellBytes)
		if out := run("count = 1", csvParams("x\n"+cell+"\n", nil)); out.Status != engines.Verified {
			t.Fatalf("at MaxCellBytes: %s %+v", out.Status, out.Err)
		}
		expectLimit(t, run("count = 1", csvParams("x\n"+cell+"a\n", nil)))
	})
	t.Run("table bytes", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("x\n")
		row := strings.Repeat("7", 63) + "\n"
		for b.Len()+len(row) <= MaxTableBytes {
			b.WriteString(row)
		}
		rest := MaxTableBytes - b.Len()
		b.WriteString(strings.Repeat("7", rest-1) + "\n")
		if b.Len() != MaxTableBytes {
			t.Fatalf("built %d bytes", b.Len())
		}
		if out := run("count > 1", csvParams(b.String(), nil)); out.Status != engines.Verified {
			t.Fatalf("at MaxTableBytes: %s %+v", out.Status, out.Err)
		}
		expectLimit(t, run("count > 1", csvParams(b.String()+"7", nil)))
	})
	t.Run("groups", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("k,v\n")
		for i := range MaxGroups {
			fmt.Fprintf(&b, "g%d,1\n", i)
		}
		if out := run("group by k: argmax sum(v) = g1", csvParams(b.String(), nil)); out.Status != engines.Unsupported || out.Err.Code != "QWED-REQ-005" {
			t.Fatalf("at MaxGroups (a tie): %s %+v", out.Status, out.Err)
		}
		b.WriteString("extra,1\n")
		expectLimit(t, run("group by k: argmax sum(v) = g1", csvParams(b.String(), nil)))
	})
	t.Run("claim tokens", func(t *testing.T) {
		// Tokens are counted before parsing: at the limit the claim is
		// merely outside the grammar, one more token is too long.
		at := "count = 1" + strings.Repeat(" x", MaxClaimTokens-3)
		out := run(at, csvParams(col("1"), nil))
		if out.Status != engines.Unsupported || out.Err.Code != "QWED-REQ-003" {
			t.Fatalf("at MaxClaimTokens: %s %+v", out.Status, out.Err)
		}
		expectLimit(t, run(at+" x", csvParams(col("1"), nil)))
	})
	t.Run("conditions", func(t *testing.T) {
		conds := make([]string, MaxConditions+1)
		for i := range conds {
			conds[i] = "x = 1"
		}
		at := "count where " + strings.Join(conds[:MaxConditions], " and ") + " = 1"
		if out := run(at, csvParams(col("1"), nil)); out.Status != engines.Verified {
			t.Fatalf("at MaxConditions: %s %+v", out.Status, out.Err)
		}
		expectLimit(t, run("count where "+strings.Join(conds, " and ")+" = 1", csvParams(col("1"), nil)))
	})
	t.Run("number chars and exponent", func(t *testing.T) {
		at := "1" + strings.Repeat("0", MaxNumberChars-1)
		if _, _, ok := ParseDecimal(at); !ok {
			t.Fatal("at MaxNumberChars")
		}
		if _, _, ok := ParseDecimal(at + "0"); ok {
			t.Fatal("over MaxNumberChars")
		}
		if r, _, ok := ParseDecimal(fmt.Sprintf("1e-%d", MaxExponent)); !ok || r.Cmp(new(big.Rat).SetFrac(big.NewInt(1), pow10(MaxExponent))) != 0 {
			t.Fatal("at MaxExponent")
		}
		if _, _, ok := ParseDecimal(fmt.Sprintf("1e%d", MaxExponent+1)); ok {
			t.Fatal("over MaxExponent")
		}
		// A cell over the limit is not a number: the claim is undecided.
		if out := run("sum(x) = 1", csvParams(col("1e101"), nil)); out.Status != engines.Unsupported {
			t.Fatalf("cell over MaxExponent: %s", out.Status)
		}
	})
	t.Run("query bytes", func(t *testing.T) {
		expectLimit(t, run(strings.Repeat("x", engines.MaxQueryBytes+1), csvParams(col("1"), nil)))
	})
}

// TestParseDecimal pins the number syntax and the stated decimals.
func TestParseDecimal(t *testing.T) {
	good := map[string]struct {
		rat string
		d   int
	}{
		"12.5": {"25/2", 1}, "-0.50": {"-1/2", 2}, ".5": {"1/2", 1}, "+3": {"3", 0},
		"1e3": {"1000", 0}, "1.25e1": {"25/2", 1}, "2.5E-1": {"1/4", 2}, "5.": {"5", 0},
	}
	for s, w := range good {
		r, d, ok := ParseDecimal(s)
		if !ok || ratString(r) != w.rat || d != w.d {
			t.Errorf("%q: %v %d %v, want %s %d", s, r, d, ok, w.rat, w.d)
		}
	}
	for _, s := range []string{"", "-", ".", "1,000", "0x10", "1/2", "Inf", "NaN", "1e", "1e+", "--1", "1.2.3", " 1"} {
		if _, _, ok := ParseDecimal(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
}

// TestStatsDeterminism: the same request gives byte-identical outcomes,
// including group-by results built from a map.
func TestStatsDeterminism(t *testing.T) {
	p := csvParams(sales, nil)
	for _, q := range []string{"group by region: sum(qty) = {EU: 8, US: 8, AS: 4}", "std(price) = 2", "corr(a, b) > 0.5", "mode(x) = 1"} {
		a, _ := json.Marshal(New().Verify(context.Background(), engines.Request{Query: q, Params: p, IncludeProof: true}))
		for range 5 {
			b, _ := json.Marshal(New().Verify(context.Background(), engines.Request{Query: q, Params: p, IncludeProof: true}))
			if !bytes.Equal(a, b) {
				t.Fatalf("%q: %s != %s", q, a, b)
			}
		}
	}
}

// TestStatsProofOnlyWhenAsked: the proof travels only with include_proof.
func TestStatsProofOnlyWhenAsked(t *testing.T) {
	p := csvParams(sales, nil)
	if out := run("mean(price) = 11.75", p); out.Proof != nil {
		t.Fatalf("proof without include_proof: %+v", out.Proof)
	}
	out := New().Verify(context.Background(), engines.Request{Query: "std(qty) > 1", Params: p, IncludeProof: true})
	pr, ok := out.Proof.(Proof)
	if !ok || !strings.Contains(pr.Method, "sample variance") || pr.Square == "" {
		t.Fatalf("%+v", out.Proof)
	}
}

// TestStatsCapabilities: the §4.2 document is valid JSON with the limits.
func TestStatsCapabilities(t *testing.T) {
	c := New().Capabilities()
	if c.EngineID != "stats" || c.Limits["max_rows"] != MaxRows || !json.Valid(c.Params) {
		t.Fatalf("%+v", c)
	}
}

// FuzzParseClaim: the claim parser and the engine never panic.
func FuzzParseClaim(f *testing.F) {
	for _, s := range []string{"mean(price) = 12.5", "median of price is 10", "sum(qty) where region = 'EU' = 40", "correlation(a,b) > 0.9", "p90(latency) = 120", "count = 10", "group by region: sum(qty) = {EU: 8}", "quantile(x, 0.5) = 1", "`a b` ≥ 1", "'unterminated"} {
		f.Add(s)
	}
	p := csvParams(sales, nil)
	f.Fuzz(func(t *testing.T, q string) {
		out := run(q, p)
		if out.Status == engines.Error && out.Err == nil {
			t.Fatalf("error without a problem for %q", q)
		}
		if out.Status == engines.Verified && !out.Result.(Result).IsValid {
			t.Fatalf("verified but not valid for %q", q)
		}
	})
}

// FuzzParseDecimal: every accepted number equals big.Rat's reading.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"12.5", "-1e3", ".5", "1e-100", "0x1", "1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, _, ok := ParseDecimal(s)
		if !ok {
			return
		}
		want, ok2 := new(big.Rat).SetString(strings.TrimSuffix(strings.TrimPrefix(s, "+"), "."))
		if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "-.") || strings.HasPrefix(s, "+.") {
			return
		}
		if ok2 && want.Cmp(r) != 0 {
			t.Fatalf("%q: %s != %s", s, r, want)
		}
	})
}

// FuzzParseCSV: table parsing never panics and keeps rows rectangular.
func FuzzParseCSV(f *testing.F) {
	f.Add(sales)
	f.Add("a\n\"x\ny\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		tb, err := ParseCSV(s, ',')
		if err != nil {
			return
		}
		for _, r := range tb.Rows {
			if len(r) != len(tb.Header) {
				t.Fatalf("ragged row %v", r)
			}
		}
	})
}

func benchVerify(b *testing.B, q string, p json.RawMessage) {
	e := New()
	req := engines.Request{Query: q, Type: "stats", Params: p}
	durs := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		e.Verify(context.Background(), req)
		durs = append(durs, time.Since(t0))
	}
	slices.Sort(durs)
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
	}
}

func bigTable(n int) string {
	var s strings.Builder
	s.WriteString("region,price,qty\n")
	regions := []string{"EU", "US", "AS", "AF"}
	for i := range n {
		fmt.Fprintf(&s, "%s,%d.%02d,%d\n", regions[i%4], 5+i%50, i%100, 1+i%9)
	}
	return s.String()
}

func BenchmarkVerify_MeanSmall(b *testing.B) {
	benchVerify(b, "mean(price) = 11.75", csvParams(sales, nil))
}

func BenchmarkVerify_StdRows1000(b *testing.B) {
	benchVerify(b, "std(price) = 14.4", csvParams(bigTable(1000), nil))
}

func BenchmarkVerify_P90Rows1000(b *testing.B) {
	benchVerify(b, "p90(price) = 50", csvParams(bigTable(1000), nil))
}

func BenchmarkVerify_GroupBySumRows1000(b *testing.B) {
	benchVerify(b, "group by region: sum(qty) = {EU: 1, US: 2, AS: 3, AF: 4}", csvParams(bigTable(1000), nil))
}
