package math

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// atom is a function application kept symbolic: fn of arg, where fn is
// sqrt, exp, log, sin, cos or abs (tan is sin/cos). Its key is
// fn + "(" + arg.str() + ")".
type atom struct {
	fn  string
	arg rfn
}

var rZero = rfn{nil, constPoly(ratOne)}

func itoa(n int) string { return strconv.Itoa(n) }

// atomKey registers fn(arg) and returns its key.
func (a *alg) atomKey(fn string, arg rfn) string {
	key := fn + "(" + arg.str() + ")"
	a.spend(1 + len(key)/64)
	if _, ok := a.atoms[key]; !ok {
		a.atoms[key] = &atom{fn, arg}
	}
	return key
}

// reducible is the index in m of a power the engine rewrites: sqrt(u)**k
// with k >= 2 and u a polynomial (sqrt(u)**2 = u), and sin(u)**k with
// k >= 2 (sin(u)**2 = 1 - cos(u)**2); -1 when there is none. Both rewrites
// hold for every value where the function is defined, in the real and the
// complex domain, and make the normal form canonical modulo them.
func (a *alg) reducible(m mono) int {
	for i, p := range m {
		if p.exp < 2 {
			continue
		}
		if at := a.atoms[p.key]; at != nil && (at.fn == "sin" || (at.fn == "sqrt" && at.arg.den.isOne())) {
			return i
		}
	}
	return -1
}

// reduce applies the rewrites of reducible to p until none applies.
func (a *alg) reduce(p poly) poly {
	for {
		found := false
		for _, t := range p {
			if a.reducible(t.m) >= 0 {
				found = true
				break
			}
		}
		if !found {
			return p
		}
		var keep, out poly
		for _, t := range p {
			i := a.reducible(t.m)
			if i < 0 {
				keep = append(keep, t)
				continue
			}
			pw := t.m[i]
			at := a.atoms[pw.key]
			rest := slices.Clone(t.m)
			if pw.exp%2 == 1 {
				rest[i].exp = 1
			} else {
				rest = slices.Delete(rest, i, i+1)
			}
			var sub poly
			if at.fn == "sqrt" {
				sub = at.arg.num
			} else {
				c := a.apply("cos", at.arg, -1).num
				sub = a.sub(constPoly(ratOne), a.mul(c, c))
			}
			a.spend(1)
			f := poly{{rest, t.c}}
			for range pw.exp / 2 {
				f = a.mul(f, sub)
			}
			out = a.add(out, f)
		}
		p = a.add(keep, out)
	}
}

