package math

import (
	"math/big"
	"slices"

	"github.com/agentgate/agentgate/domain/engines"
)

// variableOps are the operations that take params.variable.
var variableOps = map[string]bool{"derivative": true, "integrate": true, "limit": true, "solve": true}

// checkOperationParams refuses params that belong to another operation, or
// that an operation needs and lacks (QWED-REQ-001 naming the field).
func checkOperationParams(p Params) {
	op := p.Operation
	if (p.Lower != nil || p.Upper != nil) && op != "integrate" {
		fail(invalidParams("lower", "lower and upper are parameters of the integrate operation"))
	}
	if (p.Lower == nil) != (p.Upper == nil) {
		fail(invalidParams("upper", "a definite integral needs both lower and upper"))
	}
	if p.Point != nil && op != "limit" {
		fail(invalidParams("point", "point is a parameter of the limit operation"))
	}
	if op == "limit" && p.Point == nil {
		fail(invalidParams("point", "the limit operation needs params.point"))
	}
	switch p.Direction {
	case "":
	case "+", "-":
		if op != "limit" {
			fail(invalidParams("direction", "direction is a parameter of the limit operation"))
		}
		if infinity(string(*p.Point)) != 0 {
			fail(invalidParams("direction", "direction applies to a finite point"))
		}
	default:
		fail(invalidParams("direction", "direction must be + or -"))
	}
	if p.Solutions != nil && op != "solve" {
		fail(invalidParams("solutions", "solutions is a parameter of the solve operation"))
	}
	if len(p.Solutions) > MaxSolutions {
		fail(limitProblem("max_solutions", MaxSolutions, -1))
	}
}

// pickVariable is params.variable, or the one variable of body.
func (a *alg) pickVariable(body rfn, p Params) string {
	if p.Variable != "" {
		return p.Variable
	}
	vs := a.variables(body)
	if len(vs) != 1 {
		fail(invalidParams("variable", "the "+p.Operation+" operation needs params.variable when the expression has no or several variables"))
	}
	return vs[0]
}

// calculus answers the integrate, limit and solve operations.
func (a *alg) calculus(c claim, p Params, res *Result) engines.Outcome {
	if c.rhs != nil && c.rel != tokEq {
		fail(invalidParams("operation", "the "+p.Operation+" operation takes an expression or an equation (=), not "+c.relText))
	}
	switch p.Operation {
	case "integrate":
		return a.integrate(c, p, res)
	case "limit":
		return a.limit(c, p, res)
	}
	return a.solve(c, p, res)
}

