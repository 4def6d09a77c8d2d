package a2a

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reasons of a forwarded logic payload.
const (
	reasonNoAssertions     = "No assertions to verify"
	reasonNoContradictions = "No contradictions found in assertions"
)

// LogicGuard is logic_guard (QWED A2A "Engines"): in a logic payload,
// {"assertions": [{"claim": "budget_approved", "negated": false}, ...]},
// a claim that is both asserted (negated false or absent) and negated
// blocks the payload with the code CodeLogicContradiction and the reason
// "Logical contradiction detected: claims both asserted and negated:
// ['budget_approved']" (the claims sorted by their bytes, listed as
// Python writes a list of strings, as QWED A2A does). Claims are compared
// exactly, as given: a claim is an opaque proposition name, and a claim in
// prose ("budget_approved is false") is another claim, not the negation of
// "budget_approved" (QWED A2A's reference does not read prose either;
// negation is the negated member). A payload without assertions (or null,
// or empty) is forwarded.
//
// A logic-DSL formula under "dsl" is the logic engine's to check (see
// LogicDSL); LogicGuard only checks that it is a string of at most
// MaxDSLBytes (absent or null: none). What the guard cannot read is refused with a Problem (see
// Result): assertions not an array, an item not an object, claim not a
// string (or over MaxClaimBytes, or invalid UTF-8), negated not a
// boolean, more than MaxAssertions items, a repeated member.
func LogicGuard(payload json.RawMessage) Result {
	s := scanner{p: payload}
	var asserted, negated []string
	var seenAssertions, seenDSL bool
	if !s.begin('{', "payload", "an object") {
		return refused(EngineLogic, s.prob)
	}
	for n := 0; ; n++ {
		name, esc, ok := s.member(n == 0, "payload")
		if !ok {
			break
		}
		switch {
		case s.nameIs(name, esc, "assertions"):
			if s.once(&seenAssertions, "payload.assertions", "payload", "assertions") && !s.isNull() {
				asserted, negated = s.assertions()
			}
		case s.nameIs(name, esc, "dsl"):
			if s.once(&seenDSL, "payload.dsl", "payload", "dsl") {
				s.stringMember("payload.dsl", MaxDSLBytes)
			}
		default:
			s.skip("payload")
		}
		if s.prob != nil {
			break
		}
	}
	if !s.end() {
		return refused(EngineLogic, s.prob)
	}
	if len(asserted) == 0 && len(negated) == 0 {
		return Result{Engine: EngineLogic, Reason: reasonNoAssertions}
	}
	both := contradictions(asserted, negated)
	if len(both) == 0 {
		return Result{Engine: EngineLogic, Reason: reasonNoContradictions}
	}
	return Result{Engine: EngineLogic, Blocked: true, Code: CodeLogicContradiction, Contradictions: both,
		Reason: "Logical contradiction detected: claims both asserted and negated: " + pyList(both)}
}

