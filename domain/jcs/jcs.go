package jcs

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects that Transform
// accepts: a value nested in MaxDepth containers is accepted, one more level
// is rejected with ErrTooDeep.
const MaxDepth = 64

// The sentinel errors. Every error returned by Transform and AppendTransform
// is an *Error wrapping exactly one of them; test with errors.Is.
var (
	// ErrInvalidJSON reports text that is not JSON (RFC 8259): a bad token,
	// a missing separator, a raw control character in a string, a bad
	// escape, or empty input.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrInvalidUTF8 reports a string that is not valid Unicode: invalid
	// UTF-8 bytes or an unpaired UTF-16 surrogate escape (RFC 8785 §3.2.2.2).
	ErrInvalidUTF8 = errors.New("invalid UTF-8 or unpaired surrogate")
	// ErrDuplicateKey reports an object with two members of the same
	// (unescaped) name (RFC 7493 §2.3).
	ErrDuplicateKey = errors.New("duplicate member name")
	// ErrInvalidNumber reports a number that has no IEEE 754 double value:
	// a magnitude that overflows float64 (1e400), or a NaN or Infinity token.
	ErrInvalidNumber = errors.New("invalid number")
	// ErrTooDeep reports nesting deeper than MaxDepth.
	ErrTooDeep = errors.New("nesting too deep")
	// ErrTrailingData reports anything but whitespace after the JSON value.
	ErrTrailingData = errors.New("trailing data after JSON value")
)

// Error is the error type of this package: the fault's kind (one of the
// sentinel errors), its byte offset in the input and a human description.
type Error struct {
	// Offset is the byte offset in the input where the fault was found.
	Offset int
	// Kind is one of the sentinel errors; Unwrap returns it.
	Kind error
	// Detail describes the fault (may be empty).
	Detail string
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("jcs: %v at offset %d", e.Kind, e.Offset)
	}
	return fmt.Sprintf("jcs: %v at offset %d: %s", e.Kind, e.Offset, e.Detail)
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Kind }

