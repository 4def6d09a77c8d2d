package logic

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSolverRune is the largest code point the solver's string alphabet
// holds (z3's default Unicode encoding); a string or pattern beyond it is
// UNSUPPORTED.
const MaxSolverRune = 0x2FFFF

// regexParser translates a MATCH pattern to an SMT-LIB regular expression
// term. The decidable subset it accepts: literal characters; "." (any one
// character); classes [a-z0-9_] and negated classes [^...] with ranges;
// the escapes \d \w \s (and \D \W \S), \t \n \r \f \v, and a backslash
// before punctuation for the literal; groups (...) and (?:...);
// alternation |; the quantifiers *, +, ?, {n}, {n,}, {n,m} (a lazy "?"
// after a quantifier does not change the language and is accepted). A
// pattern must match the whole string (str.in_re), so a "^" at its very
// start and a "$" at its very end are accepted and change nothing.
// Anything else (back references, look-around, word boundaries, inline
// flags, named groups, Unicode classes, anchors elsewhere) is UNSUPPORTED
// with the reason: those are not regular, or not defined the same way
// across engines.
type regexParser struct {
	src   string // the whole query, for positions
	base  int    // offset of the pattern's first byte in src
	pat   string
	pos   int
	depth int
}

// regexToSMT translates the pattern of the string literal at query offset
// strPos (the opening quote).
func regexToSMT(src string, strPos int, pat string) (string, *failure) {
	if len(pat) > MaxRegexBytes {
		return "", limitErr(src, strPos, "regular expression bytes", MaxRegexBytes)
	}
	r := &regexParser{src: src, base: strPos + 1, pat: pat}
	if strings.HasPrefix(r.pat, "^") {
		r.pos = 1
	}
	out, f := r.alt()
	if f != nil {
		return "", f
	}
	if r.pos < len(r.pat) {
		if r.pat[r.pos] == ')' {
			return "", r.syntax("a regular expression", `unbalanced ")"`)
		}
		return "", r.syntax("end of pattern", strconv.Quote(r.pat[r.pos:r.pos+1]))
	}
	return out, nil
}

func (r *regexParser) syntax(expected, found string) *failure {
	return syntaxErr(r.src, r.base+r.pos, "in the MATCH pattern: "+expected, found)
}

func (r *regexParser) unsupported(what string) *failure {
	return unsupported(r.src, r.base+r.pos, "MATCH pattern: "+what+" is outside the decidable subset (literals, ., classes, \\d \\w \\s, groups, |, *, +, ?, {n,m})")
}

func (r *regexParser) more() bool { return r.pos < len(r.pat) }

// alt := concat { "|" concat }
func (r *regexParser) alt() (string, *failure) {
	var parts []string
	for {
		c, f := r.concat()
		if f != nil {
			return "", f
		}
		parts = append(parts, c)
		if !r.more() || r.pat[r.pos] != '|' {
			break
		}
		r.pos++
	}
	return reApply("re.union", parts, ""), nil
}

// concat := { repeat }
func (r *regexParser) concat() (string, *failure) {
	var parts []string
	var lit strings.Builder // a run of literal characters, one str.to_re
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, "(str.to_re "+smtString(lit.String())+")")
			lit.Reset()
		}
	}
	for r.more() {
		c := r.pat[r.pos]
		if c == '|' || c == ')' {
			break
		}
		if c == '$' && r.pos == len(r.pat)-1 && r.depth == 0 {
			r.pos++
			break
		}
		atom, litRune, f := r.atom()
		if f != nil {
			return "", f
		}
		q, ok, f := r.quantifier()
		if f != nil {
			return "", f
		}
		if litRune >= 0 && !ok {
			lit.WriteRune(litRune)
			continue
		}
		flush()
		if litRune >= 0 {
			atom = "(str.to_re " + smtString(string(litRune)) + ")"
		}
		if ok {
			atom = q(atom)
		}
		parts = append(parts, atom)
	}
	flush()
	return reApply("re.++", parts, `(str.to_re "")`), nil
}

// reApply is (op p1 p2 ...), p1 alone, or empty when there are no parts.
func reApply(op string, parts []string, empty string) string {
	switch len(parts) {
	case 0:
		return empty
	case 1:
		return parts[0]
	}
	return "(" + op + " " + strings.Join(parts, " ") + ")"
}

