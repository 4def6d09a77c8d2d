package math

import (
	"strings"
	"testing"
)

// TestQWEDProtocol_5_1_ArithmeticClaim pins what the natural_language
// route sends to this engine: a claim (one relation) without variables,
// and never a panic, whatever the input (deep nesting, past the length
// limit, invalid UTF-8).
func TestQWEDProtocol_5_1_ArithmeticClaim(t *testing.T) {
	for q, want := range map[string]bool{
		"2+2=4": true, "sqrt(16) = 4": true, "2**10 > 1000": true, "pi > 3": true, "(3 + 4) * 2 = 14": true,
		"2+2": false, "x = 5": false, "d/dx 3 = 0": false, "diff(3, x) = 0": false, "1=1=1": false,
		"Paris is the capital of France": false, "": false, "\xff = 1": false,
		strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + "=1": false,
		strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + "=1":     false,
		strings.Repeat("-", 50000) + "1=1":                                     false,
	} {
		if got := IsArithmeticClaim(q); got != want {
			t.Errorf("%.40q: %v, want %v", q, got, want)
		}
	}
}