// Transform returns the RFC 8785 canonical form of the JSON text raw. raw is
// not modified and the result does not alias it. On error the result is nil
// and the error is an *Error wrapping one of the sentinel errors.
func Transform(raw []byte) ([]byte, error) {
	out, err := AppendTransform(make([]byte, 0, len(raw)+16), raw)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendTransform appends the RFC 8785 canonical form of raw to dst and
// returns the extended slice. On error it returns dst truncated to its
// original length (its spare capacity may have been overwritten) and an
// *Error. raw must not overlap dst's spare capacity. With a dst of sufficient
// capacity it performs no allocations in steady state.
func AppendTransform(dst, raw []byte) ([]byte, error) {
	return appendTransform(dst, raw, 0)
}

// AppendTransformNested is AppendTransform for a value that its caller
// embeds in outer arrays or objects it writes itself: the output is the
// same, but the nesting limit counts the outer containers, so raw is
// rejected with ErrTooDeep exactly when the enclosing document would be (a
// value nested d deep is accepted when outer+d <= MaxDepth). The canonical
// form of a document is its members' canonical forms in canonical order, so
// a caller that writes an already canonical enclosing structure around the
// result gets the enclosing document's canonical form. A negative outer
// counts as 0.
func AppendTransformNested(dst, raw []byte, outer int) ([]byte, error) {
	return appendTransform(dst, raw, max(outer, 0))
}

func appendTransform(dst, raw []byte, outer int) ([]byte, error) {
	st := statePool.Get().(*state)
	st.in = raw
	st.pos = 0
	st.depth = outer
	base := len(dst)
	out, err := st.document(dst)
	st.reset()
	statePool.Put(st)
	if err != nil {
		return dst[:base], err
	}
	return out, nil
}

var statePool = sync.Pool{New: func() any { return new(state) }}

// member is one object member written to the output: out[start:end] holds
// `"name":value`, names[nameStart:nameEnd] holds the unescaped name.
type member struct {
	start, end         int
	nameStart, nameEnd int
}

// state is the parser's scratch space. members and names are stacks shared
// by nested objects; scratch holds an object's members while they are
// reordered.
type state struct {
	in      []byte
	pos     int
	depth   int
	members []member
	names   []byte
	scratch []byte
}

// maxRetained caps the scratch capacity kept in the pool, so one huge input
// does not pin its buffers forever.
const maxRetained = 64 << 10

func (st *state) reset() {
	st.in = nil
	st.depth = 0
	st.members = st.members[:0]
	st.names = st.names[:0]
	st.scratch = st.scratch[:0]
	if cap(st.scratch) > maxRetained {
		st.scratch = nil
	}
	if cap(st.names) > maxRetained {
		st.names = nil
	}
	if cap(st.members) > maxRetained/32 {
		st.members = nil
	}
}

func (st *state) fail(kind error, offset int, detail string) error {
	return &Error{Offset: offset, Kind: kind, Detail: detail}
}

func (st *state) document(out []byte) ([]byte, error) {
	st.skipSpace()
	if st.pos >= len(st.in) {
		return out, st.fail(ErrInvalidJSON, st.pos, "unexpected end of input")
	}
	out, err := st.value(out)
	if err != nil {
		return out, err
	}
	st.skipSpace()
	if st.pos < len(st.in) {
		return out, st.fail(ErrTrailingData, st.pos, "")
	}
	return out, nil
}

func (st *state) skipSpace() {
	for st.pos < len(st.in) {
		switch st.in[st.pos] {
		case ' ', '\t', '\n', '\r':
			st.pos++
		default:
			return
		}
	}
}

func (st *state) value(out []byte) ([]byte, error) {
	if st.pos >= len(st.in) {
		return out, st.fail(ErrInvalidJSON, st.pos, "unexpected end of input")
	}
	switch c := st.in[st.pos]; {
	case c == '{':
		return st.object(out)
	case c == '[':
		return st.array(out)
	case c == '"':
		var err error
		out, _, err = st.str(out, false)
		return out, err
	case c == '-' || ('0' <= c && c <= '9'):
		return st.number(out)
	case c == 't':
		return st.literal(out, "true")
	case c == 'f':
		return st.literal(out, "false")
	case c == 'n':
		return st.literal(out, "null")
	case c == 'N' || c == 'I':
		return out, st.fail(ErrInvalidNumber, st.pos, "NaN and Infinity are not JSON numbers")
	default:
		return out, st.fail(ErrInvalidJSON, st.pos, fmt.Sprintf("unexpected character %q", c))
	}
}

func (st *state) literal(out []byte, lit string) ([]byte, error) {
	end := st.pos + len(lit)
	if end > len(st.in) || string(st.in[st.pos:end]) != lit {
		return out, st.fail(ErrInvalidJSON, st.pos, "invalid literal")
	}
	st.pos = end
	return append(out, lit...), nil
}

func (st *state) enter() error {
	st.depth++
	if st.depth > MaxDepth {
		return st.fail(ErrTooDeep, st.pos, fmt.Sprintf("more than %d nested arrays and objects", MaxDepth))
	}
	return nil
}

func (st *state) array(out []byte) ([]byte, error) {
	if err := st.enter(); err != nil {
		return out, err
	}
	st.pos++ // '['
	out = append(out, '[')
	st.skipSpace()
	if st.pos < len(st.in) && st.in[st.pos] == ']' {
		st.pos++
		st.depth--
		return append(out, ']'), nil
	}
	for {
		st.skipSpace()
		var err error
		if out, err = st.value(out); err != nil {
			return out, err
		}
		st.skipSpace()
		if st.pos >= len(st.in) {
			return out, st.fail(ErrInvalidJSON, st.pos, "unterminated array")
		}
		switch st.in[st.pos] {
		case ',':
			st.pos++
			out = append(out, ',')
		case ']':
			st.pos++
			st.depth--
			return append(out, ']'), nil
		default:
			return out, st.fail(ErrInvalidJSON, st.pos, "expected ',' or ']' in array")
		}
	}
}

func (st *state) object(out []byte) ([]byte, error) {
	if err := st.enter(); err != nil {
		return out, err
	}
	objStart := st.pos
	st.pos++ // '{'
	out = append(out, '{')
	body := len(out)
	firstMember := len(st.members)
	namesBase := len(st.names)
	st.skipSpace()
	if st.pos < len(st.in) && st.in[st.pos] == '}' {
		st.pos++
		st.depth--
		return append(out, '}'), nil
	}
	for {
		st.skipSpace()
		if st.pos >= len(st.in) || st.in[st.pos] != '"' {
			return out, st.fail(ErrInvalidJSON, st.pos, "expected a string member name")
		}
		if len(st.members) > firstMember {
			out = append(out, ',')
		}
		m := member{start: len(out), nameStart: len(st.names)}
		var err error
		if out, st.names, err = st.str(out, true); err != nil {
			return out, err
		}
		m.nameEnd = len(st.names)
		st.skipSpace()
		if st.pos >= len(st.in) || st.in[st.pos] != ':' {
			return out, st.fail(ErrInvalidJSON, st.pos, "expected ':' after member name")
		}
		st.pos++
		out = append(out, ':')
		st.skipSpace()
		if out, err = st.value(out); err != nil {
			return out, err
		}
		m.end = len(out)
		st.members = append(st.members, m)
		st.skipSpace()
		if st.pos >= len(st.in) {
			return out, st.fail(ErrInvalidJSON, st.pos, "unterminated object")
		}
		if st.in[st.pos] == ',' {
			st.pos++
			continue
		}
		if st.in[st.pos] != '}' {
			return out, st.fail(ErrInvalidJSON, st.pos, "expected ',' or '}' in object")
		}
		st.pos++
		break
	}
	out, err := st.sortMembers(out, body, firstMember, objStart)
	if err != nil {
		return out, err
	}
	st.members = st.members[:firstMember]
	st.names = st.names[:namesBase]
	st.depth--
	return append(out, '}'), nil
}

// sortMembers reorders the members written from out[body:], separated by
// commas, into canonical order.
func (st *state) sortMembers(out []byte, body, first int, objStart int) ([]byte, error) {
	ms := st.members[first:]
	names := st.names
	if fastPaths {
		sorted := true
		for i := 1; i < len(ms) && sorted; i++ {
			a, b := ms[i-1], ms[i]
			sorted = compareUTF16(names[a.nameStart:a.nameEnd], names[b.nameStart:b.nameEnd]) < 0
		}
		if sorted {
			return out, nil // in order and without duplicates: written as is
		}
	}
	if fastPaths && len(ms) <= 12 {
		// Insertion sort, stable like SortStableFunc, without its
		// indirect calls: objects are small.
		for i := 1; i < len(ms); i++ {
			m := ms[i]
			j := i
			for ; j > 0 && compareUTF16(names[m.nameStart:m.nameEnd], names[ms[j-1].nameStart:ms[j-1].nameEnd]) < 0; j-- {
				ms[j] = ms[j-1]
			}
			ms[j] = m
		}
	} else {
		slices.SortStableFunc(ms, func(a, b member) int {
			return compareUTF16(names[a.nameStart:a.nameEnd], names[b.nameStart:b.nameEnd])
		})
	}
	for i := 1; i < len(ms); i++ {
		a, b := ms[i-1], ms[i]
		if string(names[a.nameStart:a.nameEnd]) == string(names[b.nameStart:b.nameEnd]) {
			return out, st.fail(ErrDuplicateKey, objStart, fmt.Sprintf("member name %q appears more than once", names[b.nameStart:b.nameEnd]))
		}
	}
	st.scratch = append(st.scratch[:0], out[body:]...)
	out = out[:body]
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, st.scratch[m.start-body:m.end-body]...)
	}
	return out, nil
}