// integrate: f answers an antiderivative (polynomial integrands), f = F
// verifies F by differentiating it (any F the engine differentiates; the
// constant of integration is free), and with bounds the definite integral
// of a polynomial integrand, exactly.
func (a *alg) integrate(c claim, p Params, res *Result) engines.Outcome {
	f := a.eval(c.lhs)
	vars := a.variables(f)
	if c.rhs != nil && p.Lower == nil {
		vars = compactSorted(append(vars, a.variables(a.eval(c.rhs))...))
	}
	x := p.Variable
	if x == "" {
		if len(vars) != 1 {
			fail(invalidParams("variable", "the integrate operation needs params.variable when the expression has no or several variables"))
		}
		x = vars[0]
	}
	res.Variable = x
	res.Expression = format(c.lhs)
	if p.Lower != nil {
		res.Kind = "definite_integral"
		if infinity(string(*p.Lower)) != 0 || infinity(string(*p.Upper)) != 0 {
			fail(unsupported(-1, "an infinite bound makes an improper integral, a limit of integrals the engine does not compute"))
		}
		lo, hi := a.constant("lower", string(*p.Lower)), a.constant("upper", string(*p.Upper))
		res.Lower, res.Upper = lo.str(), hi.str()
		a.refuseHiddenDomain(c.lhs, x)
		F := a.antiderivative(f, x)
		if a.dependsOnAny(f.den, x) {
			l, h := ratConst(lo, "the lower bound of a rational integrand"), ratConst(hi, "the upper bound of a rational integrand")
			if l.Cmp(h) > 0 {
				l, h = h, l
			}
			if a.rootsIn(f.den, x, l, h) {
				fail(undefined(-1, "pole_in_interval", "The integrand has a pole in ["+ratStr(l)+", "+ratStr(h)+"]: the integral diverges"))
			}
		}
		val := a.rsub(a.subst(F, x, hi, -1), a.subst(F, x, lo, -1))
		if c.rhs != nil {
			res.RightSide = format(c.rhs)
			return a.compareClaim(val, a.evalDefined(c.rhs), res, p)
		}
		return a.answer(val, p, res, "integral of "+res.Expression+" d"+x+" from "+res.Lower+" to "+res.Upper+" = ")
	}
	if c.rhs != nil {
		res.Kind = "antiderivative"
		res.RightSide = format(c.rhs)
		claimed := a.eval(c.rhs)
		d := a.rsub(a.deriv(claimed, x, -1), f)
		res.SimplifiedDifference = d.str()
		if d.isZero() {
			res.IsValid = true
			res.Message = "Antiderivative confirmed: d/d" + x + " (" + res.RightSide + ") = " + res.Expression
			return engines.Outcome{Status: engines.Verified, Result: *res}
		}
		if !a.decidableNonZero(d) {
			fail(unsupported(-1, "d/d"+x+" of the claimed antiderivative minus the integrand is "+d.str()+", which involves functions ("+joinNames(a.functionsIn(d))+") whose relations the engine cannot decide"))
		}
		res.Expected = a.deriv(claimed, x, -1).str()
		res.Actual = f.str()
		res.Message = "Not an antiderivative: d/d" + x + " (" + res.RightSide + ") - (" + res.Expression + ") = " + d.str()
		return engines.Outcome{Status: engines.Failed, Result: *res}
	}
	res.Kind = "integral"
	F := a.antiderivative(f, x)
	out := a.answer(F, p, res, "integral of "+res.Expression+" d"+x+" = ")
	r := out.Result.(Result)
	r.Message += " + C"
	out.Result = r
	return out
}

// refuseHiddenDomain refuses (UNSUPPORTED) an expression whose normal form
// may be defined where the expression as written is not: sqrt(x)**2 is x,
// x**(1/2)*x**(3/2) is x**2, exp(log(x)) is x, yet none is defined for
// x < 0 in the real domain; and a factor in functions the normal form
// cancels may be zero where the engine cannot see it ((abs(x) - x)/(abs(x)
// - x) is 1, undefined on [0, oo); exp(2*x) - exp(x)**2 is zero
// everywhere). A limit there or an integral over such an interval
// computed from the normal form would be a wrong answer, so any function
// application or non-integer power involving x is refused (one that
// survives in the normal form is not a rational function of x anyway). A
// function of constants (sqrt(4)) is a number and passes.
func (a *alg) refuseHiddenDomain(n *node, x string) {
	involves := func(k *node) bool { return slices.Contains(astVariables(k, nil), x) }
	switch {
	case n.kind == nCall && n.text == "diff":
		a.refuseHiddenDomain(n.kids[0], x)
		return
	case n.kind == nCall && involves(n):
		fail(unsupported(n.pos, n.text+" is applied to an expression in "+x+": the normal form does not keep where it is undefined or where a cancelled factor of it is zero"))
	case n.kind == nPow && involves(n.kids[0]):
		if v, ok := a.eval(n.kids[1]).constValue(); !ok || !v.IsInt() {
			fail(unsupported(n.pos, "a non-integer power of an expression in "+x+" is undefined where its base is negative, which the normal form does not keep"))
		}
	}
	for _, k := range n.kids {
		a.refuseHiddenDomain(k, x)
	}
}

