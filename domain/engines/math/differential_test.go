package math

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// The differential check of the calculus operations: a fixed-seed corpus
// of integrals, limits and equations whose answers this file computes on
// its own, with its own polynomial arithmetic over big.Rat (no code of the
// engine), from how each case was built: an integrand as the derivative of
// a known rational function, a limit from the multiplicities of (x - c) in
// its numerator and denominator, an equation from its roots. `make test`
// runs TestQWEDProtocol_Math_CalculusDifferential (a few thousand cases);
// `make fuzz` runs FuzzCalculusDifferential over other seeds.

// rpoly is a polynomial in x over the rationals, coefficients from x**0.
type rpoly []*big.Rat

func (p rpoly) trim() rpoly {
	for len(p) > 0 && p[len(p)-1].Sign() == 0 {
		p = p[:len(p)-1]
	}
	return p
}

func (p rpoly) deg() int { return len(p.trim()) - 1 }

func padd(p, q rpoly) rpoly {
	out := make(rpoly, max(len(p), len(q)))
	for i := range out {
		out[i] = new(big.Rat)
		if i < len(p) {
			out[i].Add(out[i], p[i])
		}
		if i < len(q) {
			out[i].Add(out[i], q[i])
		}
	}
	return out.trim()
}

func pscale(p rpoly, c *big.Rat) rpoly {
	out := make(rpoly, len(p))
	for i := range p {
		out[i] = new(big.Rat).Mul(p[i], c)
	}
	return out.trim()
}

func pmul(p, q rpoly) rpoly {
	if len(p) == 0 || len(q) == 0 {
		return nil
	}
	out := make(rpoly, len(p)+len(q)-1)
	for i := range out {
		out[i] = new(big.Rat)
	}
	for i := range p {
		for j := range q {
			out[i+j].Add(out[i+j], new(big.Rat).Mul(p[i], q[j]))
		}
	}
	return out.trim()
}

func ppow(p rpoly, k int) rpoly {
	out := rpoly{big.NewRat(1, 1)}
	for range k {
		out = pmul(out, p)
	}
	return out
}

func pderiv(p rpoly) rpoly {
	if len(p) <= 1 {
		return nil
	}
	out := make(rpoly, len(p)-1)
	for i := range out {
		out[i] = new(big.Rat).Mul(p[i+1], big.NewRat(int64(i+1), 1))
	}
	return out.trim()
}

func pinteg(p rpoly) rpoly {
	out := make(rpoly, len(p)+1)
	out[0] = new(big.Rat)
	for i := range p {
		out[i+1] = new(big.Rat).Quo(p[i], big.NewRat(int64(i+1), 1))
	}
	return out.trim()
}

func peval(p rpoly, v *big.Rat) *big.Rat {
	acc := new(big.Rat)
	for i := len(p) - 1; i >= 0; i-- {
		acc.Mul(acc, v)
		acc.Add(acc, p[i])
	}
	return acc
}

// prem is the remainder of p divided by q (q non-zero).
func prem(p, q rpoly) rpoly {
	r := append(rpoly(nil), p.trim()...)
	q = q.trim()
	for len(r) >= len(q) {
		k := new(big.Rat).Quo(r[len(r)-1], q[len(q)-1])
		s := len(r) - len(q)
		for i := range q {
			r[s+i] = new(big.Rat).Sub(r[s+i], new(big.Rat).Mul(k, q[i]))
		}
		r = r[:len(r)-1].trim()
	}
	return r
}

// pstr is p in the engine's syntax, each coefficient parenthesised.
func pstr(p rpoly) string {
	var parts []string
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].Sign() == 0 {
			continue
		}
		switch c := "(" + p[i].RatString() + ")"; i {
		case 0:
			parts = append(parts, c) // not x**0: 0**0 is undefined
		case 1:
			parts = append(parts, c+"*x")
		default:
			parts = append(parts, c+"*x**"+fmt.Sprint(i))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " + ")
}

// lin is x - r.
func lin(r *big.Rat) rpoly { return rpoly{new(big.Rat).Neg(r), big.NewRat(1, 1)} }

