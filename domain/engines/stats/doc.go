// Package stats is the statistics engine of the QWED protocol v1.0 (§4.1, engine id
// "stats"): it decides a claim about a table given in params, computing
// the statistic exactly in rationals (math/big) from the cells' decimal
// text. A false claim is FAILED with the computed value; a claim outside
// the grammar, or one the table cannot settle (an unknown column, a
// non-numeric cell, a variance of one value, a constant column in a
// correlation), is UNSUPPORTED with the reason, never guessed.
//
// # Params
//
//	csv             CSV text with a header row (encoding/csv, RFC 4180)
//	table           [[header...], [row...], ...]: cells are strings,
//	                numbers (their exact JSON text), booleans or null
//	variance        "sample" (n-1, the default) or "population" (n)
//	tolerance       a decimal >= 0 (string or number); see Comparison
//	tolerance_mode  "absolute" (default) or "relative" (to |claim|)
//	delimiter       the CSV delimiter, one character (default ",")
//
// Exactly one of csv and table is required (QWED-REQ-002 when neither,
// QWED-REQ-001 when both or when a field has the wrong type or is
// unknown). Header names must be unique and non-empty; every row has the
// header's width. Cells are trimmed; empty, NA, N/A, NaN, null, None and
// "-" are missing values, skipped by every statistic (count(col) counts
// the present cells). A number is decimal text: sign, digits, fraction,
// exponent up to ±MaxExponent; no thousands separators.
//
// # Claim grammar (the query; keywords are case-insensitive)
//
//	claim      = [ "group by" column ":" ] [ "the" ] [ arg ] statistic
//	             [ filter ] comparison value
//	statistic  = func "(" column ")" | func "of" column | func column
//	           | "count" | "count(*)" | "count" "(" column ")" | "number of rows"
//	           | "percentile(" column "," P ")"      P in 0..100
//	           | "quantile(" column "," Q ")"        Q in 0..1
//	           | pNN "(" column ")"                  p90, p99.9
//	           | "correlation(" column "," column ")"
//	func       = mean | average | avg | sum | total | median | min | minimum
//	           | max | maximum | std | stdev | stddev | sd
//	           | "standard deviation" | var | variance | q1 | q3
//	           | corr | correlation | pearson
//	filter     = ("where" | "for" | "when") cond { "and" cond }
//	cond       = column ("=" | "!=" | "<>" | "<" | "<=" | ">" | ">=" | "is"
//	           | "is not") literal
//	comparison = "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//	           | "is" | "equals" | "is equal to" | "is not" | "is less than"
//	           | "is under" | "is below" | "is greater than" | "is more than"
//	           | "is over" | "is above" | "exceeds" | "is at least"
//	           | "is at most" | "is approximately" | "is about"
//	value      = a decimal number; with "group by": the groups' values
//	             "{K: V, K: V}" (braces optional), every group exactly once
//	arg        = "argmax" | "highest" | "argmin" | "lowest" (group by only;
//	             the value is then the group key: "= EU")
//	column     = a name, or `a name with spaces`, or "double-quoted"
//	literal    = a number, 'quoted text', "quoted text" or a bare word
//
// Examples: "mean(price) = 12.5", "median of price is 10",
// "sum(qty) where region = 'EU' = 40", "correlation(a, b) > 0.9",
// "p90(latency) = 120", "count = 10", "std(price) is at most 3",
// "group by region: sum(qty) = {EU: 40, US: 30}",
// "group by region: argmax mean(price) = EU". Anything else is
// UNSUPPORTED with QWED-REQ-003 details {position, expected, found}.
//
// # Statistics
//
// count, sum, mean, min and max are exact. median and percentiles use R-7
// (linear interpolation, the default of R, NumPy and pandas): on the sorted
// values, h = (n-1)p and the value is x[⌊h⌋] + (h-⌊h⌋)(x[⌊h⌋+1]-x[⌊h⌋]),
// exact in rationals. variance is exact; std is its square root, compared
// exactly through squares (an irrational root is never rounded before it is
// compared). correlation is Pearson's r over the rows where both cells are
// present: r² = Sxy²/(Sxx·Syy) is exact and the sign is Sxy's. With "group
// by", rows with a missing key are dropped and groups are ordered by key.
//
// # Comparison
//
// <, <=, >, >= are exact. = (and its negation !=) without a tolerance
// param holds when the computed value, rounded half away from zero to the
// number of decimal places the claim writes, equals the claim: "12.5"
// holds for 12.45 <= value < 12.55, "12" for 11.5 <= value < 12.5, "12.50"
// for 12.495 <= value < 12.505. With params.tolerance t, = holds when
// |value - claim| <= t (absolute) or <= t·|claim| (relative); tolerance
// "0" is exact equality.
//
// # Result
//
// is_valid, the statistic in canonical form, expected (the computed value
// as decimal text: exact when expected_is_exact, otherwise rounded half
// away from zero at 20 places), expected_exact (a fraction, or
// ±sqrt(fraction) for an irrational root), actual (the claimed value),
// how equality was judged, the rows and values used, per-group values for
// group-by claims, and a message. With include_proof, the proof names the
// method and the exact value.
package stats
