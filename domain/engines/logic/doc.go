// Package logic is the logic engine of the QWED protocol (QWED protocol v1.0 §4.1
// "logic", §5.2.2, §6.3.3, §7): it parses the QWED-Logic DSL, checks and
// infers its sorts, translates it to SMT-LIB2 and asks an SMT solver (z3,
// through the Solver interface; handlers/verify/z3pool keeps the processes)
// whether it is satisfiable. The package is pure: parsing, checking and
// translation are deterministic functions of the query (declarations
// sorted by name, bound variables numbered in order of appearance), and
// its only outside dependency is the Solver it is given.
//
// # Syntax (QWED protocol v1.0 §7.2, exactly)
//
// A query is one expression: an atom (variable letter{letter|digit|_},
// integer, float, true, false, "string" of printable characters but '"')
// or a list "(" operator {expression} ")". The operators are the whitelist
// of §7.3 with the arities of its tables (AND, OR, PLUS, MULT take two or
// more; NOT, ABS, NEG one; the rest two), plus IF (three: condition, then,
// else), LET and MATCH (two: a String and a pattern literal). Anything else
// at the head of a list, a wrong operand count, an unclosed list or a
// stray character is QWED-REQ-003 with details position (byte offset),
// line, column, expected and found. Extensions that change no valid
// query: ";" starts a comment to the end of the line (the §7.4 examples
// carry such comments), and (FORALL (x Int) body) gives a bound variable
// its sort. An operator name or true/false is not a variable.
//
// # Sorts
//
// A variable's sort is Real by default (§7.5). (LET ((x Int) (y Real)
// (p Bool) (s String)) body) declares sorts: LET binds nothing, it
// declares the sort of the variable each name means in body (the bound
// variable of an enclosing FORALL/EXISTS, else the free variable, which is
// one variable for the whole query); declaring one variable two sorts is
// an error. An undeclared variable takes the sort its uses give it:
// operands of logic operators are Bool, of arithmetic numeric, the first
// operand of MATCH a String, and the operands of EQ, NE, GT, GE, LT, LE
// and the branches of IF share one sort (so (EQ category "electronics")
// makes category a String). A numeric variable is Real unless declared
// Int or used in an operand of MOD. Int and Real mix: an Int operand
// beside a Real one is converted (to_real). A conflict (a Bool compared
// with a number) is QWED-REQ-003 at the offending operand.
//
// # Semantics
//
//   - Strings are SMT-LIB String values. GT, GE, LT, LE on strings compare
//     lexicographically by code point (str.<, str.<=): (GT invoice_date
//     "2024-01-01") holds for "2024-02-15" and, note, for "9"; dates
//     compare correctly only in a fixed-width ISO form.
//   - DIV is exact division on Real (Int operands are converted). MOD is
//     SMT-LIB's Euclidean mod on Int (the result is never negative).
//     Division by zero is undefined: every divisor is asserted non-zero
//     (a literal 0 is QWED-REQ-001; a divisor over a quantified variable
//     is UNSUPPORTED).
//   - POW takes a natural number literal exponent up to MaxPowExponent
//     (repeated multiplication); any other exponent is UNSUPPORTED.
//   - MATCH s "re" holds when the whole of s matches re; the decidable
//     subset of regular expressions translated to SMT-LIB re.* terms is
//     documented on regexToSMT; outside it: UNSUPPORTED with the reason.
//   - FORALL/EXISTS bind their variable in their body (its sort inferred
//     there, or declared).
//
// # Answers
//
// params.mode "satisfiable" (the default): SAT is VERIFIED with a model,
// an assignment under which every constraint holds (one witness, not a
// proof that the constraints always hold); UNSAT is FAILED (the constraints
// cannot all hold). params.mode "valid" (or "prove"): the negation is
// checked; UNSAT is VERIFIED (the formula holds for every assignment),
// SAT is FAILED with the counterexample as the model. An unknown answer is
// TIMEOUT (QWED-ENG-003) when the solver ran out of time, otherwise
// UNSUPPORTED (QWED-REQ-005) with the solver's reason; never VERIFIED.
// Model values are exact: a JSON number for an integer or finite decimal,
// the string "p/q" for other rationals. No solver: ERROR with QWED-ENG-004;
// a solver that cannot be started for the query: ERROR with QWED-ENG-001.
//
// Every limit is a named constant in limits.go, checked with QWED-REQ-004.
package logic