func (s *splitmix) rat(num, den int) *big.Rat {
	return big.NewRat(int64(s.intn(2*num+1)-num), int64(s.intn(den)+1))
}

func (s *splitmix) nzrat(num, den int) *big.Rat {
	for {
		if r := s.rat(num, den); r.Sign() != 0 {
			return r
		}
	}
}

// poly is a random polynomial of degree d exactly.
func (s *splitmix) poly(d, num, den int) rpoly {
	p := make(rpoly, d+1)
	for i := range p {
		p[i] = s.rat(num, den)
	}
	p[d] = s.nzrat(num, den)
	return p
}

// diffCase runs one generated case and reports a disagreement.
type diffCase struct {
	query, params string
	status        engines.Status
	code          string            // the error code of an ERROR or UNSUPPORTED
	value         string            // the exact value expected ("" not checked)
	fields        map[string]string // other result fields expected
}

func (c diffCase) check(t *testing.T) {
	t.Helper()
	o := verify(t, c.query, c.params)
	bad := o.Status != c.status
	if c.code != "" && (o.Err == nil || o.Err.Code != c.code) {
		bad = true
	}
	if !bad && (c.status == engines.Verified || c.status == engines.Failed) {
		r := resultFields(t, o)
		if c.value != "" && !sameValue(fmt.Sprint(r["value"]), c.value) {
			bad = true
		}
		for k, v := range c.fields {
			bad = bad || r[k] != v
		}
	}
	if bad {
		t.Errorf("%s %s: got %s %+v %+v; want %s %s value %q %v", c.query, c.params, o.Status, o.Err, o.Result, c.status, c.code, c.value, c.fields)
	}
}

// sameValue compares two values: as rationals when both are, else as text.
func sameValue(got, want string) bool {
	g, ok1 := new(big.Rat).SetString(got)
	w, ok2 := new(big.Rat).SetString(want)
	if ok1 && ok2 {
		return g.Cmp(w) == 0
	}
	return got == want
}

func jsonParams(kv ...string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", kv[i], kv[i+1])
	}
	return b.String() + "}"
}

func q(s string) string { return fmt.Sprintf("%q", s) }

// genPolyIntegral: a polynomial integrand, definite (value and claims) and
// a claimed antiderivative up to a constant.
func genPolyIntegral(s *splitmix) []diffCase {
	P := s.poly(s.intn(9), 20, 6)
	l, h := s.rat(10, 4), s.rat(10, 4)
	Q := pinteg(P)
	want := new(big.Rat).Sub(peval(Q, h), peval(Q, l))
	def := jsonParams("operation", q("integrate"), "variable", q("x"), "lower", q(l.RatString()), "upper", q(h.RatString()))
	wrong := new(big.Rat).Add(want, big.NewRat(1, 7))
	anti := jsonParams("operation", q("integrate"), "variable", q("x"))
	return []diffCase{
		{query: pstr(P), params: def, status: engines.Verified, value: want.RatString()},
		{query: pstr(P) + " = " + want.RatString(), params: def, status: engines.Verified},
		{query: pstr(P) + " = " + wrong.RatString(), params: def, status: engines.Failed},
		{query: pstr(P) + " = " + pstr(Q) + " + 5/3", params: anti, status: engines.Verified},
		{query: pstr(P) + " = " + pstr(Q) + " + x/1000", params: anti, status: engines.Failed},
	}
}

