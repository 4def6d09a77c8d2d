package eventjson

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
)

// The scalar values, written as encoding/json v1 wrote them (with its
// default HTML escaping), which is what the logs hold: the frozen fixtures
// of schemas/testdata/events/v1 and their README define them.

const hexDigits = "0123456789abcdef"

// asIs marks the ASCII bytes a JSON string holds unescaped: everything
// from space up except the quote, the backslash and the three characters
// encoding/json escapes for HTML (<, >, &).
var asIs = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendQuoted appends s as a JSON string: quote and backslash escaped as
// \" and \\; \b \f \n \r \t by name; the other control characters and <,
// >, & as \u00XX; U+2028 and U+2029 as \u2028 and \u2029; each byte that
// is not part of valid UTF-8 as \ufffd; anything else as is.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	done := 0 // s[:done] is written
	for i := 0; i < len(s); {
		// Skip eight bytes at a time while none needs a look.
		for i+8 <= len(s) && !needsLook(load8(s, i)) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if asIs[c] {
				i++
				continue
			}
			b = append(b, s[done:i]...)
			b = appendEscapedByte(b, c)
			i++
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[done:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[done:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		done = i
	}
	b = append(b, s[done:]...)
	return append(b, '"')
}

// load8 returns the eight bytes of s from i as a little-endian word.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// The words of eight bytes needsLook tests: a byte 0x01 and 0x80 in each lane.
const (
	lanes     = 0x0101010101010101
	laneHighs = 0x8080808080808080
)

// needsLook reports whether one of the eight bytes of w may not be copied
// as is: a control character, a byte from 0x80 (UTF-8 to check), the
// quote, the backslash, <, > or &. It may answer true for a byte that is
// fine (the byte-wise loop then looks), never false for one that is not.
// A lane is zero, or below 0x20, when subtracting 0x01 (0x20) from it
// borrows into its high bit while that bit was clear.
func needsLook(w uint64) bool {
	backslash := w ^ ('\\' * lanes)
	quoteAmp := (w | 0x04*lanes) ^ ('&' * lanes) // " (0x22) or & (0x26)
	angles := (w | 0x02*lanes) ^ ('>' * lanes)   // < (0x3c) or > (0x3e)
	return (w|
		(w-0x20*lanes)&^w|
		(backslash-lanes)&^backslash|
		(quoteAmp-lanes)&^quoteAmp|
		(angles-lanes)&^angles)&laneHighs != 0
}

// appendEscapedByte appends the escape of an ASCII byte asIs refuses.
func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// appendUSD appends u as domain.USD.MarshalJSON does: whole dollars, then
// the micro-dollars with their trailing zeros dropped ("1.5", "-0.000001",
// "100").
func appendUSD(b []byte, u domain.USD) []byte {
	m := uint64(u)
	if u < 0 {
		b = append(b, '-')
		m = -m // two's complement: also right for the most negative value
	}
	b = strconv.AppendUint(b, m/domain.MicrosPerUSD, 10)
	frac := m % domain.MicrosPerUSD
	if frac == 0 {
		return b
	}
	var digits [6]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := len(digits)
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// appendFloat appends a finite float64 as encoding/json does: the
// shortest representation that reads back the same, in exponent form
// (with at least one exponent digit) below 1e-6 and from 1e21 on.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 is written 1e-7.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// usd writes an amount.
func (e *encoder) usd(v domain.USD) { e.buf = appendUSD(e.buf, v) }

// usdPtr writes an amount behind a pointer (null for nil).
func (e *encoder) usdPtr(v *domain.USD) {
	if v == nil {
		e.null()
		return
	}
	e.usd(*v)
}

// int64Ptr writes an integer behind a pointer (null for nil).
func (e *encoder) int64Ptr(v *int64) {
	if v == nil {
		e.null()
		return
	}
	e.buf = appendInt(e.buf, *v)
}

// number writes a json.Number: its text when it is a JSON number, "0"
// for ""; encoding/json refuses anything else.
func (e *encoder) number(n json.Number) {
	if n == "" {
		n = "0"
	}
	if !isJSONNumber(string(n)) {
		e.fail("json.Number %q is not a number", string(n))
		return
	}
	e.buf = append(e.buf, n...)
}

// isJSONNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

// skipDigits returns the index of the first non-digit of s from i.
func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// time writes t as time.Time.MarshalJSON does: RFC 3339 with the
// nanoseconds' trailing zeros dropped, "Z" for a zero offset. Times
// MarshalJSON refuses (a year outside 0-9999, an offset of 24 hours or
// more) fail.
func (e *encoder) time(t time.Time) {
	e.buf = append(e.buf, '"')
	start := len(e.buf)
	e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
	if !rfc3339Strict(e.buf[start:]) {
		e.fail("time %s is not RFC 3339 (a year outside 0-9999 or an offset of a day or more)", e.buf[start:])
	}
	e.buf = append(e.buf, '"')
}

// rfc3339Strict reports whether s, a time formatted as RFC3339Nano, is
// valid RFC 3339: a four-digit year and a zone hour below 24.
func rfc3339Strict(s []byte) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' {
		return false
	}
	if s[len(s)-1] == 'Z' {
		return true
	}
	zone := s[len(s)-len("-07:00"):] // ±hh:mm, or more hour digits
	if zone[0] != '+' && zone[0] != '-' {
		return false
	}
	hour := 10*int(zone[1]-'0') + int(zone[2]-'0')
	return hour < 24
}

