package math

import (
	"math/big"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// The operations integrate, limit and solve (QWED protocol v1.0 §4.1
// "calculus", §5.2.1). Each works on the normal form in one variable x and
// is exact: an answer the engine cannot compute exactly is UNSUPPORTED,
// never approximated.

// coeffsIn are p's coefficients as a polynomial in x: out[k] is the
// polynomial (free of x) multiplying x**k. A key that depends on x other
// than x itself (sin(x)) is UNSUPPORTED.
func (a *alg) coeffsIn(p poly, x string) []poly {
	var out []poly
	for _, t := range p {
		k := 0
		rest := make(mono, 0, len(t.m))
		for _, pw := range t.m {
			switch {
			case pw.key == x:
				k = pw.exp
			case a.dependsOn(pw.key, x):
				fail(unsupported(-1, "the expression involves "+pw.key+", which is not a rational function of "+x))
			default:
				rest = append(rest, pw)
			}
		}
		for len(out) <= k {
			out = append(out, nil)
		}
		out[k] = a.add(out[k], poly{{rest, t.c}})
	}
	return out
}

// dependsOn reports whether key is x or a function application of an
// argument that involves x.
func (a *alg) dependsOn(key, x string) bool {
	if key == x {
		return true
	}
	at := a.atoms[key]
	return at != nil && slices.Contains(a.variables(at.arg), x)
}

// horner is the value of the coefficient list cs at v.
func (a *alg) horner(cs []poly, v rfn) rfn {
	acc := rZero
	for k := len(cs) - 1; k >= 0; k-- {
		acc = a.radd(a.rmul(acc, v), rfn{cs[k], constPoly(ratOne)})
	}
	return acc
}

// subst is r with x replaced by v (r rational in x).
func (a *alg) subst(r rfn, x string, v rfn, pos int) rfn {
	return a.rdiv(a.horner(a.coeffsIn(r.num, x), v), a.horner(a.coeffsIn(r.den, x), v), pos)
}

// antiderivative is an antiderivative of f in x (the constant of
// integration 0) when f is a polynomial in x whose coefficients are free of
// x, or a rational function of x with rational coefficients whose
// antiderivative is rational; any other integrand is UNSUPPORTED (a claimed
// antiderivative of it is still verified by differentiation).
func (a *alg) antiderivative(f rfn, x string) rfn {
	if a.dependsOnAny(f.den, x) {
		return a.rationalAntiderivative(f, x)
	}
	cs := a.coeffsIn(f.num, x)
	var out poly
	for k, c := range cs {
		for _, t := range c {
			m := mulMono(t.m, mono{{x, k + 1}})
			out = a.add(out, poly{{m, new(big.Rat).Quo(t.c, big.NewRat(int64(k+1), 1))}})
		}
	}
	return a.mk(out, f.den, -1)
}

func (a *alg) dependsOnAny(p poly, x string) bool {
	for _, k := range p.keys() {
		if a.dependsOn(k, x) {
			return true
		}
	}
	return false
}

// ratConst is r's value when r is a rational number; otherwise the
// operation named by what is UNSUPPORTED.
func ratConst(r rfn, what string) *big.Rat {
	v, ok := r.constValue()
	if !ok {
		fail(unsupported(-1, what+" is "+r.str()+", not a rational number"))
	}
	return v
}

// infinity is +1 or -1 for a written infinity (oo, +oo, -oo, inf, +inf,
// -inf, infinity), 0 otherwise.
func infinity(s string) int {
	s = strings.TrimSpace(s)
	sign := 1
	switch {
	case strings.HasPrefix(s, "-"):
		sign, s = -1, strings.TrimSpace(s[1:])
	case strings.HasPrefix(s, "−"): // U+2212, a minus as the lexer reads it
		sign, s = -1, strings.TrimSpace(strings.TrimPrefix(s, "−"))
	case strings.HasPrefix(s, "+"):
		s = strings.TrimSpace(s[1:])
	}
	switch s {
	case "oo", "inf", "infinity", "∞":
		return sign
	}
	return 0
}

// constant evaluates a written value of a param (a bound or a point): an
// expression without variables.
func (a *alg) constant(field, s string) rfn {
	if len(s) > MaxQueryBytes {
		fail(limitProblem("max_query_bytes", MaxQueryBytes, -1))
	}
	c := parse(s)
	if c.rhs != nil || len(astVariables(c.lhs, nil)) > 0 || hasDerivative(c.lhs) {
		fail(invalidParams(field, field+" must be an expression without variables or relations"))
	}
	a.refuseUndefined(c.lhs)
	return a.eval(c.lhs)
}

// limitValue is the limit of f at a finite point c (dir +1 from the right,
// -1 from the left, 0 both sides) or at ±infinity (inf ±1): the value, or
// an infinite sign (±1) with a zero value, or exists false.
func (a *alg) limitValue(f rfn, x string, c *big.Rat, inf, dir int) (val rfn, infSign int, exists bool) {
	n, d := a.coeffsIn(f.num, x), a.coeffsIn(f.den, x)
	if inf != 0 {
		dn, dd := len(n)-1, len(d)-1
		a.refuseVanishing(d[dd], "the leading coefficient of the denominator")
		switch {
		case len(n) == 0:
			return rZero, 0, true
		case dn < dd:
			return rZero, 0, true
		case dn == dd:
			return a.rdiv(rfn{n[dn], constPoly(ratOne)}, rfn{d[dd], constPoly(ratOne)}, -1), 0, true
		}
		s := ratConst(a.rdiv(rfn{n[dn], constPoly(ratOne)}, rfn{d[dd], constPoly(ratOne)}, -1), "the ratio of the leading coefficients")
		sign := s.Sign()
		if inf < 0 && (dn-dd)%2 == 1 {
			sign = -sign
		}
		return rZero, sign, true
	}
	cv := rConst(c)
	// Cancel (x - c) while it divides both: the indeterminate form 0/0.
	for {
		nz, dz := a.horner(n, cv).isZero(), a.horner(d, cv).isZero()
		if !dz {
			a.refuseVanishing(a.horner(d, cv).num, "the denominator at the point")
			return a.rdiv(a.horner(n, cv), a.horner(d, cv), -1), 0, true
		}
		if !nz {
			break
		}
		n, d = a.deflate(n, c), a.deflate(d, c)
	}
	m := 0
	for a.horner(d, cv).isZero() {
		d = a.deflate(d, c)
		m++
	}
	s := ratConst(a.rdiv(a.horner(n, cv), a.horner(d, cv), -1), "the sign of the limit (numerator over the rest of the denominator at the point)")
	right, left := s.Sign(), s.Sign()
	if m%2 == 1 {
		left = -left
	}
	switch {
	case dir > 0:
		return rZero, right, true
	case dir < 0:
		return rZero, left, true
	case left == right:
		return rZero, right, true
	}
	return rZero, 0, false
}

// refuseVanishing refuses (UNSUPPORTED) a limit decided by dividing by p,
// a polynomial free of the limit's variable that is not identically zero,
// unless p is non-zero whatever the values of the other variables: a
// number (rational, or a polynomial in pi or e alone). A polynomial in
// parameters vanishes for some of their values, where the limit differs
// ((a + x)/(a + 2*x) at 0 is 1, but 1/2 for a = 0).
func (a *alg) refuseVanishing(p poly, what string) {
	r := rfn{p, constPoly(ratOne)}
	if vs := a.variables(r); len(vs) > 0 {
		fail(unsupported(-1, what+" is "+r.str()+", which is zero for some value of "+joinNames(vs)+" (the limit differs there)"))
	}
	if !a.decidableNonZero(r) {
		fail(unsupported(-1, what+" is "+r.str()+", which the engine cannot decide to be non-zero"))
	}
}

// deflate divides the coefficient list cs by (x - c), which divides it.
func (a *alg) deflate(cs []poly, c *big.Rat) []poly {
	if len(cs) <= 1 {
		return nil
	}
	out := make([]poly, len(cs)-1)
	var carry poly
	for k := len(cs) - 1; k >= 1; k-- {
		carry = a.add(cs[k], a.scale(carry, c))
		out[k-1] = carry
	}
	return out
}

// ratCoeffs are p's coefficients in x as rationals (p univariate in x).
func ratCoeffs(cs []poly) []*big.Rat {
	out := make([]*big.Rat, len(cs))
	for i, c := range cs {
		v, _ := c.constValue()
		out[i] = v
	}
	return out
}

// ratHorner is the value of the rational coefficient list cs at v.
func (a *alg) ratHorner(cs []*big.Rat, v *big.Rat) *big.Rat {
	bits := 0
	for _, c := range cs {
		bits = max(bits, c.Num().BitLen(), c.Denom().BitLen())
	}
	a.spend(len(cs) * (1 + (bits+len(cs)*(v.Num().BitLen()+v.Denom().BitLen()))/256))
	acc := new(big.Rat)
	for k := len(cs) - 1; k >= 0; k-- {
		acc.Mul(acc, v)
		acc.Add(acc, cs[k])
	}
	return acc
}

// ratDeflate divides cs by (x - r), a root.
func ratDeflate(cs []*big.Rat, r *big.Rat) []*big.Rat {
	out := make([]*big.Rat, len(cs)-1)
	carry := new(big.Rat)
	for k := len(cs) - 1; k >= 1; k-- {
		carry = new(big.Rat).Add(cs[k], new(big.Rat).Mul(carry, r))
		out[k-1] = carry
	}
	return out
}

// divisors are the positive divisors of n (0 < n <= MaxRootCoefficient),
// ascending.
func (a *alg) divisors(n int64) []int64 {
	var small, large []int64
	for i := int64(1); i*i <= n; i++ {
		if i%1024 == 0 {
			a.spend(1)
		}
		if n%i == 0 {
			small = append(small, i)
			if i != n/i {
				large = append(large, n/i)
			}
		}
	}
	slices.Reverse(large)
	return append(small, large...)
}

// rationalRoots removes the rational roots of the univariate integer
// polynomial cs (rational root theorem) and returns them (distinct,
// ascending) with the remaining factor.
func (a *alg) rationalRoots(cs []*big.Rat) ([]*big.Rat, []*big.Rat) {
	var roots []*big.Rat
	// x = 0 first: the candidates need a non-zero constant term.
	for len(cs) > 1 && cs[0].Sign() == 0 {
		if len(roots) == 0 {
			roots = append(roots, new(big.Rat))
		}
		cs = cs[1:]
	}
	if len(cs) <= 1 {
		return roots, cs
	}
	p := a.intPrimitive(ratPoly(cs))
	ic := make([]*big.Int, len(cs))
	for _, t := range p {
		ic[t.m.degree()] = t.c.Num()
	}
	lim := big.NewInt(MaxRootCoefficient)
	lead, cons := new(big.Int).Abs(ic[len(ic)-1]), new(big.Int).Abs(ic[0])
	if lead.Cmp(lim) > 0 || cons.Cmp(lim) > 0 {
		fail(unsupported(-1, "the rational root test needs the divisors of coefficients larger than 10**10"))
	}
	ps, qs := a.divisors(cons.Int64()), a.divisors(lead.Int64())
	if len(ps)*len(qs) > MaxRootCandidates {
		fail(unsupported(-1, "the rational root test would try more than 20000 candidates"))
	}
	for _, q := range qs {
		for _, pv := range ps {
			for _, s := range []int64{-1, 1} {
				r := big.NewRat(s*pv, q)
				if r.Denom().Int64() != q {
					continue // not in lowest terms: tried as a smaller q
				}
				if len(cs) > 1 && a.ratHorner(cs, r).Sign() == 0 {
					roots = append(roots, r)
					for len(cs) > 1 && a.ratHorner(cs, r).Sign() == 0 {
						cs = ratDeflate(cs, r)
					}
				}
			}
		}
	}
	slices.SortFunc(roots, func(x, y *big.Rat) int { return x.Cmp(y) })
	return roots, cs
}

// ratPoly is the polynomial in the placeholder indeterminate "x" with
// coefficients cs (used where only the coefficients matter).
func ratPoly(cs []*big.Rat) poly {
	var p poly
	for k := len(cs) - 1; k >= 0; k-- {
		if cs[k].Sign() == 0 {
			continue
		}
		var m mono
		if k > 0 {
			m = mono{{"x", k}}
		}
		p = append(p, term{m, cs[k]})
	}
	return p
}

// solveRoots are the solutions of e = 0 in x (e rational in x with
// rational coefficients): distinct, rational ones ascending then the two
// roots of a remaining quadratic factor; complete, or UNSUPPORTED.
func (a *alg) solveRoots(e rfn, x string) []rfn {
	for _, k := range e.keys() {
		if k != x {
			fail(unsupported(-1, "solve takes equations in one variable with rational coefficients; found "+k))
		}
	}
	if e.isZero() {
		fail(unsupported(-1, "the equation holds for every "+x+" where both sides are defined"))
	}
	cs := ratCoeffs(a.coeffsIn(e.num, x))
	roots, rest := a.rationalRoots(cs)
	var out []rfn
	for _, r := range roots {
		if a.domain != "integer" || r.IsInt() {
			out = append(out, rConst(r))
		}
	}
	if len(rest) <= 1 || a.domain == "rational" || a.domain == "integer" {
		return out // the rational (integer) roots are all the rational (integer) solutions
	}
	// The square-free part of the remaining factor has the same roots.
	rp := ratPoly(rest)
	sf, _ := a.divExact(rp, a.gcdUni(rp, a.dPolyUni(rp)))
	sfc := make([]*big.Rat, sf.degree()+1)
	for i := range sfc {
		sfc[i] = new(big.Rat)
	}
	for _, t := range sf {
		sfc[t.m.degree()] = t.c
	}
	if len(sfc) != 3 {
		fail(unsupported(-1, "the equation has a factor of degree "+itoa(len(sfc)-1)+" without rational roots; the engine solves exactly up to degree 2"))
	}
	// Integer coefficients, so the discriminant is an integer whose
	// square factors are taken out of the radical (sqrt(8) = 2*sqrt(2)).
	ip := a.intPrimitive(ratPoly(sfc))
	A, B, C := new(big.Rat), new(big.Rat), new(big.Rat)
	for _, t := range ip {
		*[]*big.Rat{C, B, A}[t.m.degree()] = *t.c
	}
	disc := new(big.Rat).Sub(new(big.Rat).Mul(B, B), new(big.Rat).Mul(big.NewRat(4, 1), new(big.Rat).Mul(A, C)))
	if disc.Sign() < 0 {
		if a.domain == "complex" {
			fail(unsupported(-1, "the complex roots of a quadratic factor (the engine has no imaginary unit)"))
		}
		return out
	}
	sq := a.sqrtRational(disc)
	twoA := rConst(new(big.Rat).Mul(big.NewRat(2, 1), A))
	negB := rConst(new(big.Rat).Neg(B))
	r1 := a.rdiv(a.rsub(negB, sq), twoA, -1)
	r2 := a.rdiv(a.radd(negB, sq), twoA, -1)
	if A.Sign() < 0 {
		r1, r2 = r2, r1
	}
	return append(out, r1, r2)
}

// dPolyUni is the derivative of p in its one indeterminate.
func (a *alg) dPolyUni(p poly) poly {
	var out poly
	for _, t := range p {
		if len(t.m) == 0 {
			continue
		}
		var m mono
		if t.m[0].exp > 1 {
			m = mono{{t.m[0].key, t.m[0].exp - 1}}
		}
		out = a.add(out, poly{{m, new(big.Rat).Mul(t.c, big.NewRat(int64(t.m[0].exp), 1))}})
	}
	return out
}

// definedAt reports whether both sides of c are defined with x = v.
func (a *alg) definedAt(c claim, x string, v rfn) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			f, isF := r.(*failure)
			if !isF || f.problem.Code != CodeInvalid {
				panic(r)
			}
			ok = false
		}
	}()
	a.bind = map[string]rfn{x: v}
	defer func() { a.bind = nil }()
	a.eval(c.lhs)
	if c.rhs != nil {
		a.eval(c.rhs)
	}
	return a.argumentsInDomain(c.lhs, x) && (c.rhs == nil || a.argumentsInDomain(c.rhs, x))
}

