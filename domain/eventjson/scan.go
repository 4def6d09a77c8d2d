package eventjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain"
)

// The scanner of the decoder.
//
// A decoder reads one JSON document left to right with small helpers (a
// member's key, a string, an integer, a boolean, a raw value) that the
// per-type functions of fastevent.go call in turn. Each helper checks the
// JSON syntax of what it reads as RFC 8259 defines it, and decodes it into
// the field's type as encoding/json v1 (the tests' oracle) would.
// Anything else (a syntax error, a type mismatch, a null but for a list,
// a number out of range, a repeated key, a key that matches a field name
// only in another case) is not the event format: the decoder records
// where it stopped and stops consuming input, and DecodeEvent returns a
// *DecodeError.

// maxSkipDepth bounds the nesting of values the decoder skips or copies
// (parameters, details); deeper values are refused.
const maxSkipDepth = 64

// decoder is the state of one fast decode.
type decoder struct {
	p []byte
	i int
	// failed is set once the decoder cannot decode p (at failedAt); i is
	// then len(p) so that every loop ends.
	failed   bool
	failedAt int
	// first is true between an object's '{' and its first member.
	first bool
	// buf holds the unescaped text of the last string with escapes.
	buf []byte
	// slots are preallocated structs of the event (see slots).
	slots slots
	// prevDetails are the event's last error details (see details).
	prevDetails detailsSpan
	// strict refuses members the type does not know, as a json.Decoder
	// with DisallowUnknownFields does (see DecodeVerifyRequest).
	strict bool
	// fold skips the members a fold does not read (see DecodeFoldEvent).
	fold bool
}

// fail stops the decoder at the first byte it cannot decode (failedAt).
func (d *decoder) fail() {
	if !d.failed {
		d.failedAt = d.i
	}
	d.failed = true
	d.i = len(d.p)
}

