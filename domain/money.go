package domain

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// USD is an amount of money in micro-dollars (1 USD = 1,000,000). Integer
// arithmetic keeps budgets exact and Decide allocation-free; sub-cent LLM
// costs are common, so amounts are kept to the micro-dollar rather than
// quantized to cents. JSON input is parsed as a decimal (never a float) and
// rounded half-up to the micro-dollar; output is a JSON number with at most
// six decimals.
type USD int64

// MicrosPerUSD is the number of USD units in one dollar.
const MicrosPerUSD = 1_000_000

// maxUSD bounds amounts so that sums of many of them cannot overflow int64.
const maxUSD = USD(1_000_000_000_000 * MicrosPerUSD / 1000) // 1e9 dollars

var moneyCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(34)
	c.Rounding = apd.RoundHalfUp
	return c
}()

// ParseUSD parses a decimal amount of dollars ("1.25", "0.0005", "1e-3").
// Negative, non-finite and too large amounts are rejected.
func ParseUSD(s string) (USD, error) {
	return parseUSD(s, false)
}

// parseUSD parses an amount; signed allows negative amounts (the deltas
// recorded in events), whose magnitude is bounded like positive ones.
func parseUSD(s string, signed bool) (USD, error) {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		return 0, fmt.Errorf("parsing amount %q: not a decimal number", s)
	}
	if d.Form != apd.Finite {
		return 0, fmt.Errorf("parsing amount %q: not finite", s)
	}
	if d.Negative && !d.IsZero() && !signed {
		return 0, fmt.Errorf("parsing amount %q: negative", s)
	}
	var micros apd.Decimal
	if _, err := moneyCtx.Mul(&micros, d, apd.New(MicrosPerUSD, 0)); err != nil {
		return 0, fmt.Errorf("parsing amount %q: %w", s, err)
	}
	var rounded apd.Decimal
	if _, err := moneyCtx.Quantize(&rounded, &micros, 0); err != nil {
		return 0, fmt.Errorf("parsing amount %q: %w", s, err)
	}
	v, err := rounded.Int64()
	if err != nil || v > int64(maxUSD) || v < -int64(maxUSD) {
		return 0, fmt.Errorf("parsing amount %q: larger than %s", s, maxUSD)
	}
	return USD(v), nil
}

// String renders u as a decimal number of dollars with the fewest digits
// that represent it exactly ("1.5", "0.000001", "100").
func (u USD) String() string {
	neg := u < 0
	v := int64(u)
	if neg {
		if v == math.MinInt64 {
			return "-9223372036854.775808"
		}
		v = -v
	}
	whole := v / MicrosPerUSD
	frac := v % MicrosPerUSD
	s := strconv.FormatInt(whole, 10)
	if frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON renders u as a JSON number of dollars.
func (u USD) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalJSON accepts a JSON number (or a string holding one) of dollars.
// Negative amounts decode (events record signed corrections such as
// ExecutionLogged.CostDelta); Decide rejects negative amounts in commands
// with REQ-001 naming the field.
func (u *USD) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if s == "null" {
		*u = 0
		return nil
	}
	v, err := parseUSD(s, true)
	if err != nil {
		return err
	}
	*u = v
	return nil
}
