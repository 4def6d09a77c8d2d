// Package math is the math engine of the QWED protocol (QWED protocol v1.0 §4.1,
// §5.2.1, §6.3.1–2): it checks arithmetic and algebraic claims exactly,
// on math/big rationals, and never guesses. It is pure, deterministic and
// bounded (limits.go). The package is named after its directory; import it
// under another name (mathengine) beside the standard library's math.
//
// # Syntax
//
// A query is an expression ("2+2", evaluated) or a claim: two expressions
// joined by one of = (or ==), != (≠), <, <= (≤), >, >= (≥).
//
//   - Numbers: 12, 0.25, .5, 5., 1.5e3 (an e/E followed by digits, or by a
//     sign and digits, is an exponent: 2e-3 is 0.002). Decimals are exact
//     (0.1 + 0.2 = 0.3 is VERIFIED).
//   - Operators, loosest first: + and -; * and / (× · ÷ accepted); unary
//     sign; power ** or ^ (right-associative: 2^3^2 = 2^9; the sign binds
//     looser: -2**2 = -4; the exponent may be signed: 2^-1).
//   - Names: a variable is [A-Za-z_][A-Za-z0-9_]* (so xy is one variable);
//     pi and e are the constants; sqrt, exp, log and ln (both natural),
//     sin, cos, tan, abs are functions, called with parentheses.
//   - Implicit multiplication is accepted where it reads one way only:
//     2x, 2(x+1), (x+1)(x-1), 2 sin(x), x y. It is refused, with
//     QWED-REQ-003 and the position, where it reads two ways: after a
//     division (1/2(3+1), 1/2x), after a power (x^2y, 2^3x), before a
//     number (x 2, (x+1)2), a name before "(" that is not a function (f(x),
//     x(x+1)), and a run-together name whose letters the query also uses as
//     variables (2xy beside x and y).
//   - Derivatives: d/dx (f) (the parentheses are required; "d/d<name>" is
//     reserved for the derivative) or diff(f, x), or params
//     {"operation":"derivative","variable":"x"} with the query f (answered
//     with the derivative) or f = g (the claim d/dx f = g). The variable
//     may be left out when f has exactly one.
//   - Integrals, limits, equations (params.operation): "integrate" answers
//     an antiderivative of a polynomial in the variable (coefficients free
//     of it, "+ C" implied) or of a rational function of the variable with
//     a rational antiderivative (1/x**2: -1/x; Horowitz–Ostrogradsky), or,
//     with lower and upper, the definite integral exactly (a rational
//     integrand needs rational bounds, and a pole in between is
//     QWED-REQ-001); "f = F" verifies the claimed antiderivative F by
//     differentiating it (any F the engine differentiates; the constant of
//     integration is free). Integrands whose antiderivative needs log or
//     atan (1/x, 1/(x**2+1)) are UNSUPPORTED. "limit" takes the limit of a rational function at a
//     rational point (two-sided, or one-sided with direction "+"/"-";
//     0/0 cancelled by exact division by x - c; a pole is oo or -oo by the
//     sign of the rest) or at oo/-oo (by the degrees and leading
//     coefficients); "f = L" compares (L may be oo or -oo). "solve" answers
//     the solutions of an equation in one variable with rational
//     coefficients: the rational roots (rational root test) and the two
//     roots of a remaining square-free quadratic factor, written with sqrt
//     of a square-free-by-trial integer; roots where the equation as
//     written is undefined are dropped; params.solutions is compared as a
//     set. Any other factor is UNSUPPORTED (the real domain), the rational
//     domain answers the rational roots (complete by the rational root
//     theorem), the integer domain the integer ones.
//
// # Decisions
//
// Each side is brought to a normal form: a rational function num/den of
// polynomials with rational coefficients in the variables, pi, e and
// symbolic function applications, with sorted monomials (graded
// lexicographic order), the denominator's leading coefficient 1, and common
// factors cancelled (the univariate gcd; for several variables the common
// monomial and exact division). Function applications are exact where the
// value is exact (sqrt(16) = 4, 8**(2/3) = 4, sin(0) = 0, cos(pi) = -1,
// sin(pi/6) = 1/2, exp(0) = 1, log(1) = 0, log(e**3) = 3, exp(log(u)) = u,
// log(exp(u)) = u in the real domain, tan = sin/cos) and otherwise kept as
// symbols, rewritten by sqrt(u)**2 = u and sin(u)**2 = 1 - cos(u)**2.
// Derivatives follow the sum, product, quotient and chain rules on the
// normal form (abs is not differentiated: UNSUPPORTED).
//
// A claim lhs = rhs is decided on the difference lhs - rhs:
//
//   - zero: VERIFIED, with left_side, right_side (as written, in the
//     engine's spelling) and simplified_difference "0". Identities with
//     division hold where both sides are defined (x/x = 1).
//   - non-zero and free of function applications (and not mixing pi with
//     e): the claim is false. Without variables it is a numeric claim: when
//     the right side is a single number and the left side a rational value,
//     CORRECTED with Outcome.Corrected "<left side> = <value>" (this is the
//     answer the gate gives a calculate action); otherwise, or with params
//     {"correct": false}, FAILED. Both carry expected (the left side's exact
//     value) and actual. With variables it is FAILED with the simplified
//     difference.
//   - non-zero with function applications: UNSUPPORTED (the engine cannot
//     rule out an identity it does not know, such as sin(2x) =
//     2 sin(x) cos(x)).
//
// != < <= > >= are decided between numbers only (UNSUPPORTED with
// variables). A bare expression is VERIFIED with its exact value (a
// rational, a polynomial in pi and e, or a normal form in its variables);
// one without variables whose value needs a function application
// (sin(1), sqrt(2)) is UNSUPPORTED.
//
// # Errors
//
//   - Syntax errors and ambiguous input: ERROR, QWED-REQ-003, details
//     position (0-based byte offset), expected, found, and reason.
//   - Division by zero (also a denominator that simplifies to 0), 0**0,
//     sqrt or log of a negative number in the real domain, log(0), tan at
//     an odd multiple of pi/2: ERROR, QWED-REQ-001, details reason and
//     position.
//   - A limit passed: ERROR, QWED-REQ-004, details limit and max.
//   - Bad params: ERROR, QWED-REQ-001, details field.
//   - Not decidable exactly (a symbolic or irrational exponent, an
//     identity through unknown function relations, a non-integer value in
//     the integer domain): UNSUPPORTED, QWED-REQ-005, details reason.
//
// Params (QWED protocol v1.0 §5.2.1) are domain ("real", "integer",
// "rational": rational functions over the rationals only, pi, e and
// irrational function values UNSUPPORTED; "complex"),
// precision (the digits of the "decimal" rendering; comparison is always
// exact), operation, variable, correct, lower, upper, point, direction and
// solutions; see Params.
package math