// compareUTF16 compares two valid UTF-8 strings by their UTF-16 code units
// (RFC 8785 §3.2.3). UTF-8 byte order equals code point order, which differs
// from UTF-16 order in one case only: a supplementary character (UTF-8 lead
// byte F0-F4, UTF-16 surrogates D800-DFFF) sorts before a character in
// U+E000-U+FFFF (lead byte EE-EF). Equal prefixes put the first differing
// bytes at the same place of the same sequence, so looking at them suffices.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		switch {
		case x >= 0xF0 && (y == 0xEE || y == 0xEF):
			return -1
		case y >= 0xF0 && (x == 0xEE || x == 0xEF):
			return 1
		}
		return int(x) - int(y)
	}
	return len(a) - len(b)
}

// str parses the string at st.pos and appends its canonical form to out.
// If name is set it also appends the unescaped bytes to st.names and returns
// the extended names slice.
func (st *state) str(out []byte, name bool) ([]byte, []byte, error) {
	names := st.names
	st.pos++ // '"'
	out = append(out, '"')
	for {
		// Copy a run of bytes that need no escaping.
		runStart := st.pos
		for st.pos < len(st.in) && plain[st.in[st.pos]] {
			st.pos++
		}
		out = append(out, st.in[runStart:st.pos]...)
		if name {
			names = append(names, st.in[runStart:st.pos]...)
		}
		if st.pos >= len(st.in) {
			return out, names, st.fail(ErrInvalidJSON, st.pos, "unterminated string")
		}
		c := st.in[st.pos]
		switch {
		case c == '"':
			st.pos++
			return append(out, '"'), names, nil
		case c < 0x20:
			return out, names, st.fail(ErrInvalidJSON, st.pos, fmt.Sprintf("raw control character %#02x in string", c))
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(st.in[st.pos:])
			if r == utf8.RuneError && n <= 1 {
				return out, names, st.fail(ErrInvalidUTF8, st.pos, "invalid UTF-8 byte sequence")
			}
			out = append(out, st.in[st.pos:st.pos+n]...)
			if name {
				names = append(names, st.in[st.pos:st.pos+n]...)
			}
			st.pos += n
		default: // backslash
			r, err := st.escape()
			if err != nil {
				return out, names, err
			}
			out = appendRune(out, r)
			if name {
				names = utf8.AppendRune(names, r)
			}
		}
	}
}

