package math

import "strings"

// Precedence levels of the printed syntax.
const (
	precAdd  = 1
	precMul  = 2
	precNeg  = 3
	precPow  = 4
	precAtom = 5
)

func prec(n *node) int {
	switch n.kind {
	case nAdd, nSub:
		return precAdd
	case nMul, nDiv:
		return precMul
	case nNeg:
		return precNeg
	case nPow:
		return precPow
	}
	return precAtom
}

// format prints a syntax tree in the engine's canonical spelling: "**" for
// powers, " + " and " - " between terms, "*" and "/" without spaces,
// parentheses only where needed (x**2 + 2*x + 1, (x + 1)**2).
func format(n *node) string {
	var b strings.Builder
	writeNode(&b, n)
	return b.String()
}

// writeChild writes n, in parentheses when its precedence is below min or
// when it is a sign that is not the first operand.
func writeChild(b *strings.Builder, n *node, min int, right bool) {
	if prec(n) < min || (right && n.kind == nNeg) {
		b.WriteByte('(')
		writeNode(b, n)
		b.WriteByte(')')
		return
	}
	writeNode(b, n)
}

func writeNode(b *strings.Builder, n *node) {
	switch n.kind {
	case nNum, nVar:
		b.WriteString(n.text)
	case nNeg:
		b.WriteByte('-')
		writeChild(b, n.kids[0], precPow, false)
	case nAdd, nSub:
		writeChild(b, n.kids[0], precAdd, false)
		if n.kind == nAdd {
			b.WriteString(" + ")
		} else {
			b.WriteString(" - ")
		}
		writeChild(b, n.kids[1], precMul, true)
	case nMul, nDiv:
		writeChild(b, n.kids[0], precMul, false)
		if n.kind == nMul {
			b.WriteByte('*')
		} else {
			b.WriteByte('/')
		}
		writeChild(b, n.kids[1], precPow, true)
	case nPow:
		writeChild(b, n.kids[0], precAtom, false)
		b.WriteString("**")
		writeChild(b, n.kids[1], precNeg, false)
	case nCall:
		b.WriteString(n.text)
		b.WriteByte('(')
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(", ")
			}
			writeNode(b, k)
		}
		b.WriteByte(')')
	case nDeriv:
		b.WriteString("d/d")
		b.WriteString(n.text)
		b.WriteString(" (")
		writeNode(b, n.kids[0])
		b.WriteByte(')')
	}
}