// apply is fn(arg), exact where the value is exact (sqrt(16) = 4,
// sin(0) = 0, log(1) = 0, exp(0) = 1, cos(pi) = -1, log(e**2) = 2) and a
// symbolic atom otherwise. log and ln are the natural logarithm.
func (a *alg) apply(fn string, arg rfn, pos int) rfn {
	a.spend(1)
	c, isConst := arg.constValue()
	switch fn {
	case "sqrt":
		if isConst {
			if c.Sign() < 0 {
				if a.domain == "complex" {
					fail(unsupported(pos, "the square root of a negative number (the engine has no imaginary unit)"))
				}
				fail(undefined(pos, "sqrt_of_negative", "The square root of a negative number is not real"))
			}
			if r, ok := a.ratRoot(c, 2); ok {
				return rConst(r)
			}
			if a.radicands {
				return a.sqrtRational(c)
			}
		}
		return rKey(a.atomKey("sqrt", arg))
	case "exp":
		if isConst {
			if c.Sign() == 0 {
				return rOne
			}
			if c.IsInt() && c.Num().IsInt64() && c.Num().Int64() >= -MaxExponent && c.Num().Int64() <= MaxExponent {
				return a.rpow(rKey("e"), int(c.Num().Int64()), pos)
			}
		}
		if at, ok := a.singleAtom(arg); ok && at.fn == "log" {
			return at.arg
		}
		return rKey(a.atomKey("exp", arg))
	case "log", "ln":
		if isConst {
			switch {
			case c.Cmp(ratOne) == 0:
				return rZero
			case c.Sign() == 0:
				fail(undefined(pos, "log_of_zero", "The logarithm of 0 is undefined"))
			case c.Sign() < 0:
				if a.domain == "complex" {
					fail(unsupported(pos, "the logarithm of a negative number (the engine has no imaginary unit)"))
				}
				fail(undefined(pos, "log_of_negative", "The logarithm of a negative number is not real"))
			}
		}
		if arg.den.isOne() && len(arg.num) == 1 && arg.num[0].c.Cmp(ratOne) == 0 &&
			len(arg.num[0].m) == 1 && arg.num[0].m[0].key == "e" {
			return rConst(big.NewRat(int64(arg.num[0].m[0].exp), 1))
		}
		if at, ok := a.singleAtom(arg); ok && at.fn == "exp" && a.domain != "complex" {
			return at.arg
		}
		return rKey(a.atomKey("log", arg))
	case "sin", "cos", "tan":
		return a.trig(fn, arg, pos)
	case "abs":
		if isConst {
			return rConst(new(big.Rat).Abs(c))
		}
		if arg.num[0].c.Sign() < 0 {
			arg = a.rneg(arg)
		}
		return rKey(a.atomKey("abs", arg))
	}
	fail(unsupported(pos, "the function "+fn))
	return rfn{}
}

// singleAtom is the atom when r is exactly one atom (coefficient 1, power 1).
func (a *alg) singleAtom(r rfn) (*atom, bool) {
	if !r.den.isOne() || len(r.num) != 1 || r.num[0].c.Cmp(ratOne) != 0 || len(r.num[0].m) != 1 || r.num[0].m[0].exp != 1 {
		return nil, false
	}
	at := a.atoms[r.num[0].m[0].key]
	return at, at != nil
}

// sinTable is sin(r*pi) for the r in [0, 2) where it is rational (Niven's
// theorem: 0, ±1/2, ±1 are the only rational values).
var sinTable = map[string]*big.Rat{
	"0": big.NewRat(0, 1), "1/6": big.NewRat(1, 2), "1/2": big.NewRat(1, 1), "5/6": big.NewRat(1, 2),
	"1": big.NewRat(0, 1), "7/6": big.NewRat(-1, 2), "3/2": big.NewRat(-1, 1), "11/6": big.NewRat(-1, 2),
}

// trig is sin, cos or tan of arg: exact at rational multiples of pi where
// the value is rational, tan = sin/cos otherwise, sin(-u) = -sin(u) and
// cos(-u) = cos(u) so that the atom's argument leads with a positive
// coefficient.
func (a *alg) trig(fn string, arg rfn, pos int) rfn {
	if arg.isZero() {
		if fn == "cos" {
			return rOne
		}
		return rZero
	}
	if r, ok := piMultiple(arg); ok {
		// r mod 2, in [0, 2).
		two := big.NewRat(2, 1)
		q := new(big.Rat).Quo(r, two)
		fl := new(big.Int).Div(q.Num(), q.Denom())
		r = new(big.Rat).Sub(r, new(big.Rat).Mul(two, new(big.Rat).SetInt(fl)))
		s, sOK := sinTable[ratStr(r)]
		shifted := new(big.Rat).Add(r, big.NewRat(1, 2))
		if shifted.Cmp(two) >= 0 {
			shifted.Sub(shifted, two)
		}
		cv, cOK := sinTable[ratStr(shifted)]
		switch {
		case fn == "sin" && sOK:
			return rConst(s)
		case fn == "cos" && cOK:
			return rConst(cv)
		case fn == "tan" && cOK && cv.Sign() == 0:
			fail(undefined(pos, "tan_undefined", "tan is undefined at odd multiples of pi/2"))
		case fn == "tan" && sOK && cOK:
			return rConst(new(big.Rat).Quo(s, cv))
		case fn == "tan":
			q4 := new(big.Rat).Mul(r, big.NewRat(4, 1))
			if q4.IsInt() {
				if k := q4.Num().Int64(); k%4 == 1 {
					return rOne
				} else if k%4 == 3 {
					return rConst(big.NewRat(-1, 1))
				}
			}
		}
		arg = rfn{poly{{mono{{"pi", 1}}, r}}, constPoly(ratOne)}
		if r.Sign() == 0 {
			return a.trig(fn, rZero, pos)
		}
	}
	if fn == "tan" {
		return a.rdiv(a.trig("sin", arg, pos), a.trig("cos", arg, pos), pos)
	}
	neg := arg.num[0].c.Sign() < 0
	if neg {
		arg = a.rneg(arg)
	}
	k := rKey(a.atomKey(fn, arg))
	if neg && fn == "sin" {
		return a.rneg(k)
	}
	return k
}

