package math

import (
	"math/big"
	"slices"

	"github.com/agentgate/agentgate/domain/engines"
)

// eval is the exact value of a syntax tree as a rational function.
func (a *alg) eval(n *node) rfn {
	switch n.kind {
	case nNum:
		c := parseLiteral(n.text, n.pos)
		if a.domain == "integer" && !c.IsInt() {
			fail(undefined(n.pos, "non_integer_literal", "The integer domain admits only integer literals, found "+n.text))
		}
		return rConst(c)
	case nVar:
		if v, ok := a.bind[n.text]; ok {
			return v
		}
		if a.domain == "rational" && constants[n.text] {
			fail(unsupported(n.pos, "the constant "+n.text+" is not rational (the rational domain)"))
		}
		return rKey(n.text)
	case nNeg:
		return a.rneg(a.eval(n.kids[0]))
	case nAdd:
		return a.radd(a.eval(n.kids[0]), a.eval(n.kids[1]))
	case nSub:
		return a.rsub(a.eval(n.kids[0]), a.eval(n.kids[1]))
	case nMul:
		return a.rmul(a.eval(n.kids[0]), a.eval(n.kids[1]))
	case nDiv:
		return a.rdiv(a.eval(n.kids[0]), a.eval(n.kids[1]), n.pos)
	case nPow:
		return a.power(a.eval(n.kids[0]), a.eval(n.kids[1]), n.pos)
	case nCall:
		if n.text == "diff" {
			return a.deriv(a.eval(n.kids[0]), n.kids[1].text, n.pos)
		}
		v := a.apply(n.text, a.eval(n.kids[0]), n.pos)
		if a.domain == "rational" && len(a.functionsIn(v)) > 0 {
			fail(unsupported(n.pos, v.str()+" is not a rational function (the rational domain)"))
		}
		return v
	case nDeriv:
		return a.deriv(a.eval(n.kids[0]), n.text, n.pos)
	}
	fail(&failure{engines.Error, engines.Problem{Code: CodeInternal, Message: "Verification failed unexpectedly: unknown node"}})
	return rfn{}
}

// power is base**ex: integer exponents exactly, p/q exponents of a
// constant where the root is rational (8**(2/3) = 4), half-integer
// exponents as sqrt (x**(3/2) = sqrt(x)**3); any other power is
// UNSUPPORTED.
func (a *alg) power(base, ex rfn, pos int) rfn {
	k, ok := ex.constValue()
	if !ok {
		fail(unsupported(pos, "a power with a non-constant exponent"))
	}
	if k.Num().CmpAbs(big.NewInt(MaxExponent)) > 0 || k.Denom().Cmp(big.NewInt(MaxExponent)) > 0 {
		fail(limitProblem("max_exponent", MaxExponent, pos))
	}
	p := int(k.Num().Int64())
	if k.IsInt() {
		return a.rpow(base, p, pos)
	}
	q := int(k.Denom().Int64())
	if c, ok := base.constValue(); ok {
		switch c.Sign() {
		case -1:
			fail(unsupported(pos, "a fractional power of a negative number"))
		case 0:
			if p < 0 {
				fail(undefined(pos, "division_by_zero", "Division by zero: 0 to a negative power"))
			}
			return rZero
		}
		if r, ok := a.ratRoot(c, q); ok {
			return a.rpow(rConst(r), p, pos)
		}
	}
	if q == 2 {
		return a.rpow(a.apply("sqrt", base, pos), p, pos)
	}
	fail(unsupported(pos, "a fractional power without an exact value"))
	return rfn{}
}

// deriv is d/dx f by the quotient, product and chain rules on the normal
// form.
func (a *alg) deriv(f rfn, x string, pos int) rfn {
	dn := a.dPoly(f.num, x, pos)
	if f.den.isOne() {
		return dn
	}
	dd := a.dPoly(f.den, x, pos)
	num := a.rsub(a.rmul(dn, rfn{f.den, constPoly(ratOne)}), a.rmul(rfn{f.num, constPoly(ratOne)}, dd))
	return a.rdiv(num, rfn{a.mul(f.den, f.den), constPoly(ratOne)}, pos)
}

// dPoly is d/dx p: for each term, the sum over its factors of the
// factor's derivative times the rest.
func (a *alg) dPoly(p poly, x string, pos int) rfn {
	sum := rZero
	for _, t := range p {
		for i, pw := range t.m {
			dk := a.dKey(pw.key, x, pos)
			if dk.isZero() {
				continue
			}
			rest := make(mono, 0, len(t.m))
			rest = append(rest, t.m[:i]...)
			if pw.exp > 1 {
				rest = append(rest, pow{pw.key, pw.exp - 1})
			}
			rest = append(rest, t.m[i+1:]...)
			c := new(big.Rat).Mul(t.c, big.NewRat(int64(pw.exp), 1))
			sum = a.radd(sum, a.rmul(rfn{poly{{rest, c}}, constPoly(ratOne)}, dk))
		}
	}
	return sum
}

// dKey is d/dx of one indeterminate: 1 for x, 0 for another variable or a
// constant, the chain rule for a function application.
func (a *alg) dKey(key, x string, pos int) rfn {
	if key == x {
		return rOne
	}
	at := a.atoms[key]
	if at == nil {
		return rZero
	}
	du := a.deriv(at.arg, x, pos)
	if du.isZero() {
		return rZero
	}
	switch at.fn {
	case "sin":
		return a.rmul(a.apply("cos", at.arg, pos), du)
	case "cos":
		return a.rneg(a.rmul(a.apply("sin", at.arg, pos), du))
	case "exp":
		return a.rmul(rKey(key), du)
	case "log":
		return a.rdiv(du, at.arg, pos)
	case "sqrt":
		return a.rdiv(du, a.rmul(rConst(big.NewRat(2, 1)), rKey(key)), pos)
	}
	fail(unsupported(pos, "the derivative of "+at.fn+" (not differentiable everywhere)"))
	return rfn{}
}

// functionsIn are the function names applied in r, sorted.
func (a *alg) functionsIn(r rfn) []string {
	var fns []string
	for _, k := range r.keys() {
		if at := a.atoms[k]; at != nil {
			fns = append(fns, at.fn)
		}
	}
	return compactSorted(fns)
}

// variables are the variables r depends on, sorted.
func (a *alg) variables(r rfn) []string {
	var vs []string
	for _, k := range r.keys() {
		if at := a.atoms[k]; at != nil {
			vs = append(vs, a.variables(at.arg)...)
		} else if !constants[k] {
			vs = append(vs, k)
		}
	}
	return compactSorted(vs)
}

func compactSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
