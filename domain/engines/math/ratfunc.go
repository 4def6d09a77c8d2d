package math

import (
	"math/big"
	"slices"
	"strings"
)

// rfn is a rational function num/den: den is non-zero with leading
// coefficient 1 (1 for a polynomial). Common factors are cancelled where
// the engine finds them exactly: the common monomial always, the gcd when
// only one indeterminate occurs, and a numerator or denominator that
// divides the other. The zero test (num empty) is exact in every case.
type rfn struct {
	num, den poly
}

var rOne = rfn{constPoly(ratOne), constPoly(ratOne)}

func rConst(c *big.Rat) rfn { return rfn{constPoly(c), constPoly(ratOne)} }

func rKey(key string) rfn { return rfn{keyPoly(key), constPoly(ratOne)} }

func (r rfn) isZero() bool { return len(r.num) == 0 }

// constValue is r's value when r is a rational constant.
func (r rfn) constValue() (*big.Rat, bool) {
	n, ok := r.num.constValue()
	if !ok || !r.den.isOne() {
		return nil, false
	}
	return n, true
}

func (r rfn) keys() []string {
	ks := append(r.num.keys(), r.den.keys()...)
	slices.Sort(ks)
	return slices.Compact(ks)
}

// mk builds num/den in normal form; a zero den is a division by zero at
// pos.
func (a *alg) mk(num, den poly, pos int) rfn {
	if len(den) == 0 {
		fail(undefined(pos, "division_by_zero", "Division by zero"))
	}
	num, den = a.reduce(num), a.reduce(den)
	if len(den) == 0 {
		fail(undefined(pos, "division_by_zero", "Division by zero"))
	}
	if len(num) == 0 {
		return rfn{nil, constPoly(ratOne)}
	}
	if c, ok := den.constValue(); ok {
		return rfn{a.scale(num, new(big.Rat).Inv(c)), constPoly(ratOne)}
	}
	if g := commonMono(num, den); len(g) > 0 {
		num = dropMono(num, g)
		den = dropMono(den, g)
	}
	ks := append(num.keys(), den.keys()...)
	slices.Sort(ks)
	switch ks = slices.Compact(ks); {
	case len(ks) == 1:
		if g := a.gcdUni(num, den); g.degree() > 0 {
			num, _ = a.divExact(num, g)
			den, _ = a.divExact(den, g)
		}
	default:
		if q, ok := a.divExact(num, den); ok {
			return rfn{q, constPoly(ratOne)}
		}
		if q, ok := a.divExact(den, num); ok {
			num, den = constPoly(ratOne), q
		}
	}
	lc := den[0].c
	if lc.Cmp(ratOne) != 0 {
		inv := new(big.Rat).Inv(lc)
		num, den = a.scale(num, inv), a.scale(den, inv)
	}
	return rfn{num, den}
}

// dropMono divides every term of p by g (which divides each of them).
func dropMono(p poly, g mono) poly {
	out := make(poly, len(p))
	for i, t := range p {
		m, _ := divMono(t.m, g)
		out[i] = term{m, t.c}
	}
	slices.SortFunc(out, func(x, y term) int { return cmpMono(x.m, y.m) })
	return out
}

func (a *alg) radd(x, y rfn) rfn {
	if x.den.equal(y.den) {
		return a.mk(a.add(x.num, y.num), x.den, -1)
	}
	return a.mk(a.add(a.mul(x.num, y.den), a.mul(y.num, x.den)), a.mul(x.den, y.den), -1)
}

func (a *alg) rneg(x rfn) rfn { return rfn{a.neg(x.num), x.den} }

func (a *alg) rsub(x, y rfn) rfn { return a.radd(x, a.rneg(y)) }

func (a *alg) rmul(x, y rfn) rfn {
	return a.mk(a.mul(x.num, y.num), a.mul(x.den, y.den), -1)
}

// rdiv is x/y; y zero is a division by zero at pos.
func (a *alg) rdiv(x, y rfn, pos int) rfn {
	if y.isZero() {
		fail(undefined(pos, "division_by_zero", "Division by zero"))
	}
	return a.mk(a.mul(x.num, y.den), a.mul(x.den, y.num), pos)
}

