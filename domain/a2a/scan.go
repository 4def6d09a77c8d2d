package a2a

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// scanner reads the JSON text of a payload for a guard without decoding
// it into Go values: it walks the members a guard reads and skips the
// others, checking the syntax of all it passes. It allocates nothing but
// the problem it reports (and the strings a guard asks it for). A guard
// stops at the first problem (s.prob).
type scanner struct {
	p     []byte
	i     int
	depth int
	prob  *Problem
}

func (s *scanner) ws() {
	for s.i < len(s.p) && space[s.p[s.i]] {
		s.i++
	}
}

// space marks JSON's white space.
var space = [256]bool{' ': true, '\t': true, '\r': true, '\n': true}

// fail records the first problem and stops the scan.
func (s *scanner) fail(p *Problem) bool {
	if s.prob == nil {
		s.prob = p
	}
	s.i = len(s.p)
	return false
}

// syntax fails with a malformed-JSON problem at the current offset.
func (s *scanner) syntax(field string) bool {
	p := problem(CodeInvalidRequest, field, "payload is not valid JSON at byte "+strconv.Itoa(s.i))
	p.Offset = s.i
	return s.fail(p)
}

// peek returns the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.p) {
		return s.p[s.i]
	}
	return 0
}

// isNull consumes a null literal if one is next.
func (s *scanner) isNull() bool {
	if s.peek() == 'n' && len(s.p)-s.i >= 4 && string(s.p[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// begin consumes the open bracket of an object ('{') or array ('['), or
// fails naming field and what it must be.
func (s *scanner) begin(open byte, field, what string) bool {
	if s.peek() != open {
		return s.fail(problem(CodeInvalidRequest, field, field+" must be "+what+", not "+kindOf(s.p[s.i:])))
	}
	if s.depth++; s.depth > MaxPayloadDepth {
		return s.fail(&Problem{Code: CodeTooLong, Field: field, Limit: MaxPayloadDepth, Size: s.depth, Offset: -1,
			Message: field + " nests deeper than " + strconv.Itoa(MaxPayloadDepth) + " arrays and objects"})
	}
	s.i++
	return true
}

// member reads the next member name of the open object and its colon:
// ok false at the closing brace (consumed) or on a fault. first is true
// for the object's first member. The name is the raw text between the
// quotes; esc says whether it holds escapes.
func (s *scanner) member(first bool, field string) (name []byte, esc, ok bool) {
	c := s.peek()
	if c == '}' {
		s.i++
		s.depth--
		return nil, false, false
	}
	if !first {
		if c != ',' {
			return nil, false, s.syntax(field)
		}
		s.i++
		c = s.peek()
	}
	if c != '"' {
		return nil, false, s.syntax(field)
	}
	name, esc, ok = s.strBody(field)
	if !ok {
		return nil, false, false
	}
	if s.peek() != ':' {
		return nil, false, s.syntax(field)
	}
	s.i++
	return name, esc, true
}

// elem moves to the next element of the open array: false at the closing
// bracket (consumed) or on a fault.
func (s *scanner) elem(first bool, field string) bool {
	c := s.peek()
	if c == ']' {
		s.i++
		s.depth--
		return false
	}
	if !first {
		if c != ',' {
			return s.syntax(field)
		}
		s.i++
	}
	return true
}

// str consumes a string and returns its raw content (between the quotes),
// whether it holds escapes, and false on a fault.
func (s *scanner) str(field string) (raw []byte, esc, ok bool) {
	if s.peek() != '"' {
		return nil, false, s.syntax(field)
	}
	return s.strBody(field)
}

// strBody is str once the next byte is known to be the opening quote.
func (s *scanner) strBody(field string) (raw []byte, esc, ok bool) {
	s.i++
	start := s.i
	p := s.p
	for s.i < len(p) {
		// Plain bytes, the most of any string, in a tight loop.
		i := s.i
		for i < len(p) && plain[p[i]] {
			i++
		}
		s.i = i
		if i == len(p) {
			break
		}
		c := p[i]
		switch {
		case c == '"':
			raw = s.p[start:s.i]
			s.i++
			return raw, esc, true
		case c == '\\':
			esc = true
			if s.i+1 >= len(s.p) {
				return nil, false, s.syntax(field)
			}
			switch s.p[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.p) || !isHex4(s.p[s.i+2:s.i+6]) {
					return nil, false, s.syntax(field)
				}
				s.i += 6
			default:
				return nil, false, s.syntax(field)
			}
		case c < 0x20:
			return nil, false, s.syntax(field)
		default:
			s.i++
		}
	}
	return nil, false, s.syntax(field)
}

// plain marks the bytes a JSON string holds as they are: all but the
// quote, the backslash and the control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// text returns the value of a string member: its raw content when it has
// no escapes (converted once), else its unescaped form; invalid UTF-8 and
// unpaired surrogates are a problem.
func (s *scanner) text(raw []byte, esc bool, field string) (string, bool) {
	if !esc {
		if !utf8.Valid(raw) {
			return "", s.fail(problem(CodeInvalidRequest, field, field+" is not valid UTF-8"))
		}
		return string(raw), true
	}
	// raw sits between two quotes in s.p.
	off := cap(s.p[:0]) - cap(raw)
	quoted := s.p[off-1 : off+len(raw)+1]
	if !utf8.Valid(raw) || unpairedSurrogate(raw) {
		return "", s.fail(problem(CodeInvalidRequest, field, field+" holds invalid UTF-8 or an unpaired surrogate escape"))
	}
	var v string
	if err := json.Unmarshal(quoted, &v); err != nil {
		return "", s.fail(problem(CodeInvalidRequest, field, field+" is not a valid JSON string"))
	}
	return v, true
}

// unpairedSurrogate reports whether the escapes of a string's raw content
// (its syntax checked) hold a UTF-16 surrogate that is not half of a
// pair: encoding/json would read it as U+FFFD, so two different texts
// would read alike.
func unpairedSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r := hex4(raw[i+2 : i+6])
		i += 5
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return true
		case 0xD800 <= r && r <= 0xDBFF:
			if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return true
			}
			if lo := hex4(raw[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// hex4 is the value of four hex digits (checked by str).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// nameIs reports whether a member's raw name is want (escapes decoded).
func (s *scanner) nameIs(raw []byte, esc bool, want string) bool {
	if !esc {
		return string(raw) == want
	}
	off := cap(s.p[:0]) - cap(raw)
	var v string
	if json.Unmarshal(s.p[off-1:off+len(raw)+1], &v) != nil {
		return false
	}
	return v == want
}

// number consumes a JSON number and returns its text.
func (s *scanner) number(field string) ([]byte, bool) {
	s.ws()
	start := s.i
	n := numberLen(s.p[s.i:])
	if n == 0 {
		return nil, s.syntax(field)
	}
	s.i += n
	return s.p[start:s.i], true
}

// numberLen returns the length of the JSON number at the start of b (RFC
// 8259 grammar), 0 when there is none.
func numberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return 0
		}
	}
	return i
}