// quantifier reads the quantifiers after an atom (several compose).
func (r *regexParser) quantifier() (func(string) string, bool, *failure) {
	var fs []func(string) string
	for r.more() {
		var q func(string) string
		switch r.pat[r.pos] {
		case '*':
			r.pos++
			q = func(a string) string { return "(re.* " + a + ")" }
		case '+':
			r.pos++
			q = func(a string) string { return "(re.+ " + a + ")" }
		case '?':
			r.pos++
			if len(fs) > 0 {
				continue // lazy: the same language
			}
			q = func(a string) string { return "(re.opt " + a + ")" }
		case '{':
			var f *failure
			if q, f = r.bounds(); f != nil {
				return nil, false, f
			}
		default:
			if len(fs) == 0 {
				return nil, false, nil
			}
			return compose(fs), true, nil
		}
		fs = append(fs, q)
	}
	if len(fs) == 0 {
		return nil, false, nil
	}
	return compose(fs), true, nil
}

func compose(fs []func(string) string) func(string) string {
	return func(a string) string {
		for _, f := range fs {
			a = f(a)
		}
		return a
	}
}

// bounds reads {n}, {n,} or {n,m}.
func (r *regexParser) bounds() (func(string) string, *failure) {
	start := r.pos
	r.pos++
	n, ok := r.int()
	if !ok {
		r.pos = start
		return nil, r.syntax("{n}, {n,} or {n,m}", `"{"`)
	}
	m := n
	open := false
	if r.more() && r.pat[r.pos] == ',' {
		r.pos++
		if r.more() && r.pat[r.pos] == '}' {
			open = true
		} else if m, ok = r.int(); !ok {
			return nil, r.syntax("upper bound of {n,m}", r.here())
		}
	}
	if !r.more() || r.pat[r.pos] != '}' {
		return nil, r.syntax(`"}" closing the quantifier`, r.here())
	}
	r.pos++
	if n > MaxRegexRepeat || m > MaxRegexRepeat {
		return nil, limitErr(r.src, r.base+start, "regular expression repeat bound", MaxRegexRepeat)
	}
	if m < n {
		r.pos = start
		return nil, r.syntax("{n,m} with n <= m", fmt.Sprintf("{%d,%d}", n, m))
	}
	if open {
		return func(a string) string {
			return fmt.Sprintf("(re.++ ((_ re.loop %d %d) %s) (re.* %s))", n, n, a, a)
		}, nil
	}
	if n == 1 && m == 1 {
		return func(a string) string { return a }, nil
	}
	return func(a string) string { return fmt.Sprintf("((_ re.loop %d %d) %s)", n, m, a) }, nil
}

func (r *regexParser) int() (int, bool) {
	start := r.pos
	for r.more() && isDigit(r.pat[r.pos]) && r.pos-start < 6 {
		r.pos++
	}
	if r.pos == start {
		return 0, false
	}
	v, _ := strconv.Atoi(r.pat[start:r.pos])
	return v, true
}

func (r *regexParser) here() string {
	if !r.more() {
		return "end of pattern"
	}
	return strconv.Quote(string([]rune(r.pat[r.pos:])[0]))
}

// atom reads one atom; litRune >= 0 when it is a literal character.
func (r *regexParser) atom() (term string, litRune rune, f *failure) {
	c := r.pat[r.pos]
	switch c {
	case '(':
		return r.group()
	case '[':
		t, f := r.class()
		return t, -1, f
	case '.':
		r.pos++
		return "re.allchar", -1, nil
	case '\\':
		return r.escape(false)
	case '*', '+', '?', '{':
		return "", -1, r.syntax("a character or group before the quantifier", strconv.Quote(string(c)))
	case '^':
		return "", -1, r.unsupported(`"^" anywhere but the start`)
	case '$':
		return "", -1, r.unsupported(`"$" anywhere but the end`)
	}
	ru := []rune(r.pat[r.pos:])[0]
	if ru > MaxSolverRune {
		return "", -1, r.unsupported(fmt.Sprintf("the character %U (beyond U+2FFFF)", ru))
	}
	r.pos += len(string(ru))
	return "", ru, nil
}

func (r *regexParser) group() (string, rune, *failure) {
	r.pos++
	if strings.HasPrefix(r.pat[r.pos:], "?:") {
		r.pos += 2
	} else if strings.HasPrefix(r.pat[r.pos:], "?") {
		return "", -1, r.unsupported("a group modifier (?...) other than (?:")
	}
	r.depth++
	if r.depth > MaxRegexDepth {
		return "", -1, limitErr(r.src, r.base+r.pos, "regular expression depth", MaxRegexDepth)
	}
	inner, f := r.alt()
	if f != nil {
		return "", -1, f
	}
	r.depth--
	if !r.more() || r.pat[r.pos] != ')' {
		return "", -1, r.syntax(`")" closing the group`, r.here())
	}
	r.pos++
	return inner, -1, nil
}

