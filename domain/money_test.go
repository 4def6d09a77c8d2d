package domain

import "testing"

func TestParseUSD(t *testing.T) {
	cases := []struct {
		in   string
		want USD
		err  bool
	}{
		{"0", 0, false},
		{"1", 1_000_000, false},
		{"100.00", 100_000_000, false},
		{"0.05", 50_000, false},
		{"0.0000005", 1, false}, // half-up
		{"0.0000004", 0, false},
		{"1e-3", 1000, false},
		{"-1", 0, true},
		{"NaN", 0, true},
		{"Infinity", 0, true},
		{"abc", 0, true},
		{"1e30", 0, true},
	}
	for _, c := range cases {
		got, err := ParseUSD(c.in)
		if (err != nil) != c.err {
			t.Fatalf("ParseUSD(%q) err = %v, want err %v", c.in, err, c.err)
		}
		if got != c.want {
			t.Fatalf("ParseUSD(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestUSDString(t *testing.T) {
	for in, want := range map[USD]string{0: "0", 1: "0.000001", 1_500_000: "1.5", 100_000_000: "100", -2_500_000: "-2.5"} {
		if got := in.String(); got != want {
			t.Fatalf("USD(%d).String() = %q, want %q", in, got, want)
		}
	}
}
