package math

import (
	gomath "math"
	"strconv"
	"strings"
	"testing"
)

// splitmix is a seeded generator for the property test (the engine itself
// never draws randomness; this one only makes test inputs, reproducibly).
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix) intn(n int) int   { return int(s.next() % uint64(n)) }
func (s *splitmix) float64() float64 { return float64(s.next()>>11) / (1 << 53) }

// genExpr is a random expression of depth at most d over x, y, pi,
// integers and fractions, with every operator and function of the syntax.
func genExpr(r *splitmix, d int) string {
	if d <= 0 || r.intn(4) == 0 {
		switch r.intn(5) {
		case 0:
			return "x"
		case 1:
			return "y"
		case 2:
			return strconv.Itoa(r.intn(20))
		case 3:
			return "pi"
		default:
			return strconv.Itoa(r.intn(9)+1) + "/" + strconv.Itoa(r.intn(9)+1)
		}
	}
	switch r.intn(9) {
	case 0:
		return "(" + genExpr(r, d-1) + " + " + genExpr(r, d-1) + ")"
	case 1:
		return "(" + genExpr(r, d-1) + " - " + genExpr(r, d-1) + ")"
	case 2:
		return "(" + genExpr(r, d-1) + ")*(" + genExpr(r, d-1) + ")"
	case 3:
		return "(" + genExpr(r, d-1) + ")/(" + genExpr(r, d-1) + ")"
	case 4:
		return "(" + genExpr(r, d-1) + ")^" + strconv.Itoa(r.intn(12)-3)
	case 5:
		return []string{"sin", "cos", "tan", "exp", "log", "sqrt", "abs"}[r.intn(7)] + "(" + genExpr(r, d-1) + ")"
	case 6:
		return "d/dx (" + genExpr(r, d-1) + ")"
	}
	return genExpr(r, d-1)
}

// floatEval evaluates a syntax tree in float64 (derivatives by central
// differences), as an independent and inexact witness.
func floatEval(n *node, env map[string]float64) float64 {
	k := func(i int) float64 { return floatEval(n.kids[i], env) }
	switch n.kind {
	case nNum:
		f, _ := strconv.ParseFloat(n.text, 64)
		return f
	case nVar:
		switch n.text {
		case "pi":
			return gomath.Pi
		case "e":
			return gomath.E
		}
		return env[n.text]
	case nNeg:
		return -k(0)
	case nAdd:
		return k(0) + k(1)
	case nSub:
		return k(0) - k(1)
	case nMul:
		return k(0) * k(1)
	case nDiv:
		return k(0) / k(1)
	case nPow:
		return gomath.Pow(k(0), k(1))
	case nCall:
		a := k(0)
		switch n.text {
		case "sin":
			return gomath.Sin(a)
		case "cos":
			return gomath.Cos(a)
		case "tan":
			return gomath.Tan(a)
		case "exp":
			return gomath.Exp(a)
		case "log", "ln":
			return gomath.Log(a)
		case "sqrt":
			return gomath.Sqrt(a)
		case "abs":
			return gomath.Abs(a)
		}
	case nDeriv:
		const h = 1e-6
		e2 := map[string]float64{"x": env["x"], "y": env["y"]}
		v := e2[n.text]
		e2[n.text] = v + h
		f1 := floatEval(n.kids[0], e2)
		e2[n.text] = v - h
		return (f1 - floatEval(n.kids[0], e2)) / (2 * h)
	}
	return gomath.NaN()
}

// TestSeed002_6_2_DecisionsAgreeWithFloatingPoint is a soundness property
// over 20000 random claims (fixed seed): a VERIFIED claim never differs in
// floating point at a sample point where both sides are finite, and a
// FAILED or CORRECTED claim is never equal to 1e-12 where it is
// far from zero, at three random points. (Nested derivatives are left out of the comparison: their
// central differences are too inexact to witness anything.)
func TestSeed002_6_2_DecisionsAgreeWithFloatingPoint(t *testing.T) {
	r := splitmix(7)
	decided := map[string]int{}
	for range 20000 {
		q := genExpr(&r, 4) + " = " + genExpr(&r, 3)
		o := verify(t, q, "")
		decided[string(o.Status)]++
		if o.Err != nil && o.Err.Code == CodeInternal {
			t.Fatalf("%q: internal fault %+v", q, o.Err)
		}
		if o.Status != "VERIFIED" && o.Status != "FAILED" && o.Status != "CORRECTED" || strings.Contains(q, "(d/dx") {
			continue
		}
		c := parse(q)
		equalAt := 0
		for range 3 {
			env := map[string]float64{"x": r.float64()*2 + 0.3, "y": r.float64()*2 + 0.3}
			l, rr := floatEval(c.lhs, env), floatEval(c.rhs, env)
			if gomath.IsNaN(l) || gomath.IsNaN(rr) || gomath.Abs(l) > 1e6 || gomath.Abs(rr) > 1e6 {
				continue
			}
			diff := gomath.Abs(l - rr)
			if o.Status == "VERIFIED" && diff > 1e-4*(1+gomath.Abs(l)) {
				t.Errorf("VERIFIED but %v != %v at %v: %q", l, rr, env, q)
			}
			if gomath.Abs(l) > 1e-3 && diff < 1e-12*gomath.Abs(l) {
				equalAt++
			}
		}
		if o.Status != "VERIFIED" && !strings.Contains(q, "d/dx") && equalAt == 3 {
			t.Errorf("%s yet equal at three random points: %q", o.Status, q)
		}
	}
	if decided["VERIFIED"] < 500 || decided["FAILED"] < 500 {
		t.Fatalf("the generator decides too little to witness anything: %v", decided)
	}
}