// genRationalIntegral: the derivative of G = A/B as the integrand. Over an
// interval without a root of B the integral is G(h) - G(l); with one it
// diverges; adding c/(x - r) needs a logarithm (UNSUPPORTED).
func genRationalIntegral(s *splitmix) []diffCase {
	var B rpoly = rpoly{big.NewRat(1, 1)}
	var lins []*big.Rat // rational roots of B
	var sq []int64      // x**2 - p factors: roots ±sqrt(p)
	var factors []rpoly
	for range 1 + s.intn(3) {
		e := 1 + s.intn(3)
		var f rpoly
		switch s.intn(3) {
		case 0:
			r := s.rat(6, 3)
			lins = append(lins, r)
			f = lin(r)
		case 1:
			p := []int64{2, 3, 5, 7}[s.intn(4)]
			sq = append(sq, p)
			f = rpoly{big.NewRat(-p, 1), new(big.Rat), big.NewRat(1, 1)}
		default:
			f = rpoly{s.nzrat(5, 3), s.rat(1, 1), big.NewRat(1, 1)} // x**2 + b*x + k
			if disc := new(big.Rat).Sub(new(big.Rat).Mul(f[1], f[1]), new(big.Rat).Mul(big.NewRat(4, 1), f[0])); disc.Sign() >= 0 {
				f[0] = new(big.Rat).Add(new(big.Rat).Abs(f[0]), big.NewRat(1, 1)) // b in {-1, 0, 1}: x**2 + b*x + k, k >= 1, has no real root
			}
		}
		factors = append(factors, f)
		B = pmul(B, ppow(f, e))
	}
	var A rpoly
	for {
		A = s.poly(s.intn(4), 9, 3)
		coprime := true
		for _, f := range factors {
			coprime = coprime && len(prem(A, f)) > 0
		}
		if coprime {
			break
		}
	}
	num := padd(pmul(pderiv(A), B), pscale(pmul(A, pderiv(B)), big.NewRat(-1, 1)))
	f := "(" + pstr(num) + ")/(" + pstr(B) + ")**2"
	G := func(v *big.Rat) *big.Rat { return new(big.Rat).Quo(peval(A, v), peval(B, v)) }
	l, h := s.rat(8, 3), s.rat(8, 3)
	lo, hi := l, h
	if lo.Cmp(hi) > 0 {
		lo, hi = hi, lo
	}
	pole := false
	for _, r := range lins {
		pole = pole || (lo.Cmp(r) <= 0 && r.Cmp(hi) <= 0)
	}
	// sqrt(p) in [a, b] exactly: a <= sqrt(p) (a <= 0 or a**2 <= p) and
	// sqrt(p) <= b (b >= 0 and p <= b**2).
	in := func(p int64, a, b *big.Rat) bool {
		pr := big.NewRat(p, 1)
		left := a.Sign() <= 0 || new(big.Rat).Mul(a, a).Cmp(pr) <= 0
		right := b.Sign() >= 0 && pr.Cmp(new(big.Rat).Mul(b, b)) <= 0
		return left && right
	}
	for _, p := range sq {
		pole = pole || in(p, lo, hi) || in(p, new(big.Rat).Neg(hi), new(big.Rat).Neg(lo))
	}
	def := jsonParams("operation", q("integrate"), "lower", q(l.RatString()), "upper", q(h.RatString()))
	anti := jsonParams("operation", q("integrate"))
	out := []diffCase{
		{query: f + " = (" + pstr(A) + ")/(" + pstr(B) + ") - 3", params: anti, status: engines.Verified},
		{query: f + " = (" + pstr(A) + ")/(" + pstr(B) + ") + x", params: anti, status: engines.Failed},
	}
	if pole {
		out = append(out, diffCase{query: f, params: def, status: engines.Error, code: CodeInvalid, fields: nil})
	} else {
		want := new(big.Rat).Sub(G(h), G(l))
		out = append(out, diffCase{query: f, params: def, status: engines.Verified, value: want.RatString()})
	}
	r0 := big.NewRat(int64(s.intn(7))+7, 1) // not a root of B: |roots| < 7 or irrational
	log := f + " + (" + s.nzrat(5, 2).RatString() + ")/(" + pstr(lin(r0)) + ")"
	out = append(out, diffCase{query: log, params: anti, status: engines.Unsupported, code: CodeUnsupported})
	return out
}