// compareClaim decides a computed value against a claimed one: VERIFIED
// when equal, FAILED when decidably different, UNSUPPORTED otherwise.
func (a *alg) compareClaim(computed, claimed rfn, res *Result, p Params) engines.Outcome {
	refuseNonInteger(computed, p)
	refuseNonInteger(claimed, p)
	d := a.rsub(computed, claimed)
	res.Expected = computed.str()
	res.Actual = claimed.str()
	if v, ok := computed.constValue(); ok && p.Precision != nil {
		res.Decimal = v.FloatString(*p.Precision)
	}
	res.SimplifiedDifference = d.str()
	if d.isZero() {
		res.IsValid = true
		res.Message = res.Kind + " confirmed: " + res.Expected
		return engines.Outcome{Status: engines.Verified, Result: *res}
	}
	if !a.decidableNonZero(d) {
		fail(unsupported(-1, "the difference "+d.str()+" involves functions ("+joinNames(a.functionsIn(d))+") whose relations the engine cannot decide"))
	}
	res.Message = res.Kind + " is " + res.Expected + ", not " + res.Actual
	return engines.Outcome{Status: engines.Failed, Result: *res}
}

// squareOut writes n > 0 as outside**2 * inside, taking out the squares of
// the primes up to MaxSquareTrial (inside may keep a square of a larger
// prime: the value is exact either way).
func (a *alg) squareOut(n *big.Int) (outside, inside *big.Int) {
	outside, inside = big.NewInt(1), new(big.Int).Set(n)
	p2, r := new(big.Int), new(big.Int)
	for f := int64(2); f <= MaxSquareTrial; f++ {
		fb := big.NewInt(f)
		p2.Mul(fb, fb)
		if p2.Cmp(inside) > 0 {
			break
		}
		// Each trial divides the radicand: charged by its size (1000
		// digits cost 7 units a trial, 700,000 for the whole run).
		a.spend(1 + inside.BitLen()/512)
		for {
			q := new(big.Int)
			q.QuoRem(inside, p2, r)
			if r.Sign() != 0 {
				break
			}
			inside = q
			outside.Mul(outside, fb)
		}
	}
	return outside, inside
}