// escape decodes the escape sequence at st.pos (which holds the backslash),
// including a surrogate pair written as two \u escapes.
func (st *state) escape() (rune, error) {
	start := st.pos
	if st.pos+1 >= len(st.in) {
		return 0, st.fail(ErrInvalidJSON, start, "unterminated escape")
	}
	c := st.in[st.pos+1]
	st.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, ok := st.hex4()
		if !ok {
			return 0, st.fail(ErrInvalidJSON, start, "invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			if r >= 0xDC00 {
				return 0, st.fail(ErrInvalidUTF8, start, fmt.Sprintf("unpaired low surrogate \\u%04x", r))
			}
			if st.pos+1 >= len(st.in) || st.in[st.pos] != '\\' || st.in[st.pos+1] != 'u' {
				return 0, st.fail(ErrInvalidUTF8, start, fmt.Sprintf("unpaired high surrogate \\u%04x", r))
			}
			st.pos += 2
			lo, ok := st.hex4()
			if !ok {
				return 0, st.fail(ErrInvalidJSON, st.pos-2, "invalid \\u escape")
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return 0, st.fail(ErrInvalidUTF8, start, fmt.Sprintf("high surrogate \\u%04x not followed by a low surrogate", r))
			}
			return utf16.DecodeRune(r, lo), nil
		}
		return r, nil
	default:
		return 0, st.fail(ErrInvalidJSON, start, fmt.Sprintf("invalid escape \\%c", c))
	}
}

