package stats

import (
	"fmt"
	"math/big"
)

// quantity is a computed statistic: an exact rational, or sign*sqrt(sq)
// for a standard deviation or a correlation whose root is irrational.
// Every comparison is exact: a root is compared through its square.
type quantity struct {
	rat  *big.Rat // set when the value is rational
	sign int      // root: -1, 0, 1
	sq   *big.Rat // root: the square
}

func ratQ(r *big.Rat) quantity { return quantity{rat: r} }

// rootQ is sign*sqrt(sq), rational when sq is a rational square.
func rootQ(sign int, sq *big.Rat) quantity {
	if r, ok := sqrtRat(sq); ok {
		if sign < 0 {
			r.Neg(r)
		}
		return quantity{rat: r}
	}
	return quantity{sign: sign, sq: sq}
}

// cmpRat compares q with c exactly: -1, 0 or 1.
func (q quantity) cmpRat(c *big.Rat) int {
	if q.rat != nil {
		return q.rat.Cmp(c)
	}
	switch {
	case q.sign == 0:
		return -c.Sign()
	case q.sign > 0:
		if c.Sign() <= 0 {
			return 1
		}
		return q.sq.Cmp(new(big.Rat).Mul(c, c))
	default:
		if c.Sign() >= 0 {
			return -1
		}
		return -q.sq.Cmp(new(big.Rat).Mul(c, c))
	}
}

// signedSquare is (sign, q^2 with sign), an order-preserving key.
func (q quantity) signedSquare() (int, *big.Rat) {
	if q.rat != nil {
		return q.rat.Sign(), new(big.Rat).Mul(q.rat, q.rat)
	}
	return q.sign, q.sq
}

// cmpQ compares two quantities exactly.
func cmpQ(a, b quantity) int {
	if a.rat != nil && b.rat != nil {
		return a.rat.Cmp(b.rat)
	}
	sa, qa := a.signedSquare()
	sb, qb := b.signedSquare()
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	switch {
	case sa == 0:
		return 0
	case sa > 0:
		return qa.Cmp(qb)
	}
	return qb.Cmp(qa)
}

// String is the value as decimal text (exact when it is a short decimal).
func (q quantity) String() string {
	if q.rat != nil {
		s, _ := FormatRat(q.rat)
		return s
	}
	return formatSqrt(q.sign, q.sq)
}

// exact is the value's exact form: a fraction, or ±sqrt(fraction).
func (q quantity) exact() string {
	if q.rat != nil {
		return ratString(q.rat)
	}
	if q.sign < 0 {
		return "-sqrt(" + ratString(q.sq) + ")"
	}
	return "sqrt(" + ratString(q.sq) + ")"
}

// isExactDecimal reports whether String is the exact value.
func (q quantity) isExactDecimal() bool {
	if q.rat == nil {
		return false
	}
	_, ok := FormatRat(q.rat)
	return ok
}

// Tolerance is how equality is judged (see doc.go).
type Tolerance struct {
	// Mode is "round" (default: the value rounds to the claim at the
	// claim's decimals), "absolute" or "relative".
	Mode string
	// Amount is the tolerance for absolute and relative modes.
	Amount *big.Rat
}

// describe says how equality was judged for a claim with d decimals.
func (t Tolerance) describe(d int) string {
	switch t.Mode {
	case "absolute":
		return "|value - claim| <= " + ratDecimal(t.Amount)
	case "relative":
		return "|value - claim| <= " + ratDecimal(t.Amount) + " * |claim|"
	}
	return fmt.Sprintf("value rounded half away from zero to %d decimal places equals the claim", d)
}

func ratDecimal(r *big.Rat) string {
	s, _ := FormatRat(r)
	return s
}

// equal decides q = c under the tolerance, c stated with d decimals.
func (t Tolerance) equal(q quantity, c *big.Rat, d int) bool {
	switch t.Mode {
	case "absolute", "relative":
		tol := t.Amount
		if t.Mode == "relative" {
			tol = new(big.Rat).Mul(t.Amount, new(big.Rat).Abs(c))
		}
		lo := new(big.Rat).Sub(c, tol)
		hi := new(big.Rat).Add(c, tol)
		return q.cmpRat(lo) >= 0 && q.cmpRat(hi) <= 0
	}
	// n = c*10^d; q*10^d in [n-1/2, n+1/2) for n > 0, (.., ..] for n < 0,
	// open both sides for n = 0 (half away from zero).
	p := new(big.Rat).SetInt(pow10(d))
	n := new(big.Rat).Mul(c, p)
	lo := new(big.Rat).Quo(new(big.Rat).Sub(n, ratHalf), p)
	hi := new(big.Rat).Quo(new(big.Rat).Add(n, ratHalf), p)
	cl, ch := q.cmpRat(lo), q.cmpRat(hi)
	switch n.Sign() {
	case 1:
		return cl >= 0 && ch < 0
	case -1:
		return cl > 0 && ch <= 0
	}
	return cl > 0 && ch < 0
}

// holds decides "q op c".
func (t Tolerance) holds(q quantity, op string, c *big.Rat, d int) bool {
	switch op {
	case "=":
		return t.equal(q, c, d)
	case "!=":
		return !t.equal(q, c, d)
	}
	k := q.cmpRat(c)
	switch op {
	case "<":
		return k < 0
	case "<=":
		return k <= 0
	case ">":
		return k > 0
	case ">=":
		return k >= 0
	}
	return false
}
