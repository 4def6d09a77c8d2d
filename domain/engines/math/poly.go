package math

import (
	"math/big"
	"slices"
	"strconv"
)

// An indeterminate is named by a key: a variable's name, a constant (pi,
// e), or the printed normal form of a function application ("sin(x + 1)"),
// which alg.atoms describes. Keys compare as strings.

// pow is an indeterminate raised to a positive exponent.
type pow struct {
	key string
	exp int
}

// mono is a monomial: powers sorted by key, each key once, exponents > 0.
type mono []pow

// term is a monomial with a non-zero rational coefficient. Coefficients are
// never mutated once in a term.
type term struct {
	m mono
	c *big.Rat
}

// poly is a polynomial in canonical form: terms sorted by cmpMono (the
// leading term first), monomials distinct, no zero coefficient. The zero
// polynomial is empty.
type poly []term

var (
	ratOne  = big.NewRat(1, 1)
	ratZero = new(big.Rat)
)

func (m mono) degree() int {
	d := 0
	for _, p := range m {
		d += p.exp
	}
	return d
}

// cmpMono orders monomials by the graded lexicographic order, greater
// first: higher total degree first, then the monomial with the
// alphabetically earlier indeterminate, then the higher exponent of it.
func cmpMono(a, b mono) int {
	if da, db := a.degree(), b.degree(); da != db {
		if da > db {
			return -1
		}
		return 1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].key != b[i].key {
			if a[i].key < b[i].key {
				return -1
			}
			return 1
		}
		if a[i].exp != b[i].exp {
			if a[i].exp > b[i].exp {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) > len(b):
		return -1
	case len(a) < len(b):
		return 1
	}
	return 0
}

func mulMono(a, b mono) mono {
	out := make(mono, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].key == b[j].key:
			out = append(out, pow{a[i].key, a[i].exp + b[j].exp})
			i++
			j++
		case a[i].key < b[j].key:
			out = append(out, a[i])
			i++
		default:
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// divMono is a/b when b divides a.
func divMono(a, b mono) (mono, bool) {
	out := make(mono, 0, len(a))
	j := 0
	for _, p := range a {
		if j < len(b) && b[j].key == p.key {
			if b[j].exp > p.exp {
				return nil, false
			}
			if p.exp > b[j].exp {
				out = append(out, pow{p.key, p.exp - b[j].exp})
			}
			j++
			continue
		}
		if j < len(b) && b[j].key < p.key {
			return nil, false
		}
		out = append(out, p)
	}
	if j < len(b) {
		return nil, false
	}
	return out, true
}

// appendProductKey appends the map key of the monomial a*b (each key with
// its summed exponent) without building the monomial.
func appendProductKey(buf []byte, a, b mono) []byte {
	put := func(k string, e int) {
		buf = append(buf, k...)
		buf = append(buf, '^')
		buf = strconv.AppendInt(buf, int64(e), 10)
		buf = append(buf, ';')
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].key == b[j].key:
			put(a[i].key, a[i].exp+b[j].exp)
			i++
			j++
		case a[i].key < b[j].key:
			put(a[i].key, a[i].exp)
			i++
		default:
			put(b[j].key, b[j].exp)
			j++
		}
	}
	for ; i < len(a); i++ {
		put(a[i].key, a[i].exp)
	}
	for ; j < len(b); j++ {
		put(b[j].key, b[j].exp)
	}
	return buf
}

// alg holds the state of one evaluation: the work spent against MaxWork,
// the domain, and the function applications met so far by key.
type alg struct {
	work   int
	domain string
	atoms  map[string]*atom
	// bind, when set, gives variables a value (solve's check that a root
	// is in the domain of the equation as written).
	bind map[string]rfn
	// radicands, when set (the solve operation only, so that no verdict
	// of another query changes), writes sqrt of a rational number with a
	// square-free-by-trial integer radicand: sqrt(8) = 2*sqrt(2),
	// sqrt(1/2) = 1/2*sqrt(2).
	radicands bool
}

// spend charges n units of work.
func (a *alg) spend(n int) {
	a.work += n
	if a.work > MaxWork || n < 0 {
		fail(limitProblem("max_work", MaxWork, -1))
	}
}

func constPoly(c *big.Rat) poly {
	if c.Sign() == 0 {
		return nil
	}
	return poly{{nil, c}}
}

func keyPoly(key string) poly { return poly{{mono{{key, 1}}, ratOne}} }

