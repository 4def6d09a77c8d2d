package math

import (
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestDesign2_7_LimitsBothSides pins every limit of limits.go on both
// sides (invariant 7, docs/ARCHITECTURE.md): at the limit the query is decided, one
// past it the answer is QWED-REQ-004 naming the limit.
func TestDesign2_7_LimitsBothSides(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }
	sumOf := func(n int) string { return strings.Repeat("1+", n-1) + "1" }
	cases := []struct {
		limit      string
		within     string
		past       string
		withinPrec string
	}{
		{limit: "max_query_bytes", within: "1" + strings.Repeat(" ", MaxQueryBytes-1), past: "1" + strings.Repeat(" ", MaxQueryBytes)},
		// 2n-1 tokens for n ones; a leading sign adds one.
		{limit: "max_tokens", within: "-" + sumOf(MaxTokens/2), past: "--" + sumOf(MaxTokens/2)},
		{limit: "max_depth", within: nested(MaxDepth), past: nested(MaxDepth + 1)},
		{limit: "max_literal_digits", within: strings.Repeat("9", MaxLiteralDigits), past: strings.Repeat("9", MaxLiteralDigits+1)},
		{limit: "max_exponent", within: "2^10000", past: "2^10001"},
		{limit: "max_exponent", within: "1^(1/10000)", past: "1^(1/10001)"},
		{limit: "max_degree", within: "x^1000", past: "x^1001"},
		{limit: "max_degree", within: "x^500*x^500", past: "x^500*x^501"},
		{limit: "max_terms", within: "(a+b+c)^98", past: "(a+b+c)^99"},
		{limit: "max_digits", within: "100^5000", past: "100^5001"},
		{limit: "max_digits", within: "1e10000", past: "1e10001"},
		{limit: "max_work", within: strings.Repeat("(a+b+c)^60 - ", 2) + "1", past: strings.Repeat("(a+b+c)^60 - ", 300) + "1"},
	}
	for _, tc := range cases {
		t.Run(tc.limit, func(t *testing.T) {
			if o := verify(t, tc.within, ""); o.Status != engines.Verified {
				t.Fatalf("within %s: %s %+v", tc.limit, o.Status, o.Err)
			}
			o := verify(t, tc.past, "")
			if o.Status != engines.Error || o.Err == nil || o.Err.Code != CodeTooLarge || o.Err.Details["limit"] != tc.limit {
				t.Fatalf("past %s: %s %+v", tc.limit, o.Status, o.Err)
			}
		})
	}
}

// TestSeed002_5_2_1_PrecisionBothSides pins params.precision at 0 and
// MaxPrecision (accepted) and one past (QWED-REQ-001).
func TestSeed002_5_2_1_PrecisionBothSides(t *testing.T) {
	o := verify(t, "2/3", `{"precision":0}`)
	if o.Status != engines.Verified || o.Result.(Result).Decimal != "1" {
		t.Fatalf("precision 0: %+v", o)
	}
	o = verify(t, "1/7", `{"precision":1000}`)
	if d := o.Result.(Result).Decimal; len(d) != 1002 || !strings.HasPrefix(d, "0.142857142857") {
		t.Fatalf("precision 1000: %q", d)
	}
	for _, p := range []string{`{"precision":1001}`, `{"precision":-1}`} {
		if o := verify(t, "1/7", p); o.Status != engines.Error || o.Err.Code != CodeInvalid || o.Err.Details["field"] != "precision" {
			t.Fatalf("%s: %+v", p, o)
		}
	}
}