// refuseNonInteger refuses (UNSUPPORTED) a numeric value that is not an
// integer in the integer domain, as the evaluation does.
func refuseNonInteger(v rfn, p Params) {
	if c, ok := v.constValue(); ok && p.Domain == "integer" && !c.IsInt() {
		fail(unsupported(-1, "the value "+ratStr(c)+" is not an integer (the integer domain has no exact division; use the real domain)"))
	}
}

// infinityNames are the spellings of infinity in a limit's claimed value,
// as params.point takes them.
var infinityNames = map[string]bool{"oo": true, "inf": true, "infinity": true}

// infiniteValue is +1 or -1 when n is a written infinity (oo, -oo, inf,
// -infinity, ...; a unary plus is already dropped), 0 otherwise.
func infiniteValue(n *node) int {
	switch {
	case n.kind == nVar && infinityNames[n.text]:
		return 1
	case n.kind == nNeg && n.kids[0].kind == nVar && infinityNames[n.kids[0].text]:
		return -1
	}
	return 0
}

// refuseInfinity refuses (QWED-REQ-001) infinity inside an expression of a
// limit query: it is a value only as the whole claimed limit, never a
// variable named oo (2*oo, oo - oo and 1/oo are no values).
func refuseInfinity(n *node) {
	if n.kind == nVar && infinityNames[n.text] {
		fail(undefined(n.pos, "infinity_in_expression", n.text+" (infinity) is a limit's value only as the whole claimed value (oo or -oo), not inside an expression"))
	}
	for _, k := range n.kids {
		refuseInfinity(k)
	}
}

// answer is a computed value, VERIFIED.
func (a *alg) answer(v rfn, p Params, res *Result, prefix string) engines.Outcome {
	refuseNonInteger(v, p)
	res.IsValid = true
	res.Value = v.str()
	if c, ok := v.constValue(); ok && p.Precision != nil {
		res.Decimal = c.FloatString(*p.Precision)
	}
	res.Message = prefix + res.Value
	return engines.Outcome{Status: engines.Verified, Result: *res}
}

// limit: the limit of a rational function of x at a rational point (one-
// or two-sided) or at ±infinity; 0/0 forms are cancelled exactly.
func (a *alg) limit(c claim, p Params, res *Result) engines.Outcome {
	claimedInf := 0
	if c.rhs != nil {
		claimedInf = infiniteValue(c.rhs)
		if claimedInf == 0 {
			refuseInfinity(c.rhs)
		}
	}
	refuseInfinity(c.lhs)
	f := a.eval(c.lhs)
	x := a.pickVariable(f, p)
	a.refuseHiddenDomain(c.lhs, x)
	res.Kind = "limit"
	res.Variable = x
	res.Expression = format(c.lhs)
	res.Direction = p.Direction
	inf := infinity(string(*p.Point))
	var pt = ratZero
	switch inf {
	case 1:
		res.Point = "oo"
	case -1:
		res.Point = "-oo"
	default:
		pt = ratConst(a.constant("point", string(*p.Point)), "the point of a limit")
		res.Point = ratStr(pt)
	}
	dir := map[string]int{"+": 1, "-": -1}[p.Direction]
	val, sign, exists := a.limitValue(f, x, pt, inf, dir)
	computed := val.str()
	switch {
	case !exists:
		computed = "does not exist"
	case sign > 0:
		computed = "oo"
	case sign < 0:
		computed = "-oo"
	}
	where := "limit of " + res.Expression + " as " + x + " -> " + res.Point + res.Direction
	if c.rhs == nil {
		if !exists {
			fail(undefined(-1, "limit_does_not_exist", "The "+where+" does not exist (the one-sided limits differ)"))
		}
		if sign != 0 {
			res.IsValid = true
			res.Value = computed
			res.Message = where + " = " + computed
			return engines.Outcome{Status: engines.Verified, Result: *res}
		}
		return a.answer(val, p, res, where+" = ")
	}
	res.RightSide = format(c.rhs)
	if exists && sign == 0 && claimedInf == 0 {
		return a.compareClaim(val, a.evalDefined(c.rhs), res, p)
	}
	res.Expected = computed
	res.Actual = res.RightSide
	if exists && sign == claimedInf {
		res.IsValid = true
		res.Message = "limit confirmed: " + where + " = " + computed
		return engines.Outcome{Status: engines.Verified, Result: *res}
	}
	if claimedInf == 0 {
		a.eval(c.rhs) // a malformed claimed value is still an error
	}
	res.Message = "The " + where + " is " + computed + ", not " + res.RightSide
	return engines.Outcome{Status: engines.Failed, Result: *res}
}