// rpow is x**k for an integer k, within MaxExponent, MaxDegree and
// MaxDigits (checked before the work is done).
func (a *alg) rpow(x rfn, k int, pos int) rfn {
	if k > MaxExponent || k < -MaxExponent {
		fail(limitProblem("max_exponent", MaxExponent, pos))
	}
	if x.isZero() {
		switch {
		case k == 0:
			fail(undefined(pos, "zero_to_zero", "0**0 is undefined"))
		case k < 0:
			fail(undefined(pos, "division_by_zero", "Division by zero: 0 to a negative power"))
		}
		return x
	}
	if k == 0 {
		return rOne
	}
	n := k
	if n < 0 {
		n = -n
		x = rfn{x.den, x.num}
	}
	if (x.num.degree()+x.den.degree())*n > MaxDegree*2 || x.num.degree()*n > MaxDegree || x.den.degree()*n > MaxDegree {
		fail(limitProblem("max_degree", MaxDegree, pos))
	}
	// A coefficient of b bits is at least 2**(b-1): its n-th power has at
	// least (b-1)*n bits, so this refuses only what check would refuse
	// after the work.
	if (maxBits(x.num)-1)*n > MaxCoefficientBits || (maxBits(x.den)-1)*n > MaxCoefficientBits {
		fail(limitProblem("max_digits", MaxDigits, pos))
	}
	if len(x.num) == 1 && len(x.den) == 1 {
		return a.mk(monoPow(a, x.num[0], n), monoPow(a, x.den[0], n), pos)
	}
	result := rOne
	base := x
	for {
		if n&1 == 1 {
			result = a.rmul(result, base)
		}
		n >>= 1
		if n == 0 {
			return result
		}
		base = a.rmul(base, base)
	}
}

// monoPow is t**n for one term.
func monoPow(a *alg, t term, n int) poly {
	a.spend(len(t.m) + 1)
	num := new(big.Int).Exp(t.c.Num(), big.NewInt(int64(n)), nil)
	den := new(big.Int).Exp(t.c.Denom(), big.NewInt(int64(n)), nil)
	m := make(mono, len(t.m))
	for i, p := range t.m {
		m[i] = pow{p.key, p.exp * n}
	}
	return a.check(poly{{m, new(big.Rat).SetFrac(num, den)}})
}

// str prints r in normal form: "x**2 + 2*x + 1", "1/(x + 1)",
// "(x - 1)/(x + 1)". The printed form parses back to the same value.
func (r rfn) str() string {
	if r.den.isOne() {
		return polyStr(r.num)
	}
	var b strings.Builder
	if len(r.num) > 1 {
		b.WriteString("(" + polyStr(r.num) + ")")
	} else {
		b.WriteString(polyStr(r.num))
	}
	b.WriteByte('/')
	if len(r.den) > 1 || len(r.den[0].m) > 1 {
		b.WriteString("(" + polyStr(r.den) + ")")
	} else {
		b.WriteString(polyStr(r.den))
	}
	return b.String()
}

func polyStr(p poly) string {
	if len(p) == 0 {
		return "0"
	}
	var b strings.Builder
	for i, t := range p {
		c := t.c
		if i > 0 {
			if c.Sign() < 0 {
				b.WriteString(" - ")
				c = new(big.Rat).Neg(c)
			} else {
				b.WriteString(" + ")
			}
		}
		switch {
		case len(t.m) == 0:
			b.WriteString(ratStr(c))
		case c.Cmp(ratOne) == 0:
		case c.Cmp(big.NewRat(-1, 1)) == 0:
			b.WriteByte('-')
		default:
			b.WriteString(ratStr(c))
			b.WriteByte('*')
		}
		for j, pw := range t.m {
			if j > 0 {
				b.WriteByte('*')
			}
			b.WriteString(pw.key)
			if pw.exp > 1 {
				b.WriteString("**")
				b.WriteString(itoa(pw.exp))
			}
		}
	}
	return b.String()
}

// ratStr prints an exact rational: "3", "-3", "3/2".
func ratStr(c *big.Rat) string {
	if c.IsInt() {
		return c.Num().String()
	}
	return c.String()
}