func (st *state) hex4() (rune, bool) {
	if st.pos+4 > len(st.in) {
		return 0, false
	}
	var r rune
	for _, c := range st.in[st.pos : st.pos+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	st.pos += 4
	return r, true
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes a string copies unchanged without a closer look:
// printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendRune appends r in canonical string form (RFC 8785 §3.2.2.2).
func appendRune(out []byte, r rune) []byte {
	switch r {
	case '"':
		return append(out, '\\', '"')
	case '\\':
		return append(out, '\\', '\\')
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	if r < 0x20 {
		return append(out, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	}
	return utf8.AppendRune(out, r)
}

// maxExactDigits is the most decimal digits an integer may have and still
// be exact in an IEEE 754 double whatever its digits (10^15 < 2^53).
const maxExactDigits = 15

// number validates the JSON number grammar at st.pos, parses it as a double
// and appends its ECMAScript serialization.
func (st *state) number(out []byte) ([]byte, error) {
	start := st.pos
	in := st.in
	i := st.pos
	neg := 0
	if i < len(in) && in[i] == '-' {
		i++
		neg = 1
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && '1' <= in[i] && in[i] <= '9':
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
	case i < len(in) && in[i] == 'I':
		return out, st.fail(ErrInvalidNumber, start, "Infinity is not a JSON number")
	default:
		return out, st.fail(ErrInvalidJSON, start, "invalid number")
	}
	plainInt := true
	dot := -1
	if i < len(in) && in[i] == '.' {
		plainInt = false
		dot = i
		i++
		if i >= len(in) || in[i] < '0' || in[i] > '9' {
			return out, st.fail(ErrInvalidJSON, start, "invalid number: digit expected after '.'")
		}
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		plainInt = false
		dot = -1
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || in[i] < '0' || in[i] > '9' {
			return out, st.fail(ErrInvalidJSON, start, "invalid number: digit expected in exponent")
		}
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
	}
	// An integer of at most 15 digits is exact in a double and ECMAScript
	// writes it back digit for digit, so the token is its own canonical
	// form (but -0 is 0); the grammar above already excluded leading zeros.
	// TestIntegerFastPathMatchesParseFloat pins this against the general
	// path below.
	if plainInt && i-start-neg <= maxExactDigits {
		st.pos = i
		if neg == 1 && in[start+1] == '0' {
			return append(out, '0'), nil
		}
		return append(out, in[start:i]...), nil
	}
	if dot >= 0 && fastPaths {
		if out, ok := appendShortDecimal(out, in[start:i], dot-start); ok {
			st.pos = i
			return out, nil
		}
	}
	f, err := strconv.ParseFloat(string(in[start:i]), 64)
	if err != nil || math.IsInf(f, 0) {
		return out, st.fail(ErrInvalidNumber, start, fmt.Sprintf("%.40q overflows an IEEE 754 double", in[start:i]))
	}
	st.pos = i
	return AppendNumber(out, f), nil
}

// fastPaths enables the shortcuts of the canonical form (short decimals,
// small objects); the tests turn it off to compare them with the general
// path.
var fastPaths = true

// appendShortDecimal appends the canonical form of tok, a JSON number with
// a fraction and no exponent whose '.' is at tok[dot], when it has at most
// 15 significant digits and a magnitude of at least 1e-6 (or is zero); it
// reports false, appending nothing, for any other. Such a decimal is what
// ECMAScript writes for its double: 15 significant digits survive the round
// trip through a double (10^15 < 2^53), so no other decimal of 15 digits or
// fewer reads as the same double and the shortest round-trip digits are
// tok's own, less the trailing zeros of its fraction; the magnitude, below
// 10^15 and at least 1e-6, keeps ECMAScript's plain notation. So the form is
// tok without those zeros (and without the '.' when nothing is left after
// it), and 0 for a zero ("-0.00"). TestDecimalFastPathMatchesParseFloat and
// FuzzFastPaths pin it against ParseFloat and AppendNumber.
func appendShortDecimal(out, tok []byte, dot int) ([]byte, bool) {
	end := len(tok)
	for end > dot+1 && tok[end-1] == '0' {
		end--
	}
	intStart := 0
	if tok[0] == '-' {
		intStart = 1
	}
	intLen := dot - intStart
	if tok[intStart] != '0' {
		// |x| >= 1: every digit from the first is significant.
		if intLen+end-dot-1 > maxExactDigits {
			return out, false
		}
		if end == dot+1 {
			return append(out, tok[:dot]...), true
		}
		return append(out, tok[:end]...), true
	}
	// 0.fff: significant digits start after the fraction's leading zeros.
	if end == dot+1 {
		return append(out, '0'), true // a zero, of either sign
	}
	z := 0
	for tok[dot+1+z] == '0' {
		z++
	}
	if z >= 6 || end-dot-1-z > maxExactDigits {
		return out, false
	}
	return append(out, tok[:end]...), true
}

// AppendNumber appends the RFC 8785 §3.2.2.3 serialization of f (ECMAScript
// Number.prototype.toString) to out. f must be finite; NaN and infinities
// are appended as "null", which JSON.stringify also produces, but Transform
// never passes them.
func AppendNumber(out []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(out, "null"...)
	}
	if f == 0 {
		return append(out, '0') // also -0
	}
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// Shortest round-trip digits, as d.ddde±x.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	var digits [20]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	i++ // 'e'
	neg := e[i] == '-'
	i++
	exp := 0
	for ; i < len(e); i++ {
		exp = exp*10 + int(e[i]-'0')
	}
	if neg {
		exp = -exp
	}
	// ECMAScript: value = 0.d1d2...dk × 10^n, so n = exp+1.
	n := exp + 1
	k := nd
	switch {
	case k <= n && n <= 21:
		out = append(out, digits[:k]...)
		for j := 0; j < n-k; j++ {
			out = append(out, '0')
		}
	case 0 < n && n <= 21:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:k]...)
	case -6 < n && n <= 0:
		out = append(out, '0', '.')
		for j := 0; j < -n; j++ {
			out = append(out, '0')
		}
		out = append(out, digits[:k]...)
	default:
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:k]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return out
}