// solve: the solutions of lhs = rhs (or lhs = 0) in x, exactly: rational
// roots by the rational root test, a remaining quadratic by the formula
// with sqrt; roots where the equation as written is undefined are dropped.
// With params.solutions the claimed set is compared with them.
func (a *alg) solve(c claim, p Params, res *Result) engines.Outcome {
	a.radicands = true
	e := a.eval(c.lhs)
	if c.rhs != nil {
		e = a.rsub(e, a.eval(c.rhs))
		res.RightSide = format(c.rhs)
	}
	x := p.Variable
	if x == "" {
		names := compactSorted(astVariables(c.lhs, rhsVariables(c)))
		if len(names) != 1 {
			fail(invalidParams("variable", "the solve operation needs params.variable when the equation has no or several variables"))
		}
		x = names[0]
	}
	res.Kind = "solve"
	res.Variable = x
	res.Expression = format(c.lhs)
	sols := []string{}
	var roots []rfn
	for _, r := range a.solveRoots(e, x) {
		if a.definedAt(c, x, r) {
			roots = append(roots, r)
			sols = append(sols, r.str())
		}
	}
	res.Solutions = &sols
	if p.Solutions == nil {
		res.IsValid = true
		res.Message = "solutions in " + x + ": {" + joinNames(sols) + "}"
		if len(sols) == 0 {
			res.Message = "no solution in " + x + " (" + res.Domain + " domain)"
		}
		return engines.Outcome{Status: engines.Verified, Result: *res}
	}
	matched := make([]bool, len(roots))
	var wrong []string
	undecided := false
	for i, s := range p.Solutions {
		v := a.constant("solutions["+itoa(i)+"]", string(s))
		found, open := false, false
		for j, r := range roots {
			d := a.rsub(v, r)
			if d.isZero() {
				matched[j], found = true, true
				break
			}
			open = open || !(a.decidableNonZero(d) || a.quadraticNonZero(d))
		}
		if !found {
			wrong = append(wrong, v.str())
			undecided = undecided || open
		}
	}
	var missing []string
	for j, m := range matched {
		if !m {
			missing = append(missing, sols[j])
		}
	}
	res.Expected = "{" + joinNames(sols) + "}"
	if len(wrong) == 0 && len(missing) == 0 {
		res.IsValid = true
		res.Message = "solutions confirmed: " + res.Expected
		return engines.Outcome{Status: engines.Verified, Result: *res}
	}
	if undecided {
		fail(unsupported(-1, "a claimed solution is not in the engine's form of the solutions "+res.Expected+" and the difference involves functions the engine cannot decide"))
	}
	res.Message = "the solutions are " + res.Expected
	if len(wrong) > 0 {
		res.Message += "; not solutions: " + joinNames(wrong)
	}
	if len(missing) > 0 {
		res.Message += "; missing: " + joinNames(missing)
	}
	return engines.Outcome{Status: engines.Failed, Result: *res}
}

