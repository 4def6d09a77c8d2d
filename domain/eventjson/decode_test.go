package eventjson

import (
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// fastUSD agrees with domain.USD's decoder wherever it answers, and leaves
// everything else (exponents, rounding, strings, bounds) to it.
func TestFastUSDMatchesDomain(t *testing.T) {
	for _, s := range []string{"0", "1", "0.01", "-1.5", "123456.123456", "999999.999999", "10", "0.000001", "-0"} {
		got, ok := fastUSD([]byte(s))
		var want domain.USD
		if err := want.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatalf("%s: domain: %v", s, err)
		}
		if !ok || got != want {
			t.Errorf("fastUSD(%s) = %d %v, want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"1e-3", "0.0000005", "1000000", "1.", ".5", `"1"`, "null", "", "-", "1.2.3", "01x"} {
		if v, ok := fastUSD([]byte(s)); ok {
			t.Errorf("fastUSD(%q) = %d, want a fallback", s, v)
		}
	}
}