// escape reads \x; inClass: inside [...].
func (r *regexParser) escape(inClass bool) (string, rune, *failure) {
	r.pos++
	if !r.more() {
		return "", -1, r.syntax("a character after \\", "end of pattern")
	}
	c := r.pat[r.pos]
	r.pos++
	const (
		digits = `(re.range "0" "9")`
		word   = `(re.union (re.range "a" "z") (re.range "A" "Z") (re.range "0" "9") (str.to_re "_"))`
		space  = `(re.union (str.to_re " ") (re.range "\u{9}" "\u{d}"))`
	)
	not := func(set string) string { return "(re.inter re.allchar (re.comp " + set + "))" }
	switch c {
	case 'd':
		return digits, -1, nil
	case 'w':
		return word, -1, nil
	case 's':
		return space, -1, nil
	case 'D', 'W', 'S':
		if inClass {
			r.pos -= 2
			return "", -1, r.unsupported(`a negated escape (\D, \W, \S) inside a class`)
		}
		return not(map[byte]string{'D': digits, 'W': word, 'S': space}[c]), -1, nil
	case 't':
		return "", '\t', nil
	case 'n':
		return "", '\n', nil
	case 'r':
		return "", '\r', nil
	case 'f':
		return "", '\f', nil
	case 'v':
		return "", '\v', nil
	}
	if c < 0x80 && !isLetter(c) && !isDigit(c) {
		return "", rune(c), nil
	}
	r.pos -= 2
	return "", -1, r.unsupported(strconv.Quote(`\`+string(c)) + " (back reference, boundary, or an escape of no agreed meaning)")
}

// class reads [...] or [^...].
func (r *regexParser) class() (string, *failure) {
	start := r.pos
	r.pos++
	neg := false
	if r.more() && r.pat[r.pos] == '^' {
		neg = true
		r.pos++
	}
	var items []string
	first := true
	for {
		if !r.more() {
			r.pos = start
			return "", r.syntax(`"]" closing the class`, "end of pattern")
		}
		c := r.pat[r.pos]
		if c == ']' && !first {
			r.pos++
			break
		}
		first = false
		if c == '[' && strings.HasPrefix(r.pat[r.pos:], "[:") {
			return "", r.unsupported("a POSIX class [:name:]")
		}
		lo, set, f := r.classChar()
		if f != nil {
			return "", f
		}
		if set != "" {
			items = append(items, set)
			continue
		}
		if r.pos+1 < len(r.pat) && r.pat[r.pos] == '-' && r.pat[r.pos+1] != ']' {
			r.pos++
			at := r.pos
			hi, set, f := r.classChar()
			if f != nil {
				return "", f
			}
			if set != "" {
				r.pos = at
				return "", r.syntax("a character ending the range", "a class escape")
			}
			if hi < lo {
				r.pos = at
				return "", r.syntax("a range low-high with low <= high", strconv.Quote(string(lo)+"-"+string(hi)))
			}
			items = append(items, "(re.range "+smtString(string(lo))+" "+smtString(string(hi))+")")
			continue
		}
		items = append(items, "(str.to_re "+smtString(string(lo))+")")
	}
	if len(items) == 0 {
		return "", r.syntax("a character in the class", `"]"`)
	}
	u := reApply("re.union", items, "")
	if neg {
		return "(re.inter re.allchar (re.comp " + u + "))", nil
	}
	return u, nil
}

// classChar reads one character of a class, or a class escape (set).
func (r *regexParser) classChar() (rune, string, *failure) {
	if r.pat[r.pos] == '\\' {
		set, lit, f := r.escape(true)
		return lit, set, f
	}
	ru := []rune(r.pat[r.pos:])[0]
	if ru > MaxSolverRune {
		return 0, "", r.unsupported(fmt.Sprintf("the character %U (beyond U+2FFFF)", ru))
	}
	r.pos += len(string(ru))
	return ru, "", nil
}

// smtString is s as an SMT-LIB 2.6 string literal: printable ASCII but
// the quote and the backslash as is, everything else as \u{hex}.
func smtString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteString(`""`)
		case c >= 0x20 && c < 0x7f && c != '\\':
			b.WriteRune(c)
		default:
			fmt.Fprintf(&b, `\u{%x}`, c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
