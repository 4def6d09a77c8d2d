package strictjson

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind says what Check refused.
type Kind int

// The kinds of Error.
const (
	// KindSyntax is malformed JSON, trailing data, or nesting deeper than
	// MaxDepth: the caller's decoder reports it in its own words.
	KindSyntax Kind = iota + 1
	// KindDuplicate is a member whose name repeats in its object, exactly
	// or in another case.
	KindDuplicate
	// KindWrongCase is a member whose name matches one of the shape's only
	// in another case.
	KindWrongCase
	// KindUnknown is a member a closed shape does not name.
	KindUnknown
)

// String names the kind as the gate's error details do.
func (k Kind) String() string {
	switch k {
	case KindSyntax:
		return "syntax"
	case KindDuplicate:
		return "duplicate"
	case KindWrongCase:
		return "wrong_case"
	case KindUnknown:
		return "unknown"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MaxDepth is the deepest nesting Check follows (encoding/json's own
// limit); deeper input is KindSyntax.
const MaxDepth = 10000

// smallMembers is how many members of one object are compared pairwise;
// past it the object's folded names go into a set.
const smallMembers = 32

// maxNameBytes bounds the name an Error quotes.
const maxNameBytes = 128

// Error is a refusal of Check.
type Error struct {
	Kind Kind
	// Path locates the member from the top of the document: member names
	// joined by ".", array elements as "[i]" ("action.TYPE",
	// "tools[2].Name"); "" for a syntax error. Names longer than 128
	// bytes are cut (and marked with "…").
	Path string
	// Pointer is Path as an RFC 6901 JSON pointer ("/action/TYPE").
	Pointer string
	// Name is the member's name as sent (unescaped, cut as in Path).
	Name string
	// Expected is the shape's name for KindWrongCase and the earlier
	// member's name for KindDuplicate.
	Expected string
	// Offset is the byte offset of the member's name (of the fault for
	// KindSyntax).
	Offset int
}

// Error describes the refusal.
func (e *Error) Error() string {
	switch e.Kind {
	case KindDuplicate:
		if e.Expected != e.Name {
			return fmt.Sprintf("member %s repeats member %q in another case", e.Path, e.Expected)
		}
		return fmt.Sprintf("member %s appears twice", e.Path)
	case KindWrongCase:
		return fmt.Sprintf("member %s is not spelled %q", e.Path, e.Expected)
	case KindUnknown:
		return fmt.Sprintf("unknown member %s", e.Path)
	}
	return fmt.Sprintf("malformed JSON at offset %d", e.Offset)
}

// Details are the error's details in the gate's error bodies: the
// member's path ("field"), what is wrong with it ("reason": duplicate,
// wrong_case, unknown) and, for a wrong case or a duplicate, the name it
// collides with ("expected").
func (e *Error) Details() map[string]any {
	d := map[string]any{"field": e.Path, "reason": e.Kind.String()}
	if e.Expected != "" {
		d["expected"] = e.Expected
	}
	if e.Kind == KindSyntax {
		d = map[string]any{"offset": e.Offset}
	}
	return d
}

// Check reports the first member of the JSON text p (exactly one value,
// white space around it) that the package doc says to refuse, as an
// *Error; nil when there is none. s is the shape of the top-level value
// (nil: any value).
func Check(p []byte, s *Shape) error {
	c := checkers.Get().(*checker)
	c.p, c.i, c.err = p, 0, nil
	c.value(s, 0)
	if c.err == nil {
		c.ws()
		if c.i != len(c.p) {
			c.syntax()
		}
	}
	err := c.err
	c.p, c.err = nil, nil
	c.names, c.path = c.names[:0], c.path[:0]
	if cap(c.names) <= maxPooledNames {
		checkers.Put(c)
	}
	if err != nil {
		return err
	}
	return nil
}

// maxPooledNames bounds the name stack a pooled checker keeps.
const maxPooledNames = 4096

// checkers keep the name and path stacks of earlier checks.
var checkers = sync.Pool{New: func() any {
	return &checker{names: make([]name, 0, 64), path: make([]step, 0, 16)}
}}

// name is one member name of an open object.
type name struct {
	hash       uint64 // of the folded name
	start, end int    // the raw text between the quotes
	unesc      []byte // the unescaped name when the raw text has an escape
}

// step is one element of the path to the value being checked.
type step struct {
	name  int // index in checker.names; -1 for an array element
	index int
}

type checker struct {
	p     []byte
	i     int
	err   *Error
	names []name
	path  []step
}

func (c *checker) syntax() {
	if c.err == nil {
		c.err = &Error{Kind: KindSyntax, Offset: c.i}
	}
	c.i = len(c.p)
}

func (c *checker) ws() {
	for c.i < len(c.p) {
		switch c.p[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *checker) value(s *Shape, depth int) {
	c.ws()
	if c.i >= len(c.p) {
		c.syntax()
		return
	}
	switch c.p[c.i] {
	case '{':
		c.object(s, depth+1)
	case '[':
		c.array(s, depth+1)
	case '"':
		c.skipString()
	case 't':
		c.literal("true")
	case 'f':
		c.literal("false")
	case 'n':
		c.literal("null")
	default:
		c.number()
	}
}

func (c *checker) literal(lit string) {
	if !bytes.HasPrefix(c.p[c.i:], []byte(lit)) {
		c.syntax()
		return
	}
	c.i += len(lit)
}

func (c *checker) number() {
	p, i := c.p, c.i
	if i < len(p) && p[i] == '-' {
		i++
	}
	switch {
	case i < len(p) && p[i] == '0':
		i++
	case i < len(p) && p[i] >= '1' && p[i] <= '9':
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	default:
		c.i = i
		c.syntax()
		return
	}
	if i < len(p) && p[i] == '.' {
		i++
		if i >= len(p) || p[i] < '0' || p[i] > '9' {
			c.i = i
			c.syntax()
			return
		}
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	}
	if i < len(p) && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < len(p) && (p[i] == '+' || p[i] == '-') {
			i++
		}
		if i >= len(p) || p[i] < '0' || p[i] > '9' {
			c.i = i
			c.syntax()
			return
		}
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	}
	c.i = i
}

// skipString moves past the string at c.i, checking its syntax; it
// reports whether the string has an escape or a byte >= 0x80.
func (c *checker) skipString() (special bool) {
	p := c.p
	i := c.i + 1
	for i < len(p) {
		b := p[i]
		switch {
		case b == '"':
			c.i = i + 1
			return special
		case b == '\\':
			special = true
			if i+1 >= len(p) {
				c.i = i
				c.syntax()
				return
			}
			switch p[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(p) || !isHex4(p[i+2:i+6]) {
					c.i = i
					c.syntax()
					return
				}
				i += 6
			default:
				c.i = i
				c.syntax()
				return
			}
		case b < ' ':
			c.i = i
			c.syntax()
			return
		default:
			if b >= utf8.RuneSelf {
				special = true
			}
			i++
		}
	}
	c.i = i
	c.syntax()
	return
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// readName reads the member name at c.i.
func (c *checker) readName() (name, bool) {
	if c.i >= len(c.p) || c.p[c.i] != '"' {
		c.syntax()
		return name{}, false
	}
	start := c.i + 1
	special := c.skipString()
	if c.err != nil {
		return name{}, false
	}
	n := name{start: start, end: c.i - 1}
	raw := c.p[n.start:n.end]
	if !special {
		h := uint64(fnvOffset)
		for _, b := range raw {
			if 'a' <= b && b <= 'z' {
				b -= 'a' - 'A'
			}
			h = (h ^ uint64(b)) * fnvPrime
		}
		n.hash = h
		return n, true
	}
	if bytes.IndexByte(raw, '\\') >= 0 {
		n.unesc = unescape(raw)
		raw = n.unesc
	}
	n.hash = foldHash(raw)
	return n, true
}

// foldHash hashes the folded runes of b (see foldRune).
func foldHash(b []byte) uint64 {
	h := uint64(fnvOffset)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		f := foldRune(r)
		if f < utf8.RuneSelf {
			h = (h ^ uint64(f)) * fnvPrime
			continue
		}
		var enc [utf8.UTFMax]byte
		for _, x := range enc[:utf8.EncodeRune(enc[:], f)] {
			h = (h ^ uint64(x)) * fnvPrime
		}
	}
	return h
}

// foldRune is the smallest rune of r's simple case-folding orbit, as
// encoding/json folds names ('a' and 'A' fold to 'A', 'ſ' to 'S').
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// foldString folds every rune of s (see foldRune).
func foldString(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// unescape returns the text of a JSON string body as encoding/json
// decodes it: escapes resolved, an unpaired surrogate or an invalid
// UTF-8 byte replaced by U+FFFD.
func unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		b := raw[i]
		if b != '\\' {
			r, size := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r)
			i += size
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4(raw[i+2 : i+6])
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					i += 6
					r = dec
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// text is the unescaped text of n.
func (c *checker) text(n *name) []byte {
	if n.unesc != nil {
		return n.unesc
	}
	return c.p[n.start:n.end]
}

func (c *checker) object(s *Shape, depth int) {
	if !c.enter(depth, '}') {
		return
	}
	first := len(c.names)
	defer func() { c.names = c.names[:first] }()
	var set map[string]int // folded name -> index in c.names, past smallMembers
	for {
		c.ws()
		at := c.i
		n, ok := c.readName()
		if !ok {
			return
		}
		txt := c.text(&n)
		dup := -1
		if set == nil && len(c.names)-first < smallMembers {
			for j := first; j < len(c.names); j++ {
				if c.names[j].hash == n.hash && bytes.EqualFold(c.text(&c.names[j]), txt) {
					dup = j
					break
				}
			}
		} else {
			if set == nil {
				set = make(map[string]int, 2*smallMembers)
				for j := first; j < len(c.names); j++ {
					set[foldString(string(c.text(&c.names[j])))] = j
				}
			}
			k := foldString(string(txt))
			if j, ok := set[k]; ok {
				dup = j
			} else {
				set[k] = len(c.names)
			}
		}
		c.names = append(c.names, n)
		c.path = append(c.path, step{name: len(c.names) - 1})
		if dup >= 0 {
			c.fail(KindDuplicate, at, string(c.text(&c.names[dup])))
			return
		}
		child := s.elemOrNil()
		if s != nil && s.members != nil {
			if m, ok := s.members[string(txt)]; ok {
				child = m
			} else if want, ok := s.folded[foldString(string(txt))]; ok {
				c.fail(KindWrongCase, at, want)
				return
			} else if s.closed {
				c.fail(KindUnknown, at, "")
				return
			}
		}
		c.ws()
		if c.i >= len(c.p) || c.p[c.i] != ':' {
			c.syntax()
			return
		}
		c.i++
		c.value(child, depth)
		if !c.more('}') {
			return
		}
	}
}

func (s *Shape) elemOrNil() *Shape {
	if s == nil {
		return nil
	}
	return s.elem
}

func (c *checker) array(s *Shape, depth int) {
	if !c.enter(depth, ']') {
		return
	}
	elem := s.elemOrNil()
	for idx := 0; ; idx++ {
		c.path = append(c.path, step{name: -1, index: idx})
		c.value(elem, depth)
		if !c.more(']') {
			return
		}
	}
}

// more ends a member or an element: it drops the value's step from the
// path and consumes the comma (true: another follows) or the closing
// byte (false); anything else is a syntax error (false).
func (c *checker) more(closing byte) bool {
	if c.err != nil {
		return false
	}
	c.path = c.path[:len(c.path)-1]
	c.ws()
	if c.i < len(c.p) && c.p[c.i] == ',' {
		c.i++
		return true
	}
	if c.i < len(c.p) && c.p[c.i] == closing {
		c.i++
	} else {
		c.syntax()
	}
	return false
}

// enter consumes the opening byte of an object or an array at depth and
// reports whether it has members; an empty one is consumed whole.
func (c *checker) enter(depth int, closing byte) bool {
	if depth > MaxDepth {
		c.syntax()
		return false
	}
	c.i++
	c.ws()
	if c.i < len(c.p) && c.p[c.i] == closing {
		c.i++
		return false
	}
	return true
}

// fail records a refusal of the member at the end of c.path, whose name
// starts at offset at.
func (c *checker) fail(k Kind, at int, expected string) {
	var b, ptr strings.Builder
	for i, st := range c.path {
		ptr.WriteByte('/')
		if st.name < 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(st.index))
			b.WriteByte(']')
			ptr.WriteString(strconv.Itoa(st.index))
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		n := clip(string(c.text(&c.names[st.name])))
		b.WriteString(n)
		ptr.WriteString(strings.ReplaceAll(strings.ReplaceAll(n, "~", "~0"), "/", "~1"))
	}
	last := c.path[len(c.path)-1]
	c.err = &Error{Kind: k, Path: b.String(), Pointer: ptr.String(), Name: clip(string(c.text(&c.names[last.name]))),
		Expected: clip(expected), Offset: at}
	c.i = len(c.p)
}

// clip cuts s to maxNameBytes on a rune boundary, marking the cut, and
// replaces invalid UTF-8 as encoding/json does.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxNameBytes {
		return s
	}
	n := maxNameBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