// quadraticNonZero reports whether the non-zero normal form d is a
// non-zero number of the field Q(sqrt(m)) (see quadSign): n0 + n1*sqrt(m)
// with n0, n1 rational is zero only when both are, sqrt(m) being
// irrational, so a decimal approximation of an irrational root is
// decidably not that root.
func (a *alg) quadraticNonZero(d rfn) bool {
	_, ok := a.quadSign(d)
	return ok
}

// quadSign is the sign of d when d is a number of Q(sqrt(m)): a quotient
// of polynomials of degree at most 1 in the one atom sqrt(m), m a positive
// rational that is not a square (a rational d has no atom and is decided by
// its value). Each of n0 + n1*sqrt(m) is signed exactly: when n0 and n1
// differ in sign, by comparing n0**2 with n1**2*m (never equal, m not a
// square).
func (a *alg) quadSign(d rfn) (int, bool) {
	ks := d.keys()
	if len(ks) != 1 {
		return 0, false
	}
	at := a.atoms[ks[0]]
	if at == nil || at.fn != "sqrt" {
		return 0, false
	}
	m, ok := at.arg.constValue()
	if !ok || m.Sign() <= 0 || isSquare(m.Num()) && isSquare(m.Denom()) {
		return 0, false
	}
	sign := 1
	for _, p := range []poly{d.num, d.den} {
		n0, n1 := new(big.Rat), new(big.Rat)
		for _, t := range p {
			switch {
			case len(t.m) == 0:
				n0 = t.c
			case len(t.m) == 1 && t.m[0].exp == 1:
				n1 = t.c
			default:
				return 0, false
			}
		}
		s := n0.Sign()
		switch {
		case s == 0:
			s = n1.Sign()
		case n1.Sign() != 0 && n1.Sign() != s:
			sq := new(big.Rat).Mul(new(big.Rat).Mul(n1, n1), m)
			if sq.Cmp(new(big.Rat).Mul(n0, n0)) > 0 {
				s = n1.Sign()
			}
		}
		sign *= s
	}
	return sign, sign != 0
}

// argumentsInDomain reports whether, with the variable bound to a root,
// the equation as written is decidably defined there beyond what eval
// already refused: every denominator (and base of a negative power)
// involving x decidably non-zero, and every argument of sqrt, log, ln and
// half-integer powers involving x decidably in the real domain (>= 0, > 0
// for log). eval decides rational values itself but keeps functions of
// irrational or transcendental values as symbols, so a zero it cannot see
// (sqrt(6) - sqrt(2)*sqrt(3), exp(2*r) - exp(r)**2) or a negative argument
// (sqrt(-sqrt(2)), log(sin(4))) would pass. A value the engine cannot
// decide makes the operation UNSUPPORTED; in the complex domain a negative
// argument does (no imaginary unit).
func (a *alg) argumentsInDomain(n *node, x string) bool {
	for _, k := range n.kids {
		if !a.argumentsInDomain(k, x) {
			return false
		}
	}
	if !slices.Contains(astVariables(n, nil), x) {
		return true
	}
	var arg *node
	strict := false
	switch {
	case n.kind == nDiv:
		a.refuseUndecidedZero(a.eval(n.kids[1]), n.pos)
	case n.kind == nCall && n.text == "sqrt":
		arg = n.kids[0]
	case n.kind == nCall && (n.text == "log" || n.text == "ln"):
		arg, strict = n.kids[0], true
	case n.kind == nPow:
		if v, ok := a.eval(n.kids[1]).constValue(); ok {
			if v.Sign() < 0 {
				a.refuseUndecidedZero(a.eval(n.kids[0]), n.pos)
			}
			if !v.IsInt() {
				arg = n.kids[0]
			}
		}
	}
	if arg == nil {
		return true
	}
	u := a.eval(arg)
	if _, ok := u.constValue(); ok {
		return true // eval decided it
	}
	s, ok := a.quadSign(u)
	if !ok {
		fail(unsupported(n.pos, "the sign of "+u.str()+" at a root cannot be decided, so whether the equation is defined there cannot"))
	}
	if s < 0 || strict && s == 0 {
		if a.domain == "complex" {
			fail(unsupported(n.pos, "a root makes "+u.str()+" negative, whose "+n.text+" is not real (the engine has no imaginary unit)"))
		}
		return false
	}
	return true
}