// genLimit: (x - c)**k * P / ((x - c)**m * Q) with P(c), Q(c) != 0, at c
// (two-sided or one-sided) and at ±infinity.
func genLimit(s *splitmix) []diffCase {
	c := s.rat(5, 3)
	var P, Q rpoly
	for {
		P, Q = s.poly(s.intn(4), 9, 3), s.poly(s.intn(4), 9, 3)
		if peval(P, c).Sign() != 0 && peval(Q, c).Sign() != 0 {
			break
		}
	}
	k, m := s.intn(4), s.intn(4)
	N, D := pmul(ppow(lin(c), k), P), pmul(ppow(lin(c), m), Q)
	f := "(" + pstr(N) + ")/(" + pstr(D) + ")"
	dir := []string{"", "+", "-"}[s.intn(3)]
	ratio := new(big.Rat).Quo(peval(P, c), peval(Q, c))
	at := jsonParams("operation", q("limit"), "variable", q("x"), "point", q(c.RatString()))
	if dir != "" {
		at = jsonParams("operation", q("limit"), "variable", q("x"), "point", q(c.RatString()), "direction", q(dir))
	}
	var out []diffCase
	switch {
	case k > m:
		out = append(out, diffCase{query: f, params: at, status: engines.Verified, value: "0"})
	case k == m:
		out = append(out,
			diffCase{query: f, params: at, status: engines.Verified, value: ratio.RatString()},
			diffCase{query: f + " = " + ratio.RatString(), params: at, status: engines.Verified},
			diffCase{query: f + " = " + new(big.Rat).Add(ratio, big.NewRat(1, 3)).RatString(), params: at, status: engines.Failed})
	default:
		right := ratio.Sign()
		left := right
		if (m-k)%2 == 1 {
			left = -left
		}
		sign := map[string]int{"+": right, "-": left}[dir]
		if dir == "" && left == right {
			sign = right
		}
		name := map[int]string{1: "oo", -1: "-oo"}
		if sign == 0 {
			out = append(out,
				diffCase{query: f, params: at, status: engines.Error, code: CodeInvalid},
				diffCase{query: f + " = oo", params: at, status: engines.Failed, fields: map[string]string{"expected": "does not exist"}})
		} else {
			out = append(out,
				diffCase{query: f, params: at, status: engines.Verified, value: name[sign]},
				diffCase{query: f + " = " + name[sign], params: at, status: engines.Verified},
				diffCase{query: f + " = " + name[-sign], params: at, status: engines.Failed})
		}
	}
	inf := []string{"oo", "-oo"}[s.intn(2)]
	dn, dd := N.deg(), D.deg()
	lead := new(big.Rat).Quo(N[dn], D[dd])
	want := "0"
	switch {
	case dn == dd:
		want = lead.RatString()
	case dn > dd:
		sign := lead.Sign()
		if inf == "-oo" && (dn-dd)%2 == 1 {
			sign = -sign
		}
		want = map[int]string{1: "oo", -1: "-oo"}[sign]
	}
	return append(out, diffCase{query: f, params: jsonParams("operation", q("limit"), "variable", q("x"), "point", q(inf)), status: engines.Verified, value: want})
}

