package math

// IsArithmeticClaim reports whether query is an arithmetic claim in the
// engine's syntax: two expressions joined by one relation (= == != < <= >
// >=), without variables (numbers, the constants pi and e, and the
// functions are allowed). The protocol service routes a natural_language
// query to this engine only then (handlers/verify NaturalLanguageRoute).
// It never panics; a query over MaxQueryBytes is not a claim.
func IsArithmeticClaim(query string) (ok bool) {
	if len(query) > MaxQueryBytes {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	c := parse(query)
	if c.rhs == nil {
		return false
	}
	return len(astVariables(c.lhs, nil)) == 0 && len(astVariables(c.rhs, nil)) == 0 && !hasDerivative(c.lhs) && !hasDerivative(c.rhs)
}

// hasDerivative reports whether n differentiates (d/dx or diff): a
// derivative names a variable, so it is not arithmetic.
func hasDerivative(n *node) bool {
	if n.kind == nDeriv || (n.kind == nCall && n.text == "diff") {
		return true
	}
	for _, k := range n.kids {
		if hasDerivative(k) {
			return true
		}
	}
	return false
}