// evalDefined is the value of n after refuseUndefined.
func (a *alg) evalDefined(n *node) rfn {
	a.refuseUndefined(n)
	return a.eval(n)
}

// refuseUndefined refuses a value whose sqrt, log, ln or half-integer
// power has a constant argument out of the real domain that eval kept as a
// symbol because it is irrational: sqrt(1 - sqrt(2))**2 + sqrt(2) would
// normalise to 1. Such an argument is signed exactly in Q(sqrt(m)), or is
// positive as a polynomial in pi or e with positive coefficients; out of
// the domain the value is QWED-REQ-001 as sqrt(-1) is (UNSUPPORTED in the
// complex domain), and an argument whose sign the engine cannot decide
// (3 - pi) makes it UNSUPPORTED. Arguments with variables are left to the
// operation.
func (a *alg) refuseUndefined(n *node) {
	for _, k := range n.kids {
		a.refuseUndefined(k)
	}
	var arg *node
	strict := false
	switch {
	case n.kind == nCall && n.text == "sqrt":
		arg = n.kids[0]
	case n.kind == nCall && (n.text == "log" || n.text == "ln"):
		arg, strict = n.kids[0], true
	case n.kind == nPow:
		if v, ok := a.eval(n.kids[1]).constValue(); ok && !v.IsInt() {
			arg = n.kids[0]
		}
	}
	if arg == nil {
		return
	}
	u := a.eval(arg)
	if _, ok := u.constValue(); ok || len(a.variables(u)) > 0 {
		return // eval decided a rational argument
	}
	s, ok := a.quadSign(u)
	if !ok && positiveConstants(u) {
		s, ok = 1, true
	}
	if !ok {
		fail(unsupported(n.pos, "the sign of "+u.str()+" cannot be decided, so whether the value is defined cannot"))
	}
	if s < 0 || strict && s == 0 {
		name, reason := "square root", "sqrt_of_negative"
		if strict {
			name, reason = "logarithm", "log_of_negative"
		}
		if a.domain == "complex" {
			fail(unsupported(n.pos, "the "+name+" of the negative number "+u.str()+" (the engine has no imaginary unit)"))
		}
		fail(undefined(n.pos, reason, "The "+name+" of "+u.str()+", which is not positive, is not real"))
	}
}

// positiveConstants reports whether u is a quotient of polynomials in pi
// and e with positive coefficients only (so positive).
func positiveConstants(u rfn) bool {
	for _, p := range []poly{u.num, u.den} {
		for _, t := range p {
			for _, pw := range t.m {
				if !constants[pw.key] {
					return false
				}
			}
			if t.c.Sign() <= 0 {
				return false
			}
		}
	}
	return true
}

// refuseUndecidedZero refuses (UNSUPPORTED) a denominator's value at a root
// that the engine cannot decide to be non-zero; a rational value was
// decided by eval (zero is a division by zero there).
func (a *alg) refuseUndecidedZero(u rfn, pos int) {
	if _, ok := u.constValue(); ok || a.decidableNonZero(u) || a.quadraticNonZero(u) {
		return
	}
	fail(unsupported(pos, "whether "+u.str()+" is zero at a root cannot be decided, so whether the equation is defined there cannot"))
}

// isSquare reports whether the non-negative integer n is a perfect square.
func isSquare(n *big.Int) bool {
	r := new(big.Int).Sqrt(n)
	return r.Mul(r, r).Cmp(n) == 0
}

func rhsVariables(c claim) []string {
	if c.rhs == nil {
		return nil
	}
	return astVariables(c.rhs, nil)
}