// keyedPoly is the polynomial in x with coefficients cs.
func keyedPoly(cs []*big.Rat, x string) poly {
	var p poly
	for k := len(cs) - 1; k >= 0; k-- {
		if cs[k] == nil || cs[k].Sign() == 0 {
			continue
		}
		var m mono
		if k > 0 {
			m = mono{{x, k}}
		}
		p = append(p, term{m, cs[k]})
	}
	return p
}

// uniCoeffs are the rational coefficients of p (univariate in x), of
// length n at least.
func (a *alg) uniCoeffs(p poly, x string, n int) []*big.Rat {
	cs := ratCoeffs(a.coeffsIn(p, x))
	for len(cs) < n {
		cs = append(cs, nil)
	}
	for i, c := range cs {
		if c == nil {
			cs[i] = new(big.Rat)
		}
	}
	return cs
}

// rationalAntiderivative is an antiderivative of the rational function
// f = q + r/d of x (rational coefficients) when it is rational: the
// Horowitz–Ostrogradsky split r/d = (A/D1)' + B/D2 with D1 = gcd(d, d'),
// D2 = d/D1, solved as a linear system over the rationals; B != 0 needs
// logarithms or arctangents and is UNSUPPORTED.
func (a *alg) rationalAntiderivative(f rfn, x string) rfn {
	for _, k := range f.keys() {
		if k != x {
			fail(unsupported(-1, "the integrand is a rational function of "+x+" with "+k+" in it; claim an antiderivative (integrand = F) to have it verified by differentiation"))
		}
	}
	d := f.den
	n := d.degree()
	if n > MaxRationalIntegrandDegree {
		fail(limitProblem("max_rational_integrand_degree", MaxRationalIntegrandDegree, -1))
	}
	q, r := a.polyDivRem(f.num, d, x)
	D1 := a.gcdUni(d, a.dPolyUni(d))
	D2, _ := a.divExact(d, D1)
	T, _ := a.divExact(a.mul(D2, a.dPolyUni(D1)), D1)
	m := D1.degree()
	// Column i < m: the unknown coefficient of x**i in A; column m + j: of
	// x**j in B. Row k: the coefficient of x**k.
	cols := make([][]*big.Rat, n)
	for i := 0; i < m; i++ {
		xi := keyedPoly(unitAt(i), x)
		col := a.sub(a.mul(a.dPolyUni(xi), D2), a.mul(xi, T))
		cols[i] = a.uniCoeffs(col, x, n)
	}
	for j := 0; j < n-m; j++ {
		cols[m+j] = a.uniCoeffs(a.mul(keyedPoly(unitAt(j), x), D1), x, n)
	}
	sol := a.solveLinear(cols, a.uniCoeffs(r, x, n), n)
	for _, b := range sol[m:] {
		if b.Sign() != 0 {
			fail(unsupported(-1, "the antiderivative of the integrand needs logarithms or arctangents, which the engine does not represent; claim one (integrand = F) to have it verified by differentiation"))
		}
	}
	A := keyedPoly(sol[:m], x)
	F := a.radd(a.antiderivative(rfn{q, constPoly(ratOne)}, x), a.mk(A, D1, -1))
	// Differentiated back, F is the integrand exactly, or this is a fault.
	if !a.rsub(a.deriv(F, x, -1), f).isZero() {
		fail(&failure{engines.Error, engines.Problem{Code: CodeInternal, Message: "Verification failed unexpectedly: an antiderivative did not differentiate back"}})
	}
	return F
}