// piMultiple is r when arg is r*pi.
func piMultiple(arg rfn) (*big.Rat, bool) {
	if !arg.den.isOne() || len(arg.num) != 1 {
		return nil, false
	}
	t := arg.num[0]
	if len(t.m) != 1 || t.m[0].key != "pi" || t.m[0].exp != 1 {
		return nil, false
	}
	return t.c, true
}

// ratRoot is the exact q-th root of c >= 0 when it is rational.
func (a *alg) ratRoot(c *big.Rat, q int) (*big.Rat, bool) {
	n, ok := a.intRoot(c.Num(), q)
	if !ok {
		return nil, false
	}
	d, ok := a.intRoot(c.Denom(), q)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetFrac(n, d), true
}

// intRoot is the exact q-th root of x >= 0 when x is a q-th power
// (Newton's iteration on integers, from above).
func (a *alg) intRoot(x *big.Int, q int) (*big.Int, bool) {
	if x.Sign() == 0 || q == 1 {
		return new(big.Int).Set(x), true
	}
	var y *big.Int
	if q == 2 {
		a.spend(1 + x.BitLen()/64)
		y = new(big.Int).Sqrt(x)
	} else {
		if q > x.BitLen() {
			return big.NewInt(1), x.Cmp(big.NewInt(1)) == 0
		}
		bq := big.NewInt(int64(q))
		bq1 := big.NewInt(int64(q - 1))
		y = new(big.Int).Lsh(big.NewInt(1), uint((x.BitLen()+q-1)/q))
		for {
			a.spend(1 + x.BitLen()/16)
			t := new(big.Int).Exp(y, bq1, nil)
			t.Quo(x, t)
			t.Add(t, new(big.Int).Mul(bq1, y))
			t.Quo(t, bq)
			if t.Cmp(y) >= 0 {
				break
			}
			y = t
		}
	}
	if new(big.Int).Exp(y, big.NewInt(int64(q)), nil).Cmp(x) != 0 {
		return nil, false
	}
	return y, true
}

// parseLiteral reads a number literal exactly ("12", "0.25", ".5", "1.5e3").
func parseLiteral(text string, pos int) *big.Rat {
	mant, exp := text, 0
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		mant = text[:i]
		e, err := strconv.Atoi(text[i+1:])
		if err != nil || e > MaxDigits || e < -MaxDigits {
			fail(limitProblem("max_digits", MaxDigits, pos))
		}
		exp = e
	}
	mant = strings.TrimSuffix(mant, ".")
	r, ok := new(big.Rat).SetString(mant)
	if !ok {
		fail(syntaxProblem(pos, "a number", "'"+text+"'", ""))
	}
	if exp != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(exp, -exp))), nil)
		f := new(big.Rat).SetInt(p)
		if exp < 0 {
			f.Inv(f)
		}
		r.Mul(r, f)
	}
	return r
}