// contradictions returns the claims in both lists, sorted, each once.
func contradictions(asserted, negated []string) []string {
	slices.Sort(asserted)
	slices.Sort(negated)
	var both []string
	for i, j := 0, 0; i < len(asserted) && j < len(negated); {
		switch c := strings.Compare(asserted[i], negated[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			if len(both) == 0 || both[len(both)-1] != asserted[i] {
				both = append(both, asserted[i])
			}
			i++
			j++
		}
	}
	return both
}

// assertions reads the assertions array into the asserted and negated
// claims.
func (s *scanner) assertions() (asserted, negated []string) {
	const f = "payload.assertions"
	if !s.begin('[', f, "an array") {
		return nil, nil
	}
	for n := 0; s.elem(n == 0, f); n++ {
		if n == MaxAssertions {
			s.fail(&Problem{Code: CodeTooLong, Field: f, Limit: MaxAssertions, Size: MaxAssertions + 1, Offset: -1,
				Message: f + " has more than " + strconv.Itoa(MaxAssertions) + " items"})
			return nil, nil
		}
		claim, neg, ok := s.assertion(n)
		if !ok {
			return nil, nil
		}
		if neg {
			negated = append(negated, claim)
		} else {
			asserted = append(asserted, claim)
		}
	}
	return asserted, negated
}

func assertionField(i int, member string) string {
	f := "payload.assertions[" + strconv.Itoa(i) + "]"
	if member != "" {
		f += "." + member
	}
	return f
}

// assertion reads one assertion: its claim ("" when absent, as in QWED
// A2A) and whether it is negated (false when absent).
func (s *scanner) assertion(i int) (claim string, negated, ok bool) {
	if s.peek() != '{' {
		f := assertionField(i, "")
		return "", false, s.fail(problem(CodeInvalidRequest, f, f+" must be an object, not "+kindOf(s.p[s.i:])))
	}
	s.begin('{', "", "")
	var seenClaim, seenNegated bool
	for m := 0; ; m++ {
		name, esc, ok := s.member(m == 0, "payload.assertions")
		if !ok {
			break
		}
		switch {
		case s.nameIs(name, esc, "claim"):
			if seenClaim {
				return "", false, s.fail(problem(CodeInvalidRequest, assertionField(i, "claim"), assertionField(i, "")+" repeats the member claim"))
			}
			seenClaim = true
			if s.peek() != '"' {
				f := assertionField(i, "claim")
				return "", false, s.fail(problem(CodeInvalidRequest, f, f+" must be a string, not "+kindOf(s.p[s.i:])))
			}
			raw, esc, ok := s.str("payload.assertions")
			if !ok {
				return "", false, false
			}
			if len(raw) > MaxClaimBytes {
				return "", false, s.fail(tooLong(assertionField(i, "claim"), len(raw), MaxClaimBytes, "bytes"))
			}
			if claim, ok = s.claimText(raw, esc, i); !ok {
				return "", false, false
			}
		case s.nameIs(name, esc, "negated"):
			if seenNegated {
				return "", false, s.fail(problem(CodeInvalidRequest, assertionField(i, "negated"), assertionField(i, "")+" repeats the member negated"))
			}
			seenNegated = true
			switch s.peek() {
			case 't':
				negated, ok = true, s.literal("true", "payload.assertions")
			case 'f':
				negated, ok = false, s.literal("false", "payload.assertions")
			default:
				f := assertionField(i, "negated")
				return "", false, s.fail(problem(CodeInvalidRequest, f, f+" must be a boolean, not "+kindOf(s.p[s.i:])))
			}
			if !ok {
				return "", false, false
			}
		default:
			if !s.skip("payload.assertions") {
				return "", false, false
			}
		}
	}
	return claim, negated, s.prob == nil
}

// claimText is text for assertion i's claim, naming the member only on a
// problem.
func (s *scanner) claimText(raw []byte, esc bool, i int) (string, bool) {
	if !esc && utf8.Valid(raw) {
		return string(raw), true
	}
	return s.text(raw, esc, assertionField(i, "claim"))
}

// LogicDSL returns the logic-DSL formula a logic payload carries under
// "dsl", for the logic engine to check (the worker attaches its verdict to
// the command before Decide). ok is false when the payload has no dsl
// (absent, null or ""), or when LogicGuard refuses the payload (then no
// engine runs: the guard's Problem decides).
func LogicDSL(payload json.RawMessage) (dsl string, ok bool) {
	if r := LogicGuard(payload); r.Problem != nil {
		return "", false
	}
	s := scanner{p: payload}
	if !s.begin('{', "payload", "an object") {
		return "", false
	}
	for n := 0; ; n++ {
		name, esc, more := s.member(n == 0, "payload")
		if !more {
			return "", false
		}
		if s.nameIs(name, esc, "dsl") {
			v := s.stringMember("payload.dsl", MaxDSLBytes)
			return v, s.prob == nil && v != ""
		}
		if !s.skip("payload") {
			return "", false
		}
	}
}

// pyList writes strs as Python writes a list of str: ['a', "it's"].
func pyList(strs []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range strs {
		if i > 0 {
			b.WriteString(", ")
		}
		pyRepr(&b, s)
	}
	b.WriteByte(']')
	return b.String()
}

// pyRepr writes s as Python's repr of a str: single quotes unless s holds
// a single quote and no double quote; backslash escapes for the quote, the
// backslash, \t \n \r, and \xhh, \uhhhh or \Uhhhhhhhh for other
// characters that are not printable.
func pyRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || unicode.IsPrint(r) && r != utf8.RuneError:
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x`)
			writeHex(b, uint32(r), 2)
		case r < 0x10000:
			b.WriteString(`\u`)
			writeHex(b, uint32(r), 4)
		default:
			b.WriteString(`\U`)
			writeHex(b, uint32(r), 8)
		}
	}
	b.WriteByte(q)
}

func writeHex(b *strings.Builder, v uint32, n int) {
	const digits = "0123456789abcdef"
	for i := n - 1; i >= 0; i-- {
		b.WriteByte(digits[(v>>(4*uint(i)))&0xf])
	}
}