func unitAt(i int) []*big.Rat {
	cs := make([]*big.Rat, i+1)
	for k := range cs {
		cs[k] = new(big.Rat)
	}
	cs[i] = big.NewRat(1, 1)
	return cs
}

// polyDivRem divides f by g (both univariate in x): f = q*g + r, deg r <
// deg g.
func (a *alg) polyDivRem(f, g poly, x string) (q, r poly) {
	r = f
	for len(r) > 0 && r.degree() >= g.degree() {
		m, _ := divMono(r[0].m, g[0].m)
		t := term{m, new(big.Rat).Quo(r[0].c, g[0].c)}
		q = a.add(q, poly{t})
		r = a.sub(r, a.mulTerm(g, t))
	}
	return q, r
}

// solveLinear solves the n x n system whose columns are cols (cols[c][row])
// with right side rhs; the system has one solution
// (Horowitz–Ostrogradsky). Each row is scaled to integers and eliminated
// fraction-free (Bareiss: every division is exact), so the entries stay
// integers bounded by the system's minors instead of rationals renormalised
// by a gcd at each step; each update is charged by the square of the
// entries' bits and the entries are bounded like every coefficient.
func (a *alg) solveLinear(cols [][]*big.Rat, rhs []*big.Rat, n int) []*big.Rat {
	a.spend(n * n * n)
	m := make([][]*big.Int, n)
	for row := 0; row < n; row++ {
		lcm := big.NewInt(1)
		for c := 0; c <= n; c++ {
			d := rhs[row].Denom()
			if c < n {
				d = cols[c][row].Denom()
			}
			g := new(big.Int).GCD(nil, nil, lcm, d)
			lcm.Mul(lcm, new(big.Int).Quo(d, g))
		}
		m[row] = make([]*big.Int, n+1)
		for c := 0; c <= n; c++ {
			v := rhs[row]
			if c < n {
				v = cols[c][row]
			}
			m[row][c] = new(big.Int).Mul(v.Num(), new(big.Int).Quo(lcm, v.Denom()))
		}
	}
	prev := big.NewInt(1)
	t := new(big.Int)
	for c := 0; c < n; c++ {
		p := c
		for p < n && m[p][c].Sign() == 0 {
			p++
		}
		if p == n {
			fail(&failure{engines.Error, engines.Problem{Code: CodeInternal, Message: "Verification failed unexpectedly: a singular system"}})
		}
		m[c], m[p] = m[p], m[c]
		for row := c + 1; row < n; row++ {
			bits := 0
			for j := c; j <= n; j++ {
				bits = max(bits, m[row][j].BitLen(), m[c][j].BitLen())
			}
			a.spend((n + 1 - c) * (1 + bits*bits/65536))
			for j := c + 1; j <= n; j++ {
				// m[row][j] = (m[row][j]*m[c][c] - m[row][c]*m[c][j]) / prev, exact.
				m[row][j].Mul(m[row][j], m[c][c])
				m[row][j].Sub(m[row][j], t.Mul(m[row][c], m[c][j]))
				m[row][j].Quo(m[row][j], prev)
				if m[row][j].BitLen() > MaxCoefficientBits {
					fail(limitProblem("max_digits", MaxDigits, -1))
				}
			}
			m[row][c].SetInt64(0)
		}
		prev = m[c][c]
	}
	// Back substitution over the rationals: the system is now triangular.
	out := make([]*big.Rat, n)
	for c := n - 1; c >= 0; c-- {
		a.spend(n - c)
		v := new(big.Rat).SetInt(m[c][n])
		for j := c + 1; j < n; j++ {
			v.Sub(v, new(big.Rat).Mul(new(big.Rat).SetInt(m[c][j]), out[j]))
		}
		out[c] = v.Quo(v, new(big.Rat).SetInt(m[c][c]))
	}
	return out
}