// ws skips JSON whitespace.
func (d *decoder) ws() {
	for d.i < len(d.p) {
		switch d.p[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte (0 at the end).
func (d *decoder) peek() byte {
	if d.i < len(d.p) && d.p[d.i] > ' ' {
		return d.p[d.i] // compact JSON: no whitespace to skip
	}
	d.ws()
	if d.i < len(d.p) {
		return d.p[d.i]
	}
	return 0
}

// expect consumes the byte c (after whitespace) or fails.
func (d *decoder) expect(c byte) {
	if d.peek() != c {
		d.fail()
		return
	}
	d.i++
}

// end checks that nothing but whitespace follows the document.
func (d *decoder) end() {
	if d.peek() != 0 || d.i != len(d.p) {
		d.fail()
	}
}

// openObject consumes the '{' of an object; a null or any other value
// fails.
func (d *decoder) openObject() {
	d.expect('{')
	d.first = true
}

// next moves to the object's next member: it consumes the separating
// comma, the member's key and the colon, and returns the key (a slice of
// p); at the closing brace it consumes it and returns nil. A key that is
// not plain text (an escape, a byte ≥ 0x80) is either returned as it
// stands, matching no field name, or fails.
func (d *decoder) next() []byte {
	// The usual case, compact JSON: `,"key":`, or `"key":` first.
	p, i := d.p, d.i
	if !d.first {
		if i >= len(p) || p[i] != ',' {
			return d.nextSlow()
		}
		i++
	}
	if i >= len(p) || p[i] != '"' {
		return d.nextSlow()
	}
	// The key ends at the next quote: a key with an escape or any byte
	// that is not in a field name matches no case of the caller's switch,
	// which then fails.
	j := quoteAt(p, i+1)
	if j+1 >= len(p) || p[j+1] != ':' {
		return d.nextSlow()
	}
	d.first = false
	d.i = j + 2
	return p[i+1 : j]
}

// nextSlow is next for any JSON: whitespace around the tokens, the
// closing brace, errors. next has changed nothing when it calls it.
func (d *decoder) nextSlow() []byte {
	c := d.peek()
	if d.first {
		d.first = false
		if c == '}' {
			d.i++
			return nil
		}
	} else {
		switch c {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			d.fail()
			return nil
		}
	}
	if d.peek() != '"' {
		d.fail()
		return nil
	}
	start := d.i + 1
	j := plainEnd(d.p, start)
	if j >= len(d.p) || d.p[j] != '"' {
		d.fail() // an escape or a byte that is not printable ASCII
		return nil
	}
	d.i = j + 1
	if d.peek() != ':' {
		d.fail()
		return nil
	}
	d.i++
	return d.p[start:j]
}

// unknown handles a member whose key is none of the field names of the
// type t in their exact case. Its value is skipped, its syntax checked: an
// event written by a newer version, with a member this one does not know,
// decodes. A key that equals a field name in another case (which
// encoding/json would decode into that field) fails, and so does a key
// that is not printable ASCII without escapes (which could fold to one).
func (d *decoder) unknown(key []byte, t reflect.Type) {
	if d.strict {
		d.fail() // a strict request body has no unknown member
		return
	}
	for _, c := range key {
		if !plain[c] {
			d.fail()
			return
		}
	}
	names, ok := fieldNames[t]
	if !ok {
		d.fail() // not a type of the event's (cannot happen)
		return
	}
	for _, name := range names {
		if strings.EqualFold(name, string(key)) {
			d.fail()
			return
		}
	}
	d.skip(0)
}

// fieldNames are the JSON member names of every struct type an event
// holds (Tick has none).
var fieldNames = func() map[reflect.Type][]string {
	names := map[reflect.Type][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
			return
		}
		if _, done := names[t]; done {
			return
		}
		names[t] = []string{}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			names[t] = append(names[t], name)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[domain.Event]())
	return names
}()

// null consumes a null, reporting whether there was one.
func (d *decoder) null() bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	return false
}

// once fails when the member with the given bit of seen was already
// decoded: the encoder writes each member once (encoding/json would merge
// a repeated member into the first one's value).
func (d *decoder) once(seen *uint64, bit uint) {
	if *seen&(1<<bit) != 0 {
		d.fail()
	}
	*seen |= 1 << bit
}

// plain marks the bytes a string holds as they are: printable ASCII but the
// quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainEnd returns the index of the first byte of p[j:] that is not
// plain (or len(p)). It tests eight bytes at a time: the high bit of a
// byte of the mask is set when the byte is below 0x20, has its high bit
// set, or equals '"' or '\\' (the usual tests for a zero or a small
// byte in a word). A borrow can only mark a byte above one that matched,
// so the mask's lowest set bit is the first special byte.
func plainEnd(p []byte, j int) int {
	// The masks are variables so that the compiler loads them into
	// registers once, rather than each constant in every iteration.
	ones, highs, quotes, backslashes, spaces := swarOnes, swarHighs, swarQuotes, swarBackslashes, swarSpaces
	for ; j+8 <= len(p); j += 8 {
		w := binary.LittleEndian.Uint64(p[j : j+8])
		q := w ^ quotes
		b := w ^ backslashes
		if m := (w | (w - spaces) | (q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for j < len(p) && plain[p[j]] {
		j++
	}
	return j
}

var (
	swarOnes        uint64 = 0x0101010101010101
	swarHighs              = 0x80 * swarOnes
	swarQuotes             = '"' * swarOnes
	swarBackslashes        = '\\' * swarOnes
	swarSpaces             = ' ' * swarOnes
)

// quoteAt returns the index of the first '"' in p[j:] (or len(p)), eight
// bytes at a time.
func quoteAt(p []byte, j int) int {
	ones, quotes := swarOnes, swarQuotes
	for ; j+8 <= len(p); j += 8 {
		q := binary.LittleEndian.Uint64(p[j:j+8]) ^ quotes
		if m := (q - ones) &^ q & swarHighs; m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for j < len(p) && p[j] != '"' {
		j++
	}
	return j
}

// text reads a string and returns its value as encoding/json decodes it:
// escapes resolved, invalid UTF-8 and unpaired surrogates replaced by
// U+FFFD. The result is a slice of p, or of d.buf when the string needed
// unescaping; it is valid until the next call.
func (d *decoder) text() []byte {
	p, i := d.p, d.i
	if i >= len(p) || p[i] != '"' {
		if d.peek() != '"' {
			d.fail()
			return nil
		}
		i = d.i
	}
	j := plainEnd(p, i+1)
	if j < len(p) && p[j] == '"' {
		d.i = j + 1
		return p[i+1 : j]
	}
	return d.unquote(i+1, j)
}

// unquote decodes the string whose text starts at start and whose first
// byte needing care is at j, into d.buf.
func (d *decoder) unquote(start, j int) []byte {
	b := append(d.buf[:0], d.p[start:j]...)
	p := d.p
	for j < len(p) {
		c := p[j]
		switch {
		case c == '"':
			d.i = j + 1
			d.buf = b
			return b
		case c < 0x20:
			d.fail() // a control byte: a syntax error
			return nil
		case c == '\\':
			if j+1 >= len(p) {
				d.fail()
				return nil
			}
			switch p[j+1] {
			case '"', '\\', '/':
				b = append(b, p[j+1])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(p, j+2)
				if r < 0 {
					d.fail()
					return nil
				}
				j += 6
				if utf16.IsSurrogate(r) {
					// encoding/json: a valid pair is one rune; anything
					// else is U+FFFD, and a following escape stays.
					if r2 := escapedRune(p, j); r2 >= 0 {
						if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
							b = utf8.AppendRune(b, pair)
							j += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				d.fail()
				return nil
			}
			j += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			j++
		default:
			r, size := utf8.DecodeRune(p[j:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, p[j:j+size]...)
			}
			j += size
		}
	}
	d.fail() // unterminated
	return nil
}

// escapedRune returns the rune of a \u escape (four hex digits) at
// p[j:], or -1.
func escapedRune(p []byte, j int) rune {
	if j+1 < len(p) && p[j] == '\\' && p[j+1] == 'u' {
		return hex4(p, j+2)
	}
	return -1
}

// hex4 returns the value of the four hex digits at p[j:], or -1.
func hex4(p []byte, j int) rune {
	if j+4 > len(p) {
		return -1
	}
	var r rune
	for _, c := range p[j : j+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// str reads a string into a new Go string.
func (d *decoder) str() string {
	return string(d.text())
}

// enum reads a string that is usually one of the gate's names (types,
// decisions, codes, checks): those are shared constants, anything else a
// new string.
func (d *decoder) enum() string {
	t := d.text()
	if s, ok := names.lookup(t); ok {
		return s
	}
	return string(t)
}

// same reads a string that usually repeats one decoded before (an event's
// agent ID is its command's): it returns prev when equal, so that the
// event holds one copy, else a new string.
func (d *decoder) same(prev string) string {
	t := d.text()
	if string(t) == prev {
		return prev
	}
	return string(t)
}

// rawString returns the bytes of a string token, quotes included, checked
// as a string (for types that decode their own JSON: time.Time).
func (d *decoder) rawString() []byte {
	d.ws()
	start := d.i
	d.text()
	if d.failed {
		return nil
	}
	return d.p[start:d.i]
}

// number reads a number token and returns its text; anything but the JSON
// number grammar (-?int frac? exp?) fails.
func (d *decoder) number() []byte {
	d.ws()
	p, start := d.p, d.i
	j := start
	if j < len(p) && p[j] == '-' {
		j++
	}
	switch {
	case j < len(p) && p[j] == '0':
		j++
	case j < len(p) && '1' <= p[j] && p[j] <= '9':
		for j < len(p) && '0' <= p[j] && p[j] <= '9' {
			j++
		}
	default:
		d.fail()
		return nil
	}
	if j < len(p) && p[j] == '.' {
		j++
		k := j
		for j < len(p) && '0' <= p[j] && p[j] <= '9' {
			j++
		}
		if j == k {
			d.fail()
			return nil
		}
	}
	if j < len(p) && (p[j] == 'e' || p[j] == 'E') {
		j++
		if j < len(p) && (p[j] == '+' || p[j] == '-') {
			j++
		}
		k := j
		for j < len(p) && '0' <= p[j] && p[j] <= '9' {
			j++
		}
		if j == k {
			d.fail()
			return nil
		}
	}
	d.i = j
	return p[start:j]
}

// digits returns the value of a non-negative integer's text, failing on a
// sign, a fraction, an exponent or a value above max.
func (d *decoder) digits(t []byte, max uint64) uint64 {
	if len(t) == 0 {
		d.fail()
		return 0
	}
	var v uint64
	for _, c := range t {
		if c < '0' || c > '9' {
			d.fail()
			return 0
		}
		if v > (max-uint64(c-'0'))/10 {
			d.fail()
			return 0
		}
		v = v*10 + uint64(c-'0')
	}
	return v
}

// uint64 reads an integer into a uint64, as strconv.ParseUint does.
func (d *decoder) uint64() uint64 {
	return d.digits(d.number(), 1<<64-1)
}

// intN reads an integer within [-max-1, max] (encoding/json fails on
// anything that is not an integer of the field's size).
func (d *decoder) intN(max uint64) int64 {
	t := d.number()
	if len(t) > 0 && t[0] == '-' {
		return -int64(d.digits(t[1:], max+1))
	}
	return int64(d.digits(t, max))
}

// int64, int32 and int read an integer of their type.
func (d *decoder) int64() int64 { return d.intN(1<<63 - 1) }
func (d *decoder) int32() int32 { return int32(d.intN(1<<31 - 1)) }
func (d *decoder) int() int     { return int(d.intN(uint64(maxInt))) }

const maxInt = int(^uint(0) >> 1)

// jsonNumber reads a JSON number into a json.Number (its text); a quoted
// number fails (encoding/json accepts it, the fast path leaves it).
func (d *decoder) jsonNumber() string {
	return string(d.number())
}

// bool reads true or false.
func (d *decoder) bool() bool {
	switch d.peek() {
	case 't':
		return d.literal("true")
	case 'f':
		d.literal("false")
		return false
	}
	d.fail()
	return false
}

// literal consumes the literal lit, reporting true if it was there.
func (d *decoder) literal(lit string) bool {
	if len(d.p)-d.i < len(lit) || string(d.p[d.i:d.i+len(lit)]) != lit {
		d.fail()
		return false
	}
	d.i += len(lit)
	return true
}

// usd reads a money amount as domain.USD's decoder does: plain amounts
// with fastUSD, anything else numeric with domain.USD.UnmarshalJSON (a
// quoted amount or a null fails: the fallback decodes those).
func (d *decoder) usd() domain.USD {
	t := d.number()
	if d.failed {
		return 0
	}
	if v, ok := fastUSD(t); ok {
		return v
	}
	var u domain.USD
	if err := u.UnmarshalJSON(t); err != nil {
		d.fail()
	}
	return u
}

// time reads a time as time.Time.UnmarshalJSON does (which is what
// encoding/json calls with the string token).
func (d *decoder) time(t *time.Time) {
	raw := d.rawString()
	if d.failed {
		return
	}
	if err := t.UnmarshalJSON(raw); err != nil {
		d.fail()
	}
}

// risk reads a domain.Risk as its UnmarshalJSON does: a string naming a
// risk in any case.
func (d *decoder) risk() domain.Risk {
	t := d.text()
	if d.failed {
		return ""
	}
	switch string(t) {
	case "low":
		return domain.RiskLow
	case "medium":
		return domain.RiskMedium
	case "high":
		return domain.RiskHigh
	case "critical":
		return domain.RiskCritical
	}
	r, err := domain.ParseRisk(string(t))
	if err != nil {
		d.fail()
	}
	return r
}

// trustLevel reads a domain.TrustLevel as its UnmarshalJSON does: a
// number 0-3 or a string that domain.ParseTrustLevel accepts (a digit
// directly, which is what the encoder writes).
func (d *decoder) trustLevel() domain.TrustLevel {
	if c := d.peek(); '0' <= c && c <= '3' && (d.i+1 == len(d.p) || !isNumberByte(d.p[d.i+1])) {
		d.i++
		return domain.TrustLevel(c - '0')
	}
	var s string
	if d.peek() == '"' {
		s = d.str()
	} else {
		s = string(d.number())
	}
	if d.failed {
		return 0
	}
	t, err := domain.ParseTrustLevel(s)
	if err != nil {
		d.fail()
	}
	return t
}

// isNumberByte reports whether c can continue a number token.
func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// duration reads a domain.Duration as its UnmarshalJSON does: a string
// that time.ParseDuration accepts.
func (d *decoder) duration() domain.Duration {
	t := d.text()
	if d.failed {
		return 0
	}
	v, err := time.ParseDuration(string(t))
	if err != nil {
		d.fail()
	}
	return domain.Duration(v)
}

// raw skips one value, checking its syntax, and returns its bytes (for
// json.RawMessage and the types that decode their own JSON).
func (d *decoder) raw() []byte {
	d.ws()
	start := d.i
	d.skip(0)
	if d.failed {
		return nil
	}
	return d.p[start:d.i]
}

// more consumes the comma after an element of an object or an array
// (reporting true) or its closing byte (reporting false); anything else
// fails.
func (d *decoder) more(closing byte) bool {
	switch d.peek() {
	case ',':
		d.i++
		return true
	case closing:
		d.i++
		return false
	}
	d.fail()
	return false
}

// skip consumes one value of any type, checking its syntax.
func (d *decoder) skip(depth int) {
	if depth > maxSkipDepth {
		d.fail()
		return
	}
	switch c := d.peek(); {
	case c == '{':
		d.i++
		if d.peek() == '}' {
			d.i++
			return
		}
		for !d.failed {
			d.text()
			d.expect(':')
			d.skip(depth + 1)
			if d.more('}') {
				continue
			}
			return
		}
	case c == '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			return
		}
		for !d.failed {
			d.skip(depth + 1)
			if d.more(']') {
				continue
			}
			return
		}
	case c == '"':
		d.text()
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	default:
		d.number()
	}
}

// strings reads an array of strings into a new slice ([] gives an empty,
// non-nil slice, null a nil one, as encoding/json does for a field that is
// nil before).
func (d *decoder) strings() []string {
	if d.null() {
		return nil
	}
	d.expect('[')
	var small [16]string
	out := small[:0]
	if d.peek() == ']' {
		d.i++
		return []string{}
	}
	for !d.failed {
		out = append(out, d.enum())
		if !d.more(']') {
			break
		}
	}
	if d.failed {
		return nil
	}
	return append(make([]string, 0, len(out)), out...)
}

// array reads an array, calling elem for each element.
func (d *decoder) array(elem func()) {
	d.expect('[')
	if d.peek() == ']' {
		d.i++
		return
	}
	for !d.failed {
		elem()
		if !d.more(']') {
			return
		}
	}
}

// anyValue decodes one value of error details: a string, a boolean, null,
// a number as a json.Number holding its text, and an array or an object as
// a json.RawMessage holding its bytes (a copy). The encoder writes each of
// those back as the same bytes, so an event decoded and encoded again is
// the payload it was read from, whatever order a nested object's members
// were written in (a struct's, or sorted for a map).
func (d *decoder) anyValue() any {
	switch c := d.peek(); {
	case c == '{' || c == '[':
		raw := d.raw()
		if d.failed {
			return nil
		}
		return json.RawMessage(bytes.Clone(raw))
	case c == '"':
		return d.enum()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		d.literal("false")
		return false
	case c == 'n':
		d.literal("null")
		return nil
	}
	t := d.number()
	if d.failed {
		return nil
	}
	return json.Number(t)
}

// anyObject decodes an object of details into a new map (a repeated key
// keeps its last value, as in encoding/json).
func (d *decoder) anyObject() domain.Details {
	d.expect('{')
	m := make(domain.Details)
	if d.peek() == '}' {
		d.i++
		return m
	}
	for !d.failed {
		k := d.enum()
		d.expect(':')
		m[k] = d.anyValue()
		if !d.more('}') {
			break
		}
	}
	if d.failed {
		return nil
	}
	return m
}
