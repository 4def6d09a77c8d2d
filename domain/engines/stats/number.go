package stats

import (
	"math/big"
	"strings"
)

// Limits on decimal numbers read from cells, the claim and params.
const (
	// MaxNumberChars is the longest decimal text read as a number.
	MaxNumberChars = 100
	// MaxExponent bounds |e| in a number written with an exponent (1.5e3).
	MaxExponent = 100
	// displayPlaces is how many decimal places a value that is not an
	// exact, short decimal is shown with (rounded half away from zero).
	displayPlaces = 20
	// maxExactPlaces is the most decimal places an exact decimal is shown
	// with; a terminating value with more is shown rounded.
	maxExactPlaces = 40
)

var (
	bigTen  = big.NewInt(10)
	bigTwo  = big.NewInt(2)
	ratHalf = big.NewRat(1, 2)
)

// ParseDecimal reads decimal text exactly as a rational: an optional sign,
// digits with an optional fraction (or a fraction alone, ".5"), and an
// optional exponent e±N with |N| <= MaxExponent. It also reports the
// number of decimal places the text states (for "12.50" two, for "1.5e1"
// zero, never negative). Anything else, including thousands separators,
// hex, fractions a/b, Inf and NaN, is not a number.
func ParseDecimal(s string) (*big.Rat, int, bool) {
	if len(s) == 0 || len(s) > MaxNumberChars {
		return nil, 0, false
	}
	i := 0
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	if intPart == "" && frac == "" {
		return nil, 0, false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			exp = exp*10 + int(s[i]-'0')
			if exp > MaxExponent {
				return nil, 0, false
			}
			i++
		}
		if i == es {
			return nil, 0, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return nil, 0, false
	}
	digits := new(big.Int)
	digits.SetString(intPart+frac+"0", 10) // trailing 0 keeps "" parseable
	digits.Quo(digits, bigTen)
	if neg {
		digits.Neg(digits)
	}
	scale := len(frac) - exp
	r := new(big.Rat).SetInt(digits)
	if scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(pow10(scale)))
	} else if scale < 0 {
		r.Mul(r, new(big.Rat).SetInt(pow10(-scale)))
	}
	return r, max(scale, 0), true
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// roundHalfAway returns x*10^d rounded half away from zero.
func roundHalfAway(x *big.Rat, d int) *big.Int {
	y := new(big.Rat).Mul(x, new(big.Rat).SetInt(pow10(d)))
	num := new(big.Int).Abs(y.Num())
	num.Mul(num, bigTwo).Add(num, y.Denom())
	den := new(big.Int).Mul(y.Denom(), bigTwo)
	q := new(big.Int).Quo(num, den)
	if y.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

// placeDigits writes the integer n/10^d as decimal text, trimming
// trailing zeros of the fraction.
func placeDigits(n *big.Int, d int) string {
	neg := n.Sign() < 0
	s := new(big.Int).Abs(n).String()
	if d > 0 {
		if len(s) <= d {
			s = strings.Repeat("0", d-len(s)+1) + s
		}
		s = s[:len(s)-d] + "." + s[len(s)-d:]
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if neg && s != "0" {
		s = "-" + s
	}
	return s
}

// FormatRat writes r as decimal text: exact when r is a decimal with at
// most 40 places (exact reported true), otherwise rounded half away from
// zero at 20 places.
func FormatRat(r *big.Rat) (string, bool) {
	den := new(big.Int).Set(r.Denom())
	twos, fives := 0, 0
	m := new(big.Int)
	for {
		if q, rem := new(big.Int).QuoRem(den, bigTwo, m); rem.Sign() == 0 {
			den, twos = q, twos+1
			continue
		}
		break
	}
	five := big.NewInt(5)
	for {
		if q, rem := new(big.Int).QuoRem(den, five, m); rem.Sign() == 0 {
			den, fives = q, fives+1
			continue
		}
		break
	}
	if den.Cmp(big.NewInt(1)) == 0 {
		if p := max(twos, fives); p <= maxExactPlaces {
			return placeDigits(roundHalfAway(r, p), p), true
		}
	}
	return placeDigits(roundHalfAway(r, displayPlaces), displayPlaces), false
}

// ratString writes r as an exact fraction ("12.5" is "25/2").
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return r.Num().String() + "/" + r.Denom().String()
}

// sqrtRat returns the exact square root of r >= 0 when it is rational.
func sqrtRat(r *big.Rat) (*big.Rat, bool) {
	n, d := r.Num(), r.Denom()
	sn, sd := new(big.Int).Sqrt(n), new(big.Int).Sqrt(d)
	if new(big.Int).Mul(sn, sn).Cmp(n) != 0 || new(big.Int).Mul(sd, sd).Cmp(d) != 0 {
		return nil, false
	}
	return new(big.Rat).SetFrac(sn, sd), true
}

// formatSqrt writes sign*sqrt(sq) rounded half away from zero at 20
// places.
func formatSqrt(sign int, sq *big.Rat) string {
	if r, ok := sqrtRat(sq); ok {
		if sign < 0 {
			r.Neg(r)
		}
		s, _ := FormatRat(r)
		return s
	}
	// k = floor(sqrt(sq*10^(2p))); round up when sq*10^(2p) >= (k+1/2)^2.
	scaled := new(big.Rat).Mul(sq, new(big.Rat).SetInt(pow10(2*displayPlaces)))
	fl := new(big.Int).Quo(scaled.Num(), scaled.Denom())
	k := new(big.Int).Sqrt(fl)
	half := new(big.Rat).Add(new(big.Rat).SetInt(k), ratHalf)
	if scaled.Cmp(new(big.Rat).Mul(half, half)) >= 0 {
		k.Add(k, big.NewInt(1))
	}
	if sign < 0 {
		k.Neg(k)
	}
	return placeDigits(k, displayPlaces)
}