// rootsIn reports whether the univariate polynomial p in x has a real root
// in the closed interval [lo, hi] (lo <= hi), by a Sturm sequence.
func (a *alg) rootsIn(p poly, x string, lo, hi *big.Rat) bool {
	if p.degree() == 0 {
		return false
	}
	at := func(s poly, v *big.Rat) *big.Rat { return a.ratHorner(a.uniCoeffs(s, x, 0), v) }
	if at(p, lo).Sign() == 0 || at(p, hi).Sign() == 0 {
		return true
	}
	s, _ := a.divExact(p, a.gcdUni(p, a.dPolyUni(p)))
	seq := []poly{s, a.dPolyUni(s)}
	for {
		_, r := a.polyDivRem(seq[len(seq)-2], seq[len(seq)-1], x)
		if len(r) == 0 {
			break
		}
		seq = append(seq, a.neg(r))
	}
	changes := func(v *big.Rat) int {
		n, last := 0, 0
		for _, s := range seq {
			sg := at(s, v).Sign()
			if sg != 0 && last != 0 && sg != last {
				n++
			}
			if sg != 0 {
				last = sg
			}
		}
		return n
	}
	return changes(lo)-changes(hi) > 0
}

// sqrtRational is sqrt(c) for a rational c > 0 that is not a square:
// sqrt(p/q) = sqrt(p*q)/q, with the square factors of p*q up to
// MaxSquareTrial taken out of the radical.
func (a *alg) sqrtRational(c *big.Rat) rfn {
	outside, inside := a.squareOut(new(big.Int).Mul(c.Num(), c.Denom()))
	k := new(big.Rat).SetFrac(outside, c.Denom())
	if inside.IsInt64() && inside.Int64() == 1 {
		return rConst(k)
	}
	return a.rmul(rConst(k), rKey(a.atomKey("sqrt", rConst(new(big.Rat).SetInt(inside)))))
}