// timePtr writes a time behind a pointer (null for nil).
func (e *encoder) timePtr(t *time.Time) {
	if t == nil {
		e.null()
		return
	}
	e.time(*t)
}

// raw writes a json.RawMessage as encoding/json writes a Marshaler's
// output: null for nil; otherwise it must be valid JSON, and it is
// compacted (whitespace between tokens dropped) with <, >, & and U+2028,
// U+2029 escaped (they can only occur inside strings). Invalid JSON fails.
func (e *encoder) raw(m json.RawMessage) {
	if m == nil {
		e.null()
		return
	}
	if !validJSON(m) {
		e.fail("json.RawMessage %q is not one JSON value", []byte(m))
		return
	}
	b := e.buf
	inString, escaped := false, false
	for i := 0; i < len(m); i++ {
		c := m[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			continue
		case c == 0xe2 && i+2 < len(m) && m[i+1] == 0x80 && (m[i+2] == 0xa8 || m[i+2] == 0xa9):
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[m[i+2]&0xf])
			i += 2
			continue
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b = append(b, c)
	}
	e.buf = b
}

// maxDepth bounds the nesting of error details the encoder writes
// (encoding/json reports a cycle only past 1,000 levels).
const maxDepth = 32

// value writes one value of error details (domain.Details lists the
// detail values); any other type fails.
func (e *encoder) value(v any, depth int) {
	if depth > maxDepth {
		e.fail("error details nested deeper than %d levels", maxDepth)
		return
	}
	switch x := v.(type) {
	case nil:
		e.null()
	case string:
		e.buf = appendQuoted(e.buf, x)
	case bool:
		e.buf = appendBool(e.buf, x)
	case int:
		e.buf = appendInt(e.buf, int64(x))
	case int8:
		e.buf = appendInt(e.buf, int64(x))
	case int16:
		e.buf = appendInt(e.buf, int64(x))
	case int32:
		e.buf = appendInt(e.buf, int64(x))
	case int64:
		e.buf = appendInt(e.buf, x)
	case uint:
		e.buf = appendUint(e.buf, uint64(x))
	case uint8:
		e.buf = appendUint(e.buf, uint64(x))
	case uint16:
		e.buf = appendUint(e.buf, uint64(x))
	case uint32:
		e.buf = appendUint(e.buf, uint64(x))
	case uint64:
		e.buf = appendUint(e.buf, x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			e.fail("error details hold the float %v", x)
			return
		}
		e.buf = appendFloat(e.buf, x)
	case domain.USD:
		e.usd(x)
	case json.Number:
		e.number(x)
	case json.RawMessage:
		e.raw(x)
	case time.Time:
		e.time(x)
	case *time.Time:
		e.timePtr(x)
	case []string:
		e.strings(x)
	case []any:
		e.array(x, depth)
	case []engines.Finding:
		e.findings(x)
	case map[string]any:
		e.object(x, depth)
	case domain.Details:
		e.object(x, depth)
	default:
		e.fail("error details hold a %T, which is not a detail value (domain.Details)", v)
	}
}

// array writes a []any (null when nil).
func (e *encoder) array(list []any, depth int) {
	if list == nil {
		e.null()
		return
	}
	e.buf = append(e.buf, '[')
	for i, v := range list {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.value(v, depth+1)
	}
	e.buf = append(e.buf, ']')
}

// object writes a map[string]any (null when nil) with its keys sorted
// byte-wise, as encoding/json does.
func (e *encoder) object(m map[string]any, depth int) {
	if m == nil {
		e.null()
		return
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendQuoted(e.buf, k)
		e.buf = append(e.buf, ':')
		e.value(m[k], depth+1)
	}
	e.buf = append(e.buf, '}')
}

// validJSON reports whether m is exactly one JSON value, with white space
// around it allowed, as the decoder reads JSON.
func validJSON(m []byte) bool {
	d := decoder{p: m}
	d.skip(0)
	d.end()
	return !d.failed
}