// digits returns the index after the decimal digits of b from i.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// once marks a member of an object as read, or fails when it was already:
// the guards refuse a repeated member they read (two readers could take
// either).
func (s *scanner) once(seen *bool, field, object, member string) bool {
	if *seen {
		return s.fail(problem(CodeInvalidRequest, field, object+" repeats the member "+member))
	}
	*seen = true
	return true
}

// stringMember reads an optional string member (absent or null: "") of at
// most limit bytes of JSON text.
func (s *scanner) stringMember(f string, limit int) string {
	if s.isNull() {
		return ""
	}
	if s.peek() != '"' {
		s.fail(problem(CodeInvalidRequest, f, f+" must be a string, not "+kindOf(s.p[s.i:])))
		return ""
	}
	raw, esc, ok := s.str(f)
	if !ok {
		return ""
	}
	if len(raw) > limit {
		s.fail(tooLong(f, len(raw), limit, "bytes"))
		return ""
	}
	v, _ := s.text(raw, esc, f)
	return v
}

// skip consumes any value, checking its syntax.
func (s *scanner) skip(field string) bool {
	switch c := s.peek(); c {
	case '{':
		if !s.begin('{', field, "an object") {
			return false
		}
		for n := 0; ; n++ {
			_, _, ok := s.member(n == 0, field)
			if !ok {
				return s.prob == nil
			}
			if !s.skip(field) {
				return false
			}
		}
	case '[':
		if !s.begin('[', field, "an array") {
			return false
		}
		for n := 0; s.elem(n == 0, field); n++ {
			if !s.skip(field) {
				return false
			}
		}
		return s.prob == nil
	case '"':
		_, _, ok := s.str(field)
		return ok
	case 't':
		return s.literal("true", field)
	case 'f':
		return s.literal("false", field)
	case 'n':
		return s.literal("null", field)
	default:
		_, ok := s.number(field)
		return ok
	}
}

func (s *scanner) literal(lit, field string) bool {
	if len(s.p)-s.i < len(lit) || string(s.p[s.i:s.i+len(lit)]) != lit {
		return s.syntax(field)
	}
	s.i += len(lit)
	return true
}

// end checks that nothing but white space follows the payload.
func (s *scanner) end() bool {
	if s.prob != nil {
		return false
	}
	if s.ws(); s.i != len(s.p) {
		return s.syntax("payload")
	}
	return true
}