// genSolve: an equation built from its rational roots (with
// multiplicities), maybe a factor x**2 - p (roots ±sqrt(p), real domain
// only) or x**2 + k (none), maybe divided by one root's factor (that root
// is excluded: the equation as written is undefined there), maybe defined
// for x >= t only (the roots below t are excluded).
func genSolve(s *splitmix) []diffCase {
	E := rpoly{s.nzrat(5, 1)}
	var roots []*big.Rat
	seen := map[string]bool{}
	for range s.intn(4) {
		r := s.rat(9, 4)
		if seen[r.RatString()] {
			continue
		}
		seen[r.RatString()] = true
		roots = append(roots, r)
		E = pmul(E, ppow(lin(r), 1+s.intn(2)))
	}
	domain := []string{"real", "rational"}[s.intn(2)]
	var p int64 // a factor x**2 - p: roots ±sqrt(p)
	switch s.intn(3) {
	case 0:
		p = []int64{2, 3, 5, 6, 7}[s.intn(5)]
		E = pmul(E, rpoly{big.NewRat(-p, 1), new(big.Rat), big.NewRat(1, 1)})
	case 1:
		E = pmul(E, rpoly{s.nzrat(5, 2).Abs(s.nzrat(5, 2)), new(big.Rat), big.NewRat(1, 1)})
	}
	lhs, rhs := pstr(E), "0"
	if len(E) == 1 {
		rhs = "x - x" // no root: a non-zero constant
	}
	if len(roots) > 0 && s.intn(2) == 0 {
		lhs = "(" + pstr(E) + ")/(" + pstr(lin(roots[0])) + ")"
		roots = roots[1:]
	}
	pos, neg := p != 0 && domain == "real", p != 0 && domain == "real"
	// Sometimes the equation is defined for x >= t only: sqrt(x - t)**2 -
	// (x - t) is 0 there and undefined below, so the roots below t go (the
	// rational domain refuses sqrt(x - t)).
	if domain == "real" && s.intn(3) == 0 {
		t := s.rat(4, 2)
		ts := "(" + t.RatString() + ")"
		lhs = "sqrt(x - " + ts + ")**2 - (x - " + ts + ") + " + lhs
		var kept []*big.Rat
		for _, r := range roots {
			if r.Cmp(t) >= 0 {
				kept = append(kept, r)
			}
		}
		roots = kept
		// sqrt(p) >= t iff t <= 0 or t**2 <= p; -sqrt(p) >= t iff t <= 0 and t**2 >= p.
		t2 := new(big.Rat).Mul(t, t).Cmp(big.NewRat(p, 1))
		pos = pos && (t.Sign() <= 0 || t2 <= 0)
		neg = neg && t.Sign() <= 0 && t2 >= 0
	}
	query := lhs + " = " + rhs
	var irr []string
	if pos {
		irr = append(irr, q(fmt.Sprintf("sqrt(%d)", p)))
	}
	if neg {
		irr = append(irr, q(fmt.Sprintf("-sqrt(%d)", p)))
	}
	var want []string
	for _, r := range roots {
		want = append(want, q(r.RatString()))
	}
	want = append(want, irr...)
	solve := func(sols []string) string {
		return jsonParams("operation", q("solve"), "variable", q("x"), "domain", q(domain), "solutions", "["+strings.Join(sols, ",")+"]")
	}
	n := len(roots) + len(irr)
	out := []diffCase{
		{query: query, params: jsonParams("operation", q("solve"), "variable", q("x"), "domain", q(domain)), status: engines.Verified, fields: map[string]string{"kind": "solve"}},
		{query: query, params: solve(want), status: engines.Verified},
		{query: query, params: solve(append(append([]string(nil), want...), q("1/1000"))), status: engines.Failed},
	}
	if n > 0 {
		out = append(out, diffCase{query: query, params: solve(want[1:]), status: engines.Failed})
	}
	return out
}

// calculusCorpus is the corpus of one seed: n cases of each kind.
func calculusCorpus(seed uint64, n int) []diffCase {
	s := splitmix(seed)
	var out []diffCase
	for range n {
		out = append(out, genPolyIntegral(&s)...)
		out = append(out, genRationalIntegral(&s)...)
		out = append(out, genLimit(&s)...)
		out = append(out, genSolve(&s)...)
	}
	return out
}

// TestQWEDProtocol_Math_CalculusDifferential checks integrate, limit and
// solve (QWED protocol v1.0 §4.1 calculus, §5.2.1) against answers
// computed independently, over a fixed-seed corpus of a few thousand
// cases.
func TestQWEDProtocol_Math_CalculusDifferential(t *testing.T) {
	cases := calculusCorpus(20261126, 200)
	if len(cases) < 3000 {
		t.Fatalf("the corpus has %d cases, want a few thousand", len(cases))
	}
	for _, c := range cases {
		c.check(t)
	}
}

// FuzzCalculusDifferential runs the differential check over other seeds
// (`make fuzz`).
func FuzzCalculusDifferential(f *testing.F) {
	f.Add(uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64) {
		for _, c := range calculusCorpus(seed, 5) {
			c.check(t)
		}
	})
}
