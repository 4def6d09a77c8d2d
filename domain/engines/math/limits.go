package math

import "github.com/agentgate/agentgate/domain/engines"

// The limits of the math engine. Each bounds the work of one request; going
// past one is an ERROR with QWED-REQ-004 whose details name the limit
// ("limit", "max", and "position" where there is one). The work is bounded
// by these counts, never by the clock, so the answer does not depend on the
// machine.
const (
	// MaxQueryBytes is the longest query (QWED protocol v1.0 §5.1).
	MaxQueryBytes = engines.MaxQueryBytes
	// MaxTokens is the most tokens a query may have.
	MaxTokens = 5000
	// MaxDepth is the deepest nesting of parentheses, unary signs, powers
	// and function calls.
	MaxDepth = 64
	// MaxLiteralDigits is the longest number literal, in characters.
	MaxLiteralDigits = 1000
	// MaxExponent is the largest absolute integer exponent of a power.
	MaxExponent = 10000
	// MaxDegree is the largest total degree of a polynomial (numerator or
	// denominator of a rational function).
	MaxDegree = 1000
	// MaxTerms is the most terms of a polynomial.
	MaxTerms = 5000
	// MaxDigits is the most decimal digits of a coefficient's numerator or
	// denominator (checked as MaxCoefficientBits).
	MaxDigits = 10000
	// MaxCoefficientBits is MaxDigits in bits (10000 * log2(10), rounded
	// up).
	MaxCoefficientBits = 33220
	// MaxWork is the step budget of one request: each multiplication of two
	// terms, each step of a polynomial division and each function
	// application costs one unit.
	MaxWork = 2_000_000
	// MaxPrecision is the largest params.precision (decimal digits of the
	// "decimal" rendering of a numeric value).
	MaxPrecision = 1000
	// MaxSolutions is the most entries of params.solutions (solve).
	MaxSolutions = 1000
	// MaxRootCandidates is the most rational candidates p/q the rational
	// root test of solve tries, and MaxRootCoefficient the largest
	// absolute constant and leading coefficient whose divisors it lists;
	// past either, solve is UNSUPPORTED (QWED-REQ-005), not an error.
	MaxRootCandidates  = 20000
	MaxRootCoefficient = 10_000_000_000
	// MaxSquareTrial is the largest trial divisor whose square solve takes
	// out of a radicand (sqrt(8) = 2*sqrt(2)); a larger square factor stays
	// inside, exact either way.
	MaxSquareTrial = 100_000
	// MaxRationalIntegrandDegree is the largest denominator degree of a
	// rational integrand (its linear system has that many unknowns).
	MaxRationalIntegrandDegree = 64
)

// limitsDoc is the limits table of the capabilities document.
func limitsDoc() map[string]int {
	return map[string]int{
		"max_query_bytes":               MaxQueryBytes,
		"max_tokens":                    MaxTokens,
		"max_depth":                     MaxDepth,
		"max_literal_digits":            MaxLiteralDigits,
		"max_exponent":                  MaxExponent,
		"max_degree":                    MaxDegree,
		"max_terms":                     MaxTerms,
		"max_digits":                    MaxDigits,
		"max_work":                      MaxWork,
		"max_precision":                 MaxPrecision,
		"max_coefficient_bits":          MaxCoefficientBits,
		"max_solutions":                 MaxSolutions,
		"max_root_candidates":           MaxRootCandidates,
		"max_root_coefficient":          MaxRootCoefficient,
		"max_square_trial":              MaxSquareTrial,
		"max_rational_integrand_degree": MaxRationalIntegrandDegree,
	}
}