// constValue is p's value when p is a constant.
func (p poly) constValue() (*big.Rat, bool) {
	switch {
	case len(p) == 0:
		return ratZero, true
	case len(p) == 1 && len(p[0].m) == 0:
		return p[0].c, true
	}
	return nil, false
}

func (p poly) isOne() bool {
	c, ok := p.constValue()
	return ok && c.Cmp(ratOne) == 0
}

func (p poly) degree() int {
	if len(p) == 0 {
		return 0
	}
	return p[0].m.degree()
}

func (p poly) equal(q poly) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if cmpMono(p[i].m, q[i].m) != 0 || p[i].c.Cmp(q[i].c) != 0 {
			return false
		}
	}
	return true
}

// keys are p's indeterminates, sorted.
func (p poly) keys() []string {
	var ks []string
	for _, t := range p {
		for _, pw := range t.m {
			ks = append(ks, pw.key)
		}
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

func maxBits(p poly) int {
	m := 0
	for _, t := range p {
		m = max(m, t.c.Num().BitLen(), t.c.Denom().BitLen())
	}
	return m
}

// check enforces MaxTerms, MaxDegree and MaxCoefficientBits on p.
func (a *alg) check(p poly) poly {
	if len(p) > MaxTerms {
		fail(limitProblem("max_terms", MaxTerms, -1))
	}
	if p.degree() > MaxDegree {
		fail(limitProblem("max_degree", MaxDegree, -1))
	}
	if maxBits(p) > MaxCoefficientBits {
		fail(limitProblem("max_digits", MaxDigits, -1))
	}
	return p
}

func (a *alg) add(p, q poly) poly {
	a.spend((len(p) + len(q)) * (1 + (maxBits(p)+maxBits(q))/256))
	out := make(poly, 0, len(p)+len(q))
	i, j := 0, 0
	for i < len(p) && j < len(q) {
		switch c := cmpMono(p[i].m, q[j].m); {
		case c < 0:
			out = append(out, p[i])
			i++
		case c > 0:
			out = append(out, q[j])
			j++
		default:
			s := new(big.Rat).Add(p[i].c, q[j].c)
			if s.Sign() != 0 {
				out = append(out, term{p[i].m, s})
			}
			i++
			j++
		}
	}
	out = append(out, p[i:]...)
	return a.check(append(out, q[j:]...))
}

func (a *alg) scale(p poly, c *big.Rat) poly {
	if c.Sign() == 0 {
		return nil
	}
	a.spend(len(p) * (1 + maxBits(p)/256))
	out := make(poly, len(p))
	for i, t := range p {
		out[i] = term{t.m, new(big.Rat).Mul(t.c, c)}
	}
	return a.check(out)
}

func (a *alg) neg(p poly) poly { return a.scale(p, big.NewRat(-1, 1)) }

func (a *alg) sub(p, q poly) poly { return a.add(p, a.neg(q)) }

func (a *alg) mul(p, q poly) poly {
	if len(p) == 0 || len(q) == 0 {
		return nil
	}
	if len(p) > MaxTerms || len(q) > MaxTerms {
		fail(limitProblem("max_terms", MaxTerms, -1))
	}
	a.spend(len(p) * len(q) * (1 + (maxBits(p)+maxBits(q))/256))
	if p.degree()+q.degree() > MaxDegree {
		fail(limitProblem("max_degree", MaxDegree, -1))
	}
	// Operands of at most twice the limit bound the work; check enforces
	// the limit on the product.
	if maxBits(p)+maxBits(q) > 2*MaxCoefficientBits {
		fail(limitProblem("max_digits", MaxDigits, -1))
	}
	index := make(map[string]int, len(p)+len(q))
	out := make(poly, 0, len(p)+len(q))
	var buf []byte
	if !allInt(p) || !allInt(q) {
		// Rational coefficients: multiply the integer multiples, then
		// divide once per term.
		lp, lq := denLCM(p), denLCM(q)
		prod := a.mul(a.scale(p, new(big.Rat).SetInt(lp)), a.scale(q, new(big.Rat).SetInt(lq)))
		return a.scale(prod, new(big.Rat).SetFrac(big.NewInt(1), lp.Mul(lp, lq)))
	}
	// Integer coefficients: big.Int arithmetic, without the gcd a big.Rat
	// normalises with after every operation.
	var ints []*big.Int
	tmp := new(big.Int)
	for _, s := range p {
		for _, t := range q {
			buf = appendProductKey(buf[:0], s.m, t.m)
			tmp.Mul(s.c.Num(), t.c.Num())
			if i, ok := index[string(buf)]; ok {
				ints[i].Add(ints[i], tmp)
				continue
			}
			index[string(buf)] = len(out)
			out = append(out, term{m: mulMono(s.m, t.m)})
			ints = append(ints, new(big.Int).Set(tmp))
		}
	}
	for i := range out {
		out[i].c = new(big.Rat).SetInt(ints[i])
	}
	out = slices.DeleteFunc(out, func(t term) bool { return t.c.Sign() == 0 })
	slices.SortFunc(out, func(x, y term) int { return cmpMono(x.m, y.m) })
	return a.check(out)
}

// mulTerm multiplies p by one term.
func (a *alg) mulTerm(p poly, t term) poly { return a.mul(p, poly{t}) }

// divExact is f/g when g divides f (g non-zero). With a single divisor the
// division algorithm leaves no remainder exactly when g divides f.
func (a *alg) divExact(f, g poly) (poly, bool) {
	var q poly
	r := f
	for len(r) > 0 {
		m, ok := divMono(r[0].m, g[0].m)
		if !ok {
			return nil, false
		}
		t := term{m, new(big.Rat).Quo(r[0].c, g[0].c)}
		q = a.add(q, poly{t})
		r = a.sub(r, a.mulTerm(g, t))
	}
	return q, true
}

// intPrimitive is the primitive integer polynomial with p's roots: p times
// the lcm of its denominators, divided by the gcd of its coefficients,
// with a positive leading coefficient.
func (a *alg) intPrimitive(p poly) poly {
	if len(p) == 0 {
		return p
	}
	p = a.scale(p, new(big.Rat).SetInt(denLCM(p)))
	g := new(big.Int)
	for _, t := range p {
		g.GCD(nil, nil, g, t.c.Num())
	}
	if p[0].c.Sign() < 0 {
		g.Neg(g)
	}
	return a.scale(p, new(big.Rat).SetFrac(big.NewInt(1), g))
}

// premUni is the primitive pseudo-remainder of f by g, both integer
// polynomials in at most one indeterminate: integer steps
// r = lc(g)*r - lc(r)*x**k*g, then the content is removed.
func (a *alg) premUni(f, g poly) poly {
	r := f
	lg := g[0].c
	for len(r) > 0 && r.degree() >= g.degree() {
		m, ok := divMono(r[0].m, g[0].m)
		if !ok {
			break
		}
		r = a.sub(a.scale(r, lg), a.mulTerm(g, term{m, r[0].c}))
	}
	return a.intPrimitive(r)
}

// monic divides p by its leading coefficient.
func (a *alg) monic(p poly) poly {
	if len(p) == 0 || p[0].c.Cmp(ratOne) == 0 {
		return p
	}
	return a.scale(p, new(big.Rat).Inv(p[0].c))
}

// gcdUni is the monic greatest common divisor of f and g, both in at most
// one indeterminate (Euclid's algorithm on primitive integer
// pseudo-remainders, which keeps the coefficients small).
func (a *alg) gcdUni(f, g poly) poly {
	f, g = a.intPrimitive(f), a.intPrimitive(g)
	for len(g) > 0 {
		f, g = g, a.premUni(f, g)
	}
	return a.monic(f)
}

// commonMono is the greatest monomial dividing every term of p and q.
func commonMono(p, q poly) mono {
	var g mono
	first := true
	for _, s := range []poly{p, q} {
		for _, t := range s {
			if first {
				g = slices.Clone(t.m)
				first = false
				continue
			}
			var next mono
			for _, pw := range g {
				for _, o := range t.m {
					if o.key == pw.key {
						next = append(next, pow{pw.key, min(pw.exp, o.exp)})
					}
				}
			}
			g = next
		}
	}
	return g
}

func allInt(p poly) bool {
	for _, t := range p {
		if !t.c.IsInt() {
			return false
		}
	}
	return true
}

// denLCM is the least common multiple of p's coefficient denominators.
func denLCM(p poly) *big.Int {
	l := big.NewInt(1)
	g := new(big.Int)
	for _, t := range p {
		d := t.c.Denom()
		if d.Cmp(l) == 0 || d.IsInt64() && d.Int64() == 1 {
			continue
		}
		g.GCD(nil, nil, l, d)
		l.Mul(l, new(big.Int).Quo(d, g))
	}
	return l
}
